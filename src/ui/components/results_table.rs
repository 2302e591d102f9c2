//! Runs × measures: sortable, with significance markers against the baseline, each measure
//! explained in a tooltip, and exports.

use crate::export::{self, fmt_value, is_best, significant, TableFormat, ALPHA};
use crate::ui::download;
use ragscope_protocol::Report;
use std::rc::Rc;
use yew::prelude::*;

/// Styles of the exported HTML report (it carries no link to the app's stylesheet).
const REPORT_CSS: &str = "body{font:15px/1.45 system-ui,sans-serif;max-width:1000px;margin:2rem auto;padding:0 1rem;color:#1d2126}\
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{padding:.35rem .6rem;border-bottom:1px solid #dde1e5;text-align:right;font-variant-numeric:tabular-nums}\
th:first-child,tbody th{text-align:left}td.best{font-weight:700}figure{margin:1.5rem 0}figcaption{font-weight:600;margin-bottom:.4rem}svg{max-width:100%;height:auto;color:#1d2126}";

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: Rc<Report>,
}

/// Which column the rows are sorted by: `None` the run name, else a measure index.
#[derive(Clone, Copy, PartialEq)]
struct Sort {
    column: Option<usize>,
    descending: bool,
}

#[function_component(ResultsTable)]
pub fn results_table(props: &Props) -> Html {
    let sort = use_state(|| Sort {
        column: None,
        descending: false,
    });
    let report = &props.report;
    if report.runs.is_empty() {
        return html! {
            <div class="placeholder">
                { for report.notes.iter().map(|n| html! { <p>{ n }</p> }) }
                if report.notes.is_empty() { <p>{ "Load a qrels file and at least one run to see their scores." }</p> }
            </div>
        };
    }
    let mut order: Vec<usize> = (0..report.runs.len()).collect();
    match sort.column {
        None => order.sort_by(|a, b| report.runs[*a].name.cmp(&report.runs[*b].name)),
        Some(m) => {
            order.sort_by(|a, b| report.runs[*a].means[m].total_cmp(&report.runs[*b].means[m]))
        }
    }
    if sort.descending {
        order.reverse();
    }
    let header = |label: String, column: Option<usize>, title: String, extra: Html| {
        let s = sort.clone();
        let active = sort.column == column;
        let aria_sort = match (active, sort.descending) {
            (false, _) => "none",
            (true, false) => "ascending",
            (true, true) => "descending",
        };
        let onclick = Callback::from(move |_| {
            s.set(Sort {
                column,
                descending: if s.column == column {
                    !s.descending
                } else {
                    column.is_some()
                },
            })
        });
        let arrow = match (active, sort.descending) {
            (false, _) => "",
            (true, false) => " ↑",
            (true, true) => " ↓",
        };
        html! {
            <th scope="col" class={classes!(column.is_some().then_some("num"))} aria-sort={aria_sort} title={title}>
                <button class="sort" {onclick}>{ label }{ arrow }</button>{ extra }
            </th>
        }
    };
    let export_button = |format: TableFormat| {
        let report = report.clone();
        let onclick = Callback::from(move |_| {
            download::save_text(
                &format!("ragscope-scores.{}", format.extension()),
                format.mime(),
                &export::table(&report, format),
            )
        });
        html! { <button class="ghost small" id={format!("export-{}", format.extension())} {onclick}>{ format.label() }</button> }
    };
    let on_report = {
        let report = report.clone();
        Callback::from(move |_| {
            let html = export::html_report(&report, &download::charts_on_page(), REPORT_CSS);
            download::save_text("ragscope-report.html", "text/html", &html);
        })
    };
    let baseline = report
        .runs
        .get(report.baseline)
        .map(|r| r.name.clone())
        .unwrap_or_default();
    html! {
        <section class="results">
            <div class="section-head">
                <h2>{ format!("Scores against {}", report.qrels) }</h2>
                <div class="exports" role="group" aria-label="Export the table">
                    <span class="hint">{ "Export" }</span>
                    { for TableFormat::ALL.iter().map(|f| export_button(*f)) }
                    <button class="ghost small" id="export-html" onclick={on_report}
                        title="One self-contained HTML file with the table and the charts currently shown">{ "HTML report" }</button>
                </div>
            </div>
            <div class="table-wrap">
            <table id="results">
                <caption class="visually-hidden">{ format!("Mean of each measure per run; ▲ and ▼ mark runs significantly better or worse than {baseline}") }</caption>
                <thead>
                    <tr>
                        { header("run".into(), None, "sort by run name".into(), html! {}) }
                        <th scope="col" class="num" title="number of topics evaluated">{ "topics" }</th>
                        { for report.measures.iter().enumerate().map(|(i, m)| header(
                            m.name.clone(), Some(i), m.explanation.clone(),
                            html! { <span class="visually-hidden" data-measure={m.name.clone()}
                                data-trec={m.trec_name.clone().unwrap_or_default()}></span> })) }
                    </tr>
                </thead>
                <tbody>
                    { for order.iter().map(|&r| {
                        let run = &report.runs[r];
                        let is_base = r == report.baseline;
                        html! {
                            <tr data-run={run.name.clone()} class={classes!(is_base.then_some("baseline"))}>
                                <th scope="row">{ &run.name }{ if is_base { html! { <span class="tag">{ "baseline" }</span> } } else { html! {} } }</th>
                                <td class="num" data-measure="num_q">{ run.num_queries }</td>
                                { for run.means.iter().zip(&report.measures).enumerate().map(|(m, (v, info))| {
                                    let sig = significant(report, r, m);
                                    let detail = run.significance[m].map(|s| format!(
                                        "Δ {:+.4} vs {baseline}; p = {:.4}, Holm p = {:.4}", s.mean_difference, s.p_value, s.p_holm)).unwrap_or_default();
                                    html! {
                                        <td class={classes!("num", is_best(report, r, m).then_some("best"))}
                                            data-measure={info.name.clone()}
                                            data-trec={info.trec_name.clone().unwrap_or_default()}
                                            data-value={v.to_string()} title={detail}>
                                            <span class="v">{ fmt_value(*v) }</span>
                                            { match sig {
                                                Some(true) => html! { <span class="sig up" aria-label="significantly better than the baseline">{ "▲" }</span> },
                                                Some(false) => html! { <span class="sig down" aria-label="significantly worse than the baseline">{ "▼" }</span> },
                                                None => html! { <span class="sig none" aria-hidden="true"></span> },
                                            } }
                                        </td>
                                    }
                                }) }
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
            </div>
            <p class="hint">{ format!("Bold: best per measure. ▲/▼: significantly better/worse than {baseline} ({}, Holm-corrected over runs, α = {ALPHA}). Hover a cell for Δ and p.", report.test.label()) }</p>
        </section>
    }
}
