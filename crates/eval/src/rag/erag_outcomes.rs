//! eRAG outcomes: the per-passage answers `ragscope answer --erag` writes, read back so that the
//! measure registry can score runs with `eRAG-P@k` / `eRAG-success@k`.
//!
//! The file is the JSON Lines output of `ragscope answer --erag` (one question per line); only
//! these fields are read, everything else is ignored:
//!
//! ```json
//! {"qid": "q1", "dataset": "nq", "answers": ["Paris"],
//!  "passages": {"d1": {"erag_answer": "Paris", "erag": 1.0, "erag_metric": "substring"},
//!               "d2": {"erag_answer": "NO-RESPONSE", "erag": 0.0, "erag_metric": "substring"}}}
//! ```
//!
//! - `qid`: string or number; a qid may occur once (several datasets or models sharing a qid
//!   cannot be told apart by a run file, so that is an error naming both lines).
//! - `answers`: the gold answers (a list of strings, or one string); required when a passage
//!   has an `erag_answer`.
//! - `passages.ID.erag_answer`: the answer generated from that passage alone. The measure
//!   scores it with the downstream metric its name asks for (substring, em or rouge_l), so one
//!   file serves every metric.
//! - `passages.ID.erag` (in [0, 1]) with `erag_metric`: a stored score, used only when there is
//!   no `erag_answer` and the stored metric is the one asked for (a score of another metric is
//!   never reinterpreted). `erag_metric` absent means `substring`, `answer`'s default.
//! - A passage with neither is not scored; a run's docno missing here counts 0 and is reported.

use std::collections::HashMap;

use serde_json::Value;

use super::answer_match::DownstreamMetric;
use super::error::{excerpt, InputError};

/// What `ragscope answer --erag` recorded for one passage answered alone.
#[derive(Debug, Clone, PartialEq)]
pub struct EragPassage {
    pub answer: Option<String>,
    pub score: Option<(f64, DownstreamMetric)>,
}

/// One question's gold answers and per-passage outcomes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EragQuestion {
    pub golds: Vec<String>,
    pub passages: HashMap<String, EragPassage>,
}

impl EragQuestion {
    /// eRAG's per-passage score of `docno` under `metric`; `None` when the file cannot give it.
    pub fn score(&self, docno: &str, metric: DownstreamMetric) -> Option<f64> {
        let p = self.passages.get(docno)?;
        match (&p.answer, p.score) {
            (Some(a), _) => Some(metric.score(a, &self.golds)),
            (None, Some((s, m))) if m == metric => Some(s),
            _ => None,
        }
    }
}

/// Every question of an outcomes file, by qid.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct EragOutcomes {
    pub questions: HashMap<String, EragQuestion>,
}

/// Reads an outcomes file (JSON Lines, see the module documentation).
pub fn parse(file: &str, text: &str) -> Result<EragOutcomes, InputError> {
    let mut out = EragOutcomes::default();
    let mut first_line: HashMap<String, usize> = HashMap::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let err = |field: &str, message: String| InputError::new(file, line_no, 0, field, message);
        let v: Value = serde_json::from_str(line)
            .map_err(|e| InputError::new(file, line_no, e.column(), "", e.to_string()))?;
        let Value::Object(map) = v else {
            return Err(err("", "expected a JSON object".into()));
        };
        let qid = match map.get("qid") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(err("qid", "missing (a string or number)".into())),
        };
        if let Some(prev) = first_line.insert(qid.clone(), line_no) {
            return Err(err(
                "qid",
                format!(
                    "question {:?} already on line {prev}; a run cannot tell two datasets or \
                     models with the same qid apart: give one file per dataset and model",
                    excerpt(&qid)
                ),
            ));
        }
        let golds = match map.get("answers").or_else(|| map.get("answer")) {
            None => None,
            Some(Value::String(s)) => Some(vec![s.clone()]),
            Some(Value::Array(a)) => Some(
                a.iter()
                    .enumerate()
                    .map(|(i, x)| {
                        x.as_str()
                            .map(str::to_string)
                            .ok_or_else(|| err(&format!("answers[{i}]"), "not a string".into()))
                    })
                    .collect::<Result<Vec<_>, _>>()?,
            ),
            Some(_) => return Err(err("answers", "expected a list of strings".into())),
        };
        let mut question = EragQuestion::default();
        let passages = match map.get("passages") {
            None => None,
            Some(Value::Object(p)) => Some(p),
            Some(_) => return Err(err("passages", "expected an object of passages".into())),
        };
        for (id, p) in passages.into_iter().flatten() {
            let field = |name: &str| format!("passages.{}.{name}", excerpt(id));
            let answer = match p.get("erag_answer") {
                None | Some(Value::Null) => None,
                Some(Value::String(s)) => Some(s.clone()),
                Some(_) => return Err(err(&field("erag_answer"), "not a string".into())),
            };
            let metric = match p.get("erag_metric") {
                None | Some(Value::Null) => DownstreamMetric::Substring,
                Some(Value::String(s)) => DownstreamMetric::parse(s).ok_or_else(|| {
                    err(
                        &field("erag_metric"),
                        format!("{:?}: expected substring, em or rouge_l", excerpt(s)),
                    )
                })?,
                Some(_) => return Err(err(&field("erag_metric"), "not a string".into())),
            };
            let score = match p.get("erag") {
                None | Some(Value::Null) => None,
                Some(Value::Number(n)) => match n.as_f64() {
                    Some(s) if (0.0..=1.0).contains(&s) => Some((s, metric)),
                    _ => return Err(err(&field("erag"), format!("{n} is outside [0, 1]"))),
                },
                Some(_) => return Err(err(&field("erag"), "not a number".into())),
            };
            if answer.is_none() && score.is_none() {
                continue;
            }
            if answer.is_some() && golds.is_none() {
                return Err(err(
                    "answers",
                    "missing: the gold answers are needed to score the erag_answer fields".into(),
                ));
            }
            question
                .passages
                .insert(id.clone(), EragPassage { answer, score });
        }
        question.golds = golds.unwrap_or_default();
        out.questions.insert(qid, question);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scores_by_the_metric_asked_for() {
        let text = r#"{"qid": 7, "answers": ["Paris"], "passages": {"a": {"erag_answer": "paris, france"}, "b": {"erag": 0.5, "erag_metric": "rouge_l"}, "c": {"text": "x"}}}"#;
        let o = parse("f", text).unwrap();
        let q = &o.questions["7"];
        assert_eq!(q.score("a", DownstreamMetric::Substring), Some(1.0));
        assert_eq!(q.score("a", DownstreamMetric::ExactMatch), Some(0.0));
        assert_eq!(q.score("b", DownstreamMetric::RougeL), Some(0.5));
        assert_eq!(q.score("b", DownstreamMetric::Substring), None);
        assert_eq!(q.score("c", DownstreamMetric::Substring), None);
    }

    #[test]
    fn errors_name_the_place() {
        for (text, want) in [
            ("{\"qid\": \"q\"}\n{\"qid\": \"q\"}", "f:2: field `qid`"),
            (
                r#"{"qid": "q", "passages": {"a": {"erag_answer": "x"}}}"#,
                "f:1: field `answers`",
            ),
            (
                r#"{"qid": "q", "passages": {"a": {"erag": 2}}}"#,
                "f:1: field `passages.a.erag`",
            ),
            ("{\"qid\": ", "f:1:"),
        ] {
            let e = parse("f", text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{e}");
        }
    }
}
