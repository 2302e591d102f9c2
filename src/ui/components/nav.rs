//! The header's navigation: Evaluate · Judges · Learn, as plain links to hash routes, so the
//! browser's history (back/forward, open in a new tab) works without any router code.

use crate::ui::route::{Route, Section};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct NavProps {
    pub route: Route,
}

#[function_component(Nav)]
pub fn nav(props: &NavProps) -> Html {
    let current = props.route.section();
    html! {
        <nav class="site-nav" aria-label="Pages">
            { for Section::ALL.iter().map(|s| {
                let here = *s == current;
                html! {
                    <a href={s.route().hash()} id={format!("nav-{}", s.label().to_lowercase())}
                        class={classes!("nav-link", here.then_some("current"))}
                        aria-current={here.then_some("page")}>
                        { s.label() }
                    </a>
                }
            }) }
        </nav>
    }
}
