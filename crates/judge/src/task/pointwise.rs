//! Pointwise answer grading, 0–2 with reasoning (RAGElo's custom/rubric answer evaluators,
//! zetaalphavector/RAGElo: a JSON `{reasoning, score}` per answer).
//!
//! Our own prompt text: the question, the retrieved documents (optional) and one answer, graded
//! 0 (wrong, unsupported or no answer), 1 (partly answers, or with unsupported claims), 2 (answers
//! fully and correctly, supported by the documents). The output is a CSV `qid, agent,
//! raw_answer, reasoning, score` (RAGElo's answer-evaluation CSVs start with qid, agent,
//! raw_answer); a failed grade is left out (the log has it).

use super::pairwise::{AgentAnswer, Query};
use super::reply::{check_finish, json_object, warmer};
use super::{ItemKey, JobItem, Task};
use crate::provider::{Call, ChatRequest, GenParams, Message, Reply, Role};
use crate::runner::{ItemRecord, Status};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const TEMPLATE_VERSION: &str = "pointwise-ragscope-1";
/// The phrase that identifies the prompt (the fake provider answers by it).
pub const MARK: &str = "Grade the answer below on a scale from 0 to 2";

pub const SYSTEM: &str = "You are an impartial judge of the answers that a retrieval-augmented \
assistant gives to user questions, using documents a search engine retrieved for them.";

#[derive(Clone, Debug)]
pub struct Pointwise {
    pub params: GenParams,
}

impl Default for Pointwise {
    fn default() -> Self {
        Pointwise {
            params: GenParams {
                max_tokens: 1024,
                temperature: Some(0.1),
                top_p: None,
                frequency_penalty: None,
                presence_penalty: None,
                seed: None,
                stop: Vec::new(),
            },
        }
    }
}

impl Pointwise {
    pub fn render(&self, query: &str, docs: &[(String, String)], answer: &str) -> String {
        let mut s = format!(
            "{MARK}.\n0 = the answer is wrong, unsupported by the documents, or does not answer \
the question.\n1 = the answer partly answers the question, or mixes correct content with claims \
the documents do not support.\n2 = the answer fully and correctly answers the question and its \
claims are supported by the documents.\n\n[User Question]\n{query}\n\n"
        );
        if !docs.is_empty() {
            s.push_str("[Retrieved Documents]\n");
            for (did, text) in docs {
                s.push_str(&format!("[{did}] {text}\n"));
            }
            s.push('\n');
        }
        s.push_str(&format!(
            "[The Start of the Answer]\n{answer}\n[The End of the Answer]\n\n\
Reply with a JSON object only: {{\"reasoning\": \"...\", \"score\": N}} with N an integer 0, 1 or 2."
        ));
        s
    }

    /// One item per answer, keyed (qid, agent).
    pub fn items(
        &self,
        queries: &[Query],
        answers: &[AgentAnswer],
        docs: &BTreeMap<String, Vec<(String, String)>>,
    ) -> Result<Vec<JobItem>, String> {
        let none = Vec::new();
        answers
            .iter()
            .map(|a| {
                let q = queries.iter().find(|q| q.qid == a.qid).ok_or_else(|| {
                    format!(
                        "answer of agent {} for query {} has no query",
                        a.agent, a.qid
                    )
                })?;
                Ok(JobItem {
                    key: ItemKey(vec![
                        ("qid".into(), a.qid.clone()),
                        ("agent".into(), a.agent.clone()),
                    ]),
                    call: Call::Chat(ChatRequest {
                        system: Some(SYSTEM.into()),
                        messages: vec![Message {
                            role: Role::User,
                            content: self.render(
                                &q.query,
                                docs.get(&a.qid).unwrap_or(&none),
                                &a.answer,
                            ),
                        }],
                        params: self.params.clone(),
                        top_logprobs: None,
                    }),
                })
            })
            .collect()
    }
}

/// `(score, reasoning)` from a reply: a JSON object (fences allowed) with an integer `score`
/// 0–2 and a string `reasoning`.
pub fn parse_grade(text: &str) -> Result<(u8, String), String> {
    let obj = json_object(text).ok_or("no JSON object in the reply")?;
    let score = obj.get("score").ok_or("no \"score\" in the JSON reply")?;
    let s = match score {
        Value::Number(n) => n.as_u64().filter(|&s| s <= 2),
        Value::String(t) => t.trim().parse::<u64>().ok().filter(|&s| s <= 2),
        _ => None,
    }
    .ok_or_else(|| format!("score {score} is not an integer from 0 to 2"))?;
    let reasoning = obj
        .get("reasoning")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    Ok((s as u8, reasoning))
}

impl Task for Pointwise {
    fn name(&self) -> &str {
        "pointwise"
    }
    fn template_version(&self) -> &str {
        TEMPLATE_VERSION
    }
    /// `{"score", "reasoning", "raw"}`.
    fn parse(&self, reply: &Reply) -> Result<Value, String> {
        check_finish(reply)?;
        let (s, r) = parse_grade(&reply.text)?;
        Ok(json!({"score": s, "reasoning": r, "raw": reply.text}))
    }
    /// The median score of the samples (the lower middle one for an even count), with that
    /// sample's reasoning.
    fn vote(&self, results: &[Value]) -> Option<Value> {
        let mut v: Vec<&Value> = results.iter().collect();
        v.sort_by_key(|r| r.get("score").and_then(Value::as_u64).unwrap_or(0));
        v.get((v.len().saturating_sub(1)) / 2).map(|r| (*r).clone())
    }
    /// Re-asked at temperature ≥ 0.2 (at most `--parse-retries` times) when the reply has no
    /// verdict.
    fn reask(&self, call: &Call, _failed: &str, _n: u32) -> Option<Call> {
        warmer(call, 0.2)
    }
    fn write_output(&self, records: &[ItemRecord]) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record(["qid", "agent", "raw_answer", "reasoning", "score"]);
        for r in records.iter().filter(|r| r.status == Status::Ok) {
            let Some(v) = &r.result else { continue };
            let get = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
            let score = v.get("score").and_then(Value::as_u64).unwrap_or(0);
            let _ = w.write_record([
                r.key.get("qid").unwrap_or(""),
                r.key.get("agent").unwrap_or(""),
                &get("raw"),
                &get("reasoning"),
                &score.to_string(),
            ]);
        }
        w.into_inner()
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default()
    }
}
