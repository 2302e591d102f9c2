//! RAGElo's `answers_eval.jsonl` (zetaalphavector/RAGElo `tests/data/answers_eval.jsonl`): one
//! pairwise evaluation per line,
//!
//! ```text
//! {"query_id": "0", "agent_a": " agent1", "agent_b": " agent2", "prompt": "...",
//!  "answer": "<the judge's reply>", "relevant": "A"}
//! ```
//!
//! The verdict is in `relevant` (`A`, `B`, `C`; a `winner` field is accepted too, as newer RAGElo
//! writes). `qid` is accepted for `query_id`; agent names lose their leading spaces like in the
//! CSV files. Other fields are kept as metadata (their JSON text).

use super::games::Verdict;
use super::ragelo_csv::PairwiseEvaluation;
use crate::rag::error::{excerpt, InputError};

pub fn parse(file: &str, text: &str) -> Result<Vec<PairwiseEvaluation>, InputError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut out = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let value: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line)
            .map_err(|e| {
                InputError::new(
                    file,
                    line_no,
                    e.column(),
                    "",
                    format!("not a JSON object ({e}) in '{}'", excerpt(line)),
                )
            })?;
        let field = |names: &[&str]| -> Result<(String, String), InputError> {
            for name in names {
                match value.get(*name) {
                    Some(serde_json::Value::String(s)) => {
                        return Ok((name.to_string(), s.trim_start().to_string()))
                    }
                    Some(serde_json::Value::Number(n)) => {
                        return Ok((name.to_string(), n.to_string()))
                    }
                    Some(other) => {
                        return Err(InputError::new(
                            file,
                            line_no,
                            column_of(line, name),
                            *name,
                            format!("expected a string, found '{}'", excerpt(&other.to_string())),
                        ))
                    }
                    None => {}
                }
            }
            Err(InputError::new(
                file,
                line_no,
                1,
                names[0],
                "missing".to_string(),
            ))
        };
        let (_, qid) = field(&["query_id", "qid"])?;
        let (_, agent_a) = field(&["agent_a"])?;
        let (_, agent_b) = field(&["agent_b"])?;
        let (verdict_field, verdict_text) = field(&["relevant", "winner"])?;
        let verdict = Verdict::parse(&verdict_text).ok_or_else(|| {
            InputError::new(
                file,
                line_no,
                column_of(line, &verdict_field),
                verdict_field.clone(),
                format!(
                    "verdict '{}' is not A, B or C (tie)",
                    excerpt(&verdict_text)
                ),
            )
        })?;
        if agent_a.is_empty() || agent_b.is_empty() || agent_a == agent_b {
            return Err(InputError::new(
                file,
                line_no,
                column_of(line, "agent_b"),
                "agent_b",
                format!("a game needs two different agents, found '{agent_a}' and '{agent_b}'"),
            ));
        }
        let raw_answer = match value.get("answer") {
            Some(serde_json::Value::String(s)) => s.clone(),
            _ => String::new(),
        };
        let known = [
            "query_id",
            "qid",
            "agent_a",
            "agent_b",
            "answer",
            &verdict_field,
        ];
        let metadata = value
            .iter()
            .filter(|(k, _)| !known.contains(&k.as_str()))
            .map(|(k, v)| {
                let text = match v {
                    serde_json::Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                (k.clone(), text)
            })
            .collect();
        out.push(PairwiseEvaluation {
            qid,
            agent_a,
            agent_b,
            raw_answer,
            verdict,
            relevance: String::new(),
            metadata,
            line: line_no as u64,
        });
    }
    if out.is_empty() {
        return Err(InputError::new(file, 0, 0, "", "no games in the file"));
    }
    Ok(out)
}

/// 1-based column of `"name"` in the line (1 when it cannot be found).
fn column_of(line: &str, name: &str) -> usize {
    line.find(&format!("\"{name}\""))
        .map_or(1, |b| line[..b].chars().count() + 1)
}

/// Whether a text looks like RAGElo's answers_eval JSONL (first non-empty line).
pub fn looks_like(text: &str) -> bool {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let Some(first) = text.lines().find(|l| !l.trim().is_empty()) else {
        return false;
    };
    let t = first.trim_start();
    t.starts_with('{')
        && first.contains("\"agent_a\"")
        && first.contains("\"agent_b\"")
        && (first.contains("\"relevant\"") || first.contains("\"winner\""))
}
