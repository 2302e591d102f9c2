//! OpenAI Chat Completions `POST {base}/chat/completions` (`Authorization: Bearer`), for OpenAI and
//! OpenAI-compatible servers (vLLM, llama.cpp's server, Ollama `/v1`), plus the legacy
//! `POST {base}/completions` with `logprobs`/`echo` that only compatible servers still serve for
//! first-token probabilities (platform.openai.com API reference; REFERENCE.md §8).
//!
//! OpenAI's own endpoint gets `max_completion_tokens` (its reasoning models reject `max_tokens`);
//! compatible servers get `max_tokens`, which all of them read.

use super::{
    num, parse_json, u64_at, ApiError, Call, CallError, Finish, Logprobs, Prepared, Provider,
    ProviderConfig, ProviderKind, Reply, ReplyError, Role, Usage,
};
use serde_json::{json, Map, Value};

pub struct OpenAi {
    config: ProviderConfig,
}

impl OpenAi {
    pub fn new(config: ProviderConfig) -> Self {
        OpenAi { config }
    }
}

/// The chat body; `official` selects `max_completion_tokens` over `max_tokens`.
pub fn build_chat_body(model: &str, official: bool, call: &Call) -> Result<Value, CallError> {
    let Call::Chat(chat) = call else {
        return Err(CallError("not a chat call".into()));
    };
    let p = &chat.params;
    let mut messages = Vec::new();
    if let Some(s) = &chat.system {
        messages.push(json!({"role": "system", "content": s}));
    }
    for m in &chat.messages {
        let role = match m.role {
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        messages.push(json!({"role": role, "content": m.content}));
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("messages".into(), Value::Array(messages));
    let max_key = if official {
        "max_completion_tokens"
    } else {
        "max_tokens"
    };
    body.insert(max_key.into(), json!(p.max_tokens));
    let opt = [
        ("temperature", p.temperature),
        ("top_p", p.top_p),
        ("frequency_penalty", p.frequency_penalty),
        ("presence_penalty", p.presence_penalty),
    ];
    for (k, v) in opt {
        if let Some(v) = v {
            body.insert(k.into(), num(v));
        }
    }
    if let Some(s) = p.seed {
        body.insert("seed".into(), json!(s));
    }
    if !p.stop.is_empty() {
        body.insert("stop".into(), json!(p.stop));
    }
    if let Some(n) = chat.top_logprobs {
        body.insert("logprobs".into(), json!(true));
        body.insert("top_logprobs".into(), json!(n));
    }
    Ok(Value::Object(body))
}

/// The `/completions` body.
pub fn build_completion_body(model: &str, call: &Call) -> Result<Value, CallError> {
    let Call::Completion(c) = call else {
        return Err(CallError("not a completion call".into()));
    };
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("prompt".into(), json!(c.prompt));
    body.insert("max_tokens".into(), json!(c.max_tokens));
    if let Some(t) = c.temperature {
        body.insert("temperature".into(), num(t));
    }
    if let Some(n) = c.logprobs {
        body.insert("logprobs".into(), json!(n));
    }
    if c.echo {
        body.insert("echo".into(), json!(true));
    }
    Ok(Value::Object(body))
}

fn finish(reason: Option<&str>) -> Finish {
    match reason {
        Some("stop") => Finish::Stop,
        Some("length") => Finish::Length,
        Some("content_filter") => Finish::Refusal,
        Some(o) => Finish::Other(o.to_string()),
        None => Finish::Other("none".into()),
    }
}

fn usage(v: &Value) -> Usage {
    Usage {
        input_tokens: u64_at(v, &["usage", "prompt_tokens"]),
        output_tokens: u64_at(v, &["usage", "completion_tokens"]),
    }
}

fn first_choice(v: &Value) -> Result<&Value, ReplyError> {
    v.get("choices")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| ReplyError::Malformed("no \"choices\" in the reply".into()))
}

/// Parses a 2xx chat reply. A `refusal` without content is a refusal, not an empty answer.
pub fn parse_chat_reply(body: &str) -> Result<Reply, ReplyError> {
    let v = parse_json(body)?;
    let c = first_choice(&v)?;
    let msg = c
        .get("message")
        .ok_or_else(|| ReplyError::Malformed("choice without \"message\"".into()))?;
    let mut fin = finish(c.get("finish_reason").and_then(Value::as_str));
    let text = match msg.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => {
            if msg.get("refusal").and_then(Value::as_str).is_some() {
                fin = Finish::Refusal;
            }
            String::new()
        }
        Some(_) => return Err(ReplyError::Malformed("\"content\" is not a string".into())),
    };
    let logprobs = match c.get("logprobs") {
        None | Some(Value::Null) => None,
        Some(lp) => Some(parse_chat_logprobs(lp)?),
    };
    Ok(Reply {
        text,
        finish: fin,
        usage: usage(&v),
        logprobs,
    })
}

/// A chat reply's `logprobs.content[{token, logprob, top_logprobs: [{token, logprob}]}]` in the
/// `/completions` shape (one position per generated token).
fn parse_chat_logprobs(lp: &Value) -> Result<Logprobs, ReplyError> {
    let bad = |w: &str| ReplyError::Malformed(format!("logprobs: {w}"));
    let entry = |e: &Value| -> Result<(String, f64), ReplyError> {
        let token = e
            .get("token")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("an entry without a \"token\" string"))?;
        let logprob = e
            .get("logprob")
            .and_then(Value::as_f64)
            .ok_or_else(|| bad("an entry without a numeric \"logprob\""))?;
        Ok((token.to_string(), logprob))
    };
    let content = match lp.get("content") {
        Some(Value::Array(a)) => a.as_slice(),
        Some(Value::Null) | None => &[],
        Some(_) => return Err(bad("\"content\" is not a list")),
    };
    let mut out = Logprobs::default();
    for position in content {
        let (token, logprob) = entry(position)?;
        out.tokens.push(token);
        out.token_logprobs.push(Some(logprob));
        let top = match position.get("top_logprobs") {
            Some(Value::Array(a)) => a.iter().map(entry).collect::<Result<Vec<_>, _>>()?,
            Some(Value::Null) | None => Vec::new(),
            Some(_) => return Err(bad("\"top_logprobs\" is not a list")),
        };
        out.top_logprobs.push(top);
    }
    Ok(out)
}

/// Parses a 2xx `/completions` reply with its `logprobs` when present.
pub fn parse_completion_reply(body: &str) -> Result<Reply, ReplyError> {
    let v = parse_json(body)?;
    let c = first_choice(&v)?;
    let text = c
        .get("text")
        .and_then(Value::as_str)
        .ok_or_else(|| ReplyError::Malformed("choice without \"text\"".into()))?
        .to_string();
    let logprobs = match c.get("logprobs") {
        None | Some(Value::Null) => None,
        Some(lp) => Some(parse_logprobs(lp)?),
    };
    Ok(Reply {
        text,
        finish: finish(c.get("finish_reason").and_then(Value::as_str)),
        usage: usage(&v),
        logprobs,
    })
}

fn parse_logprobs(lp: &Value) -> Result<Logprobs, ReplyError> {
    let bad = |w: &str| ReplyError::Malformed(format!("logprobs: {w}"));
    let tokens: Vec<String> = lp
        .get("tokens")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no \"tokens\" list"))?
        .iter()
        .map(|t| {
            t.as_str()
                .map(str::to_string)
                .ok_or_else(|| bad("a token is not a string"))
        })
        .collect::<Result<_, _>>()?;
    let token_logprobs: Vec<Option<f64>> = lp
        .get("token_logprobs")
        .and_then(Value::as_array)
        .ok_or_else(|| bad("no \"token_logprobs\" list"))?
        .iter()
        .map(Value::as_f64)
        .collect();
    if token_logprobs.len() != tokens.len() {
        return Err(bad("tokens and token_logprobs differ in length"));
    }
    let top_logprobs = match lp.get("top_logprobs") {
        Some(Value::Array(rows)) => rows
            .iter()
            .map(|row| match row {
                Value::Object(m) => m
                    .iter()
                    .map(|(k, v)| {
                        v.as_f64()
                            .map(|x| (k.clone(), x))
                            .ok_or_else(|| bad("a top logprob is not a number"))
                    })
                    .collect::<Result<Vec<_>, _>>(),
                Value::Null => Ok(Vec::new()),
                _ => Err(bad("a top_logprobs entry is not an object")),
            })
            .collect::<Result<Vec<_>, _>>()?,
        _ => Vec::new(),
    };
    Ok(Logprobs {
        tokens,
        token_logprobs,
        top_logprobs,
    })
}

/// `{"error":{"message","type","code"}}`; `code` (e.g. `insufficient_quota`) wins over `type`.
pub fn parse_error(status: u16, body: &str) -> ApiError {
    let (e, message) = super::error_object(body);
    ApiError {
        status,
        code: super::str_field(e.as_ref(), "code").or_else(|| super::str_field(e.as_ref(), "type")),
        message,
        retry_delay: None,
    }
}

/// An echo reply cut to its end: the last tokens whose text covers the completion (the last
/// `completion_tokens` tokens, or one) and `tail` more bytes (the appended label the task reads
/// back), each logprobs list cut alike, `text` their concatenation (so the completion still ends
/// it), usage kept. When the server's tokens align with the label (the only case the task
/// accepts) the kept tokens are exactly the label and the completion, and the reply parses to the
/// same values. `None` when the body is not the shape [`parse_logprobs`] reads (it is then kept
/// whole: a reply that does not parse is stored so that it is never bought again).
fn slim_echo(body: &str, tail: usize) -> Option<String> {
    let mut v: Value = serde_json::from_str(body).ok()?;
    let completion = v
        .get("usage")
        .and_then(|u| u.get("completion_tokens"))
        .and_then(Value::as_u64)
        .map_or(1, |c| c as usize);
    let choice = v.get_mut("choices")?.as_array_mut()?.get_mut(0)?;
    let lp = choice.get_mut("logprobs")?.as_object_mut()?;
    let tokens: Vec<&str> = lp
        .get("tokens")?
        .as_array()?
        .iter()
        .map(Value::as_str)
        .collect::<Option<_>>()?;
    let n = tokens.len();
    let mut from = n;
    let mut need = tail;
    while from > 0 {
        if n - from < completion {
            from -= 1;
            continue;
        }
        if need == 0 {
            break;
        }
        from -= 1;
        need = need.saturating_sub(tokens[from].len());
    }
    let text: String = tokens[from..].concat();
    for list in ["tokens", "token_logprobs", "top_logprobs", "text_offset"] {
        if let Some(Value::Array(a)) = lp.get_mut(list) {
            if a.len() != n {
                return None;
            }
            a.drain(..from);
        }
    }
    if let Some(offsets) = lp.get_mut("text_offset").and_then(Value::as_array_mut) {
        let base = offsets.first().and_then(Value::as_u64).unwrap_or(0);
        for o in offsets.iter_mut() {
            *o = json!(o.as_u64().unwrap_or(base).saturating_sub(base));
        }
    }
    choice
        .as_object_mut()?
        .insert("text".into(), Value::String(text));
    serde_json::to_string(&v).ok()
}

impl Provider for OpenAi {
    fn config(&self) -> &ProviderConfig {
        &self.config
    }

    fn prepare(&self, call: &Call) -> Result<Prepared, CallError> {
        let official = self.config.kind == ProviderKind::OpenAi;
        match call {
            Call::Chat(_) => Ok(Prepared {
                endpoint: "/chat/completions".into(),
                body: build_chat_body(&self.config.model, official, call)?,
            }),
            Call::Completion(_) => Ok(Prepared {
                endpoint: "/completions".into(),
                body: build_completion_body(&self.config.model, call)?,
            }),
        }
    }

    fn auth_headers(&self) -> Vec<(String, String)> {
        self.config
            .key
            .iter()
            .map(|k| {
                (
                    "authorization".to_string(),
                    format!("Bearer {}", k.expose()),
                )
            })
            .collect()
    }

    fn parse_reply(&self, call: &Call, body: &str) -> Result<Reply, ReplyError> {
        match call {
            Call::Chat(_) => parse_chat_reply(body),
            Call::Completion(_) => parse_completion_reply(body),
        }
    }

    fn cache_body(&self, call: &Call, body: &str) -> String {
        match call {
            Call::Completion(c) if c.echo => c
                .echo_tail
                .and_then(|tail| slim_echo(body, tail))
                .unwrap_or_else(|| body.to_string()),
            _ => body.to_string(),
        }
    }

    fn parse_error(&self, status: u16, body: &str) -> ApiError {
        parse_error(status, body)
    }
}
