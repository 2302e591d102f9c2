//! Citation support (vectara/open-rag-eval, its citation metric after the TREC 2024 RAG track's
//! support assessment): one call per (answer sentence, cited passage), graded full / partial /
//! no support → 1 / 0.5 / 0, temperature 0.
//!
//! Our own prompt text. Inputs: a TREC RAG answer file (`answer: [{text, citations}]`, a
//! citation a docid string or an index into `references`) and the cited passages. Output: JSONL,
//! one line per (sentence, citation) judged: `{"run_id", "qid", "sentence", "docid",
//! "support", "score"}`; a failed judgment is left out (the log has it). Precision, recall and F1
//! are computed by the scorer from this file, not here.

use super::reply::{check_finish, json_object, warmer};
use super::{ItemKey, JobItem, Task};
use crate::provider::{Call, ChatRequest, GenParams, Message, Reply, Role};
use crate::runner::{ItemRecord, Status};
use serde_json::{json, Value};
use std::collections::HashMap;

pub const TEMPLATE_VERSION: &str = "citations-ragscope-1";
/// The phrase that identifies the prompt (the fake provider answers by it).
pub const MARK: &str = "how well the cited passage supports the statement";

pub const SYSTEM: &str = "You check whether statements in generated answers are supported by the \
passages they cite.";

/// One answer sentence and what it cites.
#[derive(Clone, Debug, PartialEq)]
pub struct CitedSentence {
    pub run_id: String,
    pub qid: String,
    pub index: usize,
    pub text: String,
    pub docids: Vec<String>,
}

/// The sentences of a TREC RAG answer file (`run_id` defaults to `default_run`).
pub fn read_cited(text: &str, name: &str, default_run: &str) -> Result<Vec<CitedSentence>, String> {
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value =
            serde_json::from_str(line).map_err(|e| format!("{name}:{n}:{}: {e}", e.column()))?;
        let s = |k: &str| match v.get(k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(x)) => Some(x.to_string()),
            _ => None,
        };
        let qid = s("topic_id")
            .or_else(|| s("qid"))
            .ok_or_else(|| format!("{name}:{n}: no topic_id"))?;
        let run_id = s("run_id").unwrap_or_else(|| default_run.to_string());
        let refs: Vec<String> = v
            .get("references")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|x| x.as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default();
        let sentences = v
            .get("answer")
            .and_then(Value::as_array)
            .ok_or_else(|| format!("{name}:{n}: no answer list"))?;
        for (i, sent) in sentences.iter().enumerate() {
            let mut docids = Vec::new();
            for c in sent
                .get("citations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let d = match c {
                    Value::String(d) => d.clone(),
                    Value::Number(k) => k
                        .as_u64()
                        .and_then(|k| refs.get(k as usize))
                        .cloned()
                        .ok_or_else(|| {
                            format!(
                                "{name}:{n}: sentence {i} cites {k}, not an index of references"
                            )
                        })?,
                    other => return Err(format!("{name}:{n}: sentence {i}: citation {other}")),
                };
                if !docids.contains(&d) {
                    docids.push(d);
                }
            }
            out.push(CitedSentence {
                run_id: run_id.clone(),
                qid: qid.clone(),
                index: i,
                text: sent
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                docids,
            });
        }
    }
    Ok(out)
}

#[derive(Clone, Debug)]
pub struct Citations {
    pub params: GenParams,
}

impl Default for Citations {
    fn default() -> Self {
        Citations {
            params: GenParams {
                max_tokens: 256,
                temperature: Some(0.0),
                top_p: None,
                frequency_penalty: None,
                presence_penalty: None,
                seed: None,
                stop: Vec::new(),
            },
        }
    }
}

impl Citations {
    pub fn render(&self, statement: &str, passage: &str) -> String {
        format!(
            "Judge {MARK}.\nfull: the passage supports everything the statement says.\npartial: \
the passage supports some of it.\nnone: the passage does not support it.\n\n\
Statement: {statement}\n\nCited passage: {passage}\n\n\
Reply with a JSON object only: {{\"support\": \"full\"}}, {{\"support\": \"partial\"}} or \
{{\"support\": \"none\"}}."
        )
    }

    /// One item per (sentence, cited docid); every cited docid must be in `passages`.
    pub fn items(
        &self,
        sentences: &[CitedSentence],
        passages: &HashMap<String, String>,
    ) -> Result<Vec<JobItem>, String> {
        let mut items = Vec::new();
        for s in sentences {
            for d in &s.docids {
                let p = passages.get(d).ok_or_else(|| {
                    format!(
                        "docid {d} (cited by run {} topic {}) is not in the passages",
                        s.run_id, s.qid
                    )
                })?;
                items.push(JobItem {
                    key: ItemKey(vec![
                        ("run_id".into(), s.run_id.clone()),
                        ("qid".into(), s.qid.clone()),
                        ("sentence".into(), s.index.to_string()),
                        ("docid".into(), d.clone()),
                    ]),
                    call: Call::Chat(ChatRequest {
                        system: Some(SYSTEM.into()),
                        messages: vec![Message {
                            role: Role::User,
                            content: self.render(&s.text, p),
                        }],
                        params: self.params.clone(),
                        top_logprobs: None,
                    }),
                });
            }
        }
        Ok(items)
    }
}

/// The support level in a reply: JSON `support` (fences allowed) or the reply being one word;
/// `full`, `partial`, `none` (also `no`, `full support`, `partial support`, `no support`).
pub fn parse_support(text: &str) -> Result<&'static str, String> {
    let word = match json_object(text) {
        Some(o) => o
            .get("support")
            .and_then(Value::as_str)
            .ok_or("no \"support\" string in the JSON reply")?
            .to_string(),
        None => text.to_string(),
    };
    let w = word
        .trim()
        .trim_matches(|c: char| !c.is_ascii_alphanumeric())
        .to_ascii_lowercase()
        .replace(['_', '-'], " ");
    match w.as_str() {
        "full" | "full support" | "fully supported" => Ok("full"),
        "partial" | "partial support" | "partially supported" => Ok("partial"),
        "none" | "no" | "no support" | "not supported" => Ok("none"),
        _ => Err(format!("support {word:?} is not full, partial or none")),
    }
}

pub fn support_score(s: &str) -> f64 {
    match s {
        "full" => 1.0,
        "partial" => 0.5,
        _ => 0.0,
    }
}

impl Task for Citations {
    fn name(&self) -> &str {
        "citations"
    }
    fn template_version(&self) -> &str {
        TEMPLATE_VERSION
    }
    fn parse(&self, reply: &Reply) -> Result<Value, String> {
        check_finish(reply)?;
        parse_support(&reply.text).map(Value::from)
    }
    /// The most frequent level; ties to the lower support.
    fn vote(&self, results: &[Value]) -> Option<Value> {
        ["none", "partial", "full"]
            .iter()
            .map(|l| (results.iter().filter(|r| r.as_str() == Some(l)).count(), *l))
            .filter(|(c, _)| *c > 0)
            .fold(None::<(usize, &str)>, |best, x| match best {
                Some(b) if b.0 >= x.0 => Some(b),
                _ => Some(x),
            })
            .map(|(_, l)| Value::from(l))
    }
    /// Re-asked at temperature ≥ 0.2 (at most `--parse-retries` times) when the reply has no
    /// verdict.
    fn reask(&self, call: &Call, _failed: &str, _n: u32) -> Option<Call> {
        warmer(call, 0.2)
    }
    fn write_output(&self, records: &[ItemRecord]) -> String {
        let mut out = String::new();
        for r in records.iter().filter(|r| r.status == Status::Ok) {
            let Some(s) = r.result.as_ref().and_then(Value::as_str) else {
                continue;
            };
            let sentence: u64 = r
                .key
                .get("sentence")
                .and_then(|x| x.parse().ok())
                .unwrap_or(0);
            out.push_str(
                &json!({"run_id": r.key.get("run_id"), "qid": r.key.get("qid"),
                        "sentence": sentence, "docid": r.key.get("docid"),
                        "support": s, "score": support_score(s)})
                .to_string(),
            );
            out.push('\n');
        }
        out
    }
}
