//! Answer equivalence: is a generated answer semantically equivalent to one of a question's gold
//! answers? The end-to-end correctness the UDCG paper grades with an LLM judge (Trappolini et al.,
//! "Redefining Retrieval Evaluation in the Era of LLMs", arXiv 2510.21440: Gemini 2.0 Flash with
//! the prompt of its Figure 5, because a string match misses correct paraphrases).
//!
//! Our own prompt text with that usage: the question, the gold answers, the candidate answer, and
//! an instruction to decide whether the candidate gives the same answer as one of the golds
//! (paraphrases, aliases and equivalent units count; a hedge between several answers, extra
//! wrong claims or no answer do not). Temperature 0, a few output tokens.
//!
//! The parser is strict: the reply (code fences, `*`/quotes and a final period stripped) must be
//! `CORRECT` or `INCORRECT`, or end with a line `Verdict: CORRECT|INCORRECT` (case-insensitive).
//! Anything else — "probably correct", "The answer is not correct", both words in the last line,
//! a reply cut at max_tokens, a refusal — is a failure, recorded as such, never a verdict.
//!
//! The rule that a context without a relevant passage is never correct (the paper's) is applied
//! by the caller, which does not even ask the judge for such a context.

use super::reply::{check_finish, strip_fences};
use super::{ItemKey, JobItem, Task};
use crate::provider::{Call, ChatRequest, GenParams, Message, Reply, Role};
use crate::runner::{ItemRecord, Status};
use serde_json::Value;

/// Bump when the prompt text or the default parameters change (old cache entries then miss).
pub const TEMPLATE_VERSION: &str = "answer-equivalence-ragscope-1";
/// The phrase that identifies the prompt (the fake provider answers by it).
pub const MARK: &str =
    "Decide whether the candidate answer is equivalent to one of the gold answers";

pub const SYSTEM: &str = "You grade the answers of a question-answering system against the \
reference answers of a dataset.";

#[derive(Clone, Debug)]
pub struct AnswerEquivalence {
    pub params: GenParams,
}

impl Default for AnswerEquivalence {
    fn default() -> Self {
        AnswerEquivalence {
            params: GenParams {
                max_tokens: 16,
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

impl AnswerEquivalence {
    pub fn new() -> Self {
        Self::default()
    }

    /// The user message for one (question, golds, candidate).
    pub fn render(&self, question: &str, golds: &[String], candidate: &str) -> String {
        let mut s = format!(
            "{MARK}.\n\
The candidate is correct when it gives the same answer as at least one gold answer: a \
paraphrase, an alias, a more or less specific form that still names the same thing, or the same \
quantity in other units all count. It is incorrect when it gives a different answer, hedges \
between several answers, adds claims that contradict the gold answers, or gives no answer. Judge \
only the meaning, not the style or length.\n\n\
Question: {question}\n\
Gold answers:\n"
        );
        for g in golds {
            s.push_str(&format!("- {g}\n"));
        }
        s.push_str(&format!(
            "Candidate answer: {candidate}\n\n\
Reply with one word: CORRECT or INCORRECT."
        ));
        s
    }

    /// The job item for context `context` of question `qid` (in `dataset`).
    pub fn item(
        &self,
        dataset: &str,
        qid: &str,
        context: usize,
        question: &str,
        golds: &[String],
        candidate: &str,
    ) -> JobItem {
        JobItem {
            key: ItemKey(vec![
                ("dataset".into(), dataset.to_string()),
                ("qid".into(), qid.to_string()),
                ("context".into(), context.to_string()),
            ]),
            call: Call::Chat(ChatRequest {
                system: Some(SYSTEM.to_string()),
                messages: vec![Message {
                    role: Role::User,
                    content: self.render(question, golds, candidate),
                }],
                params: self.params.clone(),
                top_logprobs: None,
            }),
        }
    }
}

/// The verdict in a reply's text: `true` for CORRECT (see the module documentation).
pub fn parse_verdict(text: &str) -> Result<bool, String> {
    let body = strip_fences(text);
    let last = body
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .ok_or("empty reply: no verdict")?;
    let trim = |s: &str| {
        s.trim()
            .trim_matches(|c: char| c == '*' || c == '"' || c == '\'' || c == '`')
            .trim()
            .trim_end_matches('.')
            .trim()
            .to_ascii_lowercase()
    };
    let mut word = trim(last);
    if let Some(rest) = word.strip_prefix("verdict") {
        let rest = rest.trim_start();
        match rest.strip_prefix(':') {
            Some(v) => word = trim(v),
            None => return Err(format!("no verdict in {:?}", excerpt(last))),
        }
    }
    match word.as_str() {
        "correct" => Ok(true),
        "incorrect" => Ok(false),
        _ => Err(format!(
            "no verdict (CORRECT or INCORRECT) in the last line {:?}",
            excerpt(last)
        )),
    }
}

fn excerpt(s: &str) -> String {
    s.chars().take(80).collect()
}

impl Task for AnswerEquivalence {
    fn name(&self) -> &str {
        "answer-equivalence"
    }

    fn template_version(&self) -> &str {
        TEMPLATE_VERSION
    }

    fn parse(&self, reply: &Reply) -> Result<Value, String> {
        check_finish(reply)?;
        parse_verdict(&reply.text).map(Value::Bool)
    }

    /// The majority verdict; a tie is no verdict (the item fails rather than guess).
    fn vote(&self, results: &[Value]) -> Option<Value> {
        let yes = results.iter().filter(|v| v.as_bool() == Some(true)).count();
        let no = results
            .iter()
            .filter(|v| v.as_bool() == Some(false))
            .count();
        if yes + no != results.len() || yes == no {
            return None;
        }
        Some(Value::Bool(yes > no))
    }

    /// JSON Lines `{"dataset", "qid", "context", "correct"}` of the graded items (the answers
    /// file itself is rewritten by the caller).
    fn write_output(&self, records: &[ItemRecord]) -> String {
        let mut out = String::new();
        for r in records {
            if r.status != Status::Ok {
                continue;
            }
            let line = serde_json::json!({
                "dataset": r.key.get("dataset"),
                "qid": r.key.get("qid"),
                "context": r.key.get("context").and_then(|c| c.parse::<usize>().ok()),
                "correct": r.result,
            });
            out.push_str(&line.to_string());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts_are_strict() {
        for (text, want) in [
            ("CORRECT", Some(true)),
            ("incorrect.", Some(false)),
            ("**Correct**", Some(true)),
            ("The gold says Paris.\nVerdict: INCORRECT", Some(false)),
            ("```\nCORRECT\n```", Some(true)),
            ("verdict : correct", Some(true)),
            ("The answer is not correct", None),
            ("probably correct", None),
            ("CORRECT or INCORRECT", None),
            ("", None),
            ("yes", None),
            ("verdictcorrect", None),
        ] {
            assert_eq!(parse_verdict(text).ok(), want, "{text:?}");
        }
    }

    #[test]
    fn ties_are_no_verdict() {
        let t = AnswerEquivalence::new();
        let (y, n) = (Value::Bool(true), Value::Bool(false));
        assert_eq!(t.vote(&[y.clone(), n.clone()]), None);
        assert_eq!(t.vote(&[y.clone(), n, y.clone()]), Some(y));
    }

    #[test]
    fn prompt_holds_every_gold_and_the_mark() {
        let p = AnswerEquivalence::new().render("q?", &["a".into(), "b".into()], "c");
        assert!(
            p.starts_with(MARK) && p.contains("- a\n- b\n") && p.contains("Candidate answer: c")
        );
    }
}
