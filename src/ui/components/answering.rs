//! "Answer the contexts" (in the compute-locally panel): the picked model answers every context
//! of a loaded context-set file or UDCG JSON in the worker, as `ragscope answer` does; the
//! outcomes go straight to the correlation study (the answered file becomes the loaded context
//! sets) and the file downloads as the CLI's ANSWERS.jsonl.

use crate::ui::answering_state::AnsweringState;
use crate::ui::components::form_inputs::{on_checked, on_count, on_select};
use crate::ui::download::save_text;
use ragscope_protocol::answer_generation::{
    AnswerProgress, AnswerSource, AnswerStart, AnswersDone,
};
use ragscope_protocol::compute::{BackendChoice, ComputeRequest};
use ragscope_protocol::FileId;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: AnsweringState,
    pub has_model: bool,
    /// Utilities are being computed (one run at a time).
    pub busy: bool,
    pub backend: BackendChoice,
    /// Loaded context-set files and UDCG JSON files, (id, name).
    pub contexts_files: Vec<(FileId, String)>,
    pub udcg_files: Vec<(FileId, String)>,
    pub on_request: Callback<ComputeRequest>,
}

fn clock(seconds: f64) -> String {
    let s = seconds.round() as u64;
    format!("{}:{:02}", s / 60, s % 60)
}

fn parse_source(value: &str) -> Option<AnswerSource> {
    let (kind, id) = value.split_once(':')?;
    let id: FileId = id.parse().ok()?;
    match kind {
        "contexts" => Some(AnswerSource::Contexts(id)),
        "udcg" => Some(AnswerSource::Udcg(id)),
        _ => None,
    }
}

fn outcomes_line(p: &AnswerProgress) -> Html {
    let o = p.outcomes;
    html! {
        <span class="answer-outcomes" id="answer-outcomes" data-correct={o.correct.to_string()}
            data-abstain={o.abstain.to_string()} data-wrong={o.wrong.to_string()}>
            { format!("{} correct · {} abstained · {} wrong", o.correct, o.abstain, o.wrong) }
        </span>
    }
}

fn done_view(d: &AnswersDone) -> Html {
    let (name, jsonl) = (d.name.clone(), d.jsonl.clone());
    let p = &d.progress;
    html! {
        <div class="compute-done" id="answer-done" data-file={d.name.clone()}>
            <p>
                { format!("{} questions, {} prompts answered in {:.1} s on {} ({:.0} generated tokens/s): ",
                    p.questions, p.done, p.seconds, d.backend, p.tokens_per_s()) }
                { outcomes_line(p) }
                { format!(". Loaded as {} — the correlation study is in the RAG tab. ", d.name) }
                <button id="answer-download"
                    onclick={Callback::from(move |_| save_text(&name, "application/jsonl", &jsonl))}>
                    { "Download answers (JSONL, as ragscope answer writes it)" }
                </button>
            </p>
        </div>
    }
}

#[function_component(AnswerPanel)]
pub fn answer_panel(props: &Props) -> Html {
    let chosen = use_state(|| None::<String>);
    let erag = use_state(|| false);
    let max_new = use_state(|| 64usize);
    let s = &props.state;
    let options: Vec<(String, String)> = props
        .contexts_files
        .iter()
        .map(|(id, name)| (format!("contexts:{id}"), format!("{name} (context sets)")))
        .chain(props.udcg_files.iter().map(|(id, name)| {
            (
                format!("udcg:{id}"),
                format!("{name} (UDCG JSON: one context per example)"),
            )
        }))
        .collect();
    let value = (*chosen)
        .clone()
        .filter(|v| options.iter().any(|(o, _)| o == v))
        .or_else(|| options.first().map(|(v, _)| v.clone()));
    let source = value.as_deref().and_then(parse_source);
    let can_start = props.has_model && source.is_some() && !props.busy && s.running.is_none();

    let on_source = {
        let chosen = chosen.clone();
        on_select(move |v| chosen.set(Some(v)))
    };
    let on_erag = {
        let erag = erag.clone();
        on_checked(move |on| erag.set(on))
    };
    let on_max_new = {
        let max_new = max_new.clone();
        on_count(move |v| max_new.set(v))
    };
    let send = |r: ComputeRequest| {
        let on_request = props.on_request.clone();
        Callback::from(move |_: MouseEvent| on_request.emit(r.clone()))
    };
    let on_start = {
        let on_request = props.on_request.clone();
        let (backend, erag, max_new_tokens) = (props.backend, *erag, *max_new);
        Callback::from(move |_: MouseEvent| {
            if let Some(source) = source {
                on_request.emit(ComputeRequest::Answer(AnswerStart {
                    source,
                    result: 0,
                    backend,
                    erag,
                    max_new_tokens,
                }));
            }
        })
    };

    let progress = s.running.map(|p| {
        let eta = p.eta_seconds().map(clock).unwrap_or_else(|| "—".into());
        html! {
            <div class="compute-progress" id="answer-progress" data-done={p.done.to_string()} data-total={p.total.to_string()}>
                <progress max={p.total.max(1).to_string()} value={p.done.to_string()} />
                <span>{ format!("{} / {} prompts ({} / {} questions) · {:.1} generated tokens/s · ETA {} · ",
                    p.done, p.total, p.questions_done, p.questions, p.tokens_per_s(), eta) }</span>
                { outcomes_line(&p) }
                if p.paused { <span>{ " · paused " }</span> }
                if p.paused {
                    <button id="answer-resume" onclick={send(ComputeRequest::Resume)}>{ "Resume" }</button>
                } else {
                    <button id="answer-pause" onclick={send(ComputeRequest::Pause)}>{ "Pause" }</button>
                }
                <button id="answer-cancel" class="danger" onclick={send(ComputeRequest::Cancel)}>{ "Cancel" }</button>
            </div>
        }
    });

    html! {
        <div class="compute-answers" id="answers-local">
            <h3>{ "Answer the contexts (end-to-end outcomes)" }</h3>
            <p class="note">
                { "The model answers every context greedily with the paper's prompt (one \"Document:\" line per passage) \
                   through its chat template, as `ragscope answer` does; each answer's outcome is abstained (NO-RESPONSE), \
                   correct (a gold answer is a substring of the answer, both normalised as in the lost-in-the-middle \
                   scorer) or wrong — a context without a relevant passage is never correct (the paper's rule). The \
                   answered file becomes the loaded context sets, so the correlation study (RAG tab) uses the outcomes at once." }
            </p>
            <div class="compute-start">
                <label>
                    { "Contexts from: " }
                    <select id="answer-source" onchange={on_source} disabled={options.is_empty()}>
                        { for options.iter().map(|(v, label)| html! {
                            <option value={v.clone()} selected={Some(v) == value.as_ref()}>{ label }</option>
                        }) }
                    </select>
                </label>
                <label>
                    { " max new tokens: " }
                    <input type="number" id="answer-max-new" min="1" value={max_new.to_string()} onchange={on_max_new} />
                </label>
                <label>
                    <input type="checkbox" id="answer-erag" checked={*erag} onchange={on_erag} />
                    { " also answer each passage alone (eRAG scores)" }
                </label>
                if options.is_empty() {
                    <span class="note">{ " load context sets (JSON Lines with question, answers, passage texts and contexts — the input of `ragscope answer`) or a UDCG JSON with gold answers" }</span>
                }
                <button id="answer-start" disabled={!can_start} onclick={on_start}>{ "Answer the contexts" }</button>
            </div>
            if let Some(b) = &s.backend {
                <p class="compute-backend" id="answer-backend" data-backend={if b.gpu { "gpu" } else { "cpu" }}>
                    <strong>{ format!("Answering on {}", b.label) }</strong>
                    { format!(" — {}", b.reason) }
                </p>
            }
            { for progress }
            if let Some(d) = &s.finished { { done_view(d) } }
        </div>
    }
}
