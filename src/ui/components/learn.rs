//! `#/learn/...`: the teaching pages. `udcg-vs-ndcg` is the context builder; `lost-in-the-middle`
//! runs the lost-in-the-middle experiment with a local model or a remote LLM.

pub mod cards;
pub mod history_chart;
pub mod litm_cache;
pub mod litm_chart;
pub mod litm_export;
pub mod litm_state;
pub mod lost_in_middle;
pub mod metrics;
pub mod metrics_panel;
pub mod real_data;
pub mod recompute;
pub mod state;
pub mod steps;
pub mod udcg_vs_ndcg;

use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct LearnProps {
    /// What follows `#/learn/` (a page name, maybe with `?` and its state).
    pub page: String,
    /// "Compute locally"'s state and requests, for "recompute with your model".
    #[prop_or_default]
    pub compute: crate::ui::compute_state::ComputeState,
    #[prop_or_default]
    pub on_compute: Callback<ragscope_protocol::compute::ComputeRequest>,
    /// The Judges page's state (its provider settings serve the lost-in-the-middle page's
    /// remote model).
    #[prop_or_default]
    pub judges: Option<UseReducerHandle<crate::ui::judges_state::JudgeState>>,
}

#[function_component(LearnPage)]
pub fn learn_page(props: &LearnProps) -> Html {
    let (name, query) = props.page.split_once('?').unwrap_or((&props.page, ""));
    match name.trim_end_matches('/') {
        "udcg-vs-ndcg" => html! { <udcg_vs_ndcg::UdcgVsNdcg query={query.to_string()}
        compute={props.compute.clone()} on_compute={props.on_compute.clone()} /> },
        "lost-in-the-middle" => {
            html! { <lost_in_middle::LostInTheMiddle judges={props.judges.clone()} /> }
        }
        other => html! {
            <section class="learn" aria-labelledby="learn-title">
                <h2 id="learn-title">{ "Learn" }</h2>
                if !other.is_empty() {
                    <p class="hint">{ format!("There is no page “{other}”; here are the ones there are.") }</p>
                }
                <ul class="learn-index">
                    <li><a href="#/learn/udcg-vs-ndcg">{ "UDCG vs nDCG" }</a>
                        { " — build a context, move and toggle passages, and see why a retrieval metric for RAG must count distracting passages (no model needed)." }</li>
                    <li><a href="#/learn/lost-in-the-middle">{ "Lost in the middle" }</a>
                        { " — run the lost-in-the-middle experiment with a GGUF model of your own or a remote LLM, beside the paper's published curves." }</li>
                </ul>
                <p><a href="#/">{ "Back to Evaluate" }</a></p>
            </section>
        },
    }
}
