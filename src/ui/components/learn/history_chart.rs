//! Each metric after each change of the context: a small line chart (labelled for screen
//! readers, with the latest values in its label).

use super::state::BuilderState;
use crate::charts::LinearScale;
use crate::ui::components::charts::SERIES;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub state: Rc<BuilderState>,
}

#[function_component(HistoryChart)]
pub fn history_chart(props: &Props) -> Html {
    let h = &props.state.history;
    let (w, ht, left, right, top, bottom) = (460.0, 200.0, 34.0, 10.0, 10.0, 24.0);
    let n = h.len().max(2);
    let x = LinearScale::new((0.0, (n - 1) as f64), (left, w - right));
    let y = LinearScale::new((0.0, 1.0), (ht - bottom, top));
    let names = ["nDCG", "MAP", "MRR", "P", "UDCG"];
    let latest = h
        .last()
        .map(|(_, m)| {
            m.named()
                .iter()
                .map(|(n, v)| format!("{n} {v:.3}"))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let label = format!(
        "Metrics over the last {} changes of the context; now: {latest}",
        h.len()
    );
    html! {
        <figure class="history">
            <svg id="chart-history" class="chart" xmlns="http://www.w3.org/2000/svg" role="img"
                aria-label={label.clone()} viewBox={format!("0 0 {w} {ht}")} width="100%">
                <title>{ &label }</title>
                { for [0.0, 0.25, 0.5, 0.75, 1.0].iter().map(|t| html! {
                    <g font-size="10" fill="currentColor">
                        <line x1={left.to_string()} x2={(w - right).to_string()} y1={y.map(*t).to_string()} y2={y.map(*t).to_string()} stroke="#8c96a033" />
                        <text x={(left - 4.0).to_string()} y={(y.map(*t) + 3.0).to_string()} text-anchor="end">{ format!("{t}") }</text>
                    </g>
                }) }
                { for names.iter().enumerate().map(|(s, name)| {
                    let points: Vec<String> = h.iter().enumerate()
                        .map(|(i, (_, m))| format!("{:.1},{:.1}", x.map(i as f64), y.map(m.named()[s].1)))
                        .collect();
                    html! {
                        <polyline points={points.join(" ")} fill="none" stroke={SERIES[s]} stroke-width={if *name == "UDCG" { "3" } else { "1.5" }}>
                            <title>{ *name }</title>
                        </polyline>
                    }
                }) }
                <text x={((left + w - right) / 2.0).to_string()} y={(ht - 6.0).to_string()} text-anchor="middle" font-size="10" fill="currentColor">{ "changes of the context →" }</text>
            </svg>
            <figcaption class="legend">
                { for names.iter().enumerate().map(|(s, name)| html! {
                    <span class="legend-item"><svg class="swatch" width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={SERIES[s]} /></svg>{ *name }</span>
                }) }
            </figcaption>
        </figure>
    }
}
