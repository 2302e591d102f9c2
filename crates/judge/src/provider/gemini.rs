//! Gemini `POST {base}/v1beta/models/{model}:generateContent` with `x-goog-api-key`
//! (ai.google.dev, "generateContent"). A safety block — HTTP 200 with no candidates,
//! `promptFeedback.blockReason`, or a candidate finishing with SAFETY and kin — is a failure,
//! never an empty answer.

use super::{
    num, parse_json, u64_at, ApiError, Call, CallError, Finish, Prepared, Provider, ProviderConfig,
    Reply, ReplyError, Role, Usage,
};
use serde_json::{json, Map, Value};
use std::time::Duration;

/// Finish reasons that mean the answer was withheld.
const BLOCKED: [&str; 6] = [
    "SAFETY",
    "RECITATION",
    "BLOCKLIST",
    "PROHIBITED_CONTENT",
    "SPII",
    "IMAGE_SAFETY",
];

pub struct Gemini {
    config: ProviderConfig,
}

impl Gemini {
    pub fn new(config: ProviderConfig) -> Self {
        Gemini { config }
    }
}

/// `/v1beta/models/{model}:generateContent`; `models/` in front of the name is accepted.
pub fn endpoint(model: &str) -> Result<String, CallError> {
    let m = model.strip_prefix("models/").unwrap_or(model);
    if m.is_empty()
        || !m
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
    {
        return Err(CallError(format!("not a Gemini model name: {model:?}")));
    }
    Ok(format!("/v1beta/models/{m}:generateContent"))
}

/// The request body (the model is in the URL).
pub fn build_body(call: &Call) -> Result<Value, CallError> {
    let Call::Chat(chat) = call else {
        return Err(CallError(
            "Gemini has no /completions endpoint (use an OpenAI-compatible server)".into(),
        ));
    };
    let p = &chat.params;
    let contents: Vec<Value> = chat
        .messages
        .iter()
        .map(|m| {
            json!({"role": match m.role { Role::User => "user", Role::Assistant => "model" },
                   "parts": [{"text": m.content}]})
        })
        .collect();
    let mut body = Map::new();
    body.insert("contents".into(), Value::Array(contents));
    if let Some(s) = &chat.system {
        body.insert("systemInstruction".into(), json!({"parts": [{"text": s}]}));
    }
    let mut gc = Map::new();
    gc.insert("maxOutputTokens".into(), json!(p.max_tokens));
    if let Some(t) = p.temperature {
        gc.insert("temperature".into(), num(t));
    }
    if let Some(t) = p.top_p {
        gc.insert("topP".into(), num(t));
    }
    if let Some(x) = p.frequency_penalty {
        gc.insert("frequencyPenalty".into(), num(x));
    }
    if let Some(x) = p.presence_penalty {
        gc.insert("presencePenalty".into(), num(x));
    }
    if let Some(s) = p.seed {
        gc.insert("seed".into(), json!(s));
    }
    if !p.stop.is_empty() {
        gc.insert("stopSequences".into(), json!(p.stop));
    }
    body.insert("generationConfig".into(), Value::Object(gc));
    Ok(Value::Object(body))
}

/// Parses a 2xx generateContent reply (first candidate; thought parts skipped).
pub fn parse_reply(body: &str) -> Result<Reply, ReplyError> {
    let v = parse_json(body)?;
    if !v.is_object() {
        return Err(ReplyError::Malformed("not a JSON object".into()));
    }
    if let Some(r) = v
        .get("promptFeedback")
        .and_then(|f| f.get("blockReason"))
        .and_then(Value::as_str)
    {
        return Err(ReplyError::Blocked(format!("prompt blocked ({r})")));
    }
    let cand = v
        .get("candidates")
        .and_then(Value::as_array)
        .and_then(|c| c.first())
        .ok_or_else(|| ReplyError::Blocked("no candidates in the reply".into()))?;
    let reason = cand.get("finishReason").and_then(Value::as_str);
    if let Some(r) = reason.filter(|r| BLOCKED.contains(r)) {
        return Err(ReplyError::Blocked(format!("finishReason {r}")));
    }
    let parts = cand
        .get("content")
        .and_then(|c| c.get("parts"))
        .and_then(Value::as_array);
    let text: String = parts
        .into_iter()
        .flatten()
        .filter(|p| p.get("thought").and_then(Value::as_bool) != Some(true))
        .filter_map(|p| p.get("text").and_then(Value::as_str))
        .collect();
    let finish = match reason {
        Some("STOP") => Finish::Stop,
        Some("MAX_TOKENS") => Finish::Length,
        Some(other) => Finish::Other(other.to_string()),
        None => Finish::Other("none".into()),
    };
    let usage = Usage {
        input_tokens: u64_at(&v, &["usageMetadata", "promptTokenCount"]),
        // Thinking tokens are billed as output.
        output_tokens: u64_at(&v, &["usageMetadata", "candidatesTokenCount"])
            + u64_at(&v, &["usageMetadata", "thoughtsTokenCount"]),
    };
    Ok(Reply {
        text,
        finish,
        usage,
        logprobs: None,
    })
}

/// `{"error":{"code","message","status"}}`.
pub fn parse_error(status: u16, body: &str) -> ApiError {
    let (e, message) = super::error_object(body);
    ApiError {
        status,
        code: super::str_field(e.as_ref(), "status"),
        message,
        retry_delay: e.as_ref().and_then(retry_info),
    }
}

/// `details[{"@type": "...google.rpc.RetryInfo", "retryDelay": "37s"}]` of a 429: Gemini says
/// how long to wait in the body, not in a `retry-after` header.
fn retry_info(error: &Value) -> Option<Duration> {
    let d = error
        .get("details")?
        .as_array()?
        .iter()
        .find(|d| {
            d.get("@type")
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("google.rpc.RetryInfo"))
        })?
        .get("retryDelay")?
        .as_str()?;
    let secs: f64 = d.strip_suffix('s')?.parse().ok()?;
    (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs))
}

impl Provider for Gemini {
    fn config(&self) -> &ProviderConfig {
        &self.config
    }

    fn prepare(&self, call: &Call) -> Result<Prepared, CallError> {
        Ok(Prepared {
            endpoint: endpoint(&self.config.model)?,
            body: build_body(call)?,
        })
    }

    fn auth_headers(&self) -> Vec<(String, String)> {
        self.config
            .key
            .iter()
            .map(|k| ("x-goog-api-key".to_string(), k.expose().to_string()))
            .collect()
    }

    fn parse_reply(&self, _call: &Call, body: &str) -> Result<Reply, ReplyError> {
        parse_reply(body)
    }

    fn parse_error(&self, status: u16, body: &str) -> ApiError {
        parse_error(status, body)
    }
}
