//! The result views as an ARIA tab list: arrow keys, Home and End move between tabs.

use crate::ui::state::Tab;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub current: Tab,
    pub on_select: Callback<Tab>,
}

#[function_component(Tabs)]
pub fn tabs(props: &Props) -> Html {
    let index = Tab::ALL
        .iter()
        .position(|t| *t == props.current)
        .unwrap_or(0);
    let on_key = {
        let on_select = props.on_select.clone();
        Callback::from(move |e: KeyboardEvent| {
            let n = Tab::ALL.len();
            let next = match e.key().as_str() {
                "ArrowRight" => (index + 1) % n,
                "ArrowLeft" => (index + n - 1) % n,
                "Home" => 0,
                "End" => n - 1,
                _ => return,
            };
            e.prevent_default();
            on_select.emit(Tab::ALL[next]);
            if let Some(el) =
                gloo::utils::document().get_element_by_id(&format!("tab-{}", Tab::ALL[next].slug()))
            {
                use wasm_bindgen::JsCast;
                if let Ok(el) = el.dyn_into::<web_sys::HtmlElement>() {
                    let _ = el.focus();
                }
            }
        })
    };
    html! {
        <div class="tabs" role="tablist" aria-label="Result views" onkeydown={on_key}>
            { for Tab::ALL.iter().map(|t| {
                let selected = *t == props.current;
                let on_select = props.on_select.clone();
                let t = *t;
                html! {
                    <button role="tab" id={format!("tab-{}", t.slug())}
                        aria-selected={selected.to_string()}
                        aria-controls={format!("panel-{}", t.slug())}
                        tabindex={if selected { "0" } else { "-1" }}
                        class={classes!("tab", selected.then_some("selected"))}
                        onclick={Callback::from(move |_| on_select.emit(t))}>{ t.label() }</button>
                }
            }) }
        </div>
    }
}
