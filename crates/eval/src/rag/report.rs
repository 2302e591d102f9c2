//! Renders correlation-study results as the paper's Table 3 (metric × dataset/model) and the
//! sensitivity-to-k report (Fig. 2 as a table), in text, CSV, JSON and LaTeX.

use std::fmt::Write as _;

use serde::Serialize;

use super::correlation::{Coefficient, Metric, StudyResult, Summary};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Text,
    Csv,
    Json,
    Latex,
}

/// A metric × column grid of summaries; `None` marks a metric unavailable in that column.
#[derive(Debug, Clone)]
struct Grid {
    columns: Vec<String>,
    rows: Vec<(Metric, Vec<Option<Summary>>)>,
}

fn column_name(dataset: &str, model: &str) -> String {
    match (dataset.is_empty(), model.is_empty()) {
        (true, true) => "all".into(),
        (false, true) => dataset.into(),
        (true, false) => model.into(),
        (false, false) => format!("{dataset}/{model}"),
    }
}

fn table3_grid(result: &StudyResult, coefficient: Coefficient) -> Grid {
    let columns = result
        .groups
        .iter()
        .map(|g| column_name(&g.dataset, &g.model))
        .collect();
    let rows = Metric::ALL
        .iter()
        .filter(|m| {
            result
                .groups
                .iter()
                .any(|g| g.metrics.iter().any(|r| r.metric == **m))
        })
        .map(|m| {
            let cells = result
                .groups
                .iter()
                .map(|g| {
                    g.metrics
                        .iter()
                        .find(|r| r.metric == *m)
                        .map(|r| r.get(coefficient))
                })
                .collect();
            (*m, cells)
        })
        .collect();
    Grid { columns, rows }
}

/// Index of the best mean per column (for marking).
fn best_per_column(grid: &Grid) -> Vec<Option<usize>> {
    (0..grid.columns.len())
        .map(|c| {
            grid.rows
                .iter()
                .enumerate()
                .filter_map(|(r, (_, cells))| cells[c].map(|s| (r, s.mean)))
                .max_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(r, _)| r)
        })
        .collect()
}

fn coefficient_name(c: Coefficient) -> &'static str {
    match c {
        Coefficient::Spearman => "Spearman ρ",
        Coefficient::KendallTauB => "Kendall τ-b",
        Coefficient::Pearson => "Pearson r",
    }
}

fn render_text(grid: &Grid, title: &str) -> String {
    let best = best_per_column(grid);
    let cell = |s: &Option<Summary>, is_best: bool| match s {
        Some(s) => format!(
            "{:>6.3}{} [{:>6.3}, {:>6.3}]",
            s.mean,
            if is_best { "*" } else { " " },
            s.ci_low,
            s.ci_high
        ),
        None => "n/a".to_string(),
    };
    let mut cells: Vec<Vec<String>> = Vec::new();
    let mut header = vec!["metric".to_string()];
    header.extend(grid.columns.iter().cloned());
    cells.push(header);
    for (r, (metric, row)) in grid.rows.iter().enumerate() {
        let mut line = vec![metric.name().to_string()];
        for (c, s) in row.iter().enumerate() {
            line.push(cell(s, best[c] == Some(r)));
        }
        cells.push(line);
    }
    let widths: Vec<usize> = (0..cells[0].len())
        .map(|c| {
            cells
                .iter()
                .map(|l| l[c].chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = format!("{title}\n");
    for line in &cells {
        let padded: Vec<String> = line
            .iter()
            .zip(&widths)
            .map(|(s, w)| format!("{s}{}", " ".repeat(w - s.chars().count())))
            .collect();
        out.push_str(padded.join("  ").trim_end());
        out.push('\n');
    }
    out
}

fn latex_escape(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        match ch {
            '_' | '&' | '%' | '#' | '$' | '{' | '}' => {
                out.push('\\');
                out.push(ch);
            }
            'θ' => out.push_str("$\\theta$"),
            _ => out.push(ch),
        }
    }
    out
}

fn render_latex(grid: &Grid, caption: &str) -> String {
    let best = best_per_column(grid);
    let mut out = String::new();
    let _ = writeln!(out, "\\begin{{table}}[t]\n\\centering");
    let _ = writeln!(
        out,
        "\\begin{{tabular}}{{l{}}}",
        "c".repeat(grid.columns.len())
    );
    let _ = writeln!(out, "\\toprule");
    let header: Vec<String> = grid.columns.iter().map(|c| latex_escape(c)).collect();
    let _ = writeln!(out, "Metric & {} \\\\", header.join(" & "));
    let _ = writeln!(out, "\\midrule");
    for (r, (metric, row)) in grid.rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(c, s)| match s {
                Some(s) if best[c] == Some(r) => format!("\\textbf{{{:.3}}}", s.mean),
                Some(s) => format!("{:.3}", s.mean),
                None => "--".into(),
            })
            .collect();
        let _ = writeln!(
            out,
            "{} & {} \\\\",
            latex_escape(metric.name()),
            cells.join(" & ")
        );
    }
    let _ = writeln!(out, "\\bottomrule\n\\end{{tabular}}");
    let _ = writeln!(out, "\\caption{{{}}}", latex_escape(caption));
    let _ = writeln!(out, "\\end{{table}}");
    out
}

const CSV_HEADER: &str = "dataset,model,k,metric,coefficient,mean,ci_low,ci_high,questions\n";

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn csv_rows(result: &StudyResult, out: &mut String) {
    for g in &result.groups {
        for r in &g.metrics {
            for c in [
                Coefficient::Spearman,
                Coefficient::KendallTauB,
                Coefficient::Pearson,
            ] {
                let s = r.get(c);
                let name = match c {
                    Coefficient::Spearman => "spearman",
                    Coefficient::KendallTauB => "kendall-tau-b",
                    Coefficient::Pearson => "pearson",
                };
                let _ = writeln!(
                    out,
                    "{},{},{},{},{name},{},{},{},{}",
                    csv_field(&g.dataset),
                    csv_field(&g.model),
                    g.k,
                    csv_field(r.metric.name()),
                    s.mean,
                    s.ci_low,
                    s.ci_high,
                    g.questions
                );
            }
        }
    }
}

fn notes(result: &StudyResult) -> String {
    let mut out = String::new();
    for g in &result.groups {
        let name = column_name(&g.dataset, &g.model);
        let _ = writeln!(
            out,
            "{name}: k = {}, {} questions used, {} skipped (all contexts share one outcome), {} contexts of another size skipped",
            g.k, g.questions, g.skipped_constant_outcome, g.skipped_contexts
        );
        for (m, why) in &g.unavailable {
            let _ = writeln!(out, "{name}: {} not available: {why}", m.name());
        }
        for c in &g.comparisons {
            let p = if c.p_value == 0.0 {
                format!("< {}", 1.0 / c.resamples as f64)
            } else {
                format!("= {:.4}", c.p_value)
            };
            let _ = writeln!(
                out,
                "{name}: {} > {}: mean Δρ = {:+.4}, one-sided paired bootstrap p {p}",
                c.reference.name(),
                c.other.name(),
                c.mean_difference,
            );
        }
    }
    out
}

/// The Table 3 report. Text and LaTeX show `coefficient`; CSV and JSON hold all three.
pub fn table3(result: &StudyResult, format: Format, coefficient: Coefficient) -> String {
    match format {
        Format::Json => serde_json::to_string_pretty(result).unwrap_or_default() + "\n",
        Format::Csv => {
            let mut out = CSV_HEADER.to_string();
            csv_rows(result, &mut out);
            out
        }
        Format::Text => {
            let title = format!(
                "Mean per-question {} between metric and outcome order (correct > abstain > wrong), 95% bootstrap CI; * = best",
                coefficient_name(coefficient)
            );
            render_text(&table3_grid(result, coefficient), &title) + "\n" + &notes(result)
        }
        Format::Latex => render_latex(
            &table3_grid(result, coefficient),
            &format!(
                "Mean per-question {} between each metric and the end-to-end outcome order.",
                coefficient_name(coefficient)
            ),
        ),
    }
}

#[derive(Serialize)]
struct SensitivityEntry<'a> {
    k: usize,
    result: &'a StudyResult,
}

/// The sensitivity-to-k report: for every dataset/model, metric × k.
pub fn sensitivity(
    results: &[(usize, StudyResult)],
    format: Format,
    coefficient: Coefficient,
) -> String {
    match format {
        Format::Json => {
            let entries: Vec<SensitivityEntry> = results
                .iter()
                .map(|(k, result)| SensitivityEntry { k: *k, result })
                .collect();
            serde_json::to_string_pretty(&entries).unwrap_or_default() + "\n"
        }
        Format::Csv => {
            let mut out = CSV_HEADER.to_string();
            for (_, r) in results {
                csv_rows(r, &mut out);
            }
            out
        }
        Format::Text | Format::Latex => {
            let mut columns_of_groups: Vec<String> = Vec::new();
            for (_, r) in results {
                for g in &r.groups {
                    let name = column_name(&g.dataset, &g.model);
                    if !columns_of_groups.contains(&name) {
                        columns_of_groups.push(name);
                    }
                }
            }
            let mut out = String::new();
            for group in columns_of_groups {
                let columns: Vec<String> = results.iter().map(|(k, _)| format!("k={k}")).collect();
                let rows = Metric::ALL
                    .iter()
                    .map(|m| {
                        let cells = results
                            .iter()
                            .map(|(_, r)| {
                                r.groups
                                    .iter()
                                    .find(|g| column_name(&g.dataset, &g.model) == group)
                                    .and_then(|g| g.metrics.iter().find(|x| x.metric == *m))
                                    .map(|x| x.get(coefficient))
                            })
                            .collect::<Vec<_>>();
                        (*m, cells)
                    })
                    .filter(|(_, cells)| cells.iter().any(Option::is_some))
                    .collect();
                let grid = Grid { columns, rows };
                let title = format!(
                    "{group}: {} by context size k",
                    coefficient_name(coefficient)
                );
                if format == Format::Text {
                    out.push_str(&render_text(&grid, &title));
                    out.push('\n');
                } else {
                    out.push_str(&render_latex(&grid, &title));
                }
            }
            out
        }
    }
}
