//! Per-topic scores of several runs, the input of run-ranking agreement. Two formats:
//!
//! - nugget score JSON, as printed by `ragscope nuggets score --format json --per-topic`:
//!   `{"runs":[{"run_id":R,"mean":{...},"topics":{QID:{"V_strict":x,...}}}]}`;
//! - `trec_eval -q` output (`measure <ws> qid <ws> value`), one or more runs concatenated: the
//!   per-topic lines before a `runid all NAME` line belong to run NAME (lines after the last
//!   `runid` line to the file's name); `all` lines are skipped.
//!
//! One measure is read: the one asked for, else `V_strict` in nugget JSON, else the only
//! measure of a trec_eval file.

use indexmap::IndexMap;

use crate::rag::error::{excerpt, InputError};

/// Scores of one measure: run → topic → value, in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TopicScores {
    pub measure: String,
    pub runs: IndexMap<String, IndexMap<String, f64>>,
}

/// Whether the text is nugget score JSON (else it is read as trec_eval -q output).
fn is_json(text: &str) -> bool {
    text.trim_start_matches('\u{feff}')
        .trim_start()
        .starts_with('{')
}

pub fn parse(file: &str, text: &str, measure: Option<&str>) -> Result<TopicScores, InputError> {
    if is_json(text) {
        parse_nugget_json(file, text, measure)
    } else {
        parse_trec_eval(file, text, measure)
    }
}

fn parse_nugget_json(
    file: &str,
    text: &str,
    measure: Option<&str>,
) -> Result<TopicScores, InputError> {
    let text = text.trim_start_matches('\u{feff}');
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| InputError::new(file, e.line(), e.column(), "", format!("not JSON: {e}")))?;
    let measure = measure.unwrap_or("V_strict").to_string();
    let runs = value
        .get("runs")
        .and_then(|r| r.as_array())
        .ok_or_else(|| InputError::new(file, 1, 1, "runs", "expected {\"runs\": [...]}"))?;
    let mut out = TopicScores {
        measure: measure.clone(),
        runs: IndexMap::new(),
    };
    for (i, run) in runs.iter().enumerate() {
        let item = format!("runs[{i}]");
        let id = run
            .get("run_id")
            .and_then(|r| r.as_str())
            .ok_or_else(|| InputError::new(file, 0, 0, format!("{item}.run_id"), "missing"))?;
        let topics = run
            .get("topics")
            .and_then(|t| t.as_object())
            .ok_or_else(|| {
                InputError::new(
                    file,
                    0,
                    0,
                    format!("{item}.topics"),
                    "missing: write the file with --per-topic",
                )
            })?;
        let mut scores = IndexMap::new();
        for (qid, values) in topics {
            let v = values
                .get(&measure)
                .and_then(|v| v.as_f64())
                .ok_or_else(|| {
                    InputError::new(
                        file,
                        0,
                        0,
                        format!("{item}.topics.{qid}.{measure}"),
                        "missing or not a number",
                    )
                })?;
            scores.insert(qid.clone(), v);
        }
        out.runs.insert(id.to_string(), scores);
    }
    Ok(out)
}

fn parse_trec_eval(
    file: &str,
    text: &str,
    measure: Option<&str>,
) -> Result<TopicScores, InputError> {
    // (measure, qid, value) lines not yet attributed to a run.
    let mut pending: Vec<(String, String, f64)> = Vec::new();
    let mut runs: IndexMap<String, Vec<(String, String, f64)>> = IndexMap::new();
    for (index, line) in text.trim_start_matches('\u{feff}').lines().enumerate() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if fields.is_empty() {
            continue;
        }
        if fields.len() != 3 {
            return Err(InputError::new(
                file,
                index + 1,
                1,
                "",
                format!(
                    "expected 'measure qid value' (trec_eval -q output), found '{}'",
                    excerpt(line)
                ),
            ));
        }
        let (name, qid, value) = (fields[0], fields[1], fields[2]);
        if qid == "all" {
            if name == "runid" {
                runs.entry(value.to_string())
                    .or_default()
                    .append(&mut pending);
            }
            continue;
        }
        if name == "runid" {
            continue;
        }
        let v: f64 = value.parse().map_err(|_| {
            let column = line
                .rfind(value)
                .map_or(1, |b| line[..b].chars().count() + 1);
            InputError::new(
                file,
                index + 1,
                column,
                name,
                format!("value '{}' is not a number", excerpt(value)),
            )
        })?;
        pending.push((name.to_string(), qid.to_string(), v));
    }
    if !pending.is_empty() {
        let stem = std::path::Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| file.to_string());
        runs.entry(stem).or_default().append(&mut pending);
    }
    let mut measures: Vec<&str> = runs
        .values()
        .flatten()
        .map(|(m, _, _)| m.as_str())
        .filter(|m| *m != "num_q")
        .collect();
    measures.sort_unstable();
    measures.dedup();
    let measure = match measure {
        Some(m) => m.to_string(),
        None if measures.len() == 1 => measures[0].to_string(),
        None => {
            return Err(InputError::new(
                file,
                0,
                0,
                "",
                format!(
                    "{} measures in the file ({}); choose one with --measure",
                    measures.len(),
                    measures.join(", ")
                ),
            ))
        }
    };
    let mut out = TopicScores {
        measure: measure.clone(),
        runs: IndexMap::new(),
    };
    for (run, lines) in runs {
        let scores: IndexMap<String, f64> = lines
            .into_iter()
            .filter(|(m, _, _)| *m == measure)
            .map(|(_, q, v)| (q, v))
            .collect();
        if !scores.is_empty() {
            out.runs.insert(run, scores);
        }
    }
    if out.runs.is_empty() {
        return Err(InputError::new(
            file,
            0,
            0,
            "",
            format!("no per-topic '{measure}' scores (trec_eval -q output expected)"),
        ));
    }
    Ok(out)
}

/// The (topic, run, a, b) cells both tables score, in `a`'s order.
pub fn common_cells(a: &TopicScores, b: &TopicScores) -> Vec<(String, String, f64, f64)> {
    let mut cells = Vec::new();
    for (run, topics) in &a.runs {
        if let Some(other) = b.runs.get(run) {
            for (topic, x) in topics {
                if let Some(y) = other.get(topic) {
                    cells.push((topic.clone(), run.clone(), *x, *y));
                }
            }
        }
    }
    cells
}
