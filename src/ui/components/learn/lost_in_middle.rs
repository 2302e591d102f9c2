//! `#/learn/lost-in-the-middle`: the lost-in-the-middle experiment (Liu et al., TACL 2024) run on
//! the user's machine with a GGUF model picked from disk, in this page's own worker reactor (the
//! engine is crates/worker/src/engine/inference/litm.rs), or with a remote LLM through the Judges
//! layer (the Judges page's provider settings; crates/worker/src/engine/litm_remote.rs): one
//! relevant passage moved through a context of distractors; per position, answer accuracy with a
//! bootstrap band, p(NO-RESPONSE), and nDCG, MAP, MRR, P and UDCG of the same contexts, beside the
//! paper's published curves. A remote OpenAI-compatible model gives p(NO-RESPONSE) through
//! crates/judge's utility task (top 20 logprobs: a value or only a bound, shown "≤ x" and never
//! used for UDCG; the served model's GGUF picked: exact, echo); OpenAI and Gemini the top 20 only;
//! Anthropic gives none, and the page says why. Results are kept in IndexedDB per (model, data, k,
//! position), so a reload resumes.

use super::litm_cache;
use super::litm_chart::{MeasuredChart, PublishedChart};
use super::litm_export;
use super::litm_state::{
    key_value, parse_own, LitmAction, LitmData, LitmState, ModelSource, Saved, DATA_URL,
};
use crate::ui::components::judges::{host_of, money, page_may_connect};
use crate::ui::components::provider_fields::ProviderFields;
use crate::ui::download;
use crate::ui::judges_state::JudgeState;
use crate::ui::persist;
use crate::worker_link::EvalWorker;
use ragscope_platform::stores::LITM;
use ragscope_protocol::compute::{BackendChoice, ComputeRequest};
use ragscope_protocol::judges::{JudgeRequest, ProviderChoice, Secret, UtilityTemplate};
use ragscope_protocol::litm::{LitmPrompt, LitmRequest, RemoteModel, RemoteRun};
use ragscope_protocol::Request;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::platform::spawn_local;
use yew::prelude::*;
use yew_agent::reactor::{use_reactor_bridge, ReactorEvent};

/// Tokens generated per answer at most (the answer is cut at its first newline anyway).
const MAX_NEW_TOKENS: usize = 32;

fn input_of(e: &Event) -> Option<HtmlInputElement> {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
}

fn eta(done: usize, total: usize, seconds: f64) -> String {
    if done == 0 || total <= done {
        return String::new();
    }
    let left = seconds / done as f64 * (total - done) as f64;
    if left >= 90.0 {
        format!(", about {:.0} min left", left / 60.0)
    } else {
        format!(", about {left:.0} s left")
    }
}

/// Requests in flight at most for a remote model (the Judges page's default concurrency).
const REMOTE_CONCURRENCY: u32 = 4;

#[derive(Properties, PartialEq)]
pub struct LitmProps {
    /// The Judges page's state: its provider settings (API, model, base URL, key) are the remote
    /// model's. `None`: no remote model offered.
    #[prop_or_default]
    pub judges: Option<UseReducerHandle<JudgeState>>,
}

#[function_component(LostInTheMiddle)]
pub fn lost_in_the_middle(props: &LitmProps) -> Html {
    // The consent to keep results, as the user left it (localStorage).
    let state = use_reducer(|| LitmState {
        keep: persist::consented(LITM),
        ..LitmState::default()
    });
    // "Forget everything" (counted in the Judges page's state) withdraws this page's consent too.
    {
        let forgotten = props.judges.as_ref().map_or(0, |j| j.forgotten);
        let seen = use_mut_ref(|| forgotten);
        let d = state.dispatcher();
        use_effect_with(forgotten, move |&n| {
            if *seen.borrow() != n {
                *seen.borrow_mut() = n;
                d.dispatch(LitmAction::SetKeep(false));
            }
        });
    }
    // The remote model named by the Judges page's provider settings (incomplete: none).
    let remote_model = props.judges.as_ref().and_then(|j| {
        let f = &j.form;
        (!f.model.trim().is_empty() && !f.base_url.trim().is_empty()).then(|| RemoteModel {
            provider: f.provider,
            model: f.model.trim().to_string(),
            base_url: f.base_url.trim().trim_end_matches('/').to_string(),
        })
    });
    {
        let d = state.dispatcher();
        use_effect_with(remote_model.clone(), move |r| {
            d.dispatch(LitmAction::SetRemote(r.clone()))
        });
    }
    let bridge = {
        let d = state.dispatcher();
        use_reactor_bridge::<EvalWorker, _>(move |event| {
            if let ReactorEvent::Output(r) = event {
                d.dispatch(LitmAction::Worker(r));
            }
        })
    };
    // The bundled data, fetched from the site itself (works from any sub-path).
    {
        let d = state.dispatcher();
        use_effect_with((), move |_| fetch_bundled(d));
    }
    let on_bundled = {
        let d = state.dispatcher();
        Callback::from(move |_: MouseEvent| fetch_bundled(d.clone()))
    };
    let own_error = use_state(|| None::<String>);
    let kv = use_state(|| (20usize, 10usize, 1u64));
    let kv_number = |i: usize| {
        let kv = kv.clone();
        Callback::from(move |e: Event| {
            if let Some(v) = input_of(&e).and_then(|x| x.value().trim().parse::<u64>().ok()) {
                let mut t = *kv;
                match i {
                    0 => t.0 = (v as usize).clamp(2, 200),
                    1 => t.1 = (v as usize).clamp(1, 100),
                    _ => t.2 = v,
                }
                kv.set(t);
            }
        })
    };
    let on_kv = {
        let (d, kv) = (state.dispatcher(), kv.clone());
        Callback::from(move |_: MouseEvent| {
            let (pairs, questions, seed) = *kv;
            d.dispatch(LitmAction::Data(Ok(Rc::new(key_value(
                pairs, questions, seed,
            )))));
        })
    };
    let on_own = {
        let (d, own_error) = (state.dispatcher(), own_error.clone());
        Callback::from(move |e: Event| {
            let Some(file) = input_of(&e).and_then(|i| i.files()).and_then(|l| l.get(0)) else {
                return;
            };
            let (d, own_error) = (d.clone(), own_error.clone());
            spawn_local(async move {
                let name = file.name();
                let text = wasm_bindgen_futures::JsFuture::from(file.text())
                    .await
                    .ok()
                    .and_then(|t| t.as_string());
                let parsed = match text {
                    Some(t) => parse_own(&name, &t, file.size() as usize),
                    None => Err(format!("{name}: cannot be read as text")),
                };
                match parsed {
                    // Bad input loses nothing loaded: the current questions stay.
                    Ok(data) => {
                        own_error.set(None);
                        d.dispatch(LitmAction::Data(Ok(Rc::new(data))));
                    }
                    Err(e) => own_error.set(Some(e)),
                }
            });
        })
    };
    // What IndexedDB holds for this model and these settings (only with the user's consent:
    // opening the database creates it).
    let key = state.cache_key();
    {
        let d = state.dispatcher();
        use_effect_with((key.clone(), state.keep), move |(key, keep)| {
            if let (Some(key), true) = (key.clone(), *keep) {
                spawn_local(async move {
                    if let Ok(saved) = litm_cache::load(&key).await {
                        if !saved.items.is_empty() || !saved.utilities.is_empty() {
                            d.dispatch(LitmAction::Restored(saved));
                        }
                    }
                });
            }
        });
    }
    // Each new result is saved at once (a reload then resumes after it).
    {
        let saved = Saved {
            utilities: state.utilities.clone(),
            items: state.items.values().cloned().collect(),
        };
        // Ticking "Keep results" saves what is shown at once.
        let stamp = (
            key.clone(),
            saved.items.len(),
            saved.utilities.len(),
            state.keep,
        );
        use_effect_with(stamp, move |(key, items, utilities, keep)| {
            if let (Some(key), true) = (key.clone(), *keep && *items + *utilities > 0) {
                spawn_local(async move {
                    let _ = litm_cache::save(&key, &saved).await;
                });
            }
        });
    }

    // The served model's GGUF (exact p(NO-RESPONSE)): its metadata read by this page's worker.
    let gguf_ids = use_mut_ref(|| 0u32);
    let on_remote_gguf = {
        let (bridge, d, ids) = (bridge.clone(), state.dispatcher(), gguf_ids.clone());
        Callback::from(move |e: Event| {
            let Some(file) = input_of(&e).and_then(|i| i.files()).and_then(|l| l.get(0)) else {
                return;
            };
            if let Ok(url) = ragscope_platform::blob_channel::offer_kept(&file) {
                let id = {
                    let mut n = ids.borrow_mut();
                    *n += 1;
                    *n
                };
                d.dispatch(LitmAction::RemoteGguf(Some((id, file.name()))));
                bridge.send(Request::Judge(JudgeRequest::ReadGguf {
                    id,
                    url,
                    name: file.name(),
                }));
            }
        })
    };
    let on_remote_gguf_clear = {
        let d = state.dispatcher();
        Callback::from(move |_: MouseEvent| d.dispatch(LitmAction::RemoteGguf(None)))
    };
    let on_model = {
        let (bridge, d) = (bridge.clone(), state.dispatcher());
        Callback::from(move |e: Event| {
            let Some(file) = input_of(&e).and_then(|i| i.files()).and_then(|l| l.get(0)) else {
                return;
            };
            // Offered on a channel: the worker reads the file itself, slice by slice.
            if let Ok(url) = ragscope_platform::blob_channel::offer_kept(&file) {
                d.dispatch(LitmAction::ModelOpening(file.name()));
                bridge.send(Request::Compute(ComputeRequest::OpenModel {
                    url,
                    name: file.name(),
                }));
            }
        })
    };
    let number = |make: fn(usize) -> LitmAction| {
        let d = state.dispatcher();
        Callback::from(move |e: Event| {
            if let Some(v) = input_of(&e).and_then(|i| i.value().trim().parse::<usize>().ok()) {
                d.dispatch(make(v));
            }
        })
    };
    let on_k = number(LitmAction::SetK);
    let on_questions = number(LitmAction::SetQuestions);
    let on_keep = {
        let d = state.dispatcher();
        Callback::from(move |e: Event| {
            if let Some(i) = input_of(&e) {
                let on = i.checked();
                d.dispatch(LitmAction::SetKeep(on));
                // Unticking withdraws the consent: the saved results go.
                spawn_local(async move {
                    let _ = persist::set_consent(LITM, on).await;
                });
            }
        })
    };
    let on_context_p = {
        let d = state.dispatcher();
        Callback::from(move |e: Event| {
            if let Some(i) = input_of(&e) {
                d.dispatch(LitmAction::SetContextP(i.checked()));
            }
        })
    };
    let on_prompt = {
        let d = state.dispatcher();
        Callback::from(move |e: Event| {
            if let Some(p) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
                .and_then(|s| LitmPrompt::from_slug(&s.value()))
            {
                d.dispatch(LitmAction::SetPrompt(p));
            }
        })
    };
    let on_backend = {
        let d = state.dispatcher();
        Callback::from(move |e: Event| {
            if let Some(s) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
            {
                d.dispatch(LitmAction::SetBackend(match s.value().as_str() {
                    "gpu" => BackendChoice::Gpu,
                    "cpu" => BackendChoice::Cpu,
                    _ => BackendChoice::Auto,
                }));
            }
        })
    };

    // The contexts still to compute (the others are cached).
    let chosen = state.chosen();
    let mut questions = Vec::new();
    let mut utilities = Vec::new();
    let mut tasks = Vec::new();
    for q in &chosen {
        let missing: Vec<usize> = state
            .positions
            .iter()
            .copied()
            .filter(|&p| state.to_do(&q.qid, p))
            .collect();
        if missing.is_empty() {
            continue;
        }
        let i = questions.len();
        questions.push(q.to_request());
        utilities.push(state.utilities.get(&q.qid).cloned());
        tasks.extend(missing.into_iter().map(|p| (i, p)));
    }
    let remote = state.source == ModelSource::Remote;
    let remote_run = state.remote.clone().map(|r| RemoteRun {
        remote: r,
        questions: questions.clone(),
        k: state.k,
        tasks: tasks.clone(),
        max_tokens: MAX_NEW_TOKENS as u32,
        prompt: state.prompt,
        utility: state.remote_utility(),
        context_p: state.context_p,
        keep: state.keep,
        concurrency: props
            .judges
            .as_ref()
            .and_then(|j| j.form.concurrency.trim().parse().ok())
            .unwrap_or(REMOTE_CONCURRENCY),
    });
    // What an estimate is valid for: the experiment and the contexts still to run.
    let stamp = format!("{}|{:?}", key.clone().unwrap_or_default(), tasks);
    let estimate = state.estimate_for(&stamp).cloned();
    let (needs_key, blocked) = match (&props.judges, &state.remote) {
        (Some(j), Some(r)) => (
            r.provider.needs_key() && j.form.key.trim().is_empty(),
            (!page_may_connect(&r.base_url)).then(|| crate::ui::csp::origin_text(&r.base_url)),
        ),
        _ => (false, None),
    };
    let can_run = !state.running
        && !tasks.is_empty()
        && if remote {
            estimate.is_some() && !needs_key && blocked.is_none()
        } else {
            state.model.is_some()
        };
    let on_estimate = {
        let (bridge, d) = (bridge.clone(), state.dispatcher());
        let (run, stamp) = (remote_run.clone(), stamp.clone());
        Callback::from(move |_: MouseEvent| {
            if let Some(run) = &run {
                d.dispatch(LitmAction::EstimateRequested(stamp.clone()));
                bridge.send(Request::Litm(LitmRequest::EstimateRemote(run.clone())));
            }
        })
    };
    let on_start_remote = {
        let (bridge, d) = (bridge.clone(), state.dispatcher());
        let run = remote_run.clone();
        let key = props
            .judges
            .as_ref()
            .map(|j| j.form.key.trim().to_string())
            .unwrap_or_default();
        Callback::from(move |_: MouseEvent| {
            if let Some(run) = &run {
                d.dispatch(LitmAction::Started);
                bridge.send(Request::Litm(LitmRequest::StartRemote {
                    run: run.clone(),
                    key: (!key.is_empty()).then(|| Secret(key.clone())),
                }));
            }
        })
    };
    let on_pause = {
        let bridge = bridge.clone();
        let paused = state.paused;
        Callback::from(move |_: MouseEvent| {
            bridge.send(Request::Litm(if paused {
                LitmRequest::ResumeRemote
            } else {
                LitmRequest::PauseRemote
            }))
        })
    };
    let on_source = |m: ModelSource| {
        let d = state.dispatcher();
        Callback::from(move |_: Event| d.dispatch(LitmAction::SetSource(m)))
    };
    let on_run = {
        let (bridge, d) = (bridge.clone(), state.dispatcher());
        let request = LitmRequest::Start {
            questions,
            k: state.k,
            utilities,
            tasks: tasks.clone(),
            context_p: state.context_p,
            max_new_tokens: MAX_NEW_TOKENS,
            backend: state.backend,
            prompt: state.prompt,
        };
        Callback::from(move |_: MouseEvent| {
            d.dispatch(LitmAction::Started);
            bridge.send(Request::Litm(request.clone()));
        })
    };
    let on_cancel = {
        let bridge = bridge.clone();
        Callback::from(move |_: MouseEvent| bridge.send(Request::Litm(LitmRequest::Cancel)))
    };
    let on_forget = {
        let d = state.dispatcher();
        Callback::from(move |_: MouseEvent| {
            let d = d.clone();
            spawn_local(async move {
                match litm_cache::forget().await {
                    Ok(()) => d.dispatch(LitmAction::Forgotten),
                    Err(e) => d.dispatch(LitmAction::Worker(ragscope_protocol::Response::Litm(
                        ragscope_protocol::litm::LitmEvent::Failed(e),
                    ))),
                }
            });
        })
    };
    let export = |name: &'static str, mime: &'static str, make: fn(&LitmState) -> String| {
        let s = state.clone();
        Callback::from(move |_: MouseEvent| download::save_text(name, mime, &make(&s)))
    };
    let on_svg = Callback::from(|_: MouseEvent| {
        if let Some(svg) = download::svg_markup("chart-litm") {
            download::save_text("lost-in-the-middle.svg", "image/svg+xml", &svg);
        }
    });

    let data_note = match &state.data {
        None => html! { <p class="hint" aria-busy="true">{ "Loading the bundled questions…" }</p> },
        Some(Err(e)) => {
            html! { <p class="error">{ format!("The bundled questions ({DATA_URL}) could not be loaded: {e}") }</p> }
        }
        Some(Ok(d)) if d.own.is_some() => html! {
            <p class="hint" id="litm-data-note">{ format!(
                "Your data — {}: {} questions; this run uses the first {}. Distractors are whatever the data holds; with key–value records each pair is one passage, the asked pair the relevant one.{}",
                d.own.clone().unwrap_or_default(), d.questions.len(), chosen.len(),
                d.note.as_ref().map_or_else(String::new, |n| format!(" Read as {n}."))
            ) }</p>
        },
        Some(Ok(d)) => {
            let originals = d
                .questions
                .iter()
                .filter(|q| q.original_distractors)
                .count();
            let chosen_originals = chosen.iter().filter(|q| q.original_distractors).count();
            html! {
                <p class="hint" id="litm-data-note">{ format!(
                    "Bundled: {} NQ-open questions with 20 passages each. Only {originals} of them keep the paper's own distractors (Contriever-MSMARCO results without the answer); the other {} use substitutes — BM25 matches among other questions' gold passages — which are easier to tell apart from the answer than the paper's, so this is not a replication of the paper. This run uses the first {} questions ({chosen_originals} with the paper's distractors).",
                    d.questions.len(), d.questions.len() - originals, chosen.len()
                ) }</p>
            }
        }
    };
    let total_q = match &state.data {
        Some(Ok(d)) => d.questions.len(),
        _ => 60,
    };
    let model_name = state
        .model_name()
        .unwrap_or_else(|| "no model yet".to_string());
    // The summary's bootstrap bands (2,000 resamples per position) only when a result or the
    // choice of questions and positions changes, not on every render (progress re-renders often).
    let rows = {
        let s = state.clone();
        let deps = (
            state.items.clone(),
            state.failed.clone(),
            state.positions.clone(),
            state.questions,
            state.data_key(),
        );
        (*use_memo(deps, move |_| s.summary())).clone()
    };
    let failed_total = state.failed.len();
    let utility_failed = state.utility_failed.len();
    let remote_p = remote && state.remote_utility().is_some();
    let udcg_missing: usize = rows.iter().map(|r| r.udcg_missing).sum();
    // Why UDCG is "–" for some contexts, with how many each reason holds.
    let udcg_reasons = {
        let mut by: std::collections::BTreeMap<&str, usize> = Default::default();
        for i in state.items.values() {
            if let Some(why) = &i.udcg_missing {
                *by.entry(why.as_str()).or_default() += 1;
            }
        }
        by.into_iter()
            .map(|(w, n)| format!("{n} × {w}"))
            .collect::<Vec<_>>()
            .join("; ")
    };
    let remote_utility_block =
        remote_utility_html(&state, on_remote_gguf.clone(), on_remote_gguf_clear.clone());
    let answered = rows.iter().map(|r| r.n).max().unwrap_or(0);
    let progress = state.progress.map(|(done, total, seconds)| {
        let pct = if total == 0 { 0.0 } else { done as f64 / total as f64 * 100.0 };
        html! {
            <div class="litm-progress" id="litm-progress">
                <progress max="100" value={format!("{pct:.0}")} aria-label="experiment progress"></progress>
                <span>{ format!(" {done} of {total} steps, {seconds:.1} s{}", eta(done, total, seconds)) }</span>
            </div>
        }
    });

    html! {
        <section class="learn-page litm" aria-labelledby="litm-title">
            <h2 id="litm-title">{ "Lost in the middle, measured on your machine" }</h2>
            <p class="lede">{ "Liu et al. (“Lost in the Middle: How Language Models Use Long Contexts”, TACL 2024) moved the one passage that holds the answer through a context of 20 retrieved passages: answer accuracy was highest with it first or last and lowest in the middle — a U shape. The UDCG paper (Trappolini et al. 2025, Figure 1) adds the retrieval metrics of the same contexts: nDCG, MAP and MRR fall as the passage moves down, precision stays flat, and none follows the reader's accuracy. Here you run that experiment with a model of your own: a GGUF file run in this tab, or a remote LLM with your own key." }</p>

            <div class="learn-grid">
                <div class="litm-setup steps">
                    <h3>{ "1. The experiment" }</h3>
                    { data_note }
                    <div class="litm-fields">
                        <label class="litm-field">{ "Or your own questions (JSON in the bundled file's form, lost-in-the-middle JSON Lines with ctxs and isgold, or a UDCG reference JSON — no gold answers, so no accuracy): " }
                            <input type="file" id="litm-data-file" accept=".json,.jsonl" onchange={on_own} disabled={state.running} />
                        </label>
                        if matches!(&state.data, Some(Ok(d)) if d.own.is_some()) {
                            <button id="litm-bundled" disabled={state.running} onclick={on_bundled}>{ "Back to the bundled questions" }</button>
                        }
                    </div>
                    <fieldset class="litm-kv" disabled={state.running}>
                        <legend>{ "Or key–value retrieval, generated here (the paper's synthetic task)" }</legend>
                        <label class="litm-field">{ "pairs: " }<input type="number" id="litm-kv-pairs" min="2" max="200" value={kv.0.to_string()} onchange={kv_number(0)} /></label>
                        <label class="litm-field">{ "questions: " }<input type="number" id="litm-kv-questions" min="1" max="100" value={kv.1.to_string()} onchange={kv_number(1)} /></label>
                        <label class="litm-field">{ "seed: " }<input type="number" id="litm-kv-seed" min="0" value={kv.2.to_string()} onchange={kv_number(2)} /></label>
                        <button id="litm-kv" onclick={on_kv}>{ "Generate" }</button>
                    </fieldset>
                    if let Some(e) = &*own_error { <p class="error" id="litm-data-error" role="alert">{ e }</p> }
                    <fieldset class="litm-source" disabled={state.running}>
                        <legend>{ "Model" }</legend>
                        <label class="litm-field">
                            <input type="radio" name="litm-source" id="litm-source-local" checked={!remote} onchange={on_source(ModelSource::Local)} />
                            { " a GGUF from disk, run in this tab (WebGPU or CPU)" }
                        </label>
                        <label class="litm-field">
                            <input type="radio" name="litm-source" id="litm-source-remote" checked={remote} disabled={props.judges.is_none()} onchange={on_source(ModelSource::Remote)} />
                            { " a remote LLM through the Judges layer (your provider and key)" }
                        </label>
                    </fieldset>
                    if !remote {
                    <label class="litm-field">{ "Model (GGUF, read from disk by this page's worker, never uploaded): " }
                        <input type="file" id="litm-model" accept=".gguf" onchange={on_model} disabled={state.running} />
                    </label>
                    if let Some(note) = &state.model_note { <p class="hint">{ note }</p> }
                    if let Some(m) = &state.model {
                        <p class="hint" id="litm-model-info">{ format!("{} ({}, {} layers, context {} tokens)", m.name, m.architecture, m.layers, m.context_length) }</p>
                    }
                    }
                    if let (true, Some(judges)) = (remote, &props.judges) {
                        <div class="judge-form litm-remote">
                            <fieldset disabled={state.running}>
                                <legend>{ "Remote model (the Judges page's provider settings)" }</legend>
                                <ProviderFields state={judges.clone()} id_prefix="litm-remote" />
                            </fieldset>
                        </div>
                        <p class="hint" id="litm-remote-note">{ format!(
                            "Each context's prompt (the one chosen below, as for a local model) goes from this tab's worker straight to the provider with your key, only after you press Start; temperature 0, at most {MAX_NEW_TOKENS} tokens, the answer's first line scored by the paper's substring match. Replies are cached in this browser (a reload resumes without paying twice). A failed call is counted as failed, not as a wrong answer."
                        ) }</p>
                        { remote_utility_block }
                    }
                    <div class="litm-fields">
                        <label class="litm-field">{ "Questions: " }
                            <input type="number" id="litm-questions" min="1" max={total_q.to_string()} value={state.questions.to_string()} onchange={on_questions} disabled={state.running} />
                        </label>
                        <label class="litm-field">{ "Passages per context (k): " }
                            <input type="number" id="litm-k" min="1" max="20" value={state.k.to_string()} onchange={on_k} disabled={state.running} />
                        </label>
                        if !remote {
                            <label class="litm-field">{ "Compute on: " }
                                <select id="litm-backend" onchange={on_backend} disabled={state.running}>
                                    <option value="auto" selected={state.backend == BackendChoice::Auto}>{ "WebGPU on a GPU, else CPU" }</option>
                                    <option value="gpu" selected={state.backend == BackendChoice::Gpu}>{ "WebGPU (any adapter, also a software one)" }</option>
                                    <option value="cpu" selected={state.backend == BackendChoice::Cpu}>{ "CPU" }</option>
                                </select>
                            </label>
                        }
                    </div>
                    <label class="litm-field">{ "Answer prompt: " }
                        <select id="litm-prompt" onchange={on_prompt} disabled={state.running}>
                            { for LitmPrompt::ALL.iter().map(|p| html! {
                                <option value={p.slug()} selected={*p == state.prompt}>{ p.label() }</option>
                            }) }
                        </select>
                    </label>
                    if state.prompt != LitmPrompt::Udcg {
                        <p class="hint" id="litm-prompt-note">{ "The lost-in-the-middle paper's prompt (nelson-liu/lost-in-the-middle, MIT: src/lost_in_the_middle/prompts/) as the one user message, documents as its code formats them. It does not ask for NO-RESPONSE, so no p(NO-RESPONSE) of the context is computed; UDCG's passage utilities keep the UDCG paper's prompt (their definition)." }</p>
                    }
                    <fieldset class="litm-positions" disabled={state.running}>
                        <legend>{ "Positions of the relevant passage" }</legend>
                        { for (1..=state.k).map(|p| {
                            let d = state.dispatcher();
                            html! {
                                <label class="litm-pos">
                                    <input type="checkbox" id={format!("litm-pos-{p}")} checked={state.positions.contains(&p)}
                                        onchange={Callback::from(move |_: Event| d.dispatch(LitmAction::TogglePosition(p)))} />
                                    { p }
                                </label>
                            }
                        }) }
                    </fieldset>
                    if !remote || remote_p {
                        <label class="litm-field">
                            <input type="checkbox" id="litm-context-p" checked={state.context_p} onchange={on_context_p} disabled={state.running} />
                            { if remote {
                                " also p(NO-RESPONSE) of each whole context (one more utility call per context, its prompt the answer's)"
                            } else {
                                " also p(NO-RESPONSE) of each whole context (one more forward pass per context)"
                            } }
                        </label>
                    }
                    if remote {
                        <div class="litm-buttons">
                            <button id="litm-remote-estimate" onclick={on_estimate}
                                disabled={state.running || tasks.is_empty() || remote_run.is_none() || state.estimating.is_some()}>
                                { "Preview prompt and estimate" }
                            </button>
                        </div>
                        if state.remote.is_none() {
                            <p class="hint" id="litm-remote-missing">{ "Enter the remote model's name and base URL." }</p>
                        } else if needs_key {
                            <p class="hint" id="litm-remote-missing">{ "Enter your API key." }</p>
                        } else if let Some(origin) = &blocked {
                            <p class="hint" id="litm-remote-missing">{ format!("This build's Content-Security-Policy does not allow {origin}: rebuild the app with RAGSCOPE_JUDGE_ORIGINS=\"{origin}\".") }</p>
                        }
                        if let Some(e) = &state.estimate_error {
                            <p class="error" id="litm-remote-estimate-error" role="alert">{ e }</p>
                        }
                        if let Some(e) = &estimate {
                            <div class="judge-estimate" id="litm-remote-preview" data-requests={e.requests.to_string()} data-cached={e.cached.to_string()}>
                                <p id="litm-remote-summary">
                                    { format!("{} requests for {} contexts{}{} to {} · about {} input + {} output tokens at most · ",
                                        e.requests, tasks.len(),
                                        if e.utility_requests > 0 { format!(" (of them {} for p(NO-RESPONSE))", e.utility_requests) } else { String::new() },
                                        if e.cached > 0 { format!(" ({} more answered from this browser's cache)", e.cached) } else { String::new() },
                                        e.endpoint, e.input_tokens, e.output_tokens) }
                                    <strong>{ e.cost.map_or_else(|| "cost unknown".to_string(), |c| format!("about {}", money(c))) }</strong>
                                    { format!(" ({})", e.price_note) }
                                </p>
                                if !e.scoring.is_empty() {
                                    <p class="hint" id="litm-remote-scoring">{ format!("p(NO-RESPONSE): {}.", e.scoring) }</p>
                                }
                                <details>
                                    <summary>{ "First prompt" }</summary>
                                    <pre id="litm-remote-first-prompt">{ &e.first_prompt }</pre>
                                </details>
                            </div>
                        }
                    }
                    <div class="litm-buttons">
                        if remote {
                            <button id="litm-run" class="primary" disabled={!can_run} onclick={on_start_remote}>
                                { match (&estimate, tasks.is_empty()) {
                                    (_, true) => "Nothing left to run".to_string(),
                                    (Some(e), false) => format!("Start: send up to {} requests to {}", e.requests, host_of(&e.endpoint)),
                                    (None, false) => "Start (after the estimate)".to_string(),
                                } }
                            </button>
                            <button id="litm-pause" disabled={!state.running} onclick={on_pause}>{ if state.paused { "Resume" } else { "Pause" } }</button>
                        } else {
                            <button id="litm-run" disabled={!can_run} onclick={on_run}>
                                { if state.items.is_empty() {
                                    "Run".to_string()
                                } else if tasks.is_empty() {
                                    "Nothing left to run".to_string()
                                } else {
                                    format!("Run the {} contexts left", tasks.len())
                                } }
                            </button>
                        }
                        <button id="litm-cancel" disabled={!state.running} onclick={on_cancel}>{ "Cancel" }</button>
                        <button id="litm-forget" disabled={state.running} onclick={on_forget}>{ "Forget saved results" }</button>
                        <label class="remember" title="Off by default. When on, this page's results (and a remote model's replies) are kept in this browser's IndexedDB, so a reload resumes where it stopped; unticking or 'Forget everything' deletes them.">
                            <input type="checkbox" id="litm-keep" checked={state.keep} onchange={on_keep} disabled={state.running} />
                            { " Keep results in this browser" }
                        </label>
                    </div>
                    if let Some(b) = &state.backend_info {
                        <p class="hint" id="litm-backend-info" data-gpu={b.gpu.to_string()}>{ format!("{} — {}", b.label, b.reason) }</p>
                    }
                    { for progress }
                    if let Some((requests, cost)) = state.spent {
                        <p class="hint" id="litm-spent">{ format!("{requests} requests sent{}", cost.map_or_else(String::new, |c| format!(", about {}", money(c)))) }</p>
                    }
                    if failed_total > 0 {
                        <div class="error litm-failed" id="litm-failed" role="alert" data-failed={failed_total.to_string()}>
                            <p>{ format!("{failed_total} calls failed — not counted in the accuracy (the table's n is the number of answered questions); run again to retry them.") }</p>
                            <ul>
                                { for state.failed.iter().take(5).map(|((qid, p), e)| html! { <li>{ format!("{qid} at position {p}: {e}") }</li> }) }
                            </ul>
                        </div>
                    }
                    if utility_failed > 0 {
                        <div class="error litm-failed" id="litm-utility-failed" role="alert" data-failed={utility_failed.to_string()}>
                            <p>{ format!("{utility_failed} p(NO-RESPONSE) calls failed — no value is shown for them and no UDCG that needs them; Start sends them again (what succeeded comes from the cache).") }</p>
                            <ul>
                                { for state.utility_failed.iter().take(5).map(|((qid, what), e)| html! { <li>{ format!("{qid}, {what}: {e}") }</li> }) }
                            </ul>
                        </div>
                    }
                    if state.cached > 0 {
                        <p class="hint" id="litm-cached">{ format!("{} results restored from this browser's storage (same model, data and settings).", state.cached) }</p>
                    }
                    if let Some(m) = &state.message { <p class="hint" id="litm-message">{ m }</p> }
                    if let Some(e) = &state.error { <p class="error" id="litm-error" role="alert">{ e }</p> }
                </div>
                <div class="litm-results">
                    <h3>{ format!("2. What this run measured ({model_name})") }</h3>
                    <MeasuredChart k={state.k} rows={rows.clone()} model={model_name.clone()} questions={answered} />
                    { summary_table(&rows) }
                    if udcg_missing > 0 {
                        <p class="hint" id="litm-udcg-missing" data-missing={udcg_missing.to_string()}>{ format!(
                            "UDCG is “–” for {udcg_missing} contexts: it is computed only from exact p(NO-RESPONSE) of all k passages, never from a bound ({udcg_reasons}). A p(NR) shown as “≤ x” is an upper bound (the chat endpoint's top 20 logprobs did not list NO-RESPONSE's first token); pick the served model's GGUF for exact values."
                        ) }</p>
                    }
                    <div class="litm-buttons">
                        <button id="litm-export-csv" disabled={state.items.is_empty()} onclick={export("lost-in-the-middle.csv", "text/csv", litm_export::summary_csv)}>{ "Summary CSV" }</button>
                        <button id="litm-export-items" disabled={state.items.is_empty()} onclick={export("lost-in-the-middle-contexts.csv", "text/csv", litm_export::items_csv)}>{ "Every context (CSV)" }</button>
                        <button id="litm-export-svg" disabled={state.items.is_empty()} onclick={on_svg}>{ "Chart (SVG)" }</button>
                        <button id="litm-export-cli" disabled={state.utilities.is_empty()} onclick={export("litm-contexts.jsonl", "application/x-ndjson", litm_export::contexts_jsonl)}>{ "Contexts for ragscope answer (JSONL)" }</button>
                    </div>
                    <p class="hint">{ "UDCG (γ = 1/3, paper Eq. 4) uses the p(NO-RESPONSE) of each passage alone, from the same model that answers (a local model: one short forward pass per passage, k per question; an OpenAI-compatible server, OpenAI or Gemini: one utility call per passage, through the Judges layer; Anthropic gives none, so its UDCG is “–”); nDCG, MAP, MRR and P treat the one gold passage as the only relevant one. Every number comes from crates/eval, the code of the ragscope CLI." }</p>
                </div>
            </div>

            <div class="steps">
                <h3>{ "3. What the paper measured" }</h3>
                <PublishedChart />
                <p class="hint">{ "Accuracy (%) with the gold document at position 1, 5, 10, 15 or 20 of 20, multi-document QA on NQ-open, with closed-book (no documents) and oracle (the gold document alone) lines: Liu et al., “Lost in the Middle: How Language Models Use Long Contexts”, TACL 2024 (the paper's tables of the 20-document setting; code and data: nelson-liu/lost-in-the-middle). Those are 7B–175B models over 2,655 questions with the paper's retrieved distractors and its own prompt." }</p>
            </div>

            <div class="steps">
                <h3>{ "4. What this run shows, and what it does not" }</h3>
                <ul>
                    <li>{ "It shows how your model's answers, and every metric of the same contexts, change as the relevant passage moves — on a few dozen questions at most, with a band that says how uncertain each point is (a 95% bootstrap interval over questions). With 10 questions, one answer moves the accuracy by 10 points." }</li>
                    <li>{ "It is not a replication: the paper's distractors for only 3 questions, easier substitutes for the rest; small models (a 135M model answers few questions at any position); the answer prompt is the UDCG paper's unless you choose the lost-in-the-middle paper's QA or key–value prompt; answers are cut at 32 tokens and their first line is scored by the paper's normalised substring match." }</li>
                    <li>{ "With a remote LLM: each context is one request at temperature 0 (providers are not always deterministic even then); a call that fails is shown and left out, so a position's accuracy is over the questions answered there (n). p(NO-RESPONSE) comes from an OpenAI-compatible server, OpenAI or Gemini: without the model's GGUF, from the top 20 log-probabilities of the first answer token (Gemini: responseLogprobs, for the models that serve them), which give only an upper bound (“≤ x”) when NO-RESPONSE's first token is not among them — a bound is never used for UDCG; with the GGUF (OpenAI-compatible servers only), exact, from /completions echo. Anthropic's API returns no log-probabilities: “–”." }</li>
                    <li>{ "With a UDCG reference JSON: its examples have no gold answers, so there is no accuracy (“n/a”), only p(NO-RESPONSE) (local models) and the metrics; each example's first relevant passage is the one moved, its other relevant passages are left out." }</li>
                    <li>{ "Small models read long inputs differently: past about half their context window, recency tends to dominate (Veseli et al., COLM 2025), so a rising curve toward the end is not the paper's U." }</li>
                    <li>{ "The retrieval metrics do not need a model: nDCG, MAP and MRR fall with the position by definition, P is flat, and UDCG has no position discount, so it is flat too — the UDCG paper's point is that position matters little to accuracy in realistic settings (its §7), while distracting passages matter a lot." }</li>
                </ul>
                <p class="hint" id="litm-not-yet">{ "Not yet on this page: the p(NO-RESPONSE) values a UDCG reference JSON already holds (the chosen model computes its own); a chat template file instead of the served model's GGUF for exact remote values (the Judges page takes one)." }</p>
            </div>
            <p class="hint refs">{ "Data: NQ-open (Kwiatkowski et al. 2019) and Wikipedia (CC BY-SA 3.0) via nelson-liu/lost-in-the-middle (MIT); see SOURCE.txt of the bundled subset. " }
                <a href="#/learn/udcg-vs-ndcg">{ "UDCG vs nDCG" }</a>{ " builds single contexts by hand." }</p>
        </section>
    }
}

/// Fetches the bundled questions (they replace the user's own, if any).
fn fetch_bundled(d: UseReducerDispatcher<LitmState>) {
    spawn_local(async move {
        let got = async {
            let r = gloo::net::http::Request::get(DATA_URL)
                .send()
                .await
                .map_err(|e| e.to_string())?;
            if !r.ok() {
                return Err(format!("HTTP {}", r.status()));
            }
            r.json::<LitmData>().await.map_err(|e| e.to_string())
        }
        .await;
        d.dispatch(LitmAction::Data(got.map(Rc::new)));
    });
}

/// How a remote model's p(NO-RESPONSE) is read: the two ways of the Judges page's utility task
/// (crates/judge `task::utility`), or why a provider gives none.
fn remote_utility_html(
    state: &LitmState,
    on_gguf: Callback<Event>,
    on_clear: Callback<MouseEvent>,
) -> Html {
    let Some(r) = &state.remote else {
        return html! {};
    };
    if let Some(why) = ragscope_protocol::litm::no_logprobs_reason(r.provider) {
        return html! {
            <p class="hint" id="litm-remote-no-p">{ format!(
                "No p(NO-RESPONSE) and no UDCG with {}: {why}. Accuracy and nDCG, MAP, MRR and P are computed; p(NR) and UDCG stay “–”. An OpenAI-compatible server (vLLM, llama.cpp), OpenAI or Gemini gives them.",
                r.provider.label()
            ) }</p>
        };
    }
    let compatible = ragscope_protocol::litm::echo_offered(r.provider);
    let exact = matches!(state.remote_utility(), Some(UtilityTemplate::Gguf { .. }));
    html! {
        <div class="litm-remote-utility" id="litm-remote-utility" data-exact={exact.to_string()}>
            <p class="hint">{ "p(NO-RESPONSE) of each passage alone (k per question, the UDCG paper's utility prompt — the same as a local model's and `ragscope judge utility`'s) is read from the same server through the Judges layer's utility task, before the answers: the same retries, concurrency cap, cache and cost estimate. Two ways, as on the Judges page:" }</p>
            <ul class="hint">
                <li>{ "Without the model's GGUF: the top 20 log-probabilities of the first answer token (the chat endpoint's; Gemini's responseLogprobs). Exact when NO-RESPONSE's first token is among them; otherwise only an upper bound, shown as “≤ x” and never used for UDCG." }</li>
                <li>{ "With the served model's GGUF (its metadata only: chat template and tokenizer, read by this tab's worker, never uploaded): the prompt rendered as the local engine renders it, NO-RESPONSE's first token appended, sent to /completions with echo — exact, after a two-request probe that the server's echoed log-probabilities line up (a server that fails it is refused)." }</li>
            </ul>
            if compatible {
                <label class="litm-field">{ "The served model's GGUF, for exact values: " }
                    <input type="file" id="litm-remote-gguf" accept=".gguf" onchange={on_gguf} disabled={state.running} />
                </label>
                { match (&state.remote_gguf, &state.remote_gguf_read) {
                    (Some((_, name)), None) => html! { <p class="hint" aria-busy="true">{ format!("Reading {name}…") }</p> },
                    (Some(_), Some(Ok(info))) => html! {
                        <p class="hint" id="litm-remote-gguf-info">{ format!("{}: {}. Exact scoring (echo).", info.file_name, info.summary) }
                            { " " }<button id="litm-remote-gguf-clear" onclick={on_clear} disabled={state.running}>{ "Use the top 20 logprobs instead" }</button></p>
                    },
                    (Some((_, name)), Some(Err(e))) => html! { <p class="error" id="litm-remote-gguf-error" role="alert">{ format!("{name}: {e} — the top 20 logprobs are used (bounds where NO-RESPONSE is not listed).") }</p> },
                    (None, _) => html! { <p class="hint" id="litm-remote-gguf-info">{ "No GGUF picked: top 20 logprobs (bounds where NO-RESPONSE is not listed)." }</p> },
                } }
            } else if r.provider == ProviderChoice::Gemini {
                <p class="hint" id="litm-remote-gemini">{ "Gemini: the top 20 log-probabilities of the first answer token only (generationConfig.responseLogprobs; Gemini has no /completions to echo a prompt, so no GGUF here). Gemini serves them for some models only: with another, each utility call fails with the reason, and p(NR) and UDCG stay “–”. A thinking reply is refused (its log-probabilities may start with thought tokens)." }</p>
            } else {
                <p class="hint">{ "OpenAI's API: the chat endpoint's top 20 logprobs only (its /completions endpoint does not echo chat models' prompts)." }</p>
            }
        </div>
    }
}

fn summary_table(rows: &[super::litm_state::PositionSummary]) -> Html {
    let f = |v: f64| {
        if v.is_finite() {
            format!("{v:.3}")
        } else {
            "–".into()
        }
    };
    // p(NO-RESPONSE) of a small model or of a bound is often below 0.001: three significant
    // digits then, not "0.000".
    let fp = |v: f64| {
        if v > 0.0 && v < 1e-3 {
            format!("{v:.2e}")
        } else {
            f(v)
        }
    };
    html! {
        // Focusable: it scrolls sideways on narrow screens (keyboard users scroll it too).
        <div class="table-wrap" tabindex="0" role="region" aria-label="Results by position (scrolls sideways)">
            <table id="litm-table" class="litm-table">
                <caption class="visually-hidden">{ "Results by position of the relevant passage" }</caption>
                <thead><tr>
                    <th scope="col">{ "position" }</th><th scope="col">{ "n" }</th><th scope="col">{ "accuracy [95% CI]" }</th>
                    <th scope="col">{ "p(NR)" }</th><th scope="col">{ "nDCG" }</th><th scope="col">{ "MAP" }</th>
                    <th scope="col">{ "MRR" }</th><th scope="col">{ "P" }</th><th scope="col">{ "UDCG" }</th>
                </tr></thead>
                <tbody>
                    { for rows.iter().map(|r| html! {
                        <tr data-position={r.position.to_string()}>
                            <th scope="row">{ r.position }</th>
                            <td data-failed={r.failed.to_string()}>{ if r.failed > 0 { format!("{} ({} failed)", r.n, r.failed) } else { r.n.to_string() } }</td>
                            <td>{ match r.band {
                                Some((lo, hi)) if r.n > 0 => format!("{} [{}, {}]", f(r.accuracy), f(lo), f(hi)),
                                _ if r.n > 0 && r.scored == 0 => "n/a (no gold answers)".to_string(),
                                _ => f(r.accuracy),
                            } }</td>
                            <td data-bound={r.p_bound.to_string()}>{ match r.p_no_response {
                                Some(p) if r.p_bound => format!("≤ {}", fp(p)),
                                Some(p) => fp(p),
                                None => "–".into(),
                            } }</td>
                            <td>{ f(r.ndcg) }</td><td>{ f(r.map) }</td><td>{ f(r.mrr) }</td>
                            <td>{ f(r.precision) }</td>
                            <td data-udcg-missing={r.udcg_missing.to_string()}>{ f(r.udcg) }</td>
                        </tr>
                    }) }
                </tbody>
            </table>
        </div>
    }
}
