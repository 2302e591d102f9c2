//! Runs × measures, with the registry's explanation of each measure as a tooltip.

use crate::protocol::Report;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: Option<Report>,
    pub evaluating: bool,
}

#[function_component(ResultsTable)]
pub fn results_table(props: &Props) -> Html {
    let Some(report) = &props.report else {
        let text = if props.evaluating {
            "Evaluating…"
        } else {
            "Load a qrels file and at least one run to see their scores."
        };
        return html! { <p class="placeholder" aria-live="polite">{ text }</p> };
    };
    html! {
        <section class="results" aria-busy={props.evaluating.to_string()}>
            <h2>{ format!("Scores against {}", report.qrels) }</h2>
            <table id="results">
                <thead>
                    <tr>
                        <th scope="col">{ "run" }</th>
                        <th scope="col" class="num" title="number of topics evaluated">{ "topics" }</th>
                        { for report.measures.iter().map(|m| html! {
                            <th scope="col" class="num" title={m.explanation.clone()}
                                data-measure={m.name.clone()}
                                data-trec={m.trec_name.clone().unwrap_or_default()}>{ &m.name }</th>
                        }) }
                    </tr>
                </thead>
                <tbody>
                    { for report.runs.iter().map(|run| html! {
                        <tr data-run={run.name.clone()}>
                            <th scope="row">{ &run.name }</th>
                            <td class="num" data-measure="num_q">{ run.num_queries }</td>
                            { for run.means.iter().zip(&report.measures).map(|(v, m)| html! {
                                <td class="num" data-measure={m.name.clone()}
                                    data-trec={m.trec_name.clone().unwrap_or_default()}
                                    data-value={v.to_string()}>{ format!("{v:.4}") }</td>
                            }) }
                        </tr>
                    }) }
                </tbody>
            </table>
        </section>
    }
}
