//! Batch mode in the Judges panel: the choice (offered from `OFFER_AT_REQUESTS` requests on, for
//! the providers with a batch API) and the state of a job's batches as the worker reports them.

use crate::protocol::judge_batch::{offered, BatchUpdate};
use crate::protocol::judges::ProviderChoice;
use wasm_bindgen::JsCast;
use web_sys::HtmlInputElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct ChoiceProps {
    pub provider: ProviderChoice,
    /// Requests the estimate counts (cached ones excluded).
    pub requests: usize,
    pub checked: bool,
    pub on_toggle: Callback<bool>,
}

/// A checkbox "use the batch API", shown only where it is offered.
#[function_component(BatchChoice)]
pub fn batch_choice(p: &ChoiceProps) -> Html {
    if !offered(p.provider, p.requests) {
        return html! {};
    }
    let on_toggle = p.on_toggle.clone();
    let onchange = Callback::from(move |e: Event| {
        let on = e
            .target()
            .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            .is_some_and(|i| i.checked());
        on_toggle.emit(on);
    });
    html! {
        <label class="control check" id="judge-batch"
            title="The provider's batch API: half the price, answered within 24 hours. The batch ids are kept in this browser: after a reload, start the same job again to resume its batches (nothing is paid twice).">
            <input type="checkbox" checked={p.checked} {onchange} />
            { format!(" Batch API for these {} requests (half price, within 24 h)", p.requests) }
        </label>
    }
}

#[derive(Properties, PartialEq)]
pub struct StatusProps {
    pub update: Option<BatchUpdate>,
}

/// The job's batches: id, state, requests, whether their replies are in the cache.
#[function_component(BatchStatus)]
pub fn batch_status(p: &StatusProps) -> Html {
    let Some(u) = &p.update else {
        return html! {};
    };
    html! {
        <div class="judge-batches" aria-live="polite" id="judge-batches">
            <table>
                <thead><tr><th>{"Batch"}</th><th>{"State"}</th><th>{"Requests"}</th><th>{"In the cache"}</th></tr></thead>
                <tbody>
                    { for u.rows.iter().map(|r| html! {
                        <tr>
                            <td><code>{ &r.id }</code></td>
                            <td>{ &r.state }</td>
                            <td>{ r.requests.map_or_else(|| "—".to_string(), |n| n.to_string()) }</td>
                            <td>{ if r.imported { "yes" } else { "not yet" } }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
            if let Some(n) = &u.note {
                <p class="hint">{ n }</p>
            }
        </div>
    }
}
