//! AutoNuggetizer: nugget creation, vital/okay scoring and support assignment (Pradeep et al.,
//! "Initial Nugget Evaluation Results for the TREC 2024 RAG Track with the AutoNuggetizer
//! Framework", 2024; castorini/nuggetizer; the same steps in vectara/open-rag-eval).
//!
//! The prompts are our own text with nuggetizer's structure: the creator updates a nugget list
//! (1–12 words each, most important first, at most 30) from windows of 10 passages `[i] text`
//! and answers with a Python-style list; the scorer labels nuggets vital/okay in batches of 10;
//! the assigner labels support/partial_support/not_support in batches of 10. Files are
//! nuggetizer's JSONL formats, fields in its order, so its files and ours are interchangeable.
//!
//! Failures are kept, unlike the anchor (REFERENCE.md §4/§8): nuggetizer retries a bad list up to
//! 500 times, then its scorer silently labels everything "okay" (or drops the nuggets on an
//! exception). Here a list that does not parse or has the wrong length is re-asked at most
//! `parse_retries` times at temperature 0.2 (nuggetizer's retry temperature), then the item is
//! recorded as failed: a topic with a failed creation window or scoring batch is left out of the
//! output (and is in the log); a failed assignment batch is written as `"failed"` — nuggetizer's
//! own value, which its scorer counts as 0 in the denominator.

use super::reply::{check_finish, parse_labels, parse_string_list};
use super::{ItemKey, JobItem, Task};
use crate::provider::{Call, ChatRequest, GenParams, Message, Reply, Role};
use crate::runner::{ItemRecord, Status};
use serde::{Deserialize, Serialize};
use serde_json::Value;

pub const TEMPLATE_VERSION: &str = "nuggets-ragscope-1";
/// Passages per creation window, nuggets per scoring/assignment batch, caps (nuggetizer's).
pub const WINDOW: usize = 10;
pub const BATCH: usize = 10;
pub const MAX_CREATED: usize = 30;
pub const MAX_SCORED: usize = 20;
/// nuggetizer's temperature for retries after a bad list.
pub const REASK_TEMPERATURE: f32 = 0.2;

pub const IMPORTANCE: [&str; 2] = ["vital", "okay"];
pub const ASSIGNMENT: [&str; 3] = ["support", "partial_support", "not_support"];

/// Phrases that identify each prompt (the fake provider answers by them).
pub const CREATE_MARK: &str = "Update the list of nuggets";
pub const SCORE_MARK: &str = "as vital or okay";
pub const ASSIGN_MARK: &str = "whether the answer supports it";

const SYSTEM: &str = "You are a careful assessor of search results. You work with information \
nuggets: short, self-contained facts that a complete answer to a search query should contain.";

fn default_params() -> GenParams {
    GenParams {
        max_tokens: 4096,
        temperature: Some(0.0),
        top_p: None,
        frequency_penalty: None,
        presence_penalty: None,
        seed: None,
        stop: Vec::new(),
    }
}

fn chat(params: &GenParams, user: String) -> Call {
    Call::Chat(ChatRequest {
        system: Some(SYSTEM.to_string()),
        messages: vec![Message {
            role: Role::User,
            content: user,
        }],
        params: params.clone(),
        top_logprobs: None,
    })
}

fn reask_call(call: &Call) -> Option<Call> {
    let mut c = call.clone();
    match &mut c {
        Call::Chat(ch) => ch.params.temperature = Some(REASK_TEMPERATURE),
        Call::Completion(_) => return None,
    }
    Some(c)
}

fn json_list(items: &[String]) -> String {
    serde_json::to_string(items).unwrap_or_else(|_| "[]".into())
}

/// A nugget as nuggetizer writes it (`importance` absent before scoring; `assignment` only in
/// assignment files).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Nugget {
    pub text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub importance: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assignment: Option<String>,
}

/// A line of a nuggets file: `{"query", "qid", "nuggets"}` (nuggetizer's order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NuggetTopic {
    pub query: String,
    pub qid: String,
    pub nuggets: Vec<Nugget>,
}

/// A line of an assignments file: `{"query", "qid", "answer_text", "response_length"?,
/// "run_id"?, "nuggets"}` (nuggetizer's order).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Assignment {
    pub query: String,
    pub qid: String,
    pub answer_text: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_length: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub nuggets: Vec<Nugget>,
}

/// A topic of a nuggetizer pool file with its passages (relevant ones only, in order).
#[derive(Clone, Debug, PartialEq)]
pub struct PoolTopic {
    pub qid: String,
    pub query: String,
    pub passages: Vec<String>,
}

/// One answer of a TREC RAG answer file (nuggetizer's run input).
#[derive(Clone, Debug, PartialEq)]
pub struct RunAnswer {
    pub run_id: String,
    pub qid: String,
    pub query: String,
    /// The answer sentences joined by a space (citations ignored), as nuggetizer does.
    pub text: String,
    pub response_length: Option<u64>,
}

fn lines(text: &str) -> impl Iterator<Item = (usize, &str)> {
    text.lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty())
}

fn json_line(name: &str, n: usize, line: &str) -> Result<Value, String> {
    serde_json::from_str(line).map_err(|e| format!("{name}:{n}:{}: {e}", e.column()))
}

fn str_field(v: &Value, path: &[&str]) -> Option<String> {
    let mut cur = v;
    for p in path {
        cur = cur.get(p)?;
    }
    match cur {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// A nuggets JSONL file (`name` for error messages).
pub fn read_nuggets(text: &str, name: &str) -> Result<Vec<NuggetTopic>, String> {
    lines(text)
        .map(|(n, l)| {
            let v = json_line(name, n, l)?;
            let qid = str_field(&v, &["qid"]).ok_or_else(|| format!("{name}:{n}: no qid"))?;
            let query = str_field(&v, &["query"]).unwrap_or_default();
            let nuggets: Vec<Nugget> =
                serde_json::from_value(v.get("nuggets").cloned().unwrap_or(Value::Null))
                    .map_err(|e| format!("{name}:{n}: nuggets: {e}"))?;
            Ok(NuggetTopic {
                query,
                qid,
                nuggets,
            })
        })
        .collect()
}

/// A nuggetizer pool file: `{"query": {"qid", "text"}, "candidates": [{"docid", "doc":
/// {"segment"}, "judgment"?}]}`. Candidates with a `judgment` below `min_grade` are left out
/// (nugget creation uses grade ≥ 1); those without one are kept.
pub fn read_pool(text: &str, name: &str, min_grade: i64) -> Result<Vec<PoolTopic>, String> {
    lines(text)
        .map(|(n, l)| {
            let v = json_line(name, n, l)?;
            let qid = str_field(&v, &["query", "qid"])
                .ok_or_else(|| format!("{name}:{n}: no query.qid"))?;
            let query = str_field(&v, &["query", "text"])
                .ok_or_else(|| format!("{name}:{n}: no query.text"))?;
            let cands = v
                .get("candidates")
                .and_then(Value::as_array)
                .ok_or_else(|| format!("{name}:{n}: no candidates list"))?;
            let mut passages = Vec::new();
            for (i, c) in cands.iter().enumerate() {
                if c.get("judgment")
                    .and_then(Value::as_i64)
                    .is_some_and(|g| g < min_grade)
                {
                    continue;
                }
                let seg = str_field(c, &["doc", "segment"])
                    .or_else(|| str_field(c, &["doc", "contents"]))
                    .ok_or_else(|| format!("{name}:{n}: candidate {i} has no doc.segment"))?;
                passages.push(seg);
            }
            Ok(PoolTopic {
                qid,
                query,
                passages,
            })
        })
        .collect()
}

/// A TREC RAG answer file (`{"run_id", "topic_id", "topic", "response_length"?, "answer":
/// [{"text", "citations"}]}` per line); `run_id` defaults to `default_run` (the file's stem).
pub fn read_answers(text: &str, name: &str, default_run: &str) -> Result<Vec<RunAnswer>, String> {
    lines(text)
        .map(|(n, l)| {
            let v = json_line(name, n, l)?;
            let qid = str_field(&v, &["topic_id"])
                .or_else(|| str_field(&v, &["qid"]))
                .ok_or_else(|| format!("{name}:{n}: no topic_id"))?;
            let sentences = v
                .get("answer")
                .and_then(Value::as_array)
                .ok_or_else(|| format!("{name}:{n}: no answer list"))?;
            let parts: Vec<String> = sentences
                .iter()
                .filter_map(|s| str_field(s, &["text"]))
                .collect();
            Ok(RunAnswer {
                run_id: str_field(&v, &["run_id"]).unwrap_or_else(|| default_run.to_string()),
                qid,
                query: str_field(&v, &["topic"]).unwrap_or_default(),
                text: parts.join(" "),
                response_length: v.get("response_length").and_then(Value::as_u64),
            })
        })
        .collect()
}

/// One JSON object per line.
pub fn to_jsonl<T: Serialize>(rows: &[T]) -> String {
    rows.iter()
        .filter_map(|r| serde_json::to_string(r).ok())
        .map(|l| l + "\n")
        .collect()
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

// ---------------------------------------------------------------------------------------------
// Creation

/// Nugget creation. Windows depend on the list the previous one returned, so a topic's windows
/// run in rounds: round r judges window r of every topic that has one ([`NuggetCreate::round`]).
#[derive(Clone, Debug)]
pub struct NuggetCreate {
    pub params: GenParams,
}

impl Default for NuggetCreate {
    fn default() -> Self {
        NuggetCreate {
            params: default_params(),
        }
    }
}

impl NuggetCreate {
    pub fn render(&self, query: &str, passages: &[String], current: &[String]) -> String {
        let mut ctx = String::new();
        for (i, p) in passages.iter().enumerate() {
            ctx.push_str(&format!("[{}] {}\n", i + 1, p));
        }
        format!(
            "{CREATE_MARK} for the search query below using the numbered passages. A nugget is \
one atomic fact of 1 to 12 words that helps answer the query. Keep the nuggets already in the \
list (reword one only to make it more precise), add the new facts the passages support, order \
the list from most to least important, and keep at most {MAX_CREATED} nuggets.\n\n\
Search query: {query}\n\nPassages:\n{ctx}\n\
Current nugget list ({} nuggets): {}\n\n\
Answer with the updated list only, as a Python list of strings such as [\"first nugget\", \
\"second nugget\"].",
            current.len(),
            json_list(current)
        )
    }

    /// The items of round `r` (window r of each topic with more than r·10 passages), given each
    /// topic's list so far (`current[i]` for `topics[i]`; `None`: the topic failed earlier).
    pub fn round(
        &self,
        r: usize,
        topics: &[PoolTopic],
        current: &[Option<Vec<String>>],
    ) -> Vec<JobItem> {
        topics
            .iter()
            .zip(current)
            .filter_map(|(t, cur)| {
                let cur = cur.as_ref()?;
                let window = t.passages.chunks(WINDOW).nth(r)?;
                Some(JobItem {
                    key: ItemKey(vec![
                        ("qid".into(), t.qid.clone()),
                        ("window".into(), r.to_string()),
                    ]),
                    call: chat(&self.params, self.render(&t.query, window, cur)),
                })
            })
            .collect()
    }

    /// Applies a round's records to the lists: an ok window replaces the topic's list, a failed
    /// one fails the topic (`None`) for the next rounds.
    pub fn absorb(
        &self,
        topics: &[PoolTopic],
        current: &mut [Option<Vec<String>>],
        records: &[ItemRecord],
    ) {
        for rec in records {
            let Some(i) = topics
                .iter()
                .position(|t| Some(t.qid.as_str()) == rec.key.get("qid"))
            else {
                continue;
            };
            current[i] = match (&rec.status, &rec.result) {
                (Status::Ok, Some(v)) => Some(strings(v)),
                _ => None,
            };
        }
    }

    /// Whether every window of `t` has an ok record (a run stopped early by the budget leaves
    /// later windows unjudged: such a topic's list is incomplete).
    pub fn complete(t: &PoolTopic, records: &[ItemRecord]) -> bool {
        let windows = t.passages.len().div_ceil(WINDOW);
        windows == 0
            || records.iter().any(|r| {
                r.status == Status::Ok
                    && r.key.get("qid") == Some(t.qid.as_str())
                    && r.key.get("window") == Some((windows - 1).to_string().as_str())
            })
    }

    /// The nuggets file (no importance yet) for the topics whose every window succeeded
    /// (`records`: every round's).
    pub fn output(
        &self,
        topics: &[PoolTopic],
        current: &[Option<Vec<String>>],
        records: &[ItemRecord],
    ) -> String {
        let rows: Vec<NuggetTopic> = topics
            .iter()
            .zip(current)
            .filter(|(t, _)| Self::complete(t, records))
            .filter_map(|(t, c)| {
                Some(NuggetTopic {
                    query: t.query.clone(),
                    qid: t.qid.clone(),
                    nuggets: c
                        .as_ref()?
                        .iter()
                        .map(|n| Nugget {
                            text: n.clone(),
                            importance: None,
                            assignment: None,
                        })
                        .collect(),
                })
            })
            .collect();
        to_jsonl(&rows)
    }
}

impl Task for NuggetCreate {
    fn name(&self) -> &str {
        "nuggets-create"
    }
    fn template_version(&self) -> &str {
        TEMPLATE_VERSION
    }
    fn parse(&self, reply: &Reply) -> Result<Value, String> {
        check_finish(reply)?;
        let mut list: Vec<String> = parse_string_list(&reply.text)?
            .into_iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        list.truncate(MAX_CREATED);
        Ok(Value::from(list))
    }
    fn vote(&self, results: &[Value]) -> Option<Value> {
        // Lists cannot be voted on: the first sample's.
        results.first().cloned()
    }
    fn reask(&self, call: &Call, _failed: &str, _n: u32) -> Option<Call> {
        reask_call(call)
    }
    /// One line per window: `{"qid", "window", "nuggets"}` (the CLI writes the nuggets file with
    /// [`NuggetCreate::output`]).
    fn write_output(&self, records: &[ItemRecord]) -> String {
        records
            .iter()
            .filter(|r| r.status == Status::Ok)
            .map(|r| {
                serde_json::json!({"qid": r.key.get("qid"), "window": r.key.get("window"),
                                   "nuggets": r.result})
                .to_string()
                    + "\n"
            })
            .collect()
    }
}

// ---------------------------------------------------------------------------------------------
// Labels in batches (scoring and assignment share the batching)

fn batch_key(mut fields: Vec<(String, String)>, b: usize, n: usize) -> ItemKey {
    fields.push(("batch".into(), b.to_string()));
    fields.push(("n".into(), n.to_string()));
    ItemKey(fields)
}

fn batch_len(key: &ItemKey) -> Result<usize, String> {
    key.get("n")
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| "item has no batch size".to_string())
}

/// Majority label over samples (ties: the first sample's), element by element.
fn vote_lists(results: &[Value]) -> Option<Value> {
    let lists: Vec<Vec<String>> = results.iter().map(strings).collect();
    let n = lists.first()?.len();
    if lists.iter().any(|l| l.len() != n) {
        return None;
    }
    let voted: Vec<String> = (0..n)
        .map(|i| {
            let mut best = (0, lists[0][i].clone());
            for l in &lists {
                let c = lists.iter().filter(|m| m[i] == l[i]).count();
                if c > best.0 {
                    best = (c, l[i].clone());
                }
            }
            best.1
        })
        .collect();
    Some(Value::from(voted))
}

/// Labels per (input index, batch) from the records, in input order.
fn labels_by_unit(records: &[ItemRecord], plan: &[(usize, usize)]) -> Vec<Vec<Option<String>>> {
    let units = plan.iter().map(|(u, _)| u + 1).max().unwrap_or(0);
    let mut out: Vec<Vec<Option<String>>> = vec![Vec::new(); units];
    for rec in records {
        let Some(&(u, start)) = plan.get(rec.index) else {
            continue;
        };
        let n = batch_len(&rec.key).unwrap_or(0);
        let labels = match (&rec.status, &rec.result) {
            (Status::Ok, Some(v)) => strings(v).into_iter().map(Some).collect(),
            _ => vec![None; n],
        };
        let slot = &mut out[u];
        if slot.len() < start + n {
            slot.resize(start + n, None);
        }
        for (k, l) in labels.into_iter().enumerate().take(n) {
            slot[start + k] = l;
        }
    }
    out
}

/// (unit, first nugget) of each batch item, in item order.
fn plan(sizes: impl Iterator<Item = usize>) -> Vec<(usize, usize)> {
    let mut p = Vec::new();
    for (u, n) in sizes.enumerate() {
        for start in (0..n).step_by(BATCH) {
            p.push((u, start));
        }
    }
    p
}

// ---------------------------------------------------------------------------------------------
// Scoring

/// vital/okay labels for the nuggets of each topic, in batches of 10; the output keeps vital
/// first (stable) and the first 20.
#[derive(Clone, Debug)]
pub struct NuggetScore {
    pub params: GenParams,
    pub topics: Vec<NuggetTopic>,
}

impl NuggetScore {
    pub fn new(topics: Vec<NuggetTopic>) -> Self {
        NuggetScore {
            params: default_params(),
            topics,
        }
    }

    pub fn render(&self, query: &str, nuggets: &[String]) -> String {
        format!(
            "Label each nugget below {SCORE_MARK} for answering the search query. vital: a good \
answer must contain this fact. okay: the fact is useful but an answer can do without it.\n\n\
Search query: {query}\n\nNuggets ({} of them): {}\n\n\
Return exactly {} labels, one per nugget in the same order, as a Python list such as \
[\"vital\", \"okay\"], and nothing else.",
            nuggets.len(),
            json_list(nuggets),
            nuggets.len()
        )
    }

    fn plan(&self) -> Vec<(usize, usize)> {
        plan(self.topics.iter().map(|t| t.nuggets.len()))
    }

    pub fn items(&self) -> Vec<JobItem> {
        self.plan()
            .into_iter()
            .map(|(u, start)| {
                let t = &self.topics[u];
                let texts: Vec<String> = t.nuggets[start..(start + BATCH).min(t.nuggets.len())]
                    .iter()
                    .map(|n| n.text.clone())
                    .collect();
                JobItem {
                    key: batch_key(
                        vec![("qid".into(), t.qid.clone())],
                        start / BATCH,
                        texts.len(),
                    ),
                    call: chat(&self.params, self.render(&t.query, &texts)),
                }
            })
            .collect()
    }
}

impl Task for NuggetScore {
    fn name(&self) -> &str {
        "nuggets-score"
    }
    fn template_version(&self) -> &str {
        TEMPLATE_VERSION
    }
    fn parse(&self, _reply: &Reply) -> Result<Value, String> {
        Err("nugget scoring needs the item's batch size".into())
    }
    fn parse_item(&self, key: &ItemKey, reply: &Reply) -> Result<Value, String> {
        check_finish(reply)?;
        parse_labels(&reply.text, batch_len(key)?, &IMPORTANCE).map(Value::from)
    }
    fn vote(&self, results: &[Value]) -> Option<Value> {
        vote_lists(results)
    }
    fn reask(&self, call: &Call, _failed: &str, _n: u32) -> Option<Call> {
        reask_call(call)
    }
    /// The nuggets file with importance, vital first, at most 20 per topic; topics with a failed
    /// batch are left out (they are in the log).
    fn write_output(&self, records: &[ItemRecord]) -> String {
        let labels = labels_by_unit(records, &self.plan());
        let mut rows = Vec::new();
        for (u, t) in self.topics.iter().enumerate() {
            let l = labels.get(u).cloned().unwrap_or_default();
            if t.nuggets.is_empty() {
                rows.push(t.clone());
                continue;
            }
            if l.len() != t.nuggets.len() || l.iter().any(Option::is_none) {
                continue;
            }
            let mut nuggets: Vec<Nugget> = t
                .nuggets
                .iter()
                .zip(l)
                .map(|(n, imp)| Nugget {
                    text: n.text.clone(),
                    importance: imp,
                    assignment: None,
                })
                .collect();
            nuggets.sort_by_key(|n| n.importance.as_deref() != Some("vital"));
            nuggets.truncate(MAX_SCORED);
            rows.push(NuggetTopic {
                query: t.query.clone(),
                qid: t.qid.clone(),
                nuggets,
            });
        }
        to_jsonl(&rows)
    }
}

// ---------------------------------------------------------------------------------------------
// Assignment

/// support/partial_support/not_support for each (answer, its topic's nuggets), in batches of 10.
#[derive(Clone, Debug)]
pub struct NuggetAssign {
    pub params: GenParams,
    pub pairs: Vec<(RunAnswer, NuggetTopic)>,
}

/// Why assignment pairs cannot be built.
pub fn pair_answers(
    answers: Vec<RunAnswer>,
    topics: &[NuggetTopic],
) -> Result<Vec<(RunAnswer, NuggetTopic)>, String> {
    answers
        .into_iter()
        .map(|a| {
            let t = topics
                .iter()
                .find(|t| t.qid == a.qid)
                .ok_or_else(|| format!("run {} topic {} has no nuggets", a.run_id, a.qid))?;
            Ok((a, t.clone()))
        })
        .collect()
}

impl NuggetAssign {
    pub fn new(pairs: Vec<(RunAnswer, NuggetTopic)>) -> Self {
        NuggetAssign {
            params: default_params(),
            pairs,
        }
    }

    pub fn render(&self, query: &str, answer: &str, nuggets: &[String]) -> String {
        format!(
            "Decide for each nugget below {ASSIGN_MARK}. support: the answer states the fact \
fully. partial_support: the answer states part of the fact. not_support: the answer does not \
state it.\n\n\
Search query: {query}\n\nAnswer: {answer}\n\nNuggets ({} of them): {}\n\n\
Return exactly {} labels, one per nugget in the same order, as a Python list such as \
[\"support\", \"not_support\", \"partial_support\"], and nothing else.",
            nuggets.len(),
            json_list(nuggets),
            nuggets.len()
        )
    }

    fn plan(&self) -> Vec<(usize, usize)> {
        plan(self.pairs.iter().map(|(_, t)| t.nuggets.len()))
    }

    pub fn items(&self) -> Vec<JobItem> {
        self.plan()
            .into_iter()
            .map(|(u, start)| {
                let (a, t) = &self.pairs[u];
                let texts: Vec<String> = t.nuggets[start..(start + BATCH).min(t.nuggets.len())]
                    .iter()
                    .map(|n| n.text.clone())
                    .collect();
                let query = if a.query.is_empty() {
                    &t.query
                } else {
                    &a.query
                };
                JobItem {
                    key: batch_key(
                        vec![
                            ("qid".into(), a.qid.clone()),
                            ("run_id".into(), a.run_id.clone()),
                        ],
                        start / BATCH,
                        texts.len(),
                    ),
                    call: chat(&self.params, self.render(query, &a.text, &texts)),
                }
            })
            .collect()
    }
}

impl Task for NuggetAssign {
    fn name(&self) -> &str {
        "nuggets-assign"
    }
    fn template_version(&self) -> &str {
        TEMPLATE_VERSION
    }
    fn parse(&self, _reply: &Reply) -> Result<Value, String> {
        Err("nugget assignment needs the item's batch size".into())
    }
    fn parse_item(&self, key: &ItemKey, reply: &Reply) -> Result<Value, String> {
        check_finish(reply)?;
        parse_labels(&reply.text, batch_len(key)?, &ASSIGNMENT).map(Value::from)
    }
    fn vote(&self, results: &[Value]) -> Option<Value> {
        vote_lists(results)
    }
    fn reask(&self, call: &Call, _failed: &str, _n: u32) -> Option<Call> {
        reask_call(call)
    }
    /// The assignments file: one line per answer; a nugget of a failed batch has assignment
    /// `"failed"` (nuggetizer's value), never a guessed label.
    fn write_output(&self, records: &[ItemRecord]) -> String {
        let labels = labels_by_unit(records, &self.plan());
        let rows: Vec<Assignment> = self
            .pairs
            .iter()
            .enumerate()
            .map(|(u, (a, t))| {
                let l = labels.get(u).cloned().unwrap_or_default();
                Assignment {
                    query: if a.query.is_empty() {
                        t.query.clone()
                    } else {
                        a.query.clone()
                    },
                    qid: a.qid.clone(),
                    answer_text: a.text.clone(),
                    response_length: a.response_length,
                    run_id: Some(a.run_id.clone()),
                    nuggets: t
                        .nuggets
                        .iter()
                        .enumerate()
                        .map(|(i, n)| Nugget {
                            text: n.text.clone(),
                            // nuggetizer reads a nugget without importance as vital.
                            importance: Some(
                                n.importance.clone().unwrap_or_else(|| "vital".into()),
                            ),
                            assignment: Some(
                                l.get(i)
                                    .cloned()
                                    .flatten()
                                    .unwrap_or_else(|| "failed".into()),
                            ),
                        })
                        .collect(),
                }
            })
            .collect();
        to_jsonl(&rows)
    }
}
