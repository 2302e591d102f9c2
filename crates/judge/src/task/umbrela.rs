//! UMBRELA relevance grading, 0–3 (Upadhyay et al., "UMBRELA: UMbrela is the (Open-Source
//! Reproduction of the) Bing RELevance Assessor", 2024; castorini/umbrela, prompt
//! `qrel_zeroshot_bing.yaml`, after Thomas et al., "Large language models can accurately predict
//! searcher preferences", SIGIR 2024).
//!
//! The prompt is our own text with UMBRELA's structure: the 0–3 rubric, the query and passage,
//! then steps — the searcher's intent, how well the passage matches it (M), how trustworthy it is
//! (T), a final score (O) — and the answer format `##final score: N` without reasoning. UMBRELA's
//! defaults: temperature 0, 100 output tokens, frequency penalty 0.5 (Anthropic's API has no
//! penalty and drops it).
//!
//! The parser is stricter than umbrela's on purpose (REFERENCE.md §6): umbrela tries ~30 patterns
//! then takes any digit 0–3 anywhere, so "on a scale from 0 to 3, ##final score: 1" becomes 3, and
//! an unparseable reply becomes 0. Here the grade is the *last* `##final score: N` (case- and
//! space-insensitive), else a JSON object `{"final score": N}` or `{"score": N}` (code fences
//! allowed); anything else — and a reply cut at max_tokens, or a refusal — is a failure.

use super::{ItemKey, JobItem, Task};
use crate::provider::{Call, ChatRequest, Finish, GenParams, Message, Reply, Role};
use crate::runner::{ItemRecord, Status};
use serde_json::Value;

/// Bump when the prompt text or the default parameters change (old cache entries then miss).
pub const TEMPLATE_VERSION: &str = "umbrela-ragscope-1";

pub const SYSTEM: &str =
    "You are a search quality rater. You judge how relevant a passage is to a search query.";

/// The user message (minijinja; `query`, `passage`).
pub const TEMPLATE: &str = "\
Read the search query and the passage below, and grade the passage on an integer scale from 0 to 3:
0 = the passage has nothing to do with the query.
1 = the passage is about the query's topic but does not answer it.
2 = the passage contains some answer to the query, but the answer is unclear or buried in unrelated information.
3 = the passage is devoted to the query and contains the exact answer.

Grade 1 when the passage touches the topic only in part, 2 when it gives something important about the whole topic along with other material, 3 when it is about the topic alone and entirely. When none of these fits, grade 0.

Query: {{ query }}
Passage: {{ passage }}

Work through these steps:
Think about what the searcher intends.
Judge how well the passage matches that intent (M).
Judge how trustworthy the passage is (T).
Weigh these aspects and decide a final score (O), an integer only.
Do not write code. Give the score in the form ##final score: N and give no reasoning.";

/// The UMBRELA task with its generation parameters.
#[derive(Clone, Debug)]
pub struct Umbrela {
    pub params: GenParams,
}

impl Default for Umbrela {
    fn default() -> Self {
        Umbrela {
            params: GenParams {
                max_tokens: 100,
                temperature: Some(0.0),
                top_p: None,
                frequency_penalty: Some(0.5),
                presence_penalty: None,
                seed: None,
                stop: Vec::new(),
            },
        }
    }
}

impl Umbrela {
    pub fn new() -> Self {
        Self::default()
    }

    /// The user message for (query, passage).
    pub fn render(&self, query: &str, passage: &str) -> Result<String, String> {
        let env = minijinja::Environment::new();
        env.render_str(
            TEMPLATE,
            minijinja::context! { query => query, passage => passage },
        )
        .map_err(|e| format!("UMBRELA template: {e}"))
    }

    /// The job item grading `passage` (docno) for `query` (qid).
    pub fn item(
        &self,
        qid: &str,
        docno: &str,
        query: &str,
        passage: &str,
    ) -> Result<JobItem, String> {
        Ok(JobItem {
            key: ItemKey::qid_docno(qid, docno),
            call: Call::Chat(ChatRequest {
                system: Some(SYSTEM.to_string()),
                messages: vec![Message {
                    role: Role::User,
                    content: self.render(query, passage)?,
                }],
                params: self.params.clone(),
                top_logprobs: None,
            }),
        })
    }
}

/// Why a job cannot be built from the loaded files.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ItemsError {
    #[error("query {qid} of the run has no topic")]
    NoTopic { qid: String },
    #[error("docno {docno} (query {qid}) is not in the passages")]
    NoPassage { qid: String, docno: String },
    #[error("{0}")]
    Template(String),
}

impl Umbrela {
    /// One item per (query, passage) of `ranked` (each query's top-k docnos, in order), with the
    /// query text from `topics` and the passage text from `passages`.
    pub fn items(
        &self,
        ranked: &[(String, Vec<String>)],
        topics: &std::collections::HashMap<String, String>,
        passages: &std::collections::HashMap<String, String>,
    ) -> Result<Vec<JobItem>, ItemsError> {
        let mut items = Vec::new();
        for (qid, docs) in ranked {
            let query = topics
                .get(qid)
                .ok_or_else(|| ItemsError::NoTopic { qid: qid.clone() })?;
            for d in docs {
                let text = passages.get(d).ok_or_else(|| ItemsError::NoPassage {
                    qid: qid.clone(),
                    docno: d.clone(),
                })?;
                items.push(
                    self.item(qid, d, query, text)
                        .map_err(ItemsError::Template)?,
                );
            }
        }
        Ok(items)
    }
}

/// Why a reply has no grade.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum GradeError {
    #[error("no `##final score: N` and no JSON {{\"final score\"|\"score\": N}} in the reply")]
    NotFound,
    #[error("final score {0} is not an integer from 0 to 3")]
    OutOfRange(String),
}

/// The grade in a reply's text (see the module documentation for the rules).
pub fn parse_grade(text: &str) -> Result<u8, GradeError> {
    if let Some(n) = last_final_score(text) {
        return in_range(&n);
    }
    if let Some(v) = json_score(text) {
        return in_range(&v);
    }
    Err(GradeError::NotFound)
}

fn in_range(n: &str) -> Result<u8, GradeError> {
    match n.parse::<u8>() {
        Ok(g) if g <= 3 && n.len() == 1 => Ok(g),
        _ => Err(GradeError::OutOfRange(n.to_string())),
    }
}

/// The number after the last `##final score:` (ASCII case-insensitive, spaces allowed around
/// every part). Hand-written: one fixed pattern does not need a regex engine in the wasm build.
fn last_final_score(text: &str) -> Option<String> {
    let b = text.as_bytes();
    let mut found = None;
    let mut i = 0;
    while let Some(off) = text.get(i..).and_then(|t| t.find("##")) {
        let start = i + off;
        i = start + 2;
        let mut j = i;
        let skip_ws = |j: &mut usize| {
            while *j < b.len() && (b[*j] == b' ' || b[*j] == b'\t') {
                *j += 1;
            }
        };
        let word = |j: &mut usize, w: &str| {
            let ok =
                b.len() >= *j + w.len() && b[*j..*j + w.len()].eq_ignore_ascii_case(w.as_bytes());
            if ok {
                *j += w.len();
            }
            ok
        };
        skip_ws(&mut j);
        if !word(&mut j, "final") {
            continue;
        }
        skip_ws(&mut j);
        if !word(&mut j, "score") {
            continue;
        }
        skip_ws(&mut j);
        if !word(&mut j, ":") {
            continue;
        }
        skip_ws(&mut j);
        let d0 = j;
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if j == d0 {
            // `##final score: N` with no number (an echo of the instructions): not a score.
            continue;
        }
        // "2.5" is not an integer grade; "2." ending a sentence is.
        let frac = j + 1 < b.len() && b[j] == b'.' && b[j + 1].is_ascii_digit();
        found = Some(if frac {
            let mut k = j + 1;
            while k < b.len() && b[k].is_ascii_digit() {
                k += 1;
            }
            text[d0..k].to_string()
        } else {
            text[d0..j].to_string()
        });
    }
    found
}

/// `"final score"` or `"score"` (case-insensitive) of the JSON object that is the reply (code
/// fences and text around the outermost braces allowed). Only integers count.
fn json_score(text: &str) -> Option<String> {
    let start = text.find('{')?;
    let end = text.rfind('}')?;
    if end < start {
        return None;
    }
    let v: Value = serde_json::from_str(&text[start..=end]).ok()?;
    let obj = v.as_object()?;
    let field = obj
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case("final score"))
        .or_else(|| obj.iter().find(|(k, _)| k.eq_ignore_ascii_case("score")))?
        .1;
    match field {
        Value::Number(n) if n.is_u64() || n.is_i64() => Some(n.to_string()),
        Value::Number(n) => Some(n.to_string()),
        other => Some(other.to_string()),
    }
}

/// The most frequent grade; ties go to the lowest (umbrela's ensemble rule).
pub fn vote(grades: &[u8]) -> Option<u8> {
    let mut counts = [0usize; 4];
    for &g in grades {
        counts[usize::from(g.min(3))] += 1;
    }
    let best = *counts.iter().max()?;
    if best == 0 {
        return None;
    }
    counts.iter().position(|&c| c == best).map(|g| g as u8)
}

impl Task for Umbrela {
    fn name(&self) -> &str {
        "umbrela"
    }

    fn template_version(&self) -> &str {
        TEMPLATE_VERSION
    }

    fn parse(&self, reply: &Reply) -> Result<Value, String> {
        match &reply.finish {
            Finish::Length => {
                return Err("reply cut at max_tokens (truncated): not graded".into());
            }
            Finish::Refusal => return Err("the model refused to answer".into()),
            _ => {}
        }
        parse_grade(&reply.text)
            .map(Value::from)
            .map_err(|e| e.to_string())
    }

    fn vote(&self, results: &[Value]) -> Option<Value> {
        let grades: Vec<u8> = results
            .iter()
            .filter_map(Value::as_u64)
            .filter(|&g| g <= 3)
            .map(|g| g as u8)
            .collect();
        if grades.len() != results.len() {
            return None;
        }
        vote(&grades).map(Value::from)
    }

    /// TREC qrels: `qid 0 docno grade`.
    fn write_output(&self, records: &[ItemRecord]) -> String {
        let mut out = String::new();
        for r in records {
            if r.status != Status::Ok {
                continue;
            }
            let (Some(q), Some(d), Some(g)) = (
                r.key.get("qid"),
                r.key.get("docno"),
                r.result.as_ref().and_then(Value::as_u64),
            ) else {
                continue;
            };
            out.push_str(&format!("{q} 0 {d} {g}\n"));
        }
        out
    }
}
