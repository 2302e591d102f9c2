//! What `eval`, `udcg` and `compare` share: reading runs, qrels and utilities with messages that
//! name the file, parsing measure lists, and writing one grid of cells in every output format.

use std::fmt::Write as _;
use std::sync::Arc;

use ragscope_eval::formats::ReadError;
use ragscope_eval::rag::utilities_tsv::{self, Utilities};
use ragscope_eval::{Measure, Qrels, Run};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Csv,
    Json,
    Latex,
    Markdown,
}

/// Qrels read by crates/eval's streaming parser; the error names the file (and line).
pub fn read_qrels(path: &str) -> Result<Qrels, String> {
    let file = open(path)?;
    ragscope_eval::formats::read_qrels_input(path, file).map_err(|e| described(path, e))
}

/// A run read by crates/eval's parser: a regular file mapped and parsed in place, anything
/// else streamed, never copied whole into memory as text.
pub fn read_run(path: &str) -> Result<Run, String> {
    read_opened_run(path, open(path))
}

/// [`read_run`] on a file [`open`]ed already.
pub fn read_opened_run(
    path: &str,
    file: Result<ragscope_eval::formats::Input, String>,
) -> Result<Run, String> {
    ragscope_eval::formats::read_run_input(path, file?).map_err(|e| described(path, e))
}

/// A file for the parsers: a regular file mapped, anything else streamed.
pub fn open(path: &str) -> Result<ragscope_eval::formats::Input, String> {
    ragscope_eval::formats::open_input(path).map_err(|e| format!("cannot read '{path}': {e}"))
}

pub fn described(path: &str, e: ReadError) -> String {
    match e {
        ReadError::Io(e) => format!("cannot read '{path}': {e}"),
        ReadError::Parse(e) => e.to_string(),
    }
}

/// Reads a utilities TSV and settles which reader model's probabilities to use: `model` when
/// given (it must occur), else the only model the file names, else the model-less rows.
pub fn read_utilities(path: &str, model: Option<&str>) -> Result<(Arc<Utilities>, String), String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
    let utilities = utilities_tsv::parse(path, &text).map_err(|e| e.to_string())?;
    let chosen = utilities_tsv::choose_model(path, &utilities, model)?;
    Ok((Arc::new(utilities), chosen))
}

/// Parses a comma-split measure list, skipping empty items.
/// Measures from `--measures` values, each a comma-separated list; commas inside a measure's
/// parentheses (`UDCG(gamma=1/3,gain=binary)@5`) belong to the measure.
pub fn parse_measures(texts: &[String]) -> Result<Vec<Measure>, String> {
    texts
        .iter()
        .flat_map(|t| split_top_level(t))
        .filter(|m| !m.trim().is_empty())
        .map(|t| t.trim().parse::<Measure>().map_err(|e| e.to_string()))
        .collect()
}

fn split_top_level(text: &str) -> Vec<&str> {
    let (mut parts, mut depth, mut start) = (Vec::new(), 0usize, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

/// How a measure's value prints: counts as integers, the rest with 4 decimals like trec_eval.
pub fn number(m: &Measure, v: f64) -> String {
    if v.is_nan() {
        "n/a".to_string()
    } else if m.is_count() {
        format!("{}", v as i64)
    } else {
        format!("{v:.4}")
    }
}

/// A grid of already formatted cells: the first `label_columns` columns are labels (left
/// aligned), the rest numbers. `latex_cells`, when given, replaces `cells` in LaTeX output
/// (for markup such as superscripts that must not be escaped).
pub struct Grid {
    pub header: Vec<String>,
    pub cells: Vec<Vec<String>>,
    pub label_columns: usize,
    pub latex_cells: Option<Vec<Vec<String>>>,
    /// Lines printed under the table (table, markdown) or as a LaTeX footnote row.
    pub notes: Vec<String>,
}

impl Grid {
    /// Renders as a text table, CSV, Markdown or a booktabs LaTeX tabular (not JSON).
    pub fn render(&self, format: Format) -> String {
        let mut out = String::new();
        let header = &self.header;
        let is_label = |c: usize| c < self.label_columns;
        match format {
            Format::Table | Format::Json => {
                let widths: Vec<usize> = (0..header.len())
                    .map(|c| {
                        self.cells
                            .iter()
                            .map(|r| r[c].chars().count())
                            .chain([header[c].chars().count()])
                            .max()
                            .unwrap_or(0)
                    })
                    .collect();
                for row in std::iter::once(header).chain(&self.cells) {
                    let line: Vec<String> = row
                        .iter()
                        .enumerate()
                        .map(|(c, s)| {
                            if is_label(c) {
                                format!("{s:<w$}", w = widths[c])
                            } else {
                                format!("{s:>w$}", w = widths[c])
                            }
                        })
                        .collect();
                    let _ = writeln!(out, "{}", line.join("  ").trim_end());
                }
                for note in &self.notes {
                    let _ = writeln!(out, "{note}");
                }
            }
            Format::Csv => {
                for row in std::iter::once(header).chain(&self.cells) {
                    let line: Vec<String> = row.iter().map(|s| csv_field(s)).collect();
                    let _ = writeln!(out, "{}", line.join(","));
                }
            }
            Format::Markdown => {
                let _ = writeln!(out, "| {} |", header.join(" | "));
                let rule: Vec<&str> = (0..header.len())
                    .map(|c| if is_label(c) { "---" } else { "---:" })
                    .collect();
                let _ = writeln!(out, "| {} |", rule.join(" | "));
                for row in &self.cells {
                    let escaped: Vec<String> = row.iter().map(|s| s.replace('|', "\\|")).collect();
                    let _ = writeln!(out, "| {} |", escaped.join(" | "));
                }
                if !self.notes.is_empty() {
                    out.push('\n');
                    for note in &self.notes {
                        let _ = writeln!(out, "{note}");
                    }
                }
            }
            Format::Latex => {
                let cols: String = (0..header.len())
                    .map(|c| if is_label(c) { 'l' } else { 'r' })
                    .collect();
                let _ = writeln!(out, "\\begin{{tabular}}{{{cols}}}\n\\toprule");
                let head: Vec<String> = header.iter().map(|s| latex_escape(s)).collect();
                let _ = writeln!(out, "{} \\\\\n\\midrule", head.join(" & "));
                match &self.latex_cells {
                    Some(rows) => {
                        for row in rows {
                            let _ = writeln!(out, "{} \\\\", row.join(" & "));
                        }
                    }
                    None => {
                        for row in &self.cells {
                            let escaped: Vec<String> =
                                row.iter().map(|s| latex_escape(s)).collect();
                            let _ = writeln!(out, "{} \\\\", escaped.join(" & "));
                        }
                    }
                }
                let _ = writeln!(out, "\\bottomrule");
                for note in &self.notes {
                    let _ = writeln!(
                        out,
                        "\\multicolumn{{{}}}{{l}}{{\\footnotesize {}}} \\\\",
                        header.len(),
                        note
                    );
                }
                let _ = writeln!(out, "\\end{{tabular}}");
            }
        }
        out
    }
}

/// A JSON number, or `null` for a missing or non-finite value (shared with crates/eval's
/// JSON documents).
pub use ragscope_eval::answers::json_report::number as json_number;

pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

pub fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '_' | '&' | '%' | '$' | '#' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '\\' => out.push_str("\\textbackslash{}"),
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            _ => out.push(c),
        }
    }
    out
}

/// An eRAG measure without `--erag-outcomes` is a usage error, caught before any file is read.
pub fn check_erag_outcomes(measures: &[Measure], outcomes: Option<&str>) -> Result<(), String> {
    match measures.iter().find(|m| m.needs_erag_outcomes()) {
        Some(m) if outcomes.is_none() => Err(format!(
            "{m} needs eRAG outcomes: give them with --erag-outcomes FILE (the JSON Lines \
             `ragscope answer --erag` writes: each passage answered alone)"
        )),
        _ => Ok(()),
    }
}

/// Reads an eRAG outcomes file (`ragscope answer --erag`'s output).
pub fn read_erag_outcomes(
    path: &str,
) -> Result<Arc<ragscope_eval::rag::erag_outcomes::EragOutcomes>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
    ragscope_eval::rag::erag_outcomes::parse(path, &text)
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// A UDCG measure without `--utilities` is a usage error, caught before any file is read.
pub fn check_utilities(measures: &[Measure], utilities: Option<&str>) -> Result<(), String> {
    match measures.iter().find(|m| m.needs_utilities()) {
        Some(m) if utilities.is_none() => Err(format!(
            "{m} needs passage utilities: give them with --utilities FILE (TSV: qid docno \
             relevant no_res_prob [model], or qid docno utility)"
        )),
        _ => Ok(()),
    }
}

/// clap parser for `--resamples`: a positive count up to the study's limit. The tests keep
/// every resampled statistic, so a typo like 10¹² must be refused, not attempted.
pub fn parse_resamples(text: &str) -> Result<usize, String> {
    let max = ragscope_eval::rag::correlation::MAX_RESAMPLES;
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=max).contains(&n) => Ok(n),
        Ok(n) => Err(format!("{n} is outside 1..={max}")),
        Err(_) => Err(format!("{text:?} is not a positive integer")),
    }
}
