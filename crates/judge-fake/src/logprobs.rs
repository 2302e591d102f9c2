//! The fake model's tokens and log-probabilities, for the utility task's echo and top-k replies.

use super::*;
use serde_json::{json, Value};

/// The fake server's tokens of `text` (see above).
pub fn fake_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c.is_whitespace() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            if c == ' ' {
                cur.push(' ');
            } else {
                out.push(c.to_string());
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The fake model's log-probability of `token` at `position` (see above).
pub fn fake_logprob(position: usize, token: &str) -> f64 {
    -(0.5 + 0.1 * token.chars().count() as f64 + 3.0 * (position % 2) as f64)
}

/// The generated token and the alternative the fake lists with it.
pub const FAKE_GENERATED: &str = "Sure";
pub const FAKE_ALTERNATIVE: &str = " Yes";
/// The generated token's logprob in chat replies.
pub const FAKE_CHAT_LOGPROB: f64 = -0.1;

/// The chat alternatives' log-probability at rank k ≥ 1.
pub fn fake_alternative_logprob(k: usize) -> f64 {
    -(4.0 + 0.25 * k as f64)
}

/// The first token's top `k` alternatives of chat and Gemini replies (see above), as
/// (token, log-probability, token id): the generated token, then "alt1".., with `forced`'s "NO"
/// last.
fn top_alternatives(k: usize, forced: Option<f64>) -> Vec<(String, f64, usize)> {
    let mut top = vec![(FAKE_GENERATED.to_string(), FAKE_CHAT_LOGPROB, 1)];
    for i in 1..k.max(1) {
        top.push((format!("alt{i}"), fake_alternative_logprob(i), 100 + i));
    }
    if let (Some(x), true) = (forced, k > 1) {
        top[k - 1] = ("NO".to_string(), x, 2);
    }
    top
}

pub(crate) fn utility_reply(
    r: &RecordedRequest,
    ds: &[(String, String)],
    shifted: bool,
) -> Option<Action> {
    let v: Value = serde_json::from_str(&r.body).ok()?;
    let get = |k: &str| ds.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let forced: Option<f64> = get("lp").and_then(|x| x.parse().ok());
    let body = match r.format? {
        WireFormat::OpenAiCompletions if v.get("logprobs").is_some_and(Value::is_u64) => {
            let prompt = v.get("prompt")?.as_str()?;
            let echo = v.get("echo").and_then(Value::as_bool) == Some(true);
            let toks = fake_tokens(prompt);
            let n = toks.len();
            let gen = fake_logprob(n, FAKE_GENERATED);
            let (mut tokens, mut values): (Vec<String>, Vec<Option<f64>>) = if echo {
                let mut vals: Vec<Option<f64>> = toks
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        if shifted {
                            Some(fake_logprob(i + 1, t))
                        } else if i + 1 == n && forced.is_some() {
                            forced
                        } else {
                            Some(fake_logprob(i, t))
                        }
                    })
                    .collect();
                if let Some(first) = vals.first_mut() {
                    *first = None;
                }
                let mut tokens = toks.clone();
                tokens.push(FAKE_GENERATED.into());
                vals.push(Some(if shifted {
                    fake_logprob(n + 1, FAKE_GENERATED)
                } else {
                    gen
                }));
                (tokens, vals)
            } else {
                (vec![FAKE_GENERATED.into()], vec![Some(gen)])
            };
            if get("cut").is_some() {
                let keep = tokens.len().saturating_sub(3);
                tokens.truncate(keep);
                values.truncate(keep);
            }
            let top: Vec<Value> = tokens
                .iter()
                .zip(&values)
                .enumerate()
                .map(|(i, (t, v))| match v {
                    None => Value::Null,
                    Some(x) if !echo || i == tokens.len() - 1 => {
                        json!({ t.clone(): x, FAKE_ALTERNATIVE: x - 1.0 })
                    }
                    Some(x) => json!({ t.clone(): x }),
                })
                .collect();
            let text = if echo {
                format!("{prompt}{FAKE_GENERATED}")
            } else {
                FAKE_GENERATED.to_string()
            };
            json!({
                "id": "cmpl-fake", "object": "text_completion", "model": "fake",
                "choices": [{"index": 0, "text": text, "finish_reason": "length",
                             "logprobs": {"tokens": tokens, "token_logprobs": values,
                                          "top_logprobs": top}}],
                "usage": {"prompt_tokens": n, "completion_tokens": 1, "total_tokens": n + 1}
            })
        }
        WireFormat::OpenAiChat => {
            let k = v.get("top_logprobs")?.as_u64()? as usize;
            let top: Vec<Value> = top_alternatives(k, forced)
                .into_iter()
                .map(|(token, lp, _)| json!({"token": token, "logprob": lp, "bytes": null}))
                .collect();
            json!({
                "id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
                "choices": [{"index": 0,
                             "message": {"role": "assistant", "content": FAKE_GENERATED},
                             "logprobs": {"content": [{"token": FAKE_GENERATED,
                                                       "logprob": FAKE_CHAT_LOGPROB,
                                                       "bytes": null, "top_logprobs": top}],
                                          "refusal": null},
                             "finish_reason": "length"}],
                "usage": {"prompt_tokens": FAKE_INPUT_TOKENS, "completion_tokens": 1,
                          "total_tokens": FAKE_INPUT_TOKENS + 1}
            })
        }
        WireFormat::Gemini
            if v.pointer("/generationConfig/responseLogprobs") == Some(&Value::Bool(true)) =>
        {
            // The chat alternatives above in Gemini's `logprobsResult` (the API's own maximum
            // of 20 top candidates is the caller's to respect).
            let k = v
                .pointer("/generationConfig/logprobs")
                .and_then(Value::as_u64)
                .unwrap_or(0) as usize;
            let cand = |token: &str, lp: f64, id: usize| json!({"token": token, "tokenId": id, "logProbability": lp});
            let top: Vec<Value> = top_alternatives(k, forced)
                .into_iter()
                .map(|(token, lp, id)| cand(&token, lp, id))
                .collect();
            json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": FAKE_GENERATED}]},
                                "finishReason": "MAX_TOKENS", "index": 0,
                                "avgLogprobs": FAKE_CHAT_LOGPROB,
                                "logprobsResult": {
                                    "topCandidates": [{"candidates": top}],
                                    "chosenCandidates": [cand(FAKE_GENERATED, FAKE_CHAT_LOGPROB, 1)]
                                }}],
                "usageMetadata": {"promptTokenCount": FAKE_INPUT_TOKENS, "candidatesTokenCount": 1,
                                  "totalTokenCount": FAKE_INPUT_TOKENS + 1},
                "modelVersion": "fake"
            })
        }
        _ => return None,
    };
    Some(Action::Raw {
        status: 200,
        headers: Vec::new(),
        body: body.to_string(),
    })
}
