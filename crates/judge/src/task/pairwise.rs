//! Pairwise answer battles (RAGElo: Rackauckas et al., "Evaluating RAG-Fusion with RAGElo: an
//! Automated Elo-based Framework", 2024; zetaalphavector/RAGElo, its pairwise answer evaluator).
//!
//! Our own prompt text with RAGElo's structure: an impartial judge weighing correctness,
//! helpfulness, completeness, accuracy, depth and detail, warned against position and length
//! bias; the question, the retrieved documents (optional), then "[The Start of Assistant A's
//! Answer]" ... for A and B; a JSON verdict `{answer_a_analysis, answer_b_analysis,
//! comparison_reasoning, winner: "A"|"B"|"C"}`. The parser takes that JSON (code fences allowed)
//! or RAGElo's older text verdict — the last `[[A]]`, `[[B]]` or `[[C]]`. A reply with neither is
//! re-asked (at temperature ≥ 0.2, at most `parse_retries` times), then recorded as failed.
//!
//! Every pair of agents per query is judged in both orders (agents sorted by name give the
//! game's A and B); agreeing verdicts give the winner, disagreeing ones a tie (C), as RAGElo does.
//! The output is RAGElo's pairwise CSV (`qid, agent_a, agent_b, raw_answer, answer,
//! relevance`), with both raw verdicts in `raw_answer`; a game with a failed order is left out
//! (the log has it). [`flips`] counts the games whose two orders disagree (position bias).

use super::reply::{check_finish, json_object, warmer};
use super::{ItemKey, JobItem, Task};
use crate::provider::{Call, ChatRequest, GenParams, Message, Reply, Role};
use crate::runner::{ItemRecord, Status};
use serde_json::{json, Value};
use std::collections::BTreeMap;

pub const TEMPLATE_VERSION: &str = "pairwise-ragscope-1";
/// The phrase that identifies the prompt (the fake provider answers by it).
pub const MARK: &str = "[The Start of Assistant A's Answer]";
/// `order` of the item that shows the game's agent_a first, and of the swapped one.
pub const FORWARD: &str = "ab";
pub const SWAPPED: &str = "ba";

pub const SYSTEM: &str = "You are an impartial judge. You compare two answers that AI assistants \
gave to the same user question, using documents a search engine retrieved for it. Judge which \
answer is better on correctness, helpfulness, completeness, accuracy, depth and level of \
detail, and whether its claims are supported by the documents. The order in which the answers \
appear must not influence you, nor their length, nor the assistants' names. Be as objective as \
you can.";

/// A query of `queries.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    pub qid: String,
    pub query: String,
}

/// A row of `answers.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct AgentAnswer {
    pub qid: String,
    pub agent: String,
    pub answer: String,
}

/// A row of `documents.csv`.
#[derive(Clone, Debug, PartialEq)]
pub struct Document {
    pub qid: String,
    pub did: String,
    pub text: String,
}

/// The rows of a RAGElo CSV with the named columns (by header, any order; extra columns are
/// metadata; leading spaces of values stripped, as RAGElo does).
pub fn read_csv(text: &str, name: &str, columns: &[&str]) -> Result<Vec<Vec<String>>, String> {
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(false)
        .from_reader(text.as_bytes());
    let headers = rdr
        .headers()
        .map_err(|e| format!("{name}: {e}"))?
        .iter()
        .map(|h| h.trim().to_string())
        .collect::<Vec<_>>();
    let idx: Vec<usize> = columns
        .iter()
        .map(|c| {
            headers
                .iter()
                .position(|h| h == c)
                .ok_or_else(|| format!("{name}: no column {c:?} (columns: {})", headers.join(", ")))
        })
        .collect::<Result<_, _>>()?;
    let mut rows = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line());
            format!("{name}:{line}: {e}")
        })?;
        rows.push(
            idx.iter()
                .map(|&i| rec.get(i).unwrap_or("").trim_start().to_string())
                .collect(),
        );
    }
    Ok(rows)
}

pub fn read_queries(text: &str, name: &str) -> Result<Vec<Query>, String> {
    Ok(read_csv(text, name, &["qid", "query"])?
        .into_iter()
        .map(|r| Query {
            qid: r[0].clone(),
            query: r[1].clone(),
        })
        .collect())
}

pub fn read_answers(text: &str, name: &str) -> Result<Vec<AgentAnswer>, String> {
    Ok(read_csv(text, name, &["qid", "agent", "answer"])?
        .into_iter()
        .map(|r| AgentAnswer {
            qid: r[0].clone(),
            agent: r[1].clone(),
            answer: r[2].clone(),
        })
        .collect())
}

pub fn read_documents(text: &str, name: &str) -> Result<Vec<Document>, String> {
    Ok(read_csv(text, name, &["qid", "did", "document"])?
        .into_iter()
        .map(|r| Document {
            qid: r[0].clone(),
            did: r[1].clone(),
            text: r[2].clone(),
        })
        .collect())
}

/// The documents of each query, each did once, in file order.
pub fn documents_by_query(docs: &[Document]) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for d in docs {
        let list = out.entry(d.qid.clone()).or_default();
        if !list.iter().any(|(did, _)| did == &d.did) {
            list.push((d.did.clone(), d.text.clone()));
        }
    }
    out
}

#[derive(Clone, Debug)]
pub struct Pairwise {
    pub params: GenParams,
}

impl Default for Pairwise {
    fn default() -> Self {
        // RAGElo's defaults: temperature 0.1.
        Pairwise {
            params: GenParams {
                max_tokens: 2048,
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

impl Pairwise {
    pub fn render(
        &self,
        query: &str,
        docs: &[(String, String)],
        first: &str,
        second: &str,
    ) -> String {
        let mut s = format!("[User Question]\n{query}\n\n");
        if !docs.is_empty() {
            s.push_str("[Retrieved Documents]\n");
            for (did, text) in docs {
                s.push_str(&format!("[{did}] {text}\n"));
            }
            s.push('\n');
        }
        s.push_str(&format!(
            "{MARK}\n{first}\n[The End of Assistant A's Answer]\n\n\
[The Start of Assistant B's Answer]\n{second}\n[The End of Assistant B's Answer]\n\n\
Analyse each answer, then compare them. Reply with a JSON object only: {{\"answer_a_analysis\": \
\"...\", \"answer_b_analysis\": \"...\", \"comparison_reasoning\": \"...\", \"winner\": \"A\"}}, \
where winner is \"A\" if Assistant A's answer is better, \"B\" if Assistant B's is, and \"C\" \
for a tie."
        ));
        s
    }

    /// Two items per game (agents of a query sorted by name, every pair): `order` "ab" shows
    /// agent_a first, "ba" agent_b first. Errors name a query or agent that does not fit.
    pub fn items(
        &self,
        queries: &[Query],
        answers: &[AgentAnswer],
        docs: &BTreeMap<String, Vec<(String, String)>>,
    ) -> Result<Vec<JobItem>, String> {
        for a in answers {
            if !queries.iter().any(|q| q.qid == a.qid) {
                return Err(format!(
                    "answer of agent {} for query {} has no query",
                    a.agent, a.qid
                ));
            }
        }
        let mut items = Vec::new();
        let none = Vec::new();
        for q in queries {
            let mut agents: Vec<&AgentAnswer> = answers.iter().filter(|a| a.qid == q.qid).collect();
            agents.sort_by(|x, y| x.agent.cmp(&y.agent));
            for w in agents.windows(2) {
                if w[0].agent == w[1].agent {
                    return Err(format!(
                        "agent {} has two answers for query {}",
                        w[0].agent, q.qid
                    ));
                }
            }
            let d = docs.get(&q.qid).unwrap_or(&none);
            for i in 0..agents.len() {
                for j in i + 1..agents.len() {
                    let (a, b) = (agents[i], agents[j]);
                    for (order, first, second) in [(FORWARD, a, b), (SWAPPED, b, a)] {
                        items.push(JobItem {
                            key: ItemKey(vec![
                                ("qid".into(), q.qid.clone()),
                                ("agent_a".into(), a.agent.clone()),
                                ("agent_b".into(), b.agent.clone()),
                                ("order".into(), order.into()),
                            ]),
                            call: Call::Chat(ChatRequest {
                                system: Some(SYSTEM.into()),
                                messages: vec![Message {
                                    role: Role::User,
                                    content: self.render(
                                        &q.query,
                                        d,
                                        &first.answer,
                                        &second.answer,
                                    ),
                                }],
                                params: self.params.clone(),
                                top_logprobs: None,
                            }),
                        });
                    }
                }
            }
        }
        Ok(items)
    }
}

/// The verdict in a reply: JSON `winner` (fences allowed), else the last `[[X]]`.
pub fn parse_verdict(text: &str) -> Result<char, String> {
    if let Some(obj) = json_object(text) {
        if let Some(w) = obj.get("winner") {
            let w = w.as_str().unwrap_or("").trim().to_ascii_uppercase();
            return match w.as_str() {
                "A" | "B" | "C" => Ok(w.chars().next().unwrap_or('C')),
                "TIE" => Ok('C'),
                _ => Err(format!("winner {w:?} is not A, B or C")),
            };
        }
    }
    let mut last = None;
    let mut rest = text;
    while let Some(i) = rest.find("[[") {
        let after = &rest[i + 2..];
        match after.find("]]") {
            Some(j) => {
                last = Some(after[..j].trim().to_ascii_uppercase());
                rest = &after[j + 2..];
            }
            None => break,
        }
    }
    match last.as_deref() {
        Some("A") => Ok('A'),
        Some("B") => Ok('B'),
        Some("C") => Ok('C'),
        Some(o) => Err(format!("verdict [[{o}]] is not A, B or C")),
        None => Err("no JSON winner and no [[A]]/[[B]]/[[C]] verdict in the reply".into()),
    }
}

impl Task for Pairwise {
    fn name(&self) -> &str {
        "pairwise"
    }
    fn template_version(&self) -> &str {
        TEMPLATE_VERSION
    }
    /// `{"winner": "A"|"B"|"C", "raw": reply}` (the winner by position in this order).
    fn parse(&self, reply: &Reply) -> Result<Value, String> {
        check_finish(reply)?;
        let w = parse_verdict(&reply.text)?;
        Ok(json!({"winner": w.to_string(), "raw": reply.text}))
    }
    /// The majority winner over samples (a tie between winners is C), with its first sample.
    fn vote(&self, results: &[Value]) -> Option<Value> {
        let count = |w: &str| {
            results
                .iter()
                .filter(|r| r.get("winner").and_then(Value::as_str) == Some(w))
                .count()
        };
        let (a, b, c) = (count("A"), count("B"), count("C"));
        let w = if a > b && a > c {
            "A"
        } else if b > a && b > c {
            "B"
        } else {
            "C"
        };
        let raw = results
            .iter()
            .find(|r| r.get("winner").and_then(Value::as_str) == Some(w))
            .or(results.first())?
            .get("raw")
            .cloned()
            .unwrap_or(Value::Null);
        Some(json!({"winner": w, "raw": raw}))
    }
    /// Re-asked at temperature ≥ 0.2 (at most `--parse-retries` times) when the reply has no
    /// verdict.
    fn reask(&self, call: &Call, _failed: &str, _n: u32) -> Option<Call> {
        warmer(call, 0.2)
    }
    fn write_output(&self, records: &[ItemRecord]) -> String {
        let mut w = csv::Writer::from_writer(Vec::new());
        let _ = w.write_record([
            "qid",
            "agent_a",
            "agent_b",
            "raw_answer",
            "answer",
            "relevance",
        ]);
        for g in games(records) {
            let raw = format!(
                "[{} shown as A]\n{}\n\n[{} shown as A]\n{}",
                g.agent_a, g.raw_forward, g.agent_b, g.raw_swapped
            );
            let _ = w.write_record([
                g.qid.as_str(),
                &g.agent_a,
                &g.agent_b,
                &raw,
                &g.answer.to_string(),
                "",
            ]);
        }
        w.into_inner()
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .unwrap_or_default()
    }
}

/// A game with both orders judged.
#[derive(Clone, Debug, PartialEq)]
pub struct Game {
    pub qid: String,
    pub agent_a: String,
    pub agent_b: String,
    /// The verdict with agent_a shown first, and with agent_b shown first mapped back to the
    /// game's A/B.
    pub forward: char,
    pub swapped: char,
    pub answer: char,
    pub raw_forward: String,
    pub raw_swapped: String,
}

impl Game {
    /// The two orders disagree: the verdict followed the position.
    pub fn flipped(&self) -> bool {
        self.forward != self.swapped
    }
}

/// The games whose two orders both succeeded, in input order.
pub fn games(records: &[ItemRecord]) -> Vec<Game> {
    let verdict = |r: &ItemRecord| -> Option<(char, String)> {
        if r.status != Status::Ok {
            return None;
        }
        let v = r.result.as_ref()?;
        let w = v.get("winner")?.as_str()?.chars().next()?;
        Some((w, v.get("raw")?.as_str()?.to_string()))
    };
    let mut out = Vec::new();
    for r in records {
        if r.key.get("order") != Some(FORWARD) {
            continue;
        }
        let (q, a, b) = (r.key.get("qid"), r.key.get("agent_a"), r.key.get("agent_b"));
        let Some(other) = records.iter().find(|s| {
            s.key.get("order") == Some(SWAPPED)
                && s.key.get("qid") == q
                && s.key.get("agent_a") == a
                && s.key.get("agent_b") == b
        }) else {
            continue;
        };
        let (Some((f, rf)), Some((s, rs))) = (verdict(r), verdict(other)) else {
            continue;
        };
        let swapped = match s {
            'A' => 'B',
            'B' => 'A',
            c => c,
        };
        out.push(Game {
            qid: q.unwrap_or("").into(),
            agent_a: a.unwrap_or("").into(),
            agent_b: b.unwrap_or("").into(),
            forward: f,
            swapped,
            answer: if f == swapped { f } else { 'C' },
            raw_forward: rf,
            raw_swapped: rs,
        });
    }
    out
}

/// (games judged in both orders, games whose orders disagree).
pub fn flips(records: &[ItemRecord]) -> (usize, usize) {
    let g = games(records);
    (g.len(), g.iter().filter(|g| g.flipped()).count())
}
