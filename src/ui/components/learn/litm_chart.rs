//! The lost-in-the-middle charts: what this run measured by position of the relevant passage
//! (accuracy with its bootstrap band, p(NO-RESPONSE), nDCG, MAP, MRR, P, UDCG on one 0–1 axis,
//! as the UDCG seed's Figure 1), and the paper's published accuracies beside it.

use super::litm_state::{PositionSummary, PUBLISHED, PUBLISHED_POSITIONS};
use crate::charts::LinearScale;
use crate::ui::components::charts::SERIES;
use yew::prelude::*;

const W: f64 = 520.0;
const H: f64 = 260.0;
const LEFT: f64 = 40.0;
const RIGHT: f64 = 12.0;
const TOP: f64 = 10.0;
const BOTTOM: f64 = 34.0;

fn grid(y: &LinearScale, ticks: &[(f64, String)]) -> Html {
    html! {
        { for ticks.iter().map(|(t, label)| html! {
            <g font-size="10" fill="currentColor">
                <line x1={LEFT.to_string()} x2={(W - RIGHT).to_string()} y1={y.map(*t).to_string()} y2={y.map(*t).to_string()} stroke="#8c96a033" />
                <text x={(LEFT - 4.0).to_string()} y={(y.map(*t) + 3.0).to_string()} text-anchor="end">{ label }</text>
            </g>
        }) }
    }
}

fn x_axis(x: &LinearScale, positions: &[usize], title: &str) -> Html {
    html! {
        <g font-size="10" fill="currentColor">
            { for positions.iter().map(|p| html! {
                <text x={x.map(*p as f64).to_string()} y={(H - BOTTOM + 14.0).to_string()} text-anchor="middle">{ p }</text>
            }) }
            <text x={((LEFT + W - RIGHT) / 2.0).to_string()} y={(H - 4.0).to_string()} text-anchor="middle">{ title }</text>
        </g>
    }
}

fn line(points: &[(f64, f64)], colour: &str, width: &str, dash: Option<&str>, title: &str) -> Html {
    let pts: Vec<String> = points
        .iter()
        .map(|(a, b)| format!("{a:.1},{b:.1}"))
        .collect();
    html! {
        <g>
            <polyline points={pts.join(" ")} fill="none" stroke={colour.to_string()} stroke-width={width.to_string()}
                stroke-dasharray={dash.map(str::to_string)}><title>{ title }</title></polyline>
            { for points.iter().map(|(a, b)| html! { <circle cx={format!("{a:.1}")} cy={format!("{b:.1}")} r="2.5" fill={colour.to_string()} /> }) }
        </g>
    }
}

/// The names and colours of the measured series, in the legend's order.
pub const MEASURED: [&str; 7] = [
    "accuracy",
    "p(NO-RESPONSE)",
    "nDCG",
    "MAP",
    "MRR",
    "P",
    "UDCG",
];

fn colour(i: usize) -> &'static str {
    if i == 0 {
        "#111827"
    } else {
        SERIES[(i - 1) % SERIES.len()]
    }
}

#[derive(Properties, PartialEq)]
pub struct MeasuredProps {
    pub k: usize,
    pub rows: Vec<PositionSummary>,
    pub model: String,
    pub questions: usize,
}

#[function_component(MeasuredChart)]
pub fn measured_chart(props: &MeasuredProps) -> Html {
    let rows: Vec<&PositionSummary> = props.rows.iter().filter(|r| r.n > 0).collect();
    let x = LinearScale::new((1.0, props.k.max(2) as f64), (LEFT + 8.0, W - RIGHT - 8.0));
    let y = LinearScale::new((0.0, 1.0), (H - BOTTOM, TOP));
    let value = |r: &PositionSummary, s: usize| -> Option<f64> {
        let v = match s {
            0 => r.accuracy,
            // An upper bound is not a value: not plotted (the table shows it as "≤ x").
            1 if r.p_bound => return None,
            1 => r.p_no_response?,
            2 => r.ndcg,
            3 => r.map,
            4 => r.mrr,
            5 => r.precision,
            _ => r.udcg,
        };
        v.is_finite().then_some(v)
    };
    let n_min = rows.iter().map(|r| r.n).min().unwrap_or(0);
    let n_max = rows.iter().map(|r| r.n).max().unwrap_or(0);
    let n_text = if n_min == n_max {
        format!("{n_min} questions per position")
    } else {
        format!("{n_min} to {n_max} questions per position")
    };
    let num = |v: f64, digits: usize| {
        if v.is_finite() {
            format!("{v:.digits$}")
        } else {
            "n/a".to_string()
        }
    };
    let label = format!(
        "Measured with {}, k = {}: {}; {}",
        props.model,
        props.k,
        rows.iter()
            .map(|r| format!(
                "position {}: accuracy {}, nDCG {}, UDCG {}",
                r.position,
                num(r.accuracy, 2),
                num(r.ndcg, 3),
                num(r.udcg, 3)
            ))
            .collect::<Vec<_>>()
            .join("; "),
        n_text
    );
    // The accuracy's band: upper edge left to right, lower edge back.
    let band: Vec<String> = rows
        .iter()
        .filter_map(|r| r.band.map(|(_, hi)| (r.position, hi)))
        .chain(
            rows.iter()
                .rev()
                .filter_map(|r| r.band.map(|(lo, _)| (r.position, lo))),
        )
        .map(|(p, v)| format!("{:.1},{:.1}", x.map(p as f64), y.map(v)))
        .collect();
    let positions: Vec<usize> = rows.iter().map(|r| r.position).collect();
    let ticks: Vec<(f64, String)> = [0.0, 0.25, 0.5, 0.75, 1.0]
        .iter()
        .map(|t| (*t, format!("{t}")))
        .collect();
    html! {
        <figure class="litm-chart">
            <svg id="chart-litm" class="chart" xmlns="http://www.w3.org/2000/svg" role="img"
                aria-label={label.clone()} viewBox={format!("0 0 {W} {H}")} width="100%">
                <title>{ &label }</title>
                { grid(&y, &ticks) }
                { x_axis(&x, &positions, "position of the relevant passage") }
                if band.len() >= 2 {
                    <polygon points={band.join(" ")} fill="#11182722" stroke="none"><title>{ "accuracy: 95% bootstrap band over questions" }</title></polygon>
                }
                { for MEASURED.iter().enumerate().map(|(s, name)| {
                    let pts: Vec<(f64, f64)> = rows.iter()
                        .filter_map(|r| value(r, s).map(|v| (x.map(r.position as f64), y.map(v))))
                        .collect();
                    let width = if s == 0 || *name == "UDCG" { "3" } else { "1.5" };
                    line(&pts, colour(s), width, None, name)
                }) }
            </svg>
            <figcaption class="legend">
                { for MEASURED.iter().enumerate().map(|(s, name)| html! {
                    <span class="legend-item"><svg class="swatch" width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={colour(s)} /></svg>{ *name }</span>
                }) }
                <span class="legend-item">{ format!("shaded: 95% bootstrap band of the accuracy; {n_text}") }</span>
            </figcaption>
        </figure>
    }
}

#[function_component(PublishedChart)]
pub fn published_chart() -> Html {
    let x = LinearScale::new((1.0, 20.0), (LEFT + 8.0, W - RIGHT - 8.0));
    let y = LinearScale::new((30.0, 90.0), (H - BOTTOM, TOP));
    let ticks: Vec<(f64, String)> = [30.0, 45.0, 60.0, 75.0, 90.0]
        .iter()
        .map(|t| (*t, format!("{t}%")))
        .collect();
    let label = format!(
        "Published accuracy by position of the gold document among 20 (Liu et al., TACL 2024, NQ-open): {}",
        PUBLISHED
            .iter()
            .map(|(m, acc, closed, oracle)| format!(
                "{m}: {} (closed-book {closed}, oracle {oracle})",
                acc.iter().map(|a| format!("{a}")).collect::<Vec<_>>().join(", ")
            ))
            .collect::<Vec<_>>()
            .join("; ")
    );
    html! {
        <figure class="litm-chart">
            <svg id="chart-litm-published" class="chart" xmlns="http://www.w3.org/2000/svg" role="img"
                aria-label={label.clone()} viewBox={format!("0 0 {W} {H}")} width="100%">
                <title>{ &label }</title>
                { grid(&y, &ticks) }
                { x_axis(&x, &PUBLISHED_POSITIONS, "position of the gold document (of 20)") }
                { for PUBLISHED.iter().enumerate().map(|(i, (m, acc, closed, oracle))| {
                    let pts: Vec<(f64, f64)> = PUBLISHED_POSITIONS.iter().zip(acc)
                        .map(|(p, a)| (x.map(*p as f64), y.map(*a)))
                        .collect();
                    let c = SERIES[i % SERIES.len()];
                    let flat = |v: f64| vec![(x.map(1.0), y.map(v)), (x.map(20.0), y.map(v))];
                    html! {
                        <g>
                            { line(&pts, c, "2", None, m) }
                            { line(&flat(*closed), c, "1", Some("2 3"), &format!("{m}: closed-book {closed}%")) }
                            { line(&flat(*oracle), c, "1", Some("8 3"), &format!("{m}: oracle {oracle}%")) }
                        </g>
                    }
                }) }
            </svg>
            <figcaption class="legend">
                { for PUBLISHED.iter().enumerate().map(|(i, (m, ..))| html! {
                    <span class="legend-item"><svg class="swatch" width="12" height="12" aria-hidden="true"><rect width="12" height="12" fill={SERIES[i % SERIES.len()]} /></svg>{ *m }</span>
                }) }
                <span class="legend-item">{ "dotted: closed-book (no documents); dashed: oracle (the gold document alone)" }</span>
            </figcaption>
        </figure>
    }
}
