//! `#/learn/udcg-vs-ndcg`: the context builder, its live scores and the guided steps. Works
//! with no model at all; the real utilities are an optional extra fetched from the site.

use super::cards::ContextCards;
use super::history_chart::HistoryChart;
use super::metrics_panel::MetricsPanel;
use super::real_data::RealContexts;
use super::recompute::Recompute;
use super::state::{parse_query, BuilderAction, BuilderState, DeepLink};
use super::steps::{self, GuidedSteps};
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    /// What follows `?` in the route (`k=5&c=r0.1,i0.9`), empty for the default example.
    pub query: String,
    #[prop_or_default]
    pub compute: crate::ui::compute_state::ComputeState,
    #[prop_or_default]
    pub on_compute: Callback<ragscope_protocol::compute::ComputeRequest>,
}

/// The builder's state from a deep link, else the first guided step.
fn initial(query: &str) -> BuilderState {
    let default = BuilderState::new(steps::QUESTION.into(), 5, Vec::new());
    let action = match parse_query(query) {
        Some(DeepLink {
            k,
            passages,
            source,
        }) => BuilderAction::Load {
            question: steps::QUESTION.into(),
            k,
            passages: passages
                .into_iter()
                .enumerate()
                .map(|(i, (r, p))| {
                    let kind = if r { "Relevant passage" } else { "Distractor" };
                    (r, p, format!("{kind} {}", i + 1), String::new())
                })
                .collect(),
            source,
            why: "deep link".into(),
        },
        None => steps::weak(),
    };
    let mut s = std::rc::Rc::new(default);
    s = yew::Reducible::reduce(s, action);
    // The empty start is not a point of the history.
    let mut s = (*s).clone();
    s.history.retain(|(why, _)| why != "start");
    s
}

#[function_component(UdcgVsNdcg)]
pub fn udcg_vs_ndcg(props: &Props) -> Html {
    let state = use_reducer(|| initial(&props.query));
    let dispatch = {
        let d = state.dispatcher();
        Callback::from(move |a: BuilderAction| d.dispatch(a))
    };
    // A deep link typed or reached by back/forward while the page is open.
    {
        let d = state.dispatcher();
        use_effect_with(props.query.clone(), move |q| {
            if let Some(DeepLink {
                k,
                passages,
                source,
            }) = parse_query(q)
            {
                d.dispatch(BuilderAction::Load {
                    question: steps::QUESTION.into(),
                    k,
                    passages: passages
                        .into_iter()
                        .enumerate()
                        .map(|(i, (r, p))| (r, p, format!("Passage {}", i + 1), String::new()))
                        .collect(),
                    source,
                    why: "deep link".into(),
                });
            }
        });
    }
    // The URL follows the builder (replaceState: no history entry per slider move).
    let query = state.to_query();
    use_effect_with(query.clone(), move |q| {
        let url = format!("#/learn/udcg-vs-ndcg?{q}");
        if let Ok(history) = gloo::utils::window().history() {
            let _ = history.replace_state_with_url(&wasm_bindgen::JsValue::NULL, "", Some(&url));
        }
    });
    let wanted = state.source.clone();
    let snapshot = std::rc::Rc::new((*state).clone());
    html! {
        <section class="learn-page udcg-vs-ndcg" aria-labelledby="uvn-title">
            <h2 id="uvn-title">{ "UDCG vs nDCG: what a reader LLM gets from a context" }</h2>
            <p class="lede">{ "Classical retrieval metrics reward putting relevant passages first. A RAG system's reader reads the whole context instead, and an irrelevant passage is not neutral: it can distract the model into a wrong answer. UDCG (Trappolini et al. 2025, “Redefining Retrieval Evaluation in the Era of LLMs”, arXiv 2510.21440) scores a context by each passage's utility u = R·(1 − p(NO-RESPONSE)) — positive for useful passages, negative for distracting ones — with no position discount. Build a context and watch both." }</p>
            <div class="learn-grid">
                <ContextCards state={snapshot.clone()} dispatch={dispatch.clone()} />
                <div class="learn-side">
                    <MetricsPanel state={snapshot.clone()} />
                    <HistoryChart state={snapshot.clone()} />
                    <p class="hint share">{ "This exact context is in the address bar: copy the link to share it. " }
                        <a id="deep-link" href={format!("#/learn/udcg-vs-ndcg?{query}")}>{ "Link to this context" }</a></p>
                </div>
            </div>
            <GuidedSteps dispatch={dispatch.clone()} />
            <RealContexts dispatch={dispatch.clone()} wanted={wanted}
                current={state.passages.iter().map(|p| (p.relevant, p.p_no_response)).collect::<Vec<_>>()} />
            <Recompute state={snapshot.clone()} dispatch={dispatch}
                compute={props.compute.clone()} on_compute={props.on_compute.clone()} />
            <p class="hint refs">{ "References: Trappolini et al. 2025, arXiv 2510.21440 (UDCG; γ = 1/3, §5; Table 1; Figure 1); Liu et al. 2024, “Lost in the Middle”, TACL; Järvelin & Kekäläinen 2002 (nDCG). The numbers are computed by crates/eval, the code of the ragscope CLI." }</p>
        </section>
    }
}
