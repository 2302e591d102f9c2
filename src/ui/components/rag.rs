//! RAG views: UDCG against nDCG per query, and the correlation study with bootstrap CIs.

use super::charts::{ChartFrame, Scatter};
use ragscope_protocol::Report;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: Rc<Report>,
}

#[function_component(RagView)]
pub fn rag_view(props: &Props) -> Html {
    let report = &props.report;
    let empty = report.udcg.is_empty() && report.study.is_none();
    html! {
        <section class="rag">
            if empty {
                <div class="placeholder">
                    <p>{ "Load a utilities TSV (with qrels and a run), a UDCG reference JSON, or context sets (JSONL) to see UDCG and the correlation study." }</p>
                </div>
            }
            { for report.notes.iter().map(|n| html! { <p class="hint note">{ n }</p> }) }
            <div class="chart-grid">
            { for report.udcg.iter().enumerate().map(|(i, s)| {
                let id = format!("chart-udcg-{i}");
                let k = if s.k > 0 { format!("@{}", s.k) } else { String::new() };
                let label = format!("UDCG{k} vs nDCG{k} per query — {}", s.name);
                let points: Vec<(String, f64, f64)> = s.points.iter().map(|p| (p.qid.clone(), p.ndcg, p.udcg)).collect();
                html! {
                    <ChartFrame id={id.clone()} title={label.clone()}>
                        <Scatter id={id} label={label} x_label={format!("nDCG{k}")} y_label={format!("UDCG{k}")} points={points} />
                    </ChartFrame>
                }
            }) }
            </div>
            if let Some(study) = &report.study {
                <h2>{ format!("Correlation with end-to-end outcomes — {}", study.file) }</h2>
                if study.file == super::demo_picker::RAG_CONTEXTS {
                    <p class="hint note" id="demo-outcomes-note">{ super::demo_picker::RAG_CONTEXTS_NOTE }</p>
                }
                <p class="hint">{ "Mean per-question Spearman ρ between each metric's order of the contexts and their outcomes (correct > abstain > wrong), with percentile-bootstrap 95% intervals over questions (Trappolini et al. 2025, §7.2)." }</p>
                { for study.groups.iter().map(|g| html! {
                    <div class="table-wrap">
                    <table class="compact study" data-questions={g.questions.to_string()} data-k={g.k.to_string()}>
                        <caption>{ format!("{} · {} · k = {} · {} questions", if g.dataset.is_empty() { "dataset" } else { &g.dataset }, if g.model.is_empty() { "model" } else { &g.model }, g.k, g.questions) }</caption>
                        <thead><tr>
                            <th scope="col">{ "metric" }</th>
                            <th scope="col" class="num">{ "Spearman ρ" }</th>
                            <th scope="col" class="num">{ "95% CI" }</th>
                            <th scope="col" class="num">{ "Kendall τ-b" }</th>
                            <th scope="col" class="num">{ "Pearson r" }</th>
                        </tr></thead>
                        <tbody>
                            { for g.rows.iter().map(|r| html! {
                                <tr data-metric={r.metric.clone()} data-spearman={r.spearman.to_string()}
                                    data-ci-low={r.ci_low.to_string()} data-ci-high={r.ci_high.to_string()}
                                    data-kendall={r.kendall.to_string()} data-pearson={r.pearson.to_string()}>
                                    <th scope="row">{ &r.metric }</th>
                                    <td class="num">{ format!("{:.3}", r.spearman) }</td>
                                    <td class="num">{ format!("[{:.3}, {:.3}]", r.ci_low, r.ci_high) }</td>
                                    <td class="num">{ format!("{:.3}", r.kendall) }</td>
                                    <td class="num">{ format!("{:.3}", r.pearson) }</td>
                                </tr>
                            }) }
                        </tbody>
                    </table>
                    </div>
                }) }
            }
        </section>
    }
}
