//! A free-text answer: the model answers a prompt the caller rendered (the lost-in-the-middle
//! page's remote model answering each context), and the answer is scored by the caller (the
//! lost-in-the-middle paper's normalised substring match), not by this task.
//!
//! The reply's first non-empty line, trimmed, is the answer — as the local engine cuts its greedy
//! answer at the first newline. A reply cut at max_tokens is still an answer (the local engine's
//! are cut the same way); a refusal is a failure, recorded as such, never an answer.

use super::{ItemKey, JobItem, Task};
use crate::provider::{Call, ChatRequest, Finish, GenParams, Message, Reply, Role};
use crate::runner::ItemRecord;
use serde_json::{json, Value};

/// Bump when the parsing or the default parameters change (old cache entries then miss). The
/// prompt itself is the caller's and is part of the cache key through the request body.
pub const TEMPLATE_VERSION: &str = "answer-ragscope-1";

/// The answer task (greedy: temperature 0).
#[derive(Clone, Debug)]
pub struct Answer {
    pub params: GenParams,
}

impl Answer {
    pub fn new(max_tokens: u32) -> Self {
        Answer {
            params: GenParams {
                max_tokens,
                temperature: Some(0.0),
                ..GenParams::default()
            },
        }
    }

    /// The call for one prompt: an optional system prompt and one user message.
    pub fn call(&self, system: Option<&str>, user: &str) -> Call {
        Call::Chat(ChatRequest {
            system: system.filter(|s| !s.is_empty()).map(str::to_string),
            messages: vec![Message {
                role: Role::User,
                content: user.to_string(),
            }],
            params: self.params.clone(),
            top_logprobs: None,
        })
    }

    pub fn item(&self, key: ItemKey, system: Option<&str>, user: &str) -> JobItem {
        JobItem {
            key,
            call: self.call(system, user),
        }
    }
}

/// The answer in a reply's text: its first non-empty line, trimmed.
pub fn answer_text(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

impl Task for Answer {
    fn name(&self) -> &str {
        "answer"
    }

    fn template_version(&self) -> &str {
        TEMPLATE_VERSION
    }

    fn parse(&self, reply: &Reply) -> Result<Value, String> {
        if reply.finish == Finish::Refusal {
            return Err("the model refused to answer".into());
        }
        Ok(json!({ "answer": answer_text(&reply.text) }))
    }

    fn vote(&self, results: &[Value]) -> Option<Value> {
        results.first().cloned()
    }

    /// One JSON line per answered item: its key's fields and the answer.
    fn write_output(&self, records: &[ItemRecord]) -> String {
        let mut out = String::new();
        for r in records {
            let Some(answer) = r.result.as_ref().and_then(|v| v.get("answer")) else {
                continue;
            };
            let mut line = serde_json::Map::new();
            for (k, v) in &r.key.0 {
                line.insert(k.clone(), Value::String(v.clone()));
            }
            line.insert("answer".into(), answer.clone());
            out.push_str(&Value::Object(line).to_string());
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::Usage;

    fn reply(text: &str, finish: Finish) -> Reply {
        Reply {
            text: text.into(),
            finish,
            usage: Usage::default(),
            logprobs: None,
        }
    }

    #[test]
    fn the_answer_is_the_first_line_and_a_refusal_fails() {
        let t = Answer::new(32);
        assert_eq!(
            t.parse(&reply("\n  Paris \nbecause …", Finish::Stop))
                .unwrap(),
            json!({"answer": "Paris"})
        );
        // Cut at max_tokens: still an answer, as the local engine's.
        assert_eq!(
            t.parse(&reply("The Eiffel", Finish::Length)).unwrap(),
            json!({"answer": "The Eiffel"})
        );
        assert_eq!(
            t.parse(&reply("", Finish::Stop)).unwrap(),
            json!({"answer": ""})
        );
        assert!(t.parse(&reply("", Finish::Refusal)).is_err());
    }

    #[test]
    fn the_call_is_greedy_with_few_tokens() {
        let Call::Chat(c) = Answer::new(32).call(Some("sys"), "user") else {
            panic!("a chat call")
        };
        assert_eq!(c.params.temperature, Some(0.0));
        assert_eq!(c.params.max_tokens, 32);
        assert_eq!(c.system.as_deref(), Some("sys"));
        assert_eq!(c.messages[0].content, "user");
        let Call::Chat(c) = Answer::new(8).call(Some(""), "u") else {
            panic!("a chat call")
        };
        assert_eq!(c.system, None);
    }
}
