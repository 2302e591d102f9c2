//! The provider settings of an LLM call — API, model, base URL, key and "remember this key" —
//! on the Judges page's state ([`JudgeState`]'s form), so the Judges page and the
//! lost-in-the-middle page's remote model share one set of settings (and one kept key).
//!
//! The key stays in the tab's memory unless the user ticks "remember" (then IndexedDB, written by
//! `use_judge_effects`); unticking removes the kept key.

use crate::ui::judges_state::{JudgeAction, JudgeState};
use ragscope_protocol::judges::ProviderChoice;
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct ProviderFieldsProps {
    pub state: UseReducerHandle<JudgeState>,
    /// Prefix of the fields' ids (`judge` → `judge-provider`, `judge-model`, …).
    pub id_prefix: AttrValue,
    /// Placeholder of the model field.
    #[prop_or(AttrValue::Static("gpt-4o-mini"))]
    pub model_placeholder: AttrValue,
}

fn input_value(e: &Event) -> String {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
        .map(|i| i.value())
        .unwrap_or_default()
}

#[function_component(ProviderFields)]
pub fn provider_fields(props: &ProviderFieldsProps) -> Html {
    let form = &props.state.form;
    let id = |name: &str| format!("{}-{name}", props.id_prefix);
    let set_input = |make: fn(String) -> JudgeAction| {
        let d = props.state.dispatcher();
        Callback::from(move |e: InputEvent| d.dispatch(make(input_value(&e.into()))))
    };
    let on_provider = {
        let d = props.state.dispatcher();
        Callback::from(move |e: Event| {
            let value = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
                .map(|s| s.value())
                .unwrap_or_default();
            if let Some(p) = ProviderChoice::from_slug(&value) {
                d.dispatch(JudgeAction::SetProvider(p));
            }
        })
    };
    let on_remember = {
        let d = props.state.dispatcher();
        let provider = form.provider;
        Callback::from(move |e: Event| {
            let on = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
                .is_some_and(|i| i.checked());
            if !on {
                yew::platform::spawn_local(async move {
                    let _ = crate::ui::judge_keys::remove(provider).await;
                });
            }
            d.dispatch(JudgeAction::SetRememberKey(on));
        })
    };
    html! {
        <>
            <label class="control">
                <span>{ "API" }</span>
                <select id={id("provider")} onchange={on_provider}>
                    { for ProviderChoice::ALL.iter().map(|p| html! {
                        <option value={p.slug()} selected={*p == form.provider}>{ p.label() }</option>
                    }) }
                </select>
            </label>
            <label class="control">
                <span>{ "Model" }</span>
                <input id={id("model")} type="text" value={form.model.clone()} placeholder={props.model_placeholder.clone()}
                    autocomplete="off" spellcheck="false" oninput={set_input(JudgeAction::SetModel)} />
            </label>
            <label class="control wide">
                <span>{ "Base URL" }</span>
                <input id={id("base-url")} type="url" value={form.base_url.clone()}
                    autocomplete="off" spellcheck="false" oninput={set_input(JudgeAction::SetBaseUrl)} />
            </label>
            <label class="control wide">
                <span>{ if form.provider.needs_key() { "API key" } else { "API key (optional)" } }</span>
                <input id={id("key")} type="password" value={form.key.clone()} autocomplete="off"
                    oninput={set_input(JudgeAction::SetKey)} />
            </label>
            <label class="control check" title="Off by default: the key stays in this tab's memory. When on, it is kept in this browser's IndexedDB; 'Forget everything' erases it.">
                <input id={id("remember-key")} type="checkbox" checked={form.remember_key} onchange={on_remember} />
                { "Remember this key on this device" }
            </label>
        </>
    }
}
