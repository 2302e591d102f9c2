//! The runs × measures table as CSV, JSON, LaTeX and Markdown, and the self-contained HTML
//! report. Plain functions over a [`Report`], tested natively.

use ragscope_protocol::Report;
use std::fmt::Write as _;

/// Significance level of the markers (on Holm-corrected p-values).
pub const ALPHA: f64 = 0.05;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    Csv,
    Json,
    Latex,
    Markdown,
}

impl TableFormat {
    pub const ALL: [TableFormat; 4] = [
        TableFormat::Csv,
        TableFormat::Json,
        TableFormat::Latex,
        TableFormat::Markdown,
    ];

    pub fn label(self) -> &'static str {
        match self {
            TableFormat::Csv => "CSV",
            TableFormat::Json => "JSON",
            TableFormat::Latex => "LaTeX",
            TableFormat::Markdown => "Markdown",
        }
    }

    pub fn extension(self) -> &'static str {
        match self {
            TableFormat::Csv => "csv",
            TableFormat::Json => "json",
            TableFormat::Latex => "tex",
            TableFormat::Markdown => "md",
        }
    }

    pub fn mime(self) -> &'static str {
        match self {
            TableFormat::Csv => "text/csv",
            TableFormat::Json => "application/json",
            TableFormat::Latex => "application/x-tex",
            TableFormat::Markdown => "text/markdown",
        }
    }
}

pub fn table(report: &Report, format: TableFormat) -> String {
    match format {
        TableFormat::Csv => csv(report),
        TableFormat::Json => json(report),
        TableFormat::Latex => latex(report),
        TableFormat::Markdown => markdown(report),
    }
}

/// A mean as the table shows it (trec_eval's `%6.4f` precision).
pub fn fmt_value(v: f64) -> String {
    if v.is_finite() {
        format!("{v:.4}")
    } else {
        "n/a".to_string()
    }
}

/// Whether run `r` differs significantly from the baseline on measure `m`, and in which
/// direction (`Some(true)`: better).
pub fn significant(report: &Report, r: usize, m: usize) -> Option<bool> {
    let s = report.runs.get(r)?.significance.get(m).copied().flatten()?;
    (s.p_holm < ALPHA).then_some(s.mean_difference > 0.0)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// One row per run: `run,num_q,<measure>…` then, per measure, the Holm-corrected p-value
/// against the baseline (empty for the baseline).
pub fn csv(report: &Report) -> String {
    let mut out = String::from("run,num_q");
    for m in &report.measures {
        write!(out, ",{}", csv_field(&m.name)).ok();
    }
    for m in &report.measures {
        write!(out, ",{}", csv_field(&format!("p_holm({})", m.name))).ok();
    }
    out.push('\n');
    for run in &report.runs {
        write!(out, "{},{}", csv_field(&run.name), run.num_queries).ok();
        for v in &run.means {
            write!(out, ",{}", fmt_value(*v)).ok();
        }
        for s in &run.significance {
            match s {
                Some(s) => write!(out, ",{:.4}", s.p_holm),
                None => write!(out, ","),
            }
            .ok();
        }
        out.push('\n');
    }
    out
}

/// Means, per-query values and significance, keyed by names (NaN becomes null).
pub fn json(report: &Report) -> String {
    let num = |v: f64| {
        if v.is_finite() {
            serde_json::json!(v)
        } else {
            serde_json::Value::Null
        }
    };
    let runs: Vec<serde_json::Value> = report
        .runs
        .iter()
        .map(|run| {
            let means: serde_json::Map<String, serde_json::Value> = report
                .measures
                .iter()
                .zip(&run.means)
                .map(|(m, v)| (m.name.clone(), num(*v)))
                .collect();
            let significance: serde_json::Map<String, serde_json::Value> = report
                .measures
                .iter()
                .zip(&run.significance)
                .filter_map(|(m, s)| {
                    let s = s.as_ref()?;
                    Some((
                        m.name.clone(),
                        serde_json::json!({
                            "mean_difference": num(s.mean_difference),
                            "p_value": num(s.p_value),
                            "p_holm": num(s.p_holm),
                        }),
                    ))
                })
                .collect();
            let per_query: serde_json::Map<String, serde_json::Value> = report
                .measures
                .iter()
                .zip(&run.per_query)
                .map(|(m, values)| {
                    let by_topic: serde_json::Map<String, serde_json::Value> = report
                        .topics
                        .iter()
                        .zip(values)
                        .filter(|(_, v)| v.is_finite())
                        .map(|(t, v)| (t.clone(), num(*v)))
                        .collect();
                    (m.name.clone(), by_topic.into())
                })
                .collect();
            serde_json::json!({
                "run": run.name,
                "num_q": run.num_queries,
                "means": means,
                "significance": significance,
                "per_query": per_query,
            })
        })
        .collect();
    let doc = serde_json::json!({
        "qrels": report.qrels,
        "baseline": report.runs.get(report.baseline).map(|r| r.name.clone()),
        "test": report.test.label(),
        "correction": "holm",
        "runs": runs,
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

fn latex_escape(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\textbackslash{}"),
            '&' | '%' | '$' | '#' | '_' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            _ => out.push(c),
        }
    }
    out
}

/// Whether run `r` has the best (largest) mean on measure `m`; ties at the precision shown
/// (0.3 and 0.30000000000000004 both print 0.3000) are all best.
pub fn is_best(report: &Report, r: usize, m: usize) -> bool {
    let max = report
        .runs
        .iter()
        .map(|run| run.means[m])
        .filter(|v| v.is_finite())
        .fold(f64::NEG_INFINITY, f64::max);
    report.runs[r].means[m].is_finite() && fmt_value(report.runs[r].means[m]) == fmt_value(max)
}

/// booktabs table: best per column in bold, † marks a significant difference from the baseline.
pub fn latex(report: &Report) -> String {
    let mut out = String::new();
    writeln!(
        out,
        "% ragscope: {} vs baseline {}, {} with Holm correction, alpha = {ALPHA}",
        latex_escape(&report.qrels),
        report
            .runs
            .get(report.baseline)
            .map(|r| latex_escape(&r.name))
            .unwrap_or_default(),
        report.test.label()
    )
    .ok();
    writeln!(
        out,
        "\\begin{{tabular}}{{l{}}}",
        "r".repeat(report.measures.len())
    )
    .ok();
    out.push_str("\\toprule\n");
    write!(out, "Run").ok();
    for m in &report.measures {
        write!(out, " & {}", latex_escape(&m.name)).ok();
    }
    out.push_str(" \\\\\n\\midrule\n");
    for (r, run) in report.runs.iter().enumerate() {
        write!(out, "{}", latex_escape(&run.name)).ok();
        for (m, v) in run.means.iter().enumerate() {
            let mut cell = fmt_value(*v);
            if is_best(report, r, m) {
                cell = format!("\\textbf{{{cell}}}");
            }
            if significant(report, r, m).is_some() {
                cell.push_str("$^\\dagger$");
            }
            write!(out, " & {cell}").ok();
        }
        out.push_str(" \\\\\n");
    }
    out.push_str("\\bottomrule\n\\end{tabular}\n");
    out
}

/// GitHub-flavoured Markdown; best per column in bold, † marks significance.
pub fn markdown(report: &Report) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let mut out = String::from("| Run |");
    for m in &report.measures {
        write!(out, " {} |", esc(&m.name)).ok();
    }
    out.push_str("\n|---|");
    out.push_str(&"---:|".repeat(report.measures.len()));
    out.push('\n');
    for (r, run) in report.runs.iter().enumerate() {
        write!(out, "| {} |", esc(&run.name)).ok();
        for (m, v) in run.means.iter().enumerate() {
            let mut cell = fmt_value(*v);
            if is_best(report, r, m) {
                cell = format!("**{cell}**");
            }
            if significant(report, r, m).is_some() {
                cell.push('†');
            }
            write!(out, " {cell} |").ok();
        }
        out.push('\n');
    }
    if let Some(b) = report.runs.get(report.baseline) {
        write!(
            out,
            "\n† significantly different from {} ({}, Holm-corrected, α = {ALPHA}).\n",
            esc(&b.name),
            report.test.label()
        )
        .ok();
    }
    out
}

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A single HTML file with the table and the given charts (SVG markup taken from the page),
/// styled inline, with no script and no external resource.
pub fn html_report(report: &Report, charts: &[(String, String)], css: &str) -> String {
    let mut table = String::from("<table><thead><tr><th>run</th><th>topics</th>");
    for m in &report.measures {
        write!(
            table,
            "<th title=\"{}\">{}</th>",
            html_escape(&m.explanation),
            html_escape(&m.name)
        )
        .ok();
    }
    table.push_str("</tr></thead><tbody>");
    for (r, run) in report.runs.iter().enumerate() {
        write!(
            table,
            "<tr><th>{}</th><td>{}</td>",
            html_escape(&run.name),
            run.num_queries
        )
        .ok();
        for (m, v) in run.means.iter().enumerate() {
            let class = if is_best(report, r, m) {
                " class=\"best\""
            } else {
                ""
            };
            let mark = match significant(report, r, m) {
                Some(true) => " ▲",
                Some(false) => " ▼",
                None => "",
            };
            write!(table, "<td{class}>{}{mark}</td>", fmt_value(*v)).ok();
        }
        table.push_str("</tr>");
    }
    table.push_str("</tbody></table>");
    let mut figures = String::new();
    for (title, svg) in charts {
        write!(
            figures,
            "<figure><figcaption>{}</figcaption>{svg}</figure>",
            html_escape(title)
        )
        .ok();
    }
    let baseline = report
        .runs
        .get(report.baseline)
        .map(|r| html_escape(&r.name))
        .unwrap_or_default();
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
         <title>ragscope report: {qrels}</title><style>{css}</style></head><body class=\"report\">\
         <h1>ragscope report</h1><p>Judgments: <code>{qrels}</code>. Baseline: <code>{baseline}</code>. \
         ▲/▼: significantly better/worse than the baseline ({test}, Holm-corrected, α = {ALPHA}). \
         Bold: best per measure.</p>{table}{figures}</body></html>\n",
        qrels = html_escape(&report.qrels),
        test = report.test.label(),
    )
}
