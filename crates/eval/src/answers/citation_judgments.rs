//! Citation-support judgments as `ragscope judge citations` (and the app's Judges panel) write
//! them: JSON Lines, one line per (answer sentence, cited passage) judged,
//!
//! ```json
//! {"run_id": "r1", "qid": "q1", "sentence": 0, "docid": "d3", "support": "full", "score": 1.0}
//! ```
//!
//! `support` is `full` / `partial` / `none` (Open RAG Eval's `full_support` / `partial_support` /
//! `no_support` are read too); its score is the source's 1 / 0.5 / 0, whatever `score` says. A
//! line with `"support": null` is an unjudged citation (a failed judgment: never scored) and a
//! line with `"docid": null` a sentence without citations; the judge's own file writes neither
//! (failed judgments are left out, uncited sentences have nothing to judge), so from that file
//! recall is over the cited sentences only.
//!
//! The scores are those of [`super::citations`] (Open RAG Eval's CitationMetric): the answer is
//! each (run_id, qid), its parts the sentences in index order.

use serde_json::Value;

use super::citations::{self, AnswerCitations, PartJudgments, RunCitations};
use crate::rag::InputError;

/// One line of the file.
#[derive(Debug, Clone, PartialEq)]
pub struct SupportJudgment {
    pub run_id: String,
    pub qid: String,
    pub sentence: u64,
    /// None: the sentence cites nothing.
    pub docid: Option<String>,
    /// None: the citation went unjudged.
    pub score: Option<f64>,
}

fn label_score(label: &str) -> Option<f64> {
    match label {
        "full" => Some(1.0),
        "partial" => Some(0.5),
        "none" => Some(0.0),
        other => citations::support_score(other),
    }
}

pub fn parse(file: &str, bytes: &[u8]) -> Result<Vec<SupportJudgment>, InputError> {
    let text = std::str::from_utf8(bytes)
        .map_err(|e| InputError::new(file, 1, 1, "", format!("not UTF-8: {e}")))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        let line = line.trim_start_matches('\u{feff}');
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line)
            .map_err(|e| InputError::new(file, n, e.column(), "", e.to_string()))?;
        let err = |field: &str, msg: &str| InputError::new(file, n, 1, field, msg.to_string());
        let string = |k: &str| match v.get(k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(x)) => Some(x.to_string()),
            _ => None,
        };
        let run_id = string("run_id").ok_or_else(|| err("run_id", "no run_id string"))?;
        let qid = string("qid").ok_or_else(|| err("qid", "no qid string"))?;
        let sentence = v
            .get("sentence")
            .and_then(Value::as_u64)
            .ok_or_else(|| err("sentence", "no sentence index (a whole number)"))?;
        let docid = match v.get("docid") {
            None | Some(Value::Null) => None,
            Some(_) => Some(string("docid").ok_or_else(|| err("docid", "docid is not a string"))?),
        };
        let score = match v.get("support") {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(label_score(s).ok_or_else(|| {
                err(
                    "support",
                    &format!("support {s:?} is not full, partial or none"),
                )
            })?),
            Some(_) => return Err(err("support", "support is not a string")),
        };
        if docid.is_none() && score.is_some() {
            return Err(err("docid", "a judged line without a docid"));
        }
        out.push(SupportJudgment {
            run_id,
            qid,
            sentence,
            docid,
            score,
        });
    }
    Ok(out)
}

/// Each run's citation scores (runs and answers in first-seen order).
pub fn score_runs(judgments: &[SupportJudgment]) -> Vec<RunCitations> {
    // run -> qid -> sentence -> citations
    type Answer<'a> = (&'a str, Vec<(u64, PartJudgments)>);
    let mut runs: Vec<(&str, Vec<Answer>)> = Vec::new();
    for j in judgments {
        let run = match runs.iter().position(|(r, _)| *r == j.run_id) {
            Some(i) => &mut runs[i].1,
            None => {
                runs.push((&j.run_id, Vec::new()));
                let last = runs.len() - 1;
                &mut runs[last].1
            }
        };
        let answer = match run.iter().position(|(q, _)| *q == j.qid) {
            Some(i) => &mut run[i].1,
            None => {
                run.push((&j.qid, Vec::new()));
                let last = run.len() - 1;
                &mut run[last].1
            }
        };
        let part = match answer.iter().position(|(s, _)| *s == j.sentence) {
            Some(i) => &mut answer[i].1,
            None => {
                answer.push((j.sentence, PartJudgments::default()));
                let last = answer.len() - 1;
                &mut answer[last].1
            }
        };
        if let Some(d) = &j.docid {
            part.citations.push((d.clone(), j.score));
        }
    }
    runs.into_iter()
        .map(|(run_id, answers)| {
            let answers = answers
                .into_iter()
                .map(|(qid, mut parts)| {
                    parts.sort_by_key(|(s, _)| *s);
                    let parts: Vec<PartJudgments> = parts.into_iter().map(|(_, p)| p).collect();
                    AnswerCitations {
                        qid: qid.to_string(),
                        scores: Some(citations::score_answer(&parts)),
                        answered: None,
                    }
                })
                .collect();
            citations::aggregate(run_id, answers)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_checked_scores() {
        // r1/q1: sentence 0 cites d1 (full) and d2 (none); sentence 1 cites d1 (partial);
        // sentence 2 cites nothing. Per citation: d1 = (1 + 0.5)/2 = 0.75, d2 = 0 → P = 0.375.
        // Per part: 0.5, 0.5, 0 → R = 1/3. F1 = 2PR/(P+R) = 0.25/0.708333… = 0.352941…
        let text =
            br#"{"run_id":"r1","qid":"q1","sentence":0,"docid":"d1","support":"full","score":1.0}
{"run_id":"r1","qid":"q1","sentence":0,"docid":"d2","support":"none","score":0.0}
{"run_id":"r1","qid":"q1","sentence":1,"docid":"d1","support":"partial","score":0.5}
{"run_id":"r1","qid":"q1","sentence":2,"docid":null}
{"run_id":"r1","qid":"q2","sentence":0,"docid":"d9","support":null}
"#;
        let j = parse("c.jsonl", text).unwrap();
        let runs = score_runs(&j);
        assert_eq!(runs.len(), 1);
        let a = &runs[0].answers[0];
        let s = a.scores.unwrap();
        assert_eq!(s.precision, 0.375);
        assert!((s.recall - 1.0 / 3.0).abs() < 1e-15);
        assert!((s.f1 - 0.25 / (0.375 + 1.0 / 3.0)).abs() < 1e-15);
        // q2's only citation is unjudged: its part is left out, nothing to average → 0.
        assert_eq!(runs[0].answers[1].scores.unwrap().f1, 0.0);
        let e = parse("c.jsonl", b"{\"run_id\":\"r\",\"qid\":\"q\",\"sentence\":0,\"docid\":\"d\",\"support\":\"maybe\"}\n").unwrap_err();
        assert!(e.to_string().contains("c.jsonl:1"), "{e}");
    }
}
