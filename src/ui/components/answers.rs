//! The Answers view: nugget scores of answer runs (V_strict first) with significance against the
//! first run, V_strict against answer length with the Pareto frontier (the TREC 2024 RAG
//! report's Figure 7), the per-topic nugget matrix, and an answer drill-down.

use super::charts::{truncate, ChartFrame, SERIES};
use crate::charts::pareto::frontier;
use crate::charts::{format_tick, nice_ticks, LinearScale};
use crate::export::{self, fmt_value, is_best, significant, TableFormat, ALPHA};
use crate::ui::download;
use ragscope_protocol::answer_files::{
    AnswersMode, AnswersReport, CELL_FAILED, CELL_NOT, CELL_PARTIAL, CELL_SUPPORT,
};
use ragscope_protocol::{MeasureInfo, Report};
use std::rc::Rc;
use web_sys::HtmlSelectElement;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: Rc<Report>,
}

const EXPLAIN: [&str; 7] = [
    "Vital strict: share of vital nuggets fully supported (TREC 2024 RAG primary score)",
    "Vital: vital nuggets, partial support counts ½",
    "Weighted strict: vital nuggets weight 1, okay ½, full support only",
    "Weighted: vital 1, okay ½, partial support ½",
    "All strict: share of all nuggets fully supported",
    "All: all nuggets, partial support counts ½",
    "Answer length in words",
];

/// The mode's table as a `Report`, so the app's table exports apply unchanged.
fn as_report(a: &AnswersReport, mode: &AnswersMode, test: ragscope_protocol::SigTest) -> Report {
    Report {
        qrels: format!("nugget scores ({})", mode.compat),
        measures: a
            .scores
            .iter()
            .zip(EXPLAIN)
            .map(|(name, e)| MeasureInfo {
                name: name.clone(),
                trec_name: None,
                explanation: e.to_string(),
            })
            .collect(),
        runs: mode.runs.clone(),
        topics: a.topics.clone(),
        baseline: mode.baseline,
        test,
        ..Report::default()
    }
}

fn select_value(e: &Event) -> Option<String> {
    e.target_dyn_into::<HtmlSelectElement>().map(|s| s.value())
}

#[function_component(AnswersView)]
pub fn answers_view(props: &Props) -> Html {
    let mode_index = use_state(|| 0usize);
    let topic = use_state(|| None::<String>);
    let detail = use_state(|| None::<usize>);
    let Some(answers) = props.report.answers.as_ref() else {
        return html! {
            <div class="placeholder">
                <p>{ "Load nuggetizer assignment files (JSONL), TREC 2024 RAG answers, Open RAG Eval CSVs, citation-support judgments or pointwise grades to see nugget, citation and grade scores." }</p>
            </div>
        };
    };
    let Some(mode) = answers.modes.get(*mode_index).or(answers.modes.first()) else {
        return html! {};
    };
    let table = Rc::new(as_report(answers, mode, props.report.test));
    let on_mode = {
        let m = mode_index.clone();
        Callback::from(move |e: Event| {
            if let Some(v) = select_value(&e).and_then(|v| v.parse().ok()) {
                m.set(v)
            }
        })
    };
    let export_button = |format: TableFormat| {
        let table = table.clone();
        let compat = mode.compat.clone();
        let onclick = Callback::from(move |_| {
            download::save_text(
                &format!("ragscope-nuggets-{compat}.{}", format.extension()),
                format.mime(),
                &export::table(&table, format),
            )
        });
        html! { <button class="ghost small" id={format!("answers-export-{}", format.extension())} {onclick}>{ format.label() }</button> }
    };
    let baseline = mode
        .runs
        .get(mode.baseline)
        .map(|r| r.name.clone())
        .unwrap_or_default();
    let current_topic = (*topic)
        .clone()
        .filter(|t| answers.topics.contains(t))
        .or_else(|| answers.topics.first().cloned());
    let on_topic = {
        let t = topic.clone();
        Callback::from(move |e: Event| t.set(select_value(&e)))
    };
    let on_detail = {
        let d = detail.clone();
        Callback::from(move |e: Event| d.set(select_value(&e).and_then(|v| v.parse().ok())))
    };
    html! {
        <section class="answers">
            { for answers.notes.iter().map(|n| html! { <p class="hint note">{ n }</p> }) }
            if !mode.runs.is_empty() {
            <div class="section-head">
                <h2>{ "Nugget scores" }</h2>
                <label class="inline">{ "Scoring " }
                    <select id="answers-mode" onchange={on_mode} aria-label="Scoring conventions">
                        { for answers.modes.iter().enumerate().map(|(i, m)| html! {
                            <option value={i.to_string()} selected={i == *mode_index}>{ match m.compat.as_str() {
                                "paper" => "paper (TREC 2024 RAG)",
                                "nuggetizer" => "nuggetizer 0.0.5",
                                _ => "open-rag-eval 0.3.0",
                            } }</option>
                        }) }
                    </select>
                </label>
                <div class="exports" role="group" aria-label="Export the nugget scores">
                    <span class="hint">{ "Export" }</span>
                    { for TableFormat::ALL.iter().map(|f| export_button(*f)) }
                </div>
            </div>
            <div class="table-wrap">
            <table id="answers-scores">
                <caption class="visually-hidden">{ "Mean nugget scores per run" }</caption>
                <thead><tr>
                    <th scope="col">{ "run" }</th>
                    <th scope="col" class="num" title="topics with assignments">{ "topics" }</th>
                    { for table.measures.iter().map(|m| html! {
                        <th scope="col" class="num" title={m.explanation.clone()}>{ &m.name }</th>
                    }) }
                    <th scope="col" class="num" title="failed assignments, scored 0 and kept in the denominators">{ "failed" }</th>
                </tr></thead>
                <tbody>
                { for mode.runs.iter().enumerate().map(|(r, run)| {
                    let is_base = r == mode.baseline;
                    html! {
                        <tr data-run={run.name.clone()} class={classes!(is_base.then_some("baseline"))}>
                            <th scope="row">{ &run.name }{ if is_base { html! { <span class="tag">{ "baseline" }</span> } } else { html! {} } }</th>
                            <td class="num">{ run.num_queries }</td>
                            { for run.means.iter().enumerate().map(|(m, v)| {
                                let name = &answers.scores[m];
                                let detail = run.significance[m].map(|s| format!(
                                    "Δ {:+.4} vs {baseline}; p = {:.4}, Holm p = {:.4}", s.mean_difference, s.p_value, s.p_holm)).unwrap_or_default();
                                html! {
                                    <td class={classes!("num", (name != "L" && is_best(&table, r, m)).then_some("best"))}
                                        data-measure={name.clone()} data-value={v.to_string()} title={detail}>
                                        <span class="v">{ if name == "L" { format!("{v:.1}") } else { fmt_value(*v) } }</span>
                                        { match significant(&table, r, m) {
                                            Some(true) => html! { <span class="sig up" aria-label="significantly higher than the baseline">{ "▲" }</span> },
                                            Some(false) => html! { <span class="sig down" aria-label="significantly lower than the baseline">{ "▼" }</span> },
                                            None => html! { <span class="sig none" aria-hidden="true"></span> },
                                        } }
                                    </td>
                                }
                            }) }
                            <td class="num" data-measure="failed">{ mode.failed.get(r).copied().unwrap_or(0) }</td>
                        </tr>
                    }
                }) }
                </tbody>
            </table>
            </div>
            <p class="hint">{ format!("V_strict is the primary score. Bold: best per score. ▲/▼: significantly higher/lower than {baseline} ({}, paired over topics, Holm-corrected over runs, α = {ALPHA}).", props.report.test.label()) }</p>
            <div class="chart-grid">
                <ChartFrame id="chart-answers-pareto" title="V_strict against answer length (Pareto frontier)">
                    { pareto_chart(mode) }
                </ChartFrame>
            </div>
            }
            { super::judged_answers::citations_table(&answers.citations) }
            { super::judged_answers::grades_table(&answers.grades) }
            if !answers.matrix.is_empty() {
                <h2>{ "Nuggets per topic" }</h2>
                <label class="inline">{ "Topic " }
                    <select id="answers-topic" onchange={on_topic}>
                        { for answers.topics.iter().map(|t| html! {
                            <option value={t.clone()} selected={Some(t) == current_topic.as_ref()}>{ t }</option>
                        }) }
                    </select>
                </label>
                { matrix(answers, current_topic.as_deref()) }
            }
            if !answers.answers.is_empty() {
                <h2>{ "Answer drill-down" }</h2>
                <label class="inline">{ "Answer " }
                    <select id="answers-detail" onchange={on_detail}>
                        { for answers.answers.iter().enumerate().map(|(i, a)| html! {
                            <option value={i.to_string()} selected={Some(i) == *detail || (detail.is_none() && i == 0)}>{ format!("{} · topic {}", a.run, a.qid) }</option>
                        }) }
                    </select>
                </label>
                { drill_down(answers, detail.unwrap_or(0)) }
            }
        </section>
    }
}

fn cell_label(c: u8) -> (&'static str, &'static str) {
    match c {
        CELL_SUPPORT => ("support", "✔"),
        CELL_PARTIAL => ("partial", "½"),
        CELL_NOT => ("not", "✘"),
        CELL_FAILED => ("failed", "!"),
        _ => ("absent", "·"),
    }
}

fn matrix(a: &AnswersReport, qid: Option<&str>) -> Html {
    let Some(t) = a.matrix.iter().find(|m| Some(m.qid.as_str()) == qid) else {
        return html! {};
    };
    html! {
        <div class="table-wrap">
        <table id="answers-matrix" class="compact">
            <caption>{ format!("Topic {}: {}", t.qid, t.query) }</caption>
            <thead><tr>
                <th scope="col">{ "nugget" }</th>
                <th scope="col">{ "importance" }</th>
                { for t.runs.iter().map(|r| html! { <th scope="col">{ truncate(r, 18) }</th> }) }
            </tr></thead>
            <tbody>
            { for t.nuggets.iter().zip(&t.cells).map(|((text, imp), cells)| html! {
                <tr>
                    <th scope="row">{ text }</th>
                    <td>{ imp }</td>
                    { for cells.iter().map(|c| {
                        let (label, mark) = cell_label(*c);
                        html! { <td class={classes!("cell", label)} data-cell={label} title={label}>{ mark }</td> }
                    }) }
                </tr>
            }) }
            </tbody>
        </table>
        </div>
    }
}

fn drill_down(a: &AnswersReport, i: usize) -> Html {
    let Some(d) = a.answers.get(i) else {
        return html! {};
    };
    html! {
        <div class="answer-detail" id="answers-drill">
            if d.sentences.is_empty() {
                <p class="answer-text">{ if d.text.is_empty() { "(empty answer)".to_string() } else { d.text.clone() } }</p>
            } else {
                <p class="answer-text">
                { for d.sentences.iter().map(|(text, cites)| html! {
                    <span class="sentence">{ text }{ " " }
                        { for cites.iter().map(|c| html! { <sup class="cite" title={c.clone()}>{ format!("[{}]", truncate(c, 24)) }</sup> }) }
                        { " " }</span>
                }) }
                </p>
            }
            if !d.nuggets.is_empty() {
                <ul class="nuggets">
                { for d.nuggets.iter().map(|(text, imp, assignment)| html! {
                    <li data-assignment={assignment.clone()}>
                        <span class={classes!("tag", assignment.clone())}>{ assignment }</span>{ " " }
                        <span class="hint">{ imp }</span>{ " " }{ text }
                    </li>
                }) }
                </ul>
            }
        </div>
    }
}

/// V_strict (y) against mean answer length L (x), one point per run, the frontier joined.
fn pareto_chart(mode: &AnswersMode) -> Html {
    let (w, h, left, right, top, bottom) = (520.0, 360.0, 52.0, 16.0, 26.0, 42.0);
    // means are in score order: V_strict first, L last.
    let points: Vec<(f64, f64)> = mode.runs.iter().map(|r| (r.means[6], r.means[0])).collect();
    let xt = {
        let (lo, hi) = LinearScale::nice_domain(points.iter().map(|p| p.0), 5);
        nice_ticks(lo, hi, 5)
    };
    let yt = nice_ticks(0.0, 1.0, 5);
    let dom = |t: &[f64]| {
        (
            t.first().copied().unwrap_or(0.0),
            t.last().copied().unwrap_or(1.0),
        )
    };
    let x = LinearScale::new(dom(&xt), (left, w - right));
    let y = LinearScale::new(dom(&yt), (h - bottom, top));
    let front = frontier(&points);
    let path: String = front
        .iter()
        .enumerate()
        .map(|(k, &i)| {
            format!(
                "{}{:.1},{:.1}",
                if k == 0 { "M" } else { " L" },
                x.map(points[i].0),
                y.map(points[i].1)
            )
        })
        .collect();
    html! {
        <svg id="chart-answers-pareto" class="chart" xmlns="http://www.w3.org/2000/svg" role="img"
            aria-label="V_strict against answer length per run, with the Pareto frontier"
            viewBox={format!("0 0 {w} {h}")} width="100%">
            <title>{ "V_strict against answer length (words)" }</title>
            <g class="axis" font-size="11" fill="currentColor">
                { for yt.iter().map(|t| html! { <g>
                    <line x1={left.to_string()} x2={(w - right).to_string()} y1={y.map(*t).to_string()} y2={y.map(*t).to_string()} stroke="#8c96a033" />
                    <text x={(left - 6.0).to_string()} y={(y.map(*t) + 4.0).to_string()} text-anchor="end">{ format_tick(*t, &yt) }</text>
                </g> }) }
                { for xt.iter().map(|t| html! { <g>
                    <line x1={x.map(*t).to_string()} x2={x.map(*t).to_string()} y1={(h - bottom).to_string()} y2={top.to_string()} stroke="#8c96a033" />
                    <text x={x.map(*t).to_string()} y={(h - bottom + 16.0).to_string()} text-anchor="middle">{ format_tick(*t, &xt) }</text>
                </g> }) }
            </g>
            if front.len() > 1 {
                <path d={path} fill="none" stroke={SERIES[1]} stroke-width="2" stroke-dasharray="5 3" />
            }
            { for mode.runs.iter().zip(&points).enumerate().map(|(i, (r, p))| {
                let on = front.contains(&i);
                html! { <g class={classes!("point", on.then_some("frontier"))} data-run={r.name.clone()}>
                    <circle cx={format!("{:.1}", x.map(p.0))} cy={format!("{:.1}", y.map(p.1))} r={if on { "6" } else { "4.5" }}
                        fill={if on { SERIES[1] } else { SERIES[0] }} fill-opacity="0.75" stroke="currentColor" stroke-width="0.6">
                        <title>{ format!("{}: V_strict {:.4}, L {:.1}{}", r.name, p.1, p.0, if on { " (Pareto frontier)" } else { "" }) }</title>
                    </circle>
                    <text x={format!("{:.1}", x.map(p.0) + 8.0)} y={format!("{:.1}", y.map(p.1) - 6.0)} font-size="11" fill="currentColor">{ truncate(&r.name, 16) }</text>
                </g> }
            }) }
            <text x={((left + w - right) / 2.0).to_string()} y={(h - 6.0).to_string()} text-anchor="middle" font-size="12" fill="currentColor">{ "L (mean answer length, words)" }</text>
            <text transform={format!("translate(14 {}) rotate(-90)", (top + h - bottom) / 2.0)} text-anchor="middle" font-size="12" fill="currentColor">{ "V_strict" }</text>
        </svg>
    }
}
