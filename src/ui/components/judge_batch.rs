//! Batch mode in the Judges panel: the choice (offered from a threshold of requests on, for the
//! providers with a batch API, with its price beside the synchronous one), the state of a job's
//! batches as the worker reports them, and the batches an earlier page left in this browser.

use super::judges::money;
use ragscope_protocol::judge_batch::{offered, BatchUpdate, KeptRun};
use ragscope_protocol::judges::ProviderChoice;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// `14:03:27` in the browser's time zone.
fn clock(ms: u64) -> String {
    let d = js_sys::Date::new(&JsValue::from_f64(ms as f64));
    format!(
        "{:02}:{:02}:{:02}",
        d.get_hours(),
        d.get_minutes(),
        d.get_seconds()
    )
}

#[derive(Properties, PartialEq)]
pub struct ChoiceProps {
    pub provider: ProviderChoice,
    /// Requests the estimate counts (cached ones excluded).
    pub requests: usize,
    /// Requests from which it is offered.
    pub threshold: usize,
    /// The synchronous estimate and the batch one, when the model is priced.
    pub cost: Option<f64>,
    pub batch_cost: Option<f64>,
    pub checked: bool,
    pub disabled: bool,
    pub on_toggle: Callback<bool>,
}

/// A checkbox "through the batch API", shown only where it is offered.
#[function_component(BatchChoice)]
pub fn batch_choice(p: &ChoiceProps) -> Html {
    if !offered(p.provider, p.requests, p.threshold) {
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
    let price = match (p.batch_cost, p.cost) {
        (Some(b), Some(c)) => format!("about {} instead of {}", money(b), money(c)),
        _ => "half price; this model's price is unknown".to_string(),
    };
    html! {
        <label class="control check judge-batch-choice" id="judge-batch"
            title="The provider's batch API: half the price, answered within 24 hours (usually much sooner). With 'Keep replies in this browser' ticked, the batch ids are kept in this browser: after a reload, start the same job again to collect its batches (nothing is submitted twice). Without it, a reload loses the batch's results.">
            <input id="judge-batch-check" type="checkbox" checked={p.checked} disabled={p.disabled} {onchange} />
            { " Batch API: " }
            <strong id="judge-batch-price">{ price }</strong>
            { format!(" for these {} requests, answered within 24 h", p.requests) }
        </label>
    }
}

#[derive(Properties, PartialEq)]
pub struct StatusProps {
    pub update: Option<BatchUpdate>,
}

/// A batch's state in words.
fn state_words(state: &str, imported: bool) -> String {
    if imported {
        // Anthropic says `ended`; OpenAI `completed`, `expired`...; Gemini `BATCH_STATE_...`.
        return match state {
            "ended" => "ended".into(),
            s => format!("ended ({})", s.replace('_', " ").to_lowercase()),
        };
    }
    match state {
        "submitted" => "submitted, not polled yet".into(),
        "resumed" => "resumed from an earlier page".into(),
        s => s.replace('_', " ").to_lowercase(),
    }
}

/// The job's batches: id, state, requests, whether their replies are in the cache.
#[function_component(BatchStatus)]
pub fn batch_status(p: &StatusProps) -> Html {
    let Some(u) = &p.update else {
        return html! {};
    };
    let all_in = !u.rows.is_empty() && u.rows.iter().all(|r| r.imported);
    let phase = if all_in { "imported" } else { "waiting" };
    html! {
        <div class="judge-batches" aria-live="polite" id="judge-batches" data-phase={phase}>
            <p class="judge-batches-head">
                <strong>{ if all_in { "Batch ended: replies imported" } else { "Waiting for the batch" } }</strong>
                if let Some(ms) = u.polled_ms {
                    <span id="judge-batch-polled">{ format!(" · last checked {}", clock(ms)) }</span>
                }
                if !all_in {
                    <span class="hint">{ " · checked every 1–10 minutes while this page is open; the ids are kept in this browser, so after a reload start the same job again to collect them (nothing is submitted twice)" }</span>
                }
            </p>
            <div class="table-scroll">
                <table class="judge-batch-table">
                    <thead><tr>
                        <th scope="col">{ "Batch id" }</th><th scope="col">{ "State" }</th>
                        <th scope="col" class="num">{ "Requests" }</th><th scope="col">{ "Replies" }</th>
                    </tr></thead>
                    <tbody>
                        { for u.rows.iter().map(|r| html! {
                            <tr data-batch={r.id.clone()} data-state={r.state.clone()} data-imported={r.imported.to_string()}>
                                <td><code>{ &r.id }</code></td>
                                <td>{ state_words(&r.state, r.imported) }</td>
                                <td class="num">{ r.requests.map_or_else(|| "—".to_string(), |n| n.to_string()) }</td>
                                <td>{ match r.answered {
                                    Some((ok, 0)) => format!("{ok} in the cache"),
                                    Some((ok, failed)) => format!("{ok} in the cache, {failed} failed"),
                                    None => "not yet".to_string(),
                                } }</td>
                            </tr>
                        }) }
                    </tbody>
                </table>
            </div>
            if let Some(n) = &u.note {
                <p class="hint" id="judge-batch-note">{ n }</p>
            }
        </div>
    }
}

#[derive(Properties, PartialEq)]
pub struct KeptProps {
    pub runs: Vec<KeptRun>,
}

/// Batches an earlier page submitted and nobody has collected yet.
#[function_component(KeptBatches)]
pub fn kept_batches(p: &KeptProps) -> Html {
    if p.runs.is_empty() {
        return html! {};
    }
    html! {
        <section class="judge-kept" id="judge-kept" aria-label="Batches kept in this browser">
            <p>
                <strong>{ "Batches kept in this browser, not collected yet." }</strong>
                { " Load the same files, pick the same provider, model and task, tick the batch API and press Start: these batches are polled and imported, never submitted again." }
            </p>
            <ul>
                { for p.runs.iter().flat_map(|run| run.batches.iter().map(move |b| html! {
                    <li data-batch={b.id.clone()}>
                        <code>{ &b.id }</code>
                        { format!(" · {} {} · {} · {} requests · submitted {} · last seen: {}", run.provider, run.model,
                            run.task, b.requests, clock(b.submitted_ms), state_words(&b.state, false)) }
                    </li>
                })) }
            </ul>
        </section>
    }
}
