//! The Answers view's judged-answer tables: citation precision / recall / F1 per run (from
//! citation-support judgments, Open RAG Eval's CitationMetric) and pointwise grades per agent
//! (from grade CSVs), each with its per-topic values. Loaded at once when a Judges job of those
//! tasks finishes, or when such a file is loaded by hand.

use crate::export::fmt_value;
use ragscope_protocol::answer_files::{AgentGradeRow, CitationRun};
use yew::prelude::*;

pub fn citations_table(runs: &[CitationRun]) -> Html {
    if runs.is_empty() {
        return html! {};
    }
    html! {
        <>
        <h2 id="answers-citations-head">{ "Citation support" }</h2>
        <div class="table-wrap">
        <table id="answers-citations">
            <caption class="visually-hidden">{ "Citation precision, recall and F1 per run" }</caption>
            <thead><tr>
                <th scope="col">{ "run" }</th>
                <th scope="col" class="num" title="answers with citation judgments">{ "answers" }</th>
                <th scope="col" class="num" title="mean over cited passages of their support (full 1, partial ½, none 0)">{ "precision" }</th>
                <th scope="col" class="num" title="mean over sentences of their citations' support">{ "recall" }</th>
                <th scope="col" class="num">{ "F1" }</th>
            </tr></thead>
            <tbody>
            { for runs.iter().map(|r| html! {
                <tr data-run={r.run.clone()} title={r.file.clone()}>
                    <th scope="row">{ &r.run }</th>
                    <td class="num">{ r.scored }</td>
                    <td class="num" data-measure="precision" data-value={r.precision.to_string()}>{ fmt_value(r.precision) }</td>
                    <td class="num" data-measure="recall" data-value={r.recall.to_string()}>{ fmt_value(r.recall) }</td>
                    <td class="num" data-measure="f1" data-value={r.f1.to_string()}>{ fmt_value(r.f1) }</td>
                </tr>
            }) }
            </tbody>
        </table>
        </div>
        <details class="per-topic" id="answers-citations-topics">
            <summary>{ "Per topic" }</summary>
            <div class="table-wrap">
            <table class="compact">
                <thead><tr>
                    <th scope="col">{ "run" }</th><th scope="col">{ "topic" }</th>
                    <th scope="col" class="num">{ "precision" }</th><th scope="col" class="num">{ "recall" }</th>
                    <th scope="col" class="num">{ "F1" }</th>
                </tr></thead>
                <tbody>
                { for runs.iter().flat_map(|r| r.topics.iter().map(move |(q, p, rc, f)| html! {
                    <tr data-run={r.run.clone()} data-qid={q.clone()}>
                        <td>{ &r.run }</td><td>{ q }</td>
                        <td class="num">{ fmt_value(*p) }</td><td class="num">{ fmt_value(*rc) }</td>
                        <td class="num">{ fmt_value(*f) }</td>
                    </tr>
                })) }
                </tbody>
            </table>
            </div>
        </details>
        <p class="hint">{ "Open RAG Eval's citation metric: each (sentence, cited passage) judged full 1, partial ½, none 0; precision = mean over cited passages, recall = mean over sentences, F1 their harmonic mean; run scores are means over answers. A judgments file lists cited sentences only, so sentences without citations are not in the recall; failed judgments are left out, never scored." }</p>
        </>
    }
}

pub fn grades_table(agents: &[AgentGradeRow]) -> Html {
    if agents.is_empty() {
        return html! {};
    }
    let grade = |g: Option<f64>| match g {
        Some(v) => html! { <span class="v">{ format!("{v}") }</span> },
        None => {
            html! { <span class="tag failed" title="the judgment failed: not scored">{ "failed" }</span> }
        }
    };
    html! {
        <>
        <h2 id="answers-grades-head">{ "Pointwise grades" }</h2>
        <div class="table-wrap">
        <table id="answers-grades">
            <caption class="visually-hidden">{ "Mean pointwise grade per agent" }</caption>
            <thead><tr>
                <th scope="col">{ "agent" }</th>
                <th scope="col" class="num" title="mean over graded queries (0–2)">{ "mean grade" }</th>
                <th scope="col" class="num">{ "graded" }</th>
                <th scope="col" class="num" title="failed judgments: shown, never scored">{ "failed" }</th>
            </tr></thead>
            <tbody>
            { for agents.iter().map(|a| html! {
                <tr data-agent={a.agent.clone()} title={a.file.clone()}>
                    <th scope="row">{ &a.agent }</th>
                    <td class="num" data-measure="mean" data-value={a.mean.map(|m| m.to_string()).unwrap_or_default()}>
                        { a.mean.map_or("n/a".to_string(), fmt_value) }</td>
                    <td class="num" data-measure="graded">{ a.graded }</td>
                    <td class="num" data-measure="failed">{ a.failed }</td>
                </tr>
            }) }
            </tbody>
        </table>
        </div>
        <details class="per-topic" id="answers-grades-queries">
            <summary>{ "Per query" }</summary>
            <div class="table-wrap">
            <table class="compact">
                <thead><tr><th scope="col">{ "agent" }</th><th scope="col">{ "query" }</th><th scope="col" class="num">{ "grade" }</th></tr></thead>
                <tbody>
                { for agents.iter().flat_map(|a| a.queries.iter().map(move |(q, g)| html! {
                    <tr data-agent={a.agent.clone()} data-qid={q.clone()}>
                        <td>{ &a.agent }</td><td>{ q }</td><td class="num">{ grade(*g) }</td>
                    </tr>
                })) }
                </tbody>
            </table>
            </div>
        </details>
        <p class="hint">{ "Grades 0–2 (RAGElo-style pointwise judge); an agent's mean is over its graded queries. Failed judgments are listed as failed and never scored." }</p>
        </>
    }
}
