//! `#/judges`: the Judges panel. Pick a provider, model and key, the task and the loaded files it
//! needs; see the first prompt and the estimate; confirm; follow the job (pause, resume,
//! cancel) and its failures; the qrels it produces are loaded like any file.
//!
//! Nothing here talks to the network: the worker does, after Start.

use super::drop_zone::DropZone;
use super::file_list::FileList;
use super::judge_batch::{BatchChoice, BatchStatus, KeptBatches};
use super::judge_inputs::TaskInputsPanel;
use super::provider_fields::ProviderFields;
use crate::ui::download;
use crate::ui::judges_state::{JobPhase, JobView, JudgeAction, JudgeInputs, JudgeState};
use crate::ui::persist;
use crate::ui::state::{FileStatus, LoadedFile, Tab};
use ragscope_platform::stores::JUDGE_CACHE;
use ragscope_protocol::judges::{JudgeRequest, JudgeTaskChoice, Secret};
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::spawn_local;
use web_sys::HtmlInputElement;
use yew::prelude::*;

/// Rows of the failures table, at most (a provider that is down fails every item).
const FAILURES_SHOWN: usize = 200;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub files: Vec<LoadedFile>,
    pub state: UseReducerHandle<JudgeState>,
    /// Sends a request to the worker.
    pub on_request: Callback<JudgeRequest>,
    pub on_files: Callback<Vec<web_sys::File>>,
    pub on_paste: Callback<String>,
    pub on_remove: Callback<u32>,
    /// The next ticket or job id (unique for the page's lifetime).
    pub next_id: Callback<(), u32>,
    /// Selects the Evaluate page's tab that shows a job's result (before the link goes there).
    #[prop_or_default]
    pub on_show_tab: Callback<Tab>,
}

fn input_value(e: &Event) -> String {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
        .map(|i| i.value())
        .unwrap_or_default()
}

/// `$0.0123`, with more digits for tiny amounts so they do not read as zero.
pub fn money(usd: f64) -> String {
    if usd == 0.0 {
        "$0".into()
    } else if usd < 0.01 {
        format!("${usd:.5}")
    } else {
        format!("${usd:.2}")
    }
}

fn duration(s: f64) -> String {
    let s = s.max(0.0).round() as u64;
    match s {
        s if s >= 3600 => format!("{}h {:02}m", s / 3600, (s % 3600) / 60),
        s if s >= 60 => format!("{}m {:02}s", s / 60, s % 60),
        s => format!("{s}s"),
    }
}

/// The host the requests go to, as the confirmation names it.
pub fn host_of(url: &str) -> &str {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    rest.split('/').next().unwrap_or(rest)
}

/// "Reading passages.jsonl (120 MB of 800 MB)…" while files load (the Evaluate page has bars).
fn reading_note(files: &[LoadedFile]) -> Option<String> {
    let reading: Vec<String> = files
        .iter()
        .filter_map(|f| match f.status {
            FileStatus::Reading { bytes, size } => Some(format!(
                "{} ({} of {})",
                f.name,
                super::progress::human_bytes(bytes),
                super::progress::human_bytes(size)
            )),
            FileStatus::Loaded { .. } => None,
        })
        .collect();
    (!reading.is_empty()).then(|| format!("Reading {}…", reading.join(", ")))
}

/// Whether the page's CSP (its `<meta>` tag) lets the worker fetch `url`.
pub fn page_may_connect(url: &str) -> bool {
    let policy = gloo::utils::document()
        .query_selector("meta[http-equiv=\"Content-Security-Policy\"]")
        .ok()
        .flatten()
        .and_then(|m| m.get_attribute("content"));
    let page = gloo::utils::window().location().href().unwrap_or_default();
    policy.is_none_or(|p| crate::ui::csp::connect_allowed(&p, &page, url))
}

#[function_component(JudgesPage)]
pub fn judges_page(props: &Props) -> Html {
    let state = props.state.clone();
    let inputs = JudgeInputs::of(&props.files);
    let form = &state.form;
    let spec = form.spec(&inputs);
    let estimate = state.current_estimate(&inputs).cloned();
    let estimated_task = form.task;
    let running = state.running();
    let batch_offered = state.batch_offered(&inputs);
    let batch_chosen = batch_offered && form.batch;

    // Batches an earlier page left in this browser: listed on arrival and after each job (a
    // batch job collects them); the `?batch-at=N` threshold is read once.
    {
        let d = state.dispatcher();
        let send = props.on_request.clone();
        let job_done = state
            .job
            .as_ref()
            .map(|j| (j.id, j.phase == JobPhase::Done));
        use_effect_with(job_done, move |_| {
            let query = gloo::utils::window()
                .location()
                .search()
                .unwrap_or_default();
            d.dispatch(JudgeAction::SetBatchThreshold(
                ragscope_protocol::judge_batch::threshold_of_query(&query),
            ));
            send.emit(JudgeRequest::KeptBatches);
        });
    }

    let set_input = |make: fn(String) -> JudgeAction| {
        let d = state.dispatcher();
        Callback::from(move |e: InputEvent| d.dispatch(make(input_value(&e.into()))))
    };
    let on_estimate = {
        let d = state.dispatcher();
        let send = props.on_request.clone();
        let next_id = props.next_id.clone();
        let spec = spec.clone();
        Callback::from(move |_: MouseEvent| {
            if let Ok(spec) = &spec {
                let ticket = next_id.emit(());
                d.dispatch(JudgeAction::EstimateRequested {
                    ticket,
                    spec: spec.clone(),
                });
                send.emit(JudgeRequest::Estimate {
                    ticket,
                    spec: spec.clone(),
                });
            }
        })
    };
    let on_batch = {
        let d = state.dispatcher();
        Callback::from(move |on: bool| d.dispatch(JudgeAction::SetBatch(on)))
    };
    let on_keep = {
        let d = state.dispatcher();
        Callback::from(move |e: Event| {
            let on = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
                .is_some_and(|i| i.checked());
            d.dispatch(JudgeAction::SetKeepReplies(on));
            // Unticking withdraws the consent: the kept replies and batch ids go (as unticking
            // "Remember my files here" deletes the files).
            spawn_local(async move {
                let _ = persist::set_consent(JUDGE_CACHE, on).await;
            });
        })
    };
    let on_start = {
        let d = state.dispatcher();
        let send = props.on_request.clone();
        let next_id = props.next_id.clone();
        let spec = state.start_spec(&inputs);
        let key = form.key.trim().to_string();
        Callback::from(move |_: MouseEvent| {
            if let Ok(spec) = &spec {
                let job = next_id.emit(());
                d.dispatch(JudgeAction::Started {
                    job,
                    spec: spec.clone(),
                });
                send.emit(JudgeRequest::Start {
                    job,
                    spec: spec.clone(),
                    key: (!key.is_empty()).then(|| Secret(key.clone())),
                });
            }
        })
    };
    let control = |action: JudgeAction, make: fn(u32) -> JudgeRequest| {
        let d = state.dispatcher();
        let send = props.on_request.clone();
        let job = state.job.as_ref().map(|j| j.id);
        Callback::from(move |_: MouseEvent| {
            if let Some(job) = job {
                d.dispatch(action.clone());
                send.emit(make(job));
            }
        })
    };
    let on_pause = control(JudgeAction::Pause, |job| JudgeRequest::Pause { job });
    let on_resume = control(JudgeAction::Resume, |job| JudgeRequest::Resume { job });
    let on_cancel = control(JudgeAction::Cancel, |job| JudgeRequest::Cancel { job });

    let needs_key = form.provider.needs_key() && form.key.trim().is_empty();
    let blocked = spec
        .as_ref()
        .ok()
        .filter(|s| !page_may_connect(&s.base_url))
        .map(|s| crate::ui::csp::origin_text(&s.base_url));
    let missing = match (&spec, needs_key, &blocked) {
        (Err(e), _, _) => Some(e.clone()),
        (Ok(_), _, Some(origin)) => Some(format!(
            "This build's Content-Security-Policy does not allow {origin}: rebuild the app with \
             RAGSCOPE_JUDGE_ORIGINS=\"{origin}\" (the providers' APIs and local servers are allowed)."
        )),
        (Ok(_), true, _) => Some(format!("Enter your {} API key.", form.provider.label())),
        _ => None,
    };

    html! {
        <section class="judges" aria-labelledby="judges-title">
            <h2 id="judges-title">{ "LLM judges" }</h2>
            <p class="hint">
                { "Judge with a large language model: UMBRELA relevance (0–3) of a run's top-k passages (TREC qrels), AutoNuggetizer nuggets and their support in answers (nuggetizer JSONL), RAGElo pairwise battles (pairwise CSV), pointwise grades and citation support, and passage utilities p(NO-RESPONSE) from an OpenAI-compatible server (vLLM, llama.cpp), OpenAI or Gemini (their log-probabilities), each from the files loaded here; results are loaded at once into the Evaluate, Answers, Tournament and RAG views. Requests go from this browser straight to the provider you choose, with your key, and only after you press Start. Replies are kept in this tab's memory, so a rerun does not pay twice; they are kept in this browser (and a reload resumes) only if you tick “Keep replies in this browser” beside Start." }
            </p>
            <DropZone on_files={props.on_files.clone()} on_paste={props.on_paste.clone()} />
            <FileList files={props.files.clone()} on_remove={props.on_remove.clone()} />
            if let Some(reading) = reading_note(&props.files) {
                <p class="hint" aria-live="polite" id="judge-reading">{ reading }</p>
            }

            <form class="judge-form" onsubmit={Callback::from(|e: SubmitEvent| e.prevent_default())}>
                <fieldset disabled={running}>
                    <legend>{ "Provider" }</legend>
                    <ProviderFields state={state.clone()} id_prefix="judge" />
                </fieldset>
                <fieldset disabled={running}>
                    <legend>{ "Task and inputs" }</legend>
                    <TaskInputsPanel inputs={inputs.clone()} form={form.clone()} dispatch={state.dispatcher()}
                        on_request={props.on_request.clone()} next_id={Some(props.next_id.clone())} />
                </fieldset>
                <fieldset disabled={running}>
                    <legend>{ "Limits" }</legend>
                    <label class="control narrow">
                        <span>{ "Concurrency" }</span>
                        <input id="judge-concurrency" type="number" min="1" max="64" value={form.concurrency.clone()}
                            oninput={set_input(JudgeAction::SetConcurrency)} />
                    </label>
                    <label class="control narrow">
                        <span>{ "Max cost (USD)" }</span>
                        <input id="judge-max-cost" type="text" inputmode="decimal" placeholder="none"
                            value={form.max_cost.clone()} oninput={set_input(JudgeAction::SetMaxCost)} />
                    </label>
                    <label class="control narrow">
                        <span>{ "Max tokens" }</span>
                        <input id="judge-max-tokens" type="text" inputmode="numeric" placeholder="none"
                            value={form.max_tokens.clone()} oninput={set_input(JudgeAction::SetMaxTokens)} />
                    </label>
                </fieldset>
            </form>

            <div class="judge-actions">
                <button id="judge-estimate" type="button" onclick={on_estimate}
                    disabled={spec.is_err() || running || state.estimating.is_some()}>
                    { "Preview prompt and estimate" }
                </button>
                if let Some(why) = &missing {
                    <span class="hint" id="judge-missing">{ why }</span>
                }
            </div>
            if let Some(error) = &state.estimate_error {
                <p class="error-text" id="judge-estimate-error" role="alert">{ error }</p>
            }
            if let Some(e) = &estimate {
                <section class="judge-estimate" id="judge-preview" aria-label="Estimate and first prompt"
                    data-requests={e.requests.to_string()} data-input-tokens={e.input_tokens.to_string()}>
                    <p id="judge-estimate-summary">
                        { format!("{} requests for {} {}{} to {} · about {} input + {} output tokens · ",
                            e.requests, e.items, estimated_task.item_noun(),
                            if estimated_task == JudgeTaskChoice::NuggetsCreate { ", later rounds not counted" } else { "" },
                            e.endpoint, e.input_tokens, e.output_tokens) }
                        <strong>{ e.cost.map_or_else(|| "cost unknown".to_string(), |c| format!("about {}", money(c))) }</strong>
                        { format!(" ({})", e.price_note) }
                    </p>
                    if !e.skipped.is_empty() {
                        <p class="hint">{ format!("Skipped: {}", e.skipped.join("; ")) }</p>
                    }
                    <details open=true>
                        <summary>{ "First prompt" }</summary>
                        <pre id="judge-first-prompt">{ &e.first_prompt }</pre>
                    </details>
                    <BatchChoice provider={form.provider} requests={e.requests} threshold={state.batch_threshold}
                        cost={e.cost} batch_cost={e.batch_cost} checked={form.batch} disabled={running}
                        on_toggle={on_batch} />
                    <label class="judge-keep-choice" title="Off by default. When on, the provider's replies (and batch ids) are kept in this browser's IndexedDB, never with your key; without it they live in this tab's memory only, so a rerun in this tab still pays nothing. Unticking or 'Forget everything' deletes them.">
                        <input id="judge-keep" type="checkbox" checked={form.keep_replies} disabled={running} onchange={on_keep} />
                        { " Keep replies in this browser so a reload resumes without paying twice" }
                    </label>
                    if batch_chosen && !form.keep_replies {
                        <p class="hint" id="judge-batch-unkept">
                            { "The batch ids are not kept: a reload before the batch is collected loses its results (they are still paid for). Tick “Keep replies in this browser” to keep them." }
                        </p>
                    }
                    if !running {
                        <button id="judge-start" class="primary" type="button" onclick={on_start}
                            disabled={needs_key || blocked.is_some()}>
                            { if batch_chosen {
                                format!("Start: submit a batch of {} requests to {}", e.requests, host_of(&e.endpoint))
                            } else {
                                format!("Start: send up to {} requests to {}", e.requests, host_of(&e.endpoint))
                            } }
                        </button>
                    }
                </section>
            }
            if !running {
                <KeptBatches runs={state.kept.clone()} />
            }
            if let Some(job) = &state.job {
                { job_view(job, on_pause, on_resume, on_cancel, props.on_show_tab.clone()) }
            }
        </section>
    }
}

fn job_view(
    job: &JobView,
    on_pause: Callback<MouseEvent>,
    on_resume: Callback<MouseEvent>,
    on_cancel: Callback<MouseEvent>,
    on_show_tab: Callback<Tab>,
) -> Html {
    let p = &job.progress;
    // A batch job waits for its batches before the run counts anything.
    let batch_waiting = job.batch.is_some() && p.total == 0 && job.phase != JobPhase::Done;
    let status = match job.phase {
        JobPhase::Running if batch_waiting => "Batch",
        JobPhase::Running => "Running",
        JobPhase::Paused => "Paused",
        JobPhase::Cancelling => "Cancelling",
        JobPhase::Done => "Done",
    };
    let mut text = format!(
        "{} of {} · {} cached · {} failed · {} tokens ({} in, {} out)",
        p.done,
        p.total,
        p.cached,
        p.failed,
        p.input_tokens + p.output_tokens,
        p.input_tokens,
        p.output_tokens
    );
    if let Some(c) = p.cost {
        text.push_str(&format!(" · {}", money(c)));
    }
    if let Some(eta) = p.eta_s.filter(|_| job.phase == JobPhase::Running) {
        text.push_str(&format!(" · ETA {}", duration(eta)));
    }
    let task = job.spec.task();
    let download = job.outcome.clone().map(|o| {
        Callback::from(move |_: MouseEvent| {
            let mime = if o.name.ends_with(".csv") {
                "text/csv"
            } else if o.name.ends_with(".json") {
                "application/json"
            } else {
                "text/plain"
            };
            download::save_text(&o.name, mime, &o.qrels);
        })
    });
    let (what, view, tab) = result_words(task);
    let on_view = tab.map(|t| Callback::from(move |_: MouseEvent| on_show_tab.emit(t)));
    html! {
        <section class="judge-job" id="judge-job" aria-live="polite" aria-label="Judge job"
            data-phase={status.to_lowercase()} data-done={p.done.to_string()} data-total={p.total.to_string()}
            data-cached={p.cached.to_string()} data-failed={p.failed.to_string()}>
            // While the batch runs nothing is judged yet: its table below says where it stands.
            if !batch_waiting {
                <div class="progress-row" id="judge-progress">
                    <span class="progress-name">{ status }</span>
                    <progress max={p.total.max(1).to_string()} value={p.done.to_string()}
                        aria-label="Items judged"></progress>
                    <span class="progress-text" id="judge-progress-text">{ text }</span>
                </div>
            }
            <div class="judge-actions">
                if job.phase == JobPhase::Running && !batch_waiting {
                    <button id="judge-pause" type="button" onclick={on_pause}>{ "Pause" }</button>
                }
                if job.phase == JobPhase::Paused {
                    <button id="judge-resume" type="button" onclick={on_resume}>{ "Resume" }</button>
                }
                if matches!(job.phase, JobPhase::Running | JobPhase::Paused) {
                    <button id="judge-cancel" class="ghost danger" type="button" onclick={on_cancel}>{ "Cancel" }</button>
                }
            </div>
            <BatchStatus update={job.batch.clone()} />
            if let Some(error) = &job.error {
                <p class="error-text" role="alert" id="judge-error">{ error }</p>
            }
            if let Some(o) = &job.outcome {
                <p id="judge-result" data-judged={o.judged.to_string()} data-failed={o.failed.to_string()}>
                    { format!("{} {} judged, {} failed{}. ", o.judged, if matches!(task, JudgeTaskChoice::Umbrela | JudgeTaskChoice::Utility) { "passages" } else { "items" }, o.failed,
                        o.stopped.as_ref().map(|s| format!(" — stopped: {s}")).unwrap_or_default()) }
                    if o.judged > 0 {
                        if let Some(on_view) = on_view {
                            { format!("Loaded as {}: ", o.view.as_ref().map_or(&o.name, |(n, _)| n)) }
                            <a href="#/" id="judge-result-view" onclick={on_view}>{ view }</a>{ " shows it now. " }
                        } else {
                            <span id="judge-result-noview">{ view }</span>{ " " }
                        }
                        <button id="judge-download" type="button" class="ghost" onclick={download.unwrap_or_default()}>
                            { format!("Download {what}") }
                        </button>
                    }
                </p>
                if let Some(note) = &o.note {
                    <p class="hint" id="judge-result-note">{ note }</p>
                }
            }
            if !job.failures.is_empty() {
                <table class={classes!("judge-failures", (task != JudgeTaskChoice::Umbrela).then_some("keyed"))} id="judge-failures">
                    <caption>{ format!("{} failed items (no judgment was made up for them)", job.failures.len()) }</caption>
                    <thead><tr>
                        <th scope="col">{ "qid" }</th><th scope="col">{ if task == JudgeTaskChoice::Umbrela { "docno" } else { "item" } }</th>
                        <th scope="col">{ "error" }</th><th scope="col">{ "attempts" }</th>
                        <th scope="col">{ "raw reply" }</th>
                    </tr></thead>
                    <tbody>
                        { for job.failures.iter().take(FAILURES_SHOWN).map(|f| html! {
                            <tr data-qid={f.qid.clone()} data-docno={f.docno.clone()}>
                                <td>{ &f.qid }</td><td>{ &f.docno }</td>
                                <td class="failure-error">{ &f.error }</td>
                                <td class="num">{ f.attempts }</td>
                                <td class="failure-raw">{ match &f.raw {
                                    Some(raw) => html! { <details><summary>{ "show" }</summary><pre>{ raw }</pre></details> },
                                    None => html! { "—" },
                                } }</td>
                            </tr>
                        }) }
                    </tbody>
                    if job.failures.len() > FAILURES_SHOWN {
                        <tfoot><tr><td colspan="5">
                            { format!("… and {} more", job.failures.len() - FAILURES_SHOWN) }
                        </td></tr></tfoot>
                    }
                </table>
            }
        </section>
    }
}

/// The result's name for the download button, the view that shows it (or why none does), and
/// that view's tab.
fn result_words(task: JudgeTaskChoice) -> (&'static str, &'static str, Option<Tab>) {
    match task {
        JudgeTaskChoice::Umbrela => ("qrels", "Evaluate (Scores)", Some(Tab::Scores)),
        JudgeTaskChoice::NuggetsCreate | JudgeTaskChoice::NuggetsScore => {
            ("nuggets JSONL", "Evaluate → Answers", Some(Tab::Answers))
        }
        JudgeTaskChoice::NuggetsAssign => (
            "assignments JSONL",
            "Evaluate → Answers",
            Some(Tab::Answers),
        ),
        JudgeTaskChoice::Pairwise => (
            "pairwise CSV",
            "Evaluate → Tournament",
            Some(Tab::Tournament),
        ),
        JudgeTaskChoice::Pointwise => ("grades CSV", "Evaluate → Answers", Some(Tab::Answers)),
        JudgeTaskChoice::Citations => (
            "citation judgments JSONL",
            "Evaluate → Answers",
            Some(Tab::Answers),
        ),
        JudgeTaskChoice::Utility => ("utilities", "Evaluate → RAG", Some(Tab::Rag)),
    }
}
