//! Tournament view: per games file, the Elo and Bradley–Terry leaderboard with intervals, the
//! win-rate heatmap (hand-drawn SVG), games per pair and the judge's position-flip rate.

use super::charts::{truncate, ChartFrame, DOWN, UP};
use crate::export::TableFormat;
use crate::export_tournament;
use crate::ui::download;
use ragscope_protocol::tournament::TournamentTable;
use ragscope_protocol::Report;
use std::rc::Rc;
use yew::prelude::*;

#[derive(Properties, PartialEq)]
pub struct Props {
    pub report: Rc<Report>,
}

#[function_component(TournamentView)]
pub fn tournament_view(props: &Props) -> Html {
    let report = &props.report;
    if report.tournaments.is_empty() {
        return html! {
            <section class="tournament">
                <div class="placeholder">
                    <p>{ "Load RAGElo pairwise evaluations (a CSV with qid, agent_a, agent_b, answer, or answers_eval JSONL) to rank the agents with Elo and Bradley–Terry." }</p>
                </div>
            </section>
        };
    }
    html! {
        <section class="tournament">
            { for report.tournaments.iter().enumerate().map(|(i, t)| table(i, t)) }
        </section>
    }
}

fn table(index: usize, t: &TournamentTable) -> Html {
    let export_button = |format: TableFormat| {
        let t = t.clone();
        let onclick = Callback::from(move |_| {
            download::save_text(
                &format!("ragscope-leaderboard.{}", format.extension()),
                format.mime(),
                &export_tournament::leaderboard(&t, format),
            )
        });
        html! { <button class="ghost small" id={format!("export-leaderboard-{index}-{}", format.extension())} {onclick}>{ format.label() }</button> }
    };
    let flips = if t.flips.1 > 0 {
        format!(
            "Position flips: {} of {} (query, pair) cells judged in both orders ({:.1}%) change verdict with the order the answers are shown in.",
            t.flips.0,
            t.flips.1,
            100.0 * t.flips.0 as f64 / t.flips.1 as f64
        )
    } else {
        "No pair was judged in both orders: position flips cannot be counted.".to_string()
    };
    html! {
        <div class="tournament-file" data-file={t.file.clone()}>
            <div class="section-head">
                <h2>{ format!("Tournament — {} ({} games, {} queries)", t.file, t.games, t.queries) }</h2>
                <div class="exports" role="group" aria-label="Export the leaderboard">
                    <span class="hint">{ "Export" }</span>
                    { for TableFormat::ALL.iter().map(|f| export_button(*f)) }
                </div>
            </div>
            <div class="table-wrap">
            <table class="compact leaderboard" id={format!("leaderboard-{index}")}>
                <caption class="visually-hidden">{ "Agents by Elo rating, with Bradley–Terry ratings and 95% bootstrap intervals" }</caption>
                <thead><tr>
                    <th scope="col">{ "agent" }</th>
                    <th scope="col" class="num" title="mean over tournaments">{ "Elo" }</th>
                    <th scope="col" class="num" title="population standard deviation over tournaments">{ "± std" }</th>
                    <th scope="col" class="num" title="Bradley–Terry MLE on the Elo scale">{ "Bradley–Terry" }</th>
                    <th scope="col" class="num" title="percentile bootstrap over queries">{ "95% CI" }</th>
                    <th scope="col" class="num">{ "games" }</th>
                    <th scope="col" class="num">{ "W / L / T" }</th>
                </tr></thead>
                <tbody>
                { for t.rows.iter().map(|r| html! {
                    <tr data-agent={r.agent.clone()} data-elo={r.elo.to_string()}
                        data-bt={r.bt.map(|b| b.rating.to_string()).unwrap_or_default()}>
                        <th scope="row">{ &r.agent }</th>
                        <td class="num">{ format!("{:.1}", r.elo) }</td>
                        <td class="num">{ format!("{:.1}", r.elo_std) }</td>
                        <td class="num">{ r.bt.map_or("n/a".into(), |b| format!("{:.1}", b.rating)) }</td>
                        <td class="num">{ r.bt.map_or(String::new(), |b| format!("[{:.1}, {:.1}]", b.ci_low, b.ci_high)) }</td>
                        <td class="num">{ r.games }</td>
                        <td class="num">{ format!("{} / {} / {}", r.wins, r.losses, r.ties) }</td>
                    </tr>
                }) }
                </tbody>
            </table>
            </div>
            <p class="hint">{ &t.settings }</p>
            if let Some(note) = &t.bt_note {
                <p class="hint note">{ format!("Bradley–Terry: {note}.") }</p>
            }
            <p class="hint flips" id={format!("flips-{index}")}>{ flips }</p>
            <div class="chart-grid">
                <ChartFrame id={format!("chart-winrate-{index}")} title={format!("Win rate, row agent against column agent — {}", t.file)}>
                    { heatmap(&format!("chart-winrate-{index}"), t, true) }
                </ChartFrame>
                <ChartFrame id={format!("chart-pairs-{index}")} title={format!("Games per pair — {}", t.file)}>
                    { heatmap(&format!("chart-pairs-{index}"), t, false) }
                </ChartFrame>
            </div>
        </div>
    }
}

/// Agents × agents: win rate (a red–white–green scale around ½) or games per pair (one hue).
fn heatmap(id: &str, t: &TournamentTable, win_rate: bool) -> Html {
    let n = t.agents.len().max(1);
    let (left, top, cell) = (170.0, 120.0, 56.0_f64.min(400.0 / n as f64).max(18.0));
    let (w, h) = (left + cell * n as f64 + 10.0, top + cell * n as f64 + 10.0);
    let max_games = t
        .games_per_pair
        .iter()
        .flatten()
        .copied()
        .max()
        .unwrap_or(1)
        .max(1);
    let label = if win_rate {
        "Win rate of each row agent against each column agent (ties count half)"
    } else {
        "Number of games between each pair of agents"
    };
    let colour = |i: usize, j: usize| -> (String, String, String) {
        if i == j {
            return ("#8c96a022".into(), String::new(), String::new());
        }
        if win_rate {
            match t.win_rate.get(i).and_then(|r| r.get(j)).copied().flatten() {
                None => ("#8c96a022".into(), "–".into(), "never met".into()),
                Some(v) => {
                    let base = if v >= 0.5 { UP } else { DOWN };
                    let alpha = ((v - 0.5).abs() * 2.0 * 230.0) as u8;
                    (
                        format!("{base}{alpha:02x}"),
                        format!("{:.0}", 100.0 * v),
                        format!("{:.1}%", 100.0 * v),
                    )
                }
            }
        } else {
            let g = t
                .games_per_pair
                .get(i)
                .and_then(|r| r.get(j))
                .copied()
                .unwrap_or(0);
            let alpha = (g as f64 / max_games as f64 * 200.0) as u8 + 20;
            (
                format!("#3b6fd8{alpha:02x}"),
                g.to_string(),
                format!("{g} games"),
            )
        }
    };
    html! {
        <svg id={id.to_string()} class="chart heatmap" xmlns="http://www.w3.org/2000/svg" role="img"
            aria-label={label} viewBox={format!("0 0 {w} {h}")} width="100%">
            <title>{ label }</title>
            { for t.agents.iter().enumerate().map(|(i, a)| html! {
                <g>
                    <text x={(left - 6.0).to_string()} y={(top + cell * (i as f64 + 0.5) + 4.0).to_string()}
                        text-anchor="end" font-size="11" fill="currentColor">{ truncate(a, 26) }</text>
                    <text transform={format!("translate({} {}) rotate(-45)", left + cell * (i as f64 + 0.5), top - 6.0)}
                        font-size="11" fill="currentColor">{ truncate(a, 22) }</text>
                </g>
            }) }
            { for (0..t.agents.len()).flat_map(|i| (0..t.agents.len()).map(move |j| (i, j))).map(|(i, j)| {
                let (fill, text, tip) = colour(i, j);
                let (x, y) = (left + cell * j as f64, top + cell * i as f64);
                html! {
                    <g>
                        <rect x={x.to_string()} y={y.to_string()} width={cell.to_string()} height={cell.to_string()}
                            fill={fill} stroke="#8c96a055">
                            if !tip.is_empty() {
                                <title>{ format!("{} vs {}: {tip}", t.agents[i], t.agents[j]) }</title>
                            }
                        </rect>
                        <text x={(x + cell / 2.0).to_string()} y={(y + cell / 2.0 + 4.0).to_string()} text-anchor="middle"
                            font-size="11" fill="currentColor">{ text }</text>
                    </g>
                }
            }) }
        </svg>
    }
}
