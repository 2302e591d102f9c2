//! Errors (file, line and reason) that stay until the user dismisses them.

use crate::ui::state::ErrorNote;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub errors: Vec<ErrorNote>,
    pub on_dismiss: Callback<u32>,
}

#[function_component(ErrorPanel)]
pub fn error_panel(props: &Props) -> Html {
    if props.errors.is_empty() {
        return html! {};
    }
    html! {
        <section class="error-panel" role="alert">
            { for props.errors.iter().map(|e| {
                let id = e.id;
                let on_dismiss = props.on_dismiss.clone();
                html! {
                    <div class="error" key={id}>
                        <pre class="error-message">{ &e.message }</pre>
                        <button class="dismiss" aria-label="Dismiss this error"
                            onclick={Callback::from(move |_| on_dismiss.emit(id))}>{ "×" }</button>
                    </div>
                }
            }) }
        </section>
    }
}
