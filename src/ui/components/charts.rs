//! SVG charts drawn by the app (no chart library): scales and ticks come from `crate::charts`.
//! Colours are explicit attributes (or currentColor) so an exported SVG looks the same alone.

use crate::charts::{density, format_tick, nice_ticks, BoxStats, LinearScale};
use crate::ui::download;
use yew::prelude::*;

pub const UP: &str = "#2f9e66";
pub const DOWN: &str = "#d64545";
pub const SERIES: [&str; 6] = [
    "#3b6fd8", "#e08a1e", "#2f9e66", "#a454c7", "#d64545", "#1aa3b3",
];
const GRID: &str = "#8c96a033";

#[derive(Properties, PartialEq)]
pub struct FrameProps {
    pub id: AttrValue,
    pub title: AttrValue,
    pub children: Html,
}

/// A titled figure with SVG and PNG downloads of the chart inside (whose id is `id`).
#[function_component(ChartFrame)]
pub fn chart_frame(props: &FrameProps) -> Html {
    let svg = {
        let id = props.id.clone();
        Callback::from(move |_| {
            if let Some(svg) = download::svg_markup(&id) {
                download::save_text(&format!("{id}.svg"), "image/svg+xml", &svg);
            }
        })
    };
    let png = {
        let id = props.id.clone();
        Callback::from(move |_| download::save_png(&id, &format!("{id}.png")))
    };
    html! {
        <figure class="chart-frame">
            <figcaption>
                <span>{ &props.title }</span>
                <span class="chart-actions">
                    <button class="ghost small" onclick={svg} aria-label={format!("Download {} as SVG", props.title)}>{ "SVG" }</button>
                    <button class="ghost small" onclick={png} aria-label={format!("Download {} as PNG", props.title)}>{ "PNG" }</button>
                </span>
            </figcaption>
            { props.children.clone() }
        </figure>
    }
}

fn y_axis(scale: &LinearScale, ticks: &[f64], x0: f64, x1: f64) -> Html {
    html! {
        <g class="axis" font-size="11" fill="currentColor">
            { for ticks.iter().map(|t| {
                let y = scale.map(*t);
                html! {
                    <g>
                        <line x1={x0.to_string()} x2={x1.to_string()} y1={y.to_string()} y2={y.to_string()}
                            stroke={GRID} />
                        <text x={(x0 - 6.0).to_string()} y={(y + 4.0).to_string()} text-anchor="end">{ format_tick(*t, ticks) }</text>
                    </g>
                }
            }) }
        </g>
    }
}

fn x_axis(scale: &LinearScale, ticks: &[f64], y0: f64, y1: f64) -> Html {
    html! {
        <g class="axis" font-size="11" fill="currentColor">
            { for ticks.iter().map(|t| {
                let x = scale.map(*t);
                html! {
                    <g>
                        <line x1={x.to_string()} x2={x.to_string()} y1={y0.to_string()} y2={y1.to_string()} stroke={GRID} />
                        <text x={x.to_string()} y={(y0 + 16.0).to_string()} text-anchor="middle">{ format_tick(*t, ticks) }</text>
                    </g>
                }
            }) }
        </g>
    }
}

#[derive(Properties, PartialEq)]
pub struct DiffProps {
    pub id: AttrValue,
    pub label: AttrValue,
    /// (qid, difference), drawn in the given order.
    pub items: Vec<(String, f64)>,
}

/// Per-query differences as sorted bars around zero.
#[function_component(DiffBars)]
pub fn diff_bars(props: &DiffProps) -> Html {
    let (w, h, left, right, top, bottom) = (760.0, 280.0, 48.0, 12.0, 12.0, 28.0);
    let ticks = {
        let (lo, hi) = LinearScale::nice_domain(props.items.iter().map(|i| i.1).chain([0.0]), 5);
        nice_ticks(lo, hi, 5)
    };
    let domain = (
        ticks.first().copied().unwrap_or(-1.0),
        ticks.last().copied().unwrap_or(1.0),
    );
    let y = LinearScale::new(domain, (h - bottom, top));
    let n = props.items.len().max(1) as f64;
    // Few queries would give absurdly wide bars; cap them and keep them left-aligned.
    let band = ((w - left - right) / n).min(28.0);
    let zero = y.map(0.0);
    let up = props.items.iter().filter(|i| i.1 > 0.0).count();
    let down = props.items.iter().filter(|i| i.1 < 0.0).count();
    html! {
        <svg id={props.id.clone()} class="chart" xmlns="http://www.w3.org/2000/svg" role="img"
            aria-label={props.label.clone()} viewBox={format!("0 0 {w} {h}")} width="100%">
            <title>{ &props.label }</title>
            <desc>{ format!("{} queries: {up} better, {down} worse, {} tied.", props.items.len(), props.items.len() - up - down) }</desc>
            { y_axis(&y, &ticks, left, w - right) }
            { for props.items.iter().enumerate().map(|(i, (qid, d))| {
                let x = left + i as f64 * band;
                let y1 = y.map(*d);
                let (top_y, height) = if y1 < zero { (y1, zero - y1) } else { (zero, y1 - zero) };
                html! {
                    <rect x={format!("{x:.2}")} y={format!("{top_y:.2}")} width={format!("{:.2}", (band * 0.85).max(0.5))}
                        height={format!("{:.2}", height.max(0.5))} fill={if *d >= 0.0 { UP } else { DOWN }}>
                        <title>{ format!("{qid}: {d:+.4}") }</title>
                    </rect>
                }
            }) }
            <line x1={left.to_string()} x2={(w - right).to_string()} y1={zero.to_string()} y2={zero.to_string()}
                stroke="currentColor" stroke-width="1" />
            <text x={(w - right).to_string()} y={(h - 8.0).to_string()} font-size="11" fill="currentColor" text-anchor="end">
                { "queries, sorted by difference →" }</text>
        </svg>
    }
}

#[derive(Properties, PartialEq)]
pub struct BoxProps {
    pub id: AttrValue,
    pub label: AttrValue,
    /// (run, per-query values).
    pub series: Vec<(String, Vec<f64>)>,
}

/// One horizontal violin (kernel density) with a box plot inside per run.
#[function_component(BoxViolin)]
pub fn box_violin(props: &BoxProps) -> Html {
    let row = 64.0;
    let (left, right, top, bottom) = (150.0, 16.0, 10.0, 30.0);
    let w = 760.0;
    let h = top + bottom + row * props.series.len().max(1) as f64;
    let ticks = {
        let (lo, hi) =
            LinearScale::nice_domain(props.series.iter().flat_map(|s| s.1.iter().copied()), 5);
        nice_ticks(lo, hi, 5)
    };
    let domain = (
        ticks.first().copied().unwrap_or(0.0),
        ticks.last().copied().unwrap_or(1.0),
    );
    let x = LinearScale::new(domain, (left, w - right));
    html! {
        <svg id={props.id.clone()} class="chart" xmlns="http://www.w3.org/2000/svg" role="img"
            aria-label={props.label.clone()} viewBox={format!("0 0 {w} {h}")} width="100%">
            <title>{ &props.label }</title>
            { x_axis(&x, &ticks, h - bottom, top) }
            { for props.series.iter().enumerate().map(|(i, (name, values))| {
                let cy = top + row * (i as f64 + 0.5);
                let colour = SERIES[i % SERIES.len()];
                let Some(b) = BoxStats::of(values) else { return html! {} };
                let steps = 60;
                // Cut at the data's range, as violin plots usually are: no density where no query is.
                let xs: Vec<f64> = (0..=steps).map(|s| b.min + (b.max - b.min) * s as f64 / steps as f64).collect();
                let ds = density(values, &xs);
                let peak = ds.iter().cloned().fold(0.0, f64::max).max(1e-12);
                let half = row * 0.42;
                let upper: Vec<String> = xs.iter().zip(&ds).map(|(v, d)| format!("{:.1},{:.1}", x.map(*v), cy - d / peak * half)).collect();
                let lower: Vec<String> = xs.iter().zip(&ds).rev().map(|(v, d)| format!("{:.1},{:.1}", x.map(*v), cy + d / peak * half)).collect();
                let path = format!("M{}L{}Z", upper.join("L"), lower.join("L"));
                let bh = 10.0;
                html! {
                    <g>
                        <title>{ format!("{name}: median {:.4}, quartiles {:.4}–{:.4}, mean {:.4}, {} queries", b.median, b.q1, b.q3, b.mean, b.n) }</title>
                        <text x={(left - 8.0).to_string()} y={(cy + 4.0).to_string()} text-anchor="end" font-size="12" fill="currentColor">{ truncate(name, 22) }</text>
                        <path d={path} fill={colour} fill-opacity="0.22" stroke={colour} stroke-width="1" />
                        <line x1={x.map(b.whisker_low).to_string()} x2={x.map(b.whisker_high).to_string()}
                            y1={cy.to_string()} y2={cy.to_string()} stroke="currentColor" />
                        <rect x={x.map(b.q1).to_string()} y={(cy - bh / 2.0).to_string()}
                            width={(x.map(b.q3) - x.map(b.q1)).max(1.0).to_string()} height={bh.to_string()}
                            fill={colour} stroke="currentColor" />
                        <line x1={x.map(b.median).to_string()} x2={x.map(b.median).to_string()}
                            y1={(cy - bh / 2.0).to_string()} y2={(cy + bh / 2.0).to_string()} stroke="#ffffff" stroke-width="2" />
                        <circle cx={x.map(b.mean).to_string()} cy={cy.to_string()} r="3" fill="#ffffff" stroke="currentColor" />
                        { for b.outliers.iter().map(|o| html! {
                            <circle cx={x.map(*o).to_string()} cy={cy.to_string()} r="2" fill="none" stroke={colour} />
                        }) }
                    </g>
                }
            }) }
        </svg>
    }
}

pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

#[derive(Properties, PartialEq)]
pub struct ScatterProps {
    pub id: AttrValue,
    pub label: AttrValue,
    pub x_label: AttrValue,
    pub y_label: AttrValue,
    /// (qid, x, y).
    pub points: Vec<(String, f64, f64)>,
}

/// Per-query scatter with the y = x diagonal for reference.
#[function_component(Scatter)]
pub fn scatter(props: &ScatterProps) -> Html {
    let (w, h, left, right, top, bottom) = (520.0, 380.0, 52.0, 14.0, 12.0, 42.0);
    let xt = {
        let (lo, hi) = LinearScale::nice_domain(props.points.iter().map(|p| p.1), 5);
        nice_ticks(lo, hi, 5)
    };
    let yt = {
        let (lo, hi) = LinearScale::nice_domain(props.points.iter().map(|p| p.2), 5);
        nice_ticks(lo, hi, 5)
    };
    let dom = |t: &[f64]| {
        (
            t.first().copied().unwrap_or(0.0),
            t.last().copied().unwrap_or(1.0),
        )
    };
    let x = LinearScale::new(dom(&xt), (left, w - right));
    let y = LinearScale::new(dom(&yt), (h - bottom, top));
    let (lo, hi) = (dom(&xt).0.max(dom(&yt).0), dom(&xt).1.min(dom(&yt).1));
    html! {
        <svg id={props.id.clone()} class="chart" xmlns="http://www.w3.org/2000/svg" role="img"
            aria-label={props.label.clone()} viewBox={format!("0 0 {w} {h}")} width="100%">
            <title>{ &props.label }</title>
            { y_axis(&y, &yt, left, w - right) }
            { x_axis(&x, &xt, h - bottom, top) }
            if lo < hi {
                <line x1={x.map(lo).to_string()} y1={y.map(lo).to_string()} x2={x.map(hi).to_string()} y2={y.map(hi).to_string()}
                    stroke="currentColor" stroke-dasharray="4 4" stroke-opacity="0.5" />
            }
            { for props.points.iter().map(|(q, a, b)| html! {
                <circle cx={format!("{:.1}", x.map(*a))} cy={format!("{:.1}", y.map(*b))} r="4"
                    fill={SERIES[0]} fill-opacity="0.6" stroke={SERIES[0]}>
                    <title>{ format!("{q}: {} {a:.4}, {} {b:.4}", props.x_label, props.y_label) }</title>
                </circle>
            }) }
            <text x={((left + w - right) / 2.0).to_string()} y={(h - 6.0).to_string()} text-anchor="middle" font-size="12" fill="currentColor">{ &props.x_label }</text>
            <text transform={format!("translate(14 {}) rotate(-90)", (top + h - bottom) / 2.0)} text-anchor="middle" font-size="12" fill="currentColor">{ &props.y_label }</text>
        </svg>
    }
}
