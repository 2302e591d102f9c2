//! How a measure is distributed over queries, per run (violin + box).

use super::charts::{BoxViolin, ChartFrame};
use super::per_query::select_value;
use crate::charts::BoxStats;
use crate::export::fmt_value;
use ragscope_protocol::Report;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: Rc<Report>,
}

#[function_component(DistributionView)]
pub fn distribution_view(props: &Props) -> Html {
    let report = &props.report;
    let measure = use_state(|| 0usize);
    if report.runs.is_empty() {
        return html! { <p class="placeholder">{ "Distributions need qrels and a run." }</p> };
    }
    let m = (*measure).min(report.measures.len().saturating_sub(1));
    let series: Vec<(String, Vec<f64>)> = report
        .runs
        .iter()
        .map(|r| (r.name.clone(), r.per_query[m].clone()))
        .collect();
    let on_measure = {
        let measure = measure.clone();
        Callback::from(move |e: Event| measure.set(select_value(&e).unwrap_or(0)))
    };
    let mname = report
        .measures
        .get(m)
        .map(|x| x.name.clone())
        .unwrap_or_default();
    let label = format!("Distribution of {mname} over queries");
    html! {
        <section class="distribution">
            <div class="control-row">
                <label class="control">
                    <span class="control-label">{ "Measure" }</span>
                    <select id="dist-measure" onchange={on_measure}>
                        { for report.measures.iter().enumerate().map(|(i, x)| html! {
                            <option value={i.to_string()} selected={i == m}>{ &x.name }</option>
                        }) }
                    </select>
                </label>
            </div>
            <ChartFrame id="chart-dist" title={label.clone()}>
                <BoxViolin id="chart-dist" label={label} series={series.clone()} />
            </ChartFrame>
            <div class="table-wrap">
            <table class="compact">
                <thead><tr>
                    <th scope="col">{ "run" }</th>
                    { for ["n", "min", "Q1", "median", "Q3", "max", "mean"].iter().map(|h| html! { <th scope="col" class="num">{ *h }</th> }) }
                </tr></thead>
                <tbody>
                    { for series.iter().filter_map(|(name, v)| Some((name, BoxStats::of(v)?))).map(|(name, b)| html! {
                        <tr>
                            <th scope="row">{ name }</th>
                            <td class="num">{ b.n }</td>
                            { for [b.min, b.q1, b.median, b.q3, b.max, b.mean].iter().map(|v| html! { <td class="num">{ fmt_value(*v) }</td> }) }
                        </tr>
                    }) }
                </tbody>
            </table>
            </div>
        </section>
    }
}
