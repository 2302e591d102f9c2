//! The live numbers of the context, and UDCG's formula with them substituted.

use super::metrics::{udcg_sums, Metrics, GAMMA};
use super::state::BuilderState;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: Rc<BuilderState>,
}

#[function_component(MetricsPanel)]
pub fn metrics_panel(props: &Props) -> Html {
    let s = &props.state;
    let k = s.k;
    let m: Metrics = match &s.metrics {
        Ok(m) => *m,
        Err(e) => return html! { <p class="placeholder" id="metrics">{ e }</p> },
    };
    let rows = [
        (
            "ndcg",
            format!("nDCG@{k}"),
            m.ndcg,
            "graded gain, log₂ position discount (Järvelin & Kekäläinen 2002)",
        ),
        (
            "map",
            "MAP".to_string(),
            m.map,
            "average precision over the relevant passages",
        ),
        (
            "mrr",
            "MRR".to_string(),
            m.mrr,
            "1 / rank of the first relevant passage",
        ),
        ("p", format!("P@{k}"), m.precision, "relevant passages / k"),
        (
            "udcg",
            format!("UDCG@{k}"),
            m.udcg,
            "utility and distraction-aware, no position discount (Trappolini et al. 2025, Eq. 4)",
        ),
    ];
    let (pos, neg) = udcg_sums(&s.passages, k);
    let x = (pos + GAMMA * neg) / k as f64;
    html! {
        <section class="metrics-panel" aria-labelledby="metrics-title" aria-live="polite">
            <h3 id="metrics-title">{ "Scores of this context" }</h3>
            <table class="compact" id="metrics">
                <thead><tr><th scope="col">{ "measure" }</th><th scope="col" class="num">{ "value" }</th><th scope="col">{ "what it looks at" }</th></tr></thead>
                <tbody>
                { for rows.iter().map(|(id, name, v, what)| html! {
                    <tr id={format!("m-{id}")} data-value={v.to_string()}>
                        <th scope="row">{ name }</th>
                        <td class="num">{ format!("{v:.4}") }</td>
                        <td class="hint">{ *what }</td>
                    </tr>
                }) }
                </tbody>
            </table>
            <div class="formula" id="udcg-formula">
                <p>{ "UDCG@k = σ( (1/k)·Σ u⁺ + (γ/k)·Σ u⁻ ),  γ = 1/3 (the paper's default), u = R·(1 − p(NO-RESPONSE))" }</p>
                <p><code>{ format!(
                    "UDCG@{k} = σ( (1/{k})·{pos:.3} + (1/3)/{k}·({neg:.3}) ) = σ({x:.4}) = {:.4}", m.udcg
                ) }</code></p>
                <p class="hint">{ "Computed by crates/eval, the code behind `ragscope eval` and `ragscope udcg` (the context is scored as a one-topic qrels, run and utilities file)." }</p>
            </div>
        </section>
    }
}
