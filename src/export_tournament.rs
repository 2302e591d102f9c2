//! The Tournament leaderboard and the Agreement table in the export formats of
//! [`crate::export::TableFormat`] (CSV, JSON, LaTeX, Markdown). Plain functions, tested natively.

use crate::export::TableFormat;
use ragscope_protocol::tournament::{AgreementTable, TournamentTable};
use std::fmt::Write as _;

/// Header and rows of the leaderboard: Elo and Bradley–Terry side by side.
fn leaderboard_cells(t: &TournamentTable) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let header = vec![
        "rank",
        "agent",
        "elo",
        "elo_std",
        "bt",
        "bt_se",
        "bt_ci_low",
        "bt_ci_high",
        "games",
        "wins",
        "losses",
        "ties",
    ];
    let rows = t
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let bt = |f: fn(&ragscope_protocol::tournament::BtCell) -> f64| {
                r.bt.as_ref()
                    .map_or(String::new(), |b| format!("{:.1}", f(b)))
            };
            vec![
                (i + 1).to_string(),
                r.agent.clone(),
                format!("{:.1}", r.elo),
                format!("{:.1}", r.elo_std),
                bt(|b| b.rating),
                bt(|b| b.se),
                bt(|b| b.ci_low),
                bt(|b| b.ci_high),
                r.games.to_string(),
                r.wins.to_string(),
                r.losses.to_string(),
                r.ties.to_string(),
            ]
        })
        .collect();
    (header, rows)
}

pub fn leaderboard(t: &TournamentTable, format: TableFormat) -> String {
    if format == TableFormat::Json {
        // Full precision, the shape of `ragscope elo --format json` plus the other model.
        let ratings: serde_json::Map<String, serde_json::Value> = t
            .rows
            .iter()
            .map(|r| {
                (
                    r.agent.clone(),
                    serde_json::json!({
                        "elo": {"rating": r.elo, "std": r.elo_std},
                        "bradley_terry": r.bt.map(|b| serde_json::json!({
                            "rating": b.rating, "std": b.se, "ci_low": b.ci_low, "ci_high": b.ci_high})),
                        "games": r.games, "wins": r.wins, "losses": r.losses, "ties": r.ties,
                    }),
                )
            })
            .collect();
        let value = serde_json::json!({
            "file": t.file,
            "settings": t.settings,
            "ratings": ratings,
            "position_flips": {"flips": t.flips.0, "pairs_in_both_orders": t.flips.1},
        });
        return format!("{value:#}\n");
    }
    let (header, rows) = leaderboard_cells(t);
    grid(&header, &rows, 2, format)
}

pub fn agreement(a: &AgreementTable, format: TableFormat) -> String {
    if format == TableFormat::Json {
        let value = serde_json::json!({
            "a": a.a, "b": a.b, "kind": a.kind,
            "statistics": a.rows.iter().map(|r| serde_json::json!({
                "statistic": r.statistic, "value": r.value, "items": r.items})).collect::<Vec<_>>(),
            "only_a": a.only_a, "only_b": a.only_b,
        });
        return format!("{value:#}\n");
    }
    let rows: Vec<Vec<String>> = a
        .rows
        .iter()
        .map(|r| {
            vec![
                r.statistic.clone(),
                r.value.map_or("n/a".into(), |v| format!("{v:.4}")),
                r.items.to_string(),
            ]
        })
        .collect();
    grid(&["statistic", "value", "items"], &rows, 1, format)
}

fn grid(header: &[&str], rows: &[Vec<String>], labels: usize, format: TableFormat) -> String {
    let mut out = String::new();
    match format {
        TableFormat::Csv | TableFormat::Json => {
            let field = |s: &str| {
                if s.contains([',', '"', '\n']) {
                    format!("\"{}\"", s.replace('"', "\"\""))
                } else {
                    s.to_string()
                }
            };
            let _ = writeln!(out, "{}", header.join(","));
            for r in rows {
                let _ = writeln!(
                    out,
                    "{}",
                    r.iter().map(|c| field(c)).collect::<Vec<_>>().join(",")
                );
            }
        }
        TableFormat::Markdown => {
            let _ = writeln!(out, "| {} |", header.join(" | "));
            let rule: Vec<&str> = (0..header.len())
                .map(|c| if c < labels { "---" } else { "---:" })
                .collect();
            let _ = writeln!(out, "| {} |", rule.join(" | "));
            for r in rows {
                let cells: Vec<String> = r.iter().map(|c| c.replace('|', "\\|")).collect();
                let _ = writeln!(out, "| {} |", cells.join(" | "));
            }
        }
        TableFormat::Latex => {
            let escape = |s: &str| {
                s.chars().fold(String::new(), |mut o, c| {
                    if "_&%$#{}".contains(c) {
                        o.push('\\');
                    }
                    o.push(c);
                    o
                })
            };
            let cols: String = (0..header.len())
                .map(|c| if c < labels { 'l' } else { 'r' })
                .collect();
            let _ = writeln!(out, "\\begin{{tabular}}{{{cols}}}\n\\toprule");
            let head: Vec<String> = header.iter().map(|h| escape(h)).collect();
            let _ = writeln!(out, "{} \\\\\n\\midrule", head.join(" & "));
            for r in rows {
                let cells: Vec<String> = r.iter().map(|c| escape(c)).collect();
                let _ = writeln!(out, "{} \\\\", cells.join(" & "));
            }
            let _ = writeln!(out, "\\bottomrule\n\\end{{tabular}}");
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragscope_protocol::tournament::{BtCell, LeaderRow};

    fn table() -> TournamentTable {
        TournamentTable {
            file: "g.csv".into(),
            rows: vec![LeaderRow {
                agent: "rag_a".into(),
                elo: 1030.0,
                elo_std: 0.5,
                bt: Some(BtCell {
                    rating: 1010.25,
                    se: 3.0,
                    ci_low: 1000.0,
                    ci_high: 1020.0,
                }),
                games: 4,
                wins: 3,
                losses: 1,
                ties: 0,
            }],
            ..TournamentTable::default()
        }
    }

    #[test]
    fn every_format_holds_the_leaderboard() {
        let t = table();
        assert_eq!(
            leaderboard(&t, TableFormat::Csv).lines().nth(1),
            Some("1,rag_a,1030.0,0.5,1010.2,3.0,1000.0,1020.0,4,3,1,0")
        );
        assert!(leaderboard(&t, TableFormat::Latex).contains("1 & rag\\_a & 1030.0"));
        assert!(leaderboard(&t, TableFormat::Markdown).contains("| 1 | rag_a | 1030.0 |"));
        let json: serde_json::Value =
            serde_json::from_str(&leaderboard(&t, TableFormat::Json)).unwrap();
        assert_eq!(json["ratings"]["rag_a"]["bradley_terry"]["rating"], 1010.25);
    }
}
