//! Gemini `POST {base}/v1beta/models/{model}:generateContent` with `x-goog-api-key`
//! (ai.google.dev, "generateContent"). A safety block — HTTP 200 with no candidates,
//! `promptFeedback.blockReason`, or a candidate finishing with SAFETY and kin — is a failure,
//! never an empty answer.
//!
//! Log-probabilities (the utility task's bound mode): a chat call with `top_logprobs: Some(N)`
//! sends `generationConfig.responseLogprobs: true` and `generationConfig.logprobs: N`, and the
//! reply's `candidates[0].logprobsResult` — `chosenCandidates[{token, tokenId, logProbability}]`
//! and `topCandidates[{candidates: [...]}]` ("sorted by log probability in descending order"),
//! both one entry per decoding step — is read into [`Logprobs`] as OpenAI chat's `logprobs`
//! are. Field names and the range of `logprobs` ("must be in the range of [0, 20]") are those of
//! the Gemini API reference (ai.google.dev/api/generate-content: GenerationConfig, Candidate,
//! LogprobsResult) and the v1beta discovery document of generativelanguage.googleapis.com.
//!
//! Limits, stated: Gemini serves log-probabilities for some models only (others answer 400, or
//! leave `logprobsResult` out: an error here, never a made-up value); and the reference does not
//! say whether a thinking model's thought tokens appear among the decoding steps, so a reply
//! that carries thoughts (`thought` parts or `thoughtsTokenCount`) is refused when
//! log-probabilities were asked for, rather than read as if its first step were the answer's.

use super::{
    num, parse_json, u64_at, ApiError, Call, CallError, Finish, Logprobs, Prepared, Provider,
    ProviderConfig, Reply, ReplyError, Role, Usage,
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

/// The most top candidates per step the API returns (its reference: `logprobs` in [0, 20]); a
/// request for more is clamped to this, and one for 0 asks for 1 (0 would list none, and the
/// utility task reads the alternatives).
pub const MAX_LOGPROBS: u32 = 20;

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
    if let Some(n) = chat.top_logprobs {
        gc.insert("responseLogprobs".into(), json!(true));
        gc.insert("logprobs".into(), json!(n.clamp(1, MAX_LOGPROBS)));
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
    let logprobs = match cand.get("logprobsResult") {
        None | Some(Value::Null) => None,
        Some(lr) => Some(parse_logprobs_result(lr)?),
    };
    Ok(Reply {
        text,
        finish,
        usage,
        logprobs,
    })
}

/// [`parse_reply`] for `call`: when the call asked for log-probabilities, a reply without them,
/// or with thoughts before the answer, is an error (see the module documentation).
pub fn parse_reply_for(call: &Call, body: &str) -> Result<Reply, ReplyError> {
    let reply = parse_reply(body)?;
    let asked = matches!(call, Call::Chat(c) if c.top_logprobs.is_some());
    if !asked {
        return Ok(reply);
    }
    if reply.logprobs.is_none() {
        return Err(ReplyError::Unusable(
            "this model returned no logprobs (no candidates[0].logprobsResult although the \
             request set responseLogprobs): Gemini serves them only for some models"
                .into(),
        ));
    }
    if has_thoughts(body) {
        return Err(ReplyError::Unusable(
            "the reply carries thinking (thought parts or usageMetadata.thoughtsTokenCount): \
             Gemini does not document whether thought tokens are among its logprobs' decoding \
             steps, so the first step cannot be taken for the answer's first token; use a \
             model that does not think"
                .into(),
        ));
    }
    Ok(reply)
}

fn has_thoughts(body: &str) -> bool {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return false;
    };
    let parts = v
        .pointer("/candidates/0/content/parts")
        .and_then(Value::as_array);
    u64_at(&v, &["usageMetadata", "thoughtsTokenCount"]) > 0
        || parts
            .into_iter()
            .flatten()
            .any(|p| p.get("thought").and_then(Value::as_bool) == Some(true))
}

/// `logprobsResult{chosenCandidates, topCandidates}` as [`Logprobs`]: the chosen token and its
/// log-probability per step, and the step's listed alternatives as given (the chosen token is
/// not added to them when absent: the lowest listed value bounds the unlisted ones only when
/// the list is the true top N).
fn parse_logprobs_result(lr: &Value) -> Result<Logprobs, ReplyError> {
    const AT: &str = "candidates[0].logprobsResult";
    let bad = |place: String, why: &str| ReplyError::Malformed(format!("{place}: {why}"));
    if !lr.is_object() {
        return Err(bad(AT.into(), "not an object"));
    }
    // Protocol-buffer JSON leaves out empty lists and zero numbers (proto3 JSON mapping): an
    // absent list is empty, an absent logProbability is 0 (probability 1).
    let list = |v: &Value, key: &str, place: &str| -> Result<Vec<Value>, ReplyError> {
        match v.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(a)) => Ok(a.clone()),
            Some(_) => Err(bad(format!("{place}.{key}"), "not a list")),
        }
    };
    let entry = |e: &Value, place: String| -> Result<(String, f64), ReplyError> {
        if !e.is_object() {
            return Err(bad(place, "not an object"));
        }
        let token = match e.get("token") {
            Some(Value::String(t)) => t.clone(),
            Some(_) => return Err(bad(format!("{place}.token"), "not a string")),
            None => return Err(bad(place, "no \"token\"")),
        };
        let lp = match e.get("logProbability") {
            None => 0.0,
            Some(x) => x
                .as_f64()
                .ok_or_else(|| bad(format!("{place}.logProbability"), "not a number"))?,
        };
        Ok((token, lp))
    };
    let chosen = list(lr, "chosenCandidates", AT)?;
    let top = list(lr, "topCandidates", AT)?;
    if !top.is_empty() && top.len() != chosen.len() {
        return Err(bad(
            AT.into(),
            &format!(
                "{} chosenCandidates but {} topCandidates (both are one per decoding step)",
                chosen.len(),
                top.len()
            ),
        ));
    }
    let mut out = Logprobs::default();
    for (i, c) in chosen.iter().enumerate() {
        let (token, lp) = entry(c, format!("{AT}.chosenCandidates[{i}]"))?;
        out.tokens.push(token);
        out.token_logprobs.push(Some(lp));
    }
    for (i, step) in top.iter().enumerate() {
        let place = format!("{AT}.topCandidates[{i}]");
        if !step.is_object() {
            return Err(bad(place, "not an object"));
        }
        let alternatives = list(step, "candidates", &place)?
            .iter()
            .enumerate()
            .map(|(j, c)| entry(c, format!("{place}.candidates[{j}]")))
            .collect::<Result<Vec<_>, _>>()?;
        out.top_logprobs.push(alternatives);
    }
    Ok(out)
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

    fn parse_reply(&self, call: &Call, body: &str) -> Result<Reply, ReplyError> {
        parse_reply_for(call, body)
    }

    fn parse_error(&self, status: u16, body: &str) -> ApiError {
        parse_error(status, body)
    }
}
