//! Per-query scores: a filterable table of two runs and their sorted differences.

use super::charts::{ChartFrame, DiffBars};
use crate::export::fmt_value;
use ragscope_protocol::Report;
use std::rc::Rc;
use wasm_bindgen::JsCast;
use web_sys::{HtmlInputElement, HtmlSelectElement};
use yew::prelude::*;

/// Rows rendered at once; more are a click away (keeps each render far below 50 ms).
const PAGE: usize = 200;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: Rc<Report>,
}

pub fn select_value(e: &Event) -> Option<usize> {
    e.target()
        .and_then(|t| t.dyn_into::<HtmlSelectElement>().ok())
        .and_then(|s| s.value().parse().ok())
}

#[function_component(PerQueryView)]
pub fn per_query_view(props: &Props) -> Html {
    let report = &props.report;
    let measure = use_state(|| 0usize);
    let a = use_state(|| None::<usize>);
    let b = use_state(|| None::<usize>);
    let filter = use_state(String::new);
    let shown = use_state(|| PAGE);
    let sort_by_diff = use_state(|| false);
    if report.runs.is_empty() {
        return html! { <p class="placeholder">{ "Per-query scores need qrels and a run." }</p> };
    }
    let m = (*measure).min(report.measures.len().saturating_sub(1));
    let a_i = a
        .unwrap_or(if report.runs.len() > 1 && report.baseline == 0 {
            1
        } else {
            0
        })
        .min(report.runs.len() - 1);
    let b_i = b.unwrap_or(report.baseline).min(report.runs.len() - 1);
    let (ra, rb) = (&report.runs[a_i], &report.runs[b_i]);
    let needle = filter.to_lowercase();
    let mut rows: Vec<(usize, f64, f64)> = report
        .topics
        .iter()
        .enumerate()
        .filter(|(_, t)| needle.is_empty() || t.to_lowercase().contains(&needle))
        .map(|(t, _)| (t, ra.per_query[m][t], rb.per_query[m][t]))
        .collect();
    if *sort_by_diff {
        rows.sort_by(|x, y| (y.1 - y.2).total_cmp(&(x.1 - x.2)));
    }
    let mut diffs: Vec<(String, f64)> = rows
        .iter()
        .filter(|(_, x, y)| x.is_finite() && y.is_finite())
        .map(|(t, x, y)| (report.topics[*t].clone(), x - y))
        .collect();
    diffs.sort_by(|x, y| y.1.total_cmp(&x.1));
    let run_select = |id: &str,
                      label: &str,
                      current: usize,
                      state: UseStateHandle<Option<usize>>| {
        html! {
            <label class="control">
                <span class="control-label">{ label }</span>
                <select id={id.to_string()} onchange={Callback::from(move |e: Event| state.set(select_value(&e)))}>
                    { for report.runs.iter().enumerate().map(|(i, r)| html! {
                        <option value={i.to_string()} selected={i == current}>{ &r.name }</option>
                    }) }
                </select>
            </label>
        }
    };
    let on_measure = {
        let measure = measure.clone();
        Callback::from(move |e: Event| measure.set(select_value(&e).unwrap_or(0)))
    };
    let on_filter = {
        let filter = filter.clone();
        let shown = shown.clone();
        Callback::from(move |e: InputEvent| {
            if let Some(i) = e
                .target()
                .and_then(|t| t.dyn_into::<HtmlInputElement>().ok())
            {
                filter.set(i.value());
                shown.set(PAGE);
            }
        })
    };
    let on_sort = {
        let s = sort_by_diff.clone();
        Callback::from(move |_| s.set(!*s))
    };
    let more = {
        let shown = shown.clone();
        Callback::from(move |_| shown.set(*shown + PAGE * 5))
    };
    let mname = report
        .measures
        .get(m)
        .map(|x| x.name.clone())
        .unwrap_or_default();
    let label = format!("{mname}: {} − {} per query", ra.name, rb.name);
    html! {
        <section class="per-query">
            <div class="control-row">
                <label class="control">
                    <span class="control-label">{ "Measure" }</span>
                    <select id="pq-measure" onchange={on_measure}>
                        { for report.measures.iter().enumerate().map(|(i, x)| html! {
                            <option value={i.to_string()} selected={i == m} title={x.explanation.clone()}>{ &x.name }</option>
                        }) }
                    </select>
                </label>
                { run_select("pq-a", "Run", a_i, a.clone()) }
                { run_select("pq-b", "compared with", b_i, b.clone()) }
                <label class="control grow">
                    <span class="control-label">{ "Filter topics" }</span>
                    <input type="search" id="pq-filter" placeholder="topic id…" value={(*filter).clone()} oninput={on_filter} />
                </label>
            </div>
            <ChartFrame id="chart-diff" title={label.clone()}>
                <DiffBars id="chart-diff" label={label.clone()} items={diffs} />
            </ChartFrame>
            <div class="table-wrap">
            <table id="per-query">
                <caption class="visually-hidden">{ label }</caption>
                <thead><tr>
                    <th scope="col">{ "topic" }</th>
                    <th scope="col" class="num">{ &ra.name }</th>
                    <th scope="col" class="num">{ &rb.name }</th>
                    <th scope="col" class="num" aria-sort={if *sort_by_diff { "descending" } else { "none" }}>
                        <button class="sort" onclick={on_sort}>{ "difference" }{ if *sort_by_diff { " ↓" } else { "" } }</button>
                    </th>
                </tr></thead>
                <tbody>
                    { for rows.iter().take(*shown).map(|(t, x, y)| {
                        let d = x - y;
                        html! {
                            <tr data-topic={report.topics[*t].clone()}>
                                <th scope="row">{ &report.topics[*t] }</th>
                                <td class="num">{ fmt_value(*x) }</td>
                                <td class="num">{ fmt_value(*y) }</td>
                                <td class={classes!("num", (d > 0.0).then_some("pos"), (d < 0.0).then_some("neg"))}>
                                    { if d.is_finite() { format!("{d:+.4}") } else { "n/a".into() } }</td>
                            </tr>
                        }
                    }) }
                </tbody>
            </table>
            </div>
            if rows.len() > *shown {
                <button class="ghost" onclick={more}>{ format!("Show more ({} of {} shown)", *shown, rows.len()) }</button>
            }
        </section>
    }
}
