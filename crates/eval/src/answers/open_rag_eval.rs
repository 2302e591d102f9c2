//! Open RAG Eval CSV files (vectara/open-rag-eval 0.3.0), RFC 4180 with an optional UTF-8 BOM.
//!
//! **Answers** (the input of its evaluator; `data/test_csv_connector.csv`):
//! `query_id, query, query_run, passage_id, passage, generated_answer`, one row per retrieved
//! passage; the rows of one (query_id, query_run) form one answer, whose text is the first
//! non-missing `generated_answer` of the group. Read as `RAGResultsLoader.load` reads it:
//! groups in pandas `groupby` order (sorted keys), groups without an answer (missing,
//! `NO_ANSWER`, `API_ERROR`) skipped; the answer split into parts at citation markers by
//! `_parse_generated_answer` ("[1, 2]" becomes "[1][2]", "[1], [2]" becomes "[1][2]").
//! Cells pandas reads as missing ("", "NA", "nan", "null", "None", ...) are missing here too.
//!
//! **Results** (what `TRECEvaluator.to_csv` writes): `query_id, query`, then per repetition n
//! `run_n_generated_answer` (JSON list of `{text, citations}`), `run_n_retrieved_passages`,
//! `run_n_retrieval_score_umbrela_scores` (JSON `{passage: grade}`),
//! `run_n_generation_score_autonugget_scores` (JSON with `nuggets`, `labels`, `assignments`),
//! `run_n_generation_score_citation_scores` (JSON with `citation_score_*`, `part_score_*`) and
//! `run_n_generation_score_no_answer_score` (JSON `{"query_answered": "yes"|"no"}`); other
//! columns are ignored.

use indexmap::IndexMap;
use serde::Serialize;

use super::nuggetizer::{AssignedAnswer, AssignedNugget, Assignment, Importance};
use crate::rag::error::excerpt;
use crate::rag::InputError;

/// One part of an answer and the citation markers after it ("[1]").
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerPart {
    pub text: String,
    pub citations: Vec<String>,
}

/// One answer of the answers CSV.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OreAnswer {
    pub query_id: String,
    pub query: String,
    pub query_run: String,
    /// passage id → passage, in row order.
    pub passages: Vec<(String, String)>,
    pub answer: String,
    pub parts: Vec<AnswerPart>,
    /// Line of the group's first row.
    pub line: usize,
}

/// pandas' default missing-value strings (`read_csv` `na_values`).
const PANDAS_NA: [&str; 19] = [
    "", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND", "1.#QNAN",
    "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null",
];
const NO_ANSWER: &str = "NO_ANSWER";
const API_ERROR: &str = "API_ERROR";

fn csv_error(file: &str, e: &csv::Error) -> InputError {
    let (line, message) = match e.position() {
        Some(p) => (p.line() as usize, e.to_string()),
        None => (0, e.to_string()),
    };
    InputError::new(file, line, 0, "", message)
}

struct Table {
    headers: Vec<String>,
    /// (line, fields)
    rows: Vec<(usize, Vec<String>)>,
}

fn read_table(file: &str, reader: impl std::io::Read) -> Result<Table, InputError> {
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(reader);
    let headers: Vec<String> = rdr
        .headers()
        .map_err(|e| csv_error(file, &e))?
        .iter()
        .map(|h| h.trim_start_matches('\u{feff}').to_string())
        .collect();
    let mut rows = Vec::new();
    for record in rdr.records() {
        let record = record.map_err(|e| csv_error(file, &e))?;
        let line = record.position().map_or(0, |p| p.line() as usize);
        rows.push((line, record.iter().map(str::to_string).collect()));
    }
    Ok(Table { headers, rows })
}

fn column(file: &str, t: &Table, name: &str) -> Result<usize, InputError> {
    t.headers.iter().position(|h| h == name).ok_or_else(|| {
        InputError::new(
            file,
            1,
            0,
            name,
            format!(
                "missing column '{name}' (header: {})",
                excerpt(&t.headers.join(","))
            ),
        )
    })
}

/// Reads an answers CSV.
pub fn read_answers(file: &str, reader: impl std::io::Read) -> Result<Vec<OreAnswer>, InputError> {
    let t = read_table(file, reader)?;
    let query = column(file, &t, "query")?;
    let passage_id = column(file, &t, "passage_id")?;
    let passage = column(file, &t, "passage")?;
    let answer = column(file, &t, "generated_answer")?;
    let query_id = t.headers.iter().position(|h| h == "query_id");
    let query_run = t.headers.iter().position(|h| h == "query_run");
    // Groups keyed by (query_id, query_run); sorted like pandas groupby (run numerically when
    // it is an integer).
    let mut groups: IndexMap<(String, String), Vec<usize>> = IndexMap::new();
    for (i, (line, row)) in t.rows.iter().enumerate() {
        let qid = match query_id {
            Some(c) => row[c].clone(),
            // Without query_id the source gives every row its own random id.
            None => format!("row-{line}"),
        };
        let run = query_run.map_or_else(|| "1".to_string(), |c| row[c].clone());
        groups.entry((qid, run)).or_default().push(i);
    }
    let mut keys: Vec<(String, String)> = groups.keys().cloned().collect();
    keys.sort_by(|a, b| {
        a.0.cmp(&b.0).then_with(
            || match (a.1.trim().parse::<i64>(), b.1.trim().parse::<i64>()) {
                (Ok(x), Ok(y)) => x.cmp(&y),
                _ => a.1.cmp(&b.1),
            },
        )
    });
    let mut out = Vec::new();
    for key in keys {
        let rows = &groups[&key];
        let first = &t.rows[rows[0]];
        let text = rows
            .iter()
            .map(|&i| &t.rows[i].1[answer])
            .find(|a| !PANDAS_NA.contains(&a.as_str()));
        let Some(text) = text else { continue };
        if text == NO_ANSWER || text == API_ERROR {
            continue;
        }
        out.push(OreAnswer {
            query_id: key.0.clone(),
            query: first.1[query].clone(),
            query_run: key.1.clone(),
            passages: rows
                .iter()
                .map(|&i| {
                    (
                        t.rows[i].1[passage_id].clone(),
                        t.rows[i].1[passage].clone(),
                    )
                })
                .collect(),
            answer: text.clone(),
            parts: parse_generated_answer(text),
            line: first.0,
        });
    }
    if out.is_empty() {
        return Err(InputError::new(file, 0, 0, "", "no answers in the file"));
    }
    Ok(out)
}

fn digits_at(chars: &[char], i: usize) -> usize {
    chars[i..].iter().take_while(|c| c.is_ascii_digit()).count()
}

/// `[digits]` at `i`: its length in chars.
fn marker_at(chars: &[char], i: usize) -> Option<usize> {
    if chars.get(i) != Some(&'[') {
        return None;
    }
    let d = digits_at(chars, i + 1);
    (d > 0 && chars.get(i + 1 + d) == Some(&']')).then_some(d + 2)
}

/// open-rag-eval's `_parse_generated_answer` (regexes written out: `\d` as ASCII digits).
pub fn parse_generated_answer(text: &str) -> Vec<AnswerPart> {
    let chars: Vec<char> = text.chars().collect();
    // 1. "[1, 2, 3]" → "[1][2][3]"  (pattern \[\d+(?:,\s*\d+)+\])
    let mut s1: Vec<char> = Vec::with_capacity(chars.len());
    let mut i = 0;
    while i < chars.len() {
        if chars[i] == '[' {
            let mut j = i + 1;
            let mut numbers = Vec::new();
            let d = digits_at(&chars, j);
            if d > 0 {
                numbers.push(j..j + d);
                j += d;
                loop {
                    if chars.get(j) != Some(&',') {
                        break;
                    }
                    let mut k = j + 1;
                    while chars.get(k).is_some_and(|c| c.is_whitespace()) {
                        k += 1;
                    }
                    let d = digits_at(&chars, k);
                    if d == 0 {
                        break;
                    }
                    numbers.push(k..k + d);
                    j = k + d;
                }
                if numbers.len() >= 2 && chars.get(j) == Some(&']') {
                    for r in numbers {
                        s1.push('[');
                        s1.extend_from_slice(&chars[r]);
                        s1.push(']');
                    }
                    i = j + 1;
                    continue;
                }
            }
        }
        s1.push(chars[i]);
        i += 1;
    }
    // 2. "], [" → "]["  (pattern \]\s*,\s*\[)
    let mut s2: Vec<char> = Vec::with_capacity(s1.len());
    let mut i = 0;
    while i < s1.len() {
        if s1[i] == ']' {
            let mut j = i + 1;
            while s1.get(j).is_some_and(|c| c.is_whitespace()) {
                j += 1;
            }
            if s1.get(j) == Some(&',') {
                j += 1;
                while s1.get(j).is_some_and(|c| c.is_whitespace()) {
                    j += 1;
                }
                if s1.get(j) == Some(&'[') {
                    s2.push(']');
                    s2.push('[');
                    i = j + 1;
                    continue;
                }
            }
        }
        s2.push(s1[i]);
        i += 1;
    }
    // 3. blocks (?:\[\d+\])+
    let mut blocks: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i < s2.len() {
        if let Some(len) = marker_at(&s2, i) {
            let start = i;
            i += len;
            while let Some(len) = marker_at(&s2, i) {
                i += len;
            }
            blocks.push((start, i));
        } else {
            i += 1;
        }
    }
    let text2: String = s2.iter().collect();
    if blocks.is_empty() {
        return vec![AnswerPart {
            text: text2,
            citations: Vec::new(),
        }];
    }
    let slice = |a: usize, b: usize| -> String { s2[a..b].iter().collect() };
    let mut parts = Vec::new();
    for (n, &(start, end)) in blocks.iter().enumerate() {
        let text_start = if n == 0 { 0 } else { blocks[n - 1].1 };
        let part = slice(text_start, start);
        let part = part.trim();
        let block = slice(start, end);
        let citations: Vec<String> = block.split_inclusive(']').map(str::to_string).collect();
        if !part.is_empty() {
            parts.push(AnswerPart {
                text: part.to_string(),
                citations,
            });
        }
    }
    let last = slice(blocks[blocks.len() - 1].1, s2.len());
    let last = last.trim();
    if last.chars().count() > 1 {
        parts.push(AnswerPart {
            text: last.to_string(),
            citations: Vec::new(),
        });
    }
    parts
}

/// One answer of a results CSV (one row, one repetition `run`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OreScored {
    pub query_id: String,
    pub query: String,
    /// Repetition number n of the `run_n_` columns.
    pub run: u32,
    pub parts: Vec<AnswerPart>,
    pub passages: Vec<(String, String)>,
    /// UMBRELA grades of the retrieved passages, in retrieval order.
    pub umbrela: Vec<(String, i64)>,
    /// (nugget, label, assignment) when AutoNugget succeeded.
    pub nuggets: Option<Vec<(String, String, String)>>,
    /// (`citation_score_*` averages, `part_score_*` averages), in stored order.
    pub citation_averages: Option<(Vec<f64>, Vec<f64>)>,
    pub answered: Option<bool>,
    pub line: usize,
}

fn json_cell<T: serde::de::DeserializeOwned>(
    file: &str,
    line: usize,
    field: &str,
    cell: &str,
) -> Result<Option<T>, InputError> {
    if PANDAS_NA.contains(&cell) {
        return Ok(None);
    }
    serde_json::from_str(cell)
        .map(Some)
        .map_err(|e| InputError::new(file, line, 0, field, format!("{e} in '{}'", excerpt(cell))))
}

#[derive(serde::Deserialize)]
struct RawPart {
    text: String,
    #[serde(default)]
    citations: Vec<String>,
}

#[derive(serde::Deserialize)]
struct RawAutonugget {
    #[serde(default)]
    nuggets: Vec<String>,
    #[serde(default)]
    labels: Vec<String>,
    #[serde(default)]
    assignments: Vec<String>,
}

/// Reads an evaluator results CSV.
pub fn read_results(file: &str, reader: impl std::io::Read) -> Result<Vec<OreScored>, InputError> {
    let t = read_table(file, reader)?;
    let query_id = column(file, &t, "query_id")?;
    let query = t.headers.iter().position(|h| h == "query");
    // run number → field name → column
    let mut runs: std::collections::BTreeMap<u32, IndexMap<String, usize>> = Default::default();
    for (c, h) in t.headers.iter().enumerate() {
        let Some(rest) = h.strip_prefix("run_") else {
            continue;
        };
        let Some((n, field)) = rest.split_once('_') else {
            continue;
        };
        if let Ok(n) = n.parse::<u32>() {
            runs.entry(n).or_default().insert(field.to_string(), c);
        }
    }
    if !runs.values().any(|f| f.contains_key("generated_answer")) {
        return Err(InputError::new(
            file,
            1,
            0,
            "run_1_generated_answer",
            "not an Open RAG Eval results file: no run_N_generated_answer column",
        ));
    }
    let mut out = Vec::new();
    for (line, row) in &t.rows {
        for (&n, fields) in &runs {
            let cell = |name: &str| fields.get(name).map(|&c| row[c].as_str()).unwrap_or("");
            let col = |name: &str| format!("run_{n}_{name}");
            let Some(parts) = json_cell::<Vec<RawPart>>(
                file,
                *line,
                &col("generated_answer"),
                cell("generated_answer"),
            )?
            else {
                continue;
            };
            let passages: IndexMap<String, String> = json_cell(
                file,
                *line,
                &col("retrieved_passages"),
                cell("retrieved_passages"),
            )?
            .unwrap_or_default();
            let umbrela: IndexMap<String, i64> = json_cell(
                file,
                *line,
                &col("retrieval_score_umbrela_scores"),
                cell("retrieval_score_umbrela_scores"),
            )?
            .unwrap_or_default();
            let field = col("generation_score_autonugget_scores");
            let nuggets = match json_cell::<RawAutonugget>(
                file,
                *line,
                &field,
                cell("generation_score_autonugget_scores"),
            )? {
                Some(a) if !a.nuggets.is_empty() || !a.assignments.is_empty() => {
                    if a.nuggets.len() != a.labels.len() || a.nuggets.len() != a.assignments.len() {
                        return Err(InputError::new(
                            file,
                            *line,
                            0,
                            &field,
                            format!(
                                "{} nuggets, {} labels and {} assignments differ in number",
                                a.nuggets.len(),
                                a.labels.len(),
                                a.assignments.len()
                            ),
                        ));
                    }
                    Some(
                        a.nuggets
                            .into_iter()
                            .zip(a.labels)
                            .zip(a.assignments)
                            .map(|((n, l), s)| (n, l, s))
                            .collect(),
                    )
                }
                _ => None,
            };
            let field = col("generation_score_citation_scores");
            let citation_averages = json_cell::<IndexMap<String, serde_json::Value>>(
                file,
                *line,
                &field,
                cell("generation_score_citation_scores"),
            )?
            .map(|m| {
                let pick = |prefix: &str| -> Vec<f64> {
                    m.iter()
                        .filter(|(k, _)| k.starts_with(prefix))
                        .filter_map(|(_, v)| v.as_f64())
                        .collect()
                };
                (pick("citation_score_"), pick("part_score_"))
            });
            let answered = json_cell::<IndexMap<String, serde_json::Value>>(
                file,
                *line,
                &col("generation_score_no_answer_score"),
                cell("generation_score_no_answer_score"),
            )?
            .and_then(|m| {
                m.get("query_answered")
                    .and_then(|v| v.as_str())
                    .map(|s| s != "no")
            });
            out.push(OreScored {
                query_id: row[query_id].clone(),
                query: query.map(|q| row[q].clone()).unwrap_or_default(),
                run: n,
                parts: parts
                    .into_iter()
                    .map(|p| AnswerPart {
                        text: p.text,
                        citations: p.citations,
                    })
                    .collect(),
                passages: passages.into_iter().collect(),
                umbrela: umbrela.into_iter().collect(),
                nuggets,
                citation_averages,
                answered,
                line: *line,
            });
        }
    }
    Ok(out)
}

impl OreScored {
    /// The AutoNugget judgments as a nuggetizer assignments record (run id `run_n`).
    pub fn assigned(&self) -> Option<AssignedAnswer> {
        let nuggets = self.nuggets.as_ref()?;
        let text: Vec<&str> = self.parts.iter().map(|p| p.text.as_str()).collect();
        Some(AssignedAnswer {
            qid: self.query_id.clone(),
            query: self.query.clone(),
            answer_text: text.join(" "),
            response_length: None,
            run_id: Some(format!("run_{}", self.run)),
            nuggets: nuggets
                .iter()
                .map(|(text, label, assignment)| AssignedNugget {
                    text: text.clone(),
                    importance: match label.as_str() {
                        "vital" => Importance::Vital,
                        "okay" => Importance::Okay,
                        other => Importance::Other(other.to_string()),
                    },
                    assignment: match assignment.as_str() {
                        "support" => Assignment::Support,
                        "partial_support" => Assignment::PartialSupport,
                        "not_support" => Assignment::NotSupport,
                        "failed" => Assignment::Failed,
                        other => Assignment::Other(other.to_string()),
                    },
                })
                .collect(),
            line: self.line,
        })
    }
}

/// The AutoNugget judgments of a results file as nuggetizer runs named `STEM#run_n`, in
/// repetition order.
pub fn assigned_runs(
    file: &str,
    stem: &str,
    scored: &[OreScored],
) -> Result<Vec<super::nuggetizer::AssignedRun>, InputError> {
    let mut by_run: Vec<&OreScored> = scored.iter().collect();
    by_run.sort_by_key(|s| s.run); // stable: rows keep their order within a repetition
    let answers: Vec<AssignedAnswer> = by_run.iter().filter_map(|s| s.assigned()).collect();
    let mut runs = super::nuggetizer::group_runs(file, stem, answers)?;
    for r in &mut runs {
        r.run_id = format!("{stem}#{}", r.run_id);
    }
    Ok(runs)
}

/// True when a CSV header line looks like an Open RAG Eval results file.
pub fn is_results_header(header: &str) -> bool {
    header.contains("run_1_generated_answer") || header.contains("run_1_retrieved_passages")
}

/// True when a CSV header line looks like an Open RAG Eval answers file.
pub fn is_answers_header(header: &str) -> bool {
    let h = header.trim_start_matches('\u{feff}');
    h.contains("passage_id") && h.contains("generated_answer") && h.contains("query")
}
