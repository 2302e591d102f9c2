//! The current hash route, updated on `hashchange` (links, back/forward, typed URLs).

use crate::ui::route::Route;
use gloo::events::EventListener;
use yew::prelude::*;

fn current() -> Route {
    Route::from_hash(&gloo::utils::window().location().hash().unwrap_or_default())
}

#[hook]
pub fn use_route() -> Route {
    let route = use_state(current);
    {
        let route = route.clone();
        use_effect_with((), move |_| {
            let listener = EventListener::new(&gloo::utils::window(), "hashchange", move |_| {
                let next = current();
                if *route != next {
                    // A new page starts at its top, as a real navigation would.
                    gloo::utils::window().scroll_to_with_x_and_y(0.0, 0.0);
                }
                route.set(next);
            });
            move || drop(listener)
        });
    }
    (*route).clone()
}
