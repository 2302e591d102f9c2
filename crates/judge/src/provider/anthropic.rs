//! Anthropic Messages API: `POST {base}/v1/messages`, `x-api-key`, `anthropic-version: 2023-06-01`
//! (docs.anthropic.com, "Messages"). Not sent: penalties and seed (the API has none); `top_p` is
//! sent only without `temperature` (newer models reject both together).

use super::{
    num, parse_json, u64_at, ApiError, Call, CallError, Finish, Prepared, Provider, ProviderConfig,
    Reply, ReplyError, Role, Usage,
};
use serde_json::{json, Map, Value};

pub const API_VERSION: &str = "2023-06-01";

pub struct Anthropic {
    config: ProviderConfig,
}

impl Anthropic {
    pub fn new(config: ProviderConfig) -> Self {
        Anthropic { config }
    }
}

/// The request body for `model`.
pub fn build_body(model: &str, call: &Call) -> Result<Value, CallError> {
    let Call::Chat(chat) = call else {
        return Err(CallError(
            "Anthropic has no /completions endpoint (use an OpenAI-compatible server)".into(),
        ));
    };
    let p = &chat.params;
    let mut body = Map::new();
    body.insert("model".into(), json!(model));
    body.insert("max_tokens".into(), json!(p.max_tokens));
    if let Some(s) = &chat.system {
        body.insert("system".into(), json!(s));
    }
    let messages: Vec<Value> = chat
        .messages
        .iter()
        .map(|m| {
            json!({"role": match m.role { Role::User => "user", Role::Assistant => "assistant" },
                   "content": m.content})
        })
        .collect();
    body.insert("messages".into(), Value::Array(messages));
    match (p.temperature, p.top_p) {
        (Some(t), _) => {
            body.insert("temperature".into(), num(t));
        }
        (None, Some(tp)) => {
            body.insert("top_p".into(), num(tp));
        }
        (None, None) => {}
    }
    if !p.stop.is_empty() {
        body.insert("stop_sequences".into(), json!(p.stop));
    }
    Ok(Value::Object(body))
}

/// Parses a 2xx Messages reply: the text blocks joined, `stop_reason`, `usage`.
pub fn parse_reply(body: &str) -> Result<Reply, ReplyError> {
    let v = parse_json(body)?;
    let content = v
        .get("content")
        .and_then(Value::as_array)
        .ok_or_else(|| ReplyError::Malformed("no \"content\" list".into()))?;
    let text: String = content
        .iter()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
        .filter_map(|b| b.get("text").and_then(Value::as_str))
        .collect();
    let finish = match v.get("stop_reason").and_then(Value::as_str) {
        Some("end_turn") | Some("stop_sequence") => Finish::Stop,
        Some("max_tokens") => Finish::Length,
        Some("refusal") => Finish::Refusal,
        Some(other) => Finish::Other(other.to_string()),
        None => Finish::Other("none".into()),
    };
    // Prompt-cache writes and reads are prompt tokens too (billed at other rates: the price table
    // counts them as plain input, an over-estimate for cache reads).
    let usage = Usage {
        input_tokens: u64_at(&v, &["usage", "input_tokens"])
            + u64_at(&v, &["usage", "cache_creation_input_tokens"])
            + u64_at(&v, &["usage", "cache_read_input_tokens"]),
        output_tokens: u64_at(&v, &["usage", "output_tokens"]),
    };
    Ok(Reply {
        text,
        finish,
        usage,
        logprobs: None,
    })
}

/// `{"type":"error","error":{"type","message"}}`.
pub fn parse_error(status: u16, body: &str) -> ApiError {
    let (e, message) = super::error_object(body);
    ApiError {
        status,
        code: super::str_field(e.as_ref(), "type"),
        message,
        retry_delay: None,
    }
}

impl Provider for Anthropic {
    fn config(&self) -> &ProviderConfig {
        &self.config
    }

    fn prepare(&self, call: &Call) -> Result<Prepared, CallError> {
        Ok(Prepared {
            endpoint: "/v1/messages".into(),
            body: build_body(&self.config.model, call)?,
        })
    }

    fn auth_headers(&self) -> Vec<(String, String)> {
        let mut h = vec![("anthropic-version".to_string(), API_VERSION.to_string())];
        if let Some(k) = &self.config.key {
            h.push(("x-api-key".into(), k.expose().to_string()));
        }
        if self.config.browser {
            h.push((
                "anthropic-dangerous-direct-browser-access".into(),
                "true".into(),
            ));
        }
        h
    }

    fn parse_reply(&self, _call: &Call, body: &str) -> Result<Reply, ReplyError> {
        parse_reply(body)
    }

    fn parse_error(&self, status: u16, body: &str) -> ApiError {
        parse_error(status, body)
    }
}
