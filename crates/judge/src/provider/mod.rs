//! Providers: one module per wire format, all behind [`Provider`]. Building a request body and
//! parsing a reply are pure functions (unit-tested and fuzzed without a network); only
//! [`Provider::http_request`] sees the key, and only to put it in a header.

pub mod anthropic;
pub mod gemini;
pub mod openai;

use crate::http::HttpRequest;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;
use std::str::FromStr;
use std::time::Duration;

/// Which wire format and default endpoint.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderKind {
    Anthropic,
    Gemini,
    #[serde(rename = "openai")]
    OpenAi,
    #[serde(rename = "openai-compatible")]
    OpenAiCompatible,
}

impl ProviderKind {
    pub const ALL: [ProviderKind; 4] = [
        ProviderKind::Anthropic,
        ProviderKind::Gemini,
        ProviderKind::OpenAi,
        ProviderKind::OpenAiCompatible,
    ];

    /// The name used on the command line, in price tables and in cache keys.
    pub fn name(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "anthropic",
            ProviderKind::Gemini => "gemini",
            ProviderKind::OpenAi => "openai",
            ProviderKind::OpenAiCompatible => "openai-compatible",
        }
    }

    /// The public endpoint; `None` for OpenAI-compatible servers (a base URL is required).
    pub fn default_base_url(self) -> Option<&'static str> {
        match self {
            ProviderKind::Anthropic => Some("https://api.anthropic.com"),
            ProviderKind::Gemini => Some("https://generativelanguage.googleapis.com"),
            ProviderKind::OpenAi => Some("https://api.openai.com/v1"),
            ProviderKind::OpenAiCompatible => None,
        }
    }

    /// The environment variable the CLI reads the key from (`None`: the key is optional and
    /// taken from OPENAI_API_KEY only when set).
    pub fn key_env(self) -> &'static str {
        match self {
            ProviderKind::Anthropic => "ANTHROPIC_API_KEY",
            ProviderKind::Gemini => "GEMINI_API_KEY",
            ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => "OPENAI_API_KEY",
        }
    }

    /// Whether a request without a key is refused before sending.
    pub fn key_required(self) -> bool {
        !matches!(self, ProviderKind::OpenAiCompatible)
    }
}

impl fmt::Display for ProviderKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for ProviderKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        ProviderKind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                format!("unknown provider {s:?} (anthropic, gemini, openai, openai-compatible)")
            })
    }
}

/// An API key. Prints as `<redacted>` in `Debug` and `Display`; [`ApiKey::expose`] is called only
/// where a header is built.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into().trim().to_string())
    }
    pub fn expose(&self) -> &str {
        &self.0
    }
    /// `text` with every occurrence of the key replaced (error messages echo what they got).
    pub fn scrub(&self, text: &str) -> String {
        if self.0.len() < 4 {
            return text.to_string();
        }
        text.replace(&self.0, "<redacted>")
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// Where and as whom to call.
#[derive(Clone, Debug)]
pub struct ProviderConfig {
    pub kind: ProviderKind,
    /// Without a trailing slash; OpenAI's includes `/v1` as in the OpenAI SDKs.
    pub base_url: String,
    pub model: String,
    pub key: Option<ApiKey>,
    /// Requests come from a browser page (Anthropic then needs
    /// `anthropic-dangerous-direct-browser-access: true`).
    pub browser: bool,
}

impl ProviderConfig {
    /// A config on the provider's default base URL (or `base_url` when given).
    pub fn new(
        kind: ProviderKind,
        model: impl Into<String>,
        base_url: Option<&str>,
        key: Option<ApiKey>,
    ) -> Result<Self, String> {
        let base = match (base_url, kind.default_base_url()) {
            (Some(b), _) => b,
            (None, Some(d)) => d,
            (None, None) => return Err(format!("provider {kind} needs a base URL")),
        };
        let base = base.trim().trim_end_matches('/').to_string();
        if !(base.starts_with("http://") || base.starts_with("https://")) {
            return Err(format!(
                "base URL {base:?} must start with http:// or https://"
            ));
        }
        let model = model.into();
        if model.trim().is_empty() {
            return Err("the model name is empty".into());
        }
        if kind.key_required() && key.is_none() {
            return Err(format!(
                "provider {kind} needs an API key ({})",
                kind.key_env()
            ));
        }
        Ok(ProviderConfig {
            kind,
            base_url: base,
            model,
            key,
            browser: false,
        })
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    User,
    Assistant,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Message {
    pub role: Role,
    pub content: String,
}

/// Generation parameters. A provider drops what its API does not take (Anthropic: penalties and
/// seed) — the dropped fields are documented in each module.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GenParams {
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    pub top_p: Option<f32>,
    pub frequency_penalty: Option<f32>,
    pub presence_penalty: Option<f32>,
    pub seed: Option<u64>,
    pub stop: Vec<String>,
}

impl Default for GenParams {
    fn default() -> Self {
        GenParams {
            max_tokens: 256,
            temperature: Some(0.0),
            top_p: None,
            frequency_penalty: None,
            presence_penalty: None,
            seed: None,
            stop: Vec::new(),
        }
    }
}

/// A chat turn sequence with an optional system prompt.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    pub system: Option<String>,
    pub messages: Vec<Message>,
    pub params: GenParams,
    /// OpenAI chat: `logprobs: true, top_logprobs: N` (N ≤ 20); Gemini:
    /// `generationConfig.responseLogprobs: true, logprobs: N` (N clamped to 1..=20) — the first
    /// token's alternatives for utilities without a local chat template. Anthropic has no such
    /// field. `None` everywhere else (the body, hence the cache key, is then unchanged).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub top_logprobs: Option<u32>,
}

/// OpenAI's legacy `/completions` (OpenAI-compatible servers): a raw prompt, optionally echoed
/// with per-token log-probabilities (first-token probabilities for utilities, part 2).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompletionRequest {
    pub prompt: String,
    pub max_tokens: u32,
    pub temperature: Option<f32>,
    /// Number of top log-probabilities per position (`logprobs` of the API).
    pub logprobs: Option<u32>,
    pub echo: bool,
    /// With `echo`: how many bytes at the end of `prompt` the task reads back (the appended
    /// label). The cache keeps only the echoed tokens that cover them and the completion, never
    /// the rest of the prompt (the user's passages): [`Provider::cache_body`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echo_tail: Option<usize>,
}

/// What a task asks of a provider.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Call {
    Chat(ChatRequest),
    Completion(CompletionRequest),
}

impl Call {
    /// The output-token ceiling (for estimates and budgets).
    pub fn max_tokens(&self) -> u32 {
        match self {
            Call::Chat(c) => c.params.max_tokens,
            Call::Completion(c) => c.max_tokens,
        }
    }

    /// Characters of prompt text (for the token estimate).
    pub fn prompt_chars(&self) -> usize {
        match self {
            Call::Chat(c) => {
                c.system.as_deref().map_or(0, |s| s.chars().count())
                    + c.messages
                        .iter()
                        .map(|m| m.content.chars().count())
                        .sum::<usize>()
            }
            Call::Completion(c) => c.prompt.chars().count(),
        }
    }
}

/// Why generation stopped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Finish {
    /// Natural end or a stop sequence.
    Stop,
    /// Cut by max_tokens (Anthropic `max_tokens`, OpenAI `length`, Gemini `MAX_TOKENS`).
    Length,
    /// The model refused (Anthropic `refusal`, OpenAI `content_filter`).
    Refusal,
    /// Anything else, verbatim.
    Other(String),
}

/// Billed tokens of one reply. Input includes cached-prompt tokens; output includes thinking.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, o: Usage) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
    }
}

/// Per-token log-probabilities of a reply: `/completions`, OpenAI chat `logprobs`, Gemini
/// `logprobsResult` (one position per token).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Logprobs {
    pub tokens: Vec<String>,
    /// `None` where the server gives null (the first echoed token).
    pub token_logprobs: Vec<Option<f64>>,
    /// Top alternatives per position, when asked for.
    pub top_logprobs: Vec<Vec<(String, f64)>>,
}

/// A successful reply, provider-independent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    pub text: String,
    pub finish: Finish,
    pub usage: Usage,
    pub logprobs: Option<Logprobs>,
}

/// The endpoint and JSON body of a call: everything that identifies the request except the key.
/// The cache key is computed from this.
#[derive(Clone, Debug, PartialEq)]
pub struct Prepared {
    /// Path after the base URL, starting with `/`.
    pub endpoint: String,
    pub body: Value,
}

/// A call the provider cannot make.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CallError(pub String);

/// A 2xx body that is not a usable answer.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ReplyError {
    /// Not JSON, or JSON without the fields of the wire format.
    #[error("malformed reply: {0}")]
    Malformed(String),
    /// Blocked by the provider's safety filter (Gemini: no candidates, or finishReason SAFETY...).
    #[error("blocked by the provider: {0}")]
    Blocked(String),
    /// Well-formed, but without what the request asked for (Gemini: no `logprobsResult` although
    /// `responseLogprobs` was sent).
    #[error("{0}")]
    Unusable(String),
}

/// A non-2xx answer, classified.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiError {
    pub status: u16,
    /// The provider's error type or code (`rate_limit_error`, `insufficient_quota`,
    /// `RESOURCE_EXHAUSTED`, ...).
    pub code: Option<String>,
    pub message: String,
    /// A wait the body asks for (Gemini's `RetryInfo.retryDelay`); headers are read by the
    /// runner.
    pub retry_delay: Option<Duration>,
}

impl fmt::Display for ApiError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "HTTP {}", self.status)?;
        if let Some(c) = &self.code {
            write!(f, " {c}")?;
        }
        if !self.message.is_empty() {
            write!(f, ": {}", self.message)?;
        }
        Ok(())
    }
}

/// One provider's wire format.
pub trait Provider {
    fn config(&self) -> &ProviderConfig;

    /// Endpoint and body for `call`. Pure: no key, no I/O.
    fn prepare(&self, call: &Call) -> Result<Prepared, CallError>;

    /// The provider's authentication and version headers (the only place a key goes).
    fn auth_headers(&self) -> Vec<(String, String)>;

    /// Parses a 2xx body.
    fn parse_reply(&self, call: &Call, body: &str) -> Result<Reply, ReplyError>;

    /// Parses a non-2xx body (never fails: an unreadable body keeps its first 300 characters).
    fn parse_error(&self, status: u16, body: &str) -> ApiError;

    /// What the cache keeps of a 2xx reply to `call`: what resuming needs, no more. The runner
    /// parses this same text, fresh or cached, so a resumed run cannot differ from a fresh one.
    /// Default: the body as received. An echo reply repeats the whole prompt (the user's
    /// passages), so the OpenAI format keeps only the tokens that cover
    /// [`CompletionRequest::echo_tail`] and the completion.
    fn cache_body(&self, _call: &Call, body: &str) -> String {
        body.to_string()
    }

    /// The full HTTP request: `POST base_url + endpoint` with JSON and auth headers.
    fn http_request(&self, prepared: &Prepared, timeout: Option<Duration>) -> HttpRequest {
        let mut headers = vec![("content-type".to_string(), "application/json".to_string())];
        headers.extend(self.auth_headers());
        HttpRequest {
            method: "POST".into(),
            url: format!("{}{}", self.config().base_url, prepared.endpoint),
            headers,
            body: prepared.body.to_string(),
            timeout,
        }
    }
}

/// The provider for `config.kind`.
pub fn provider(config: ProviderConfig) -> Box<dyn Provider> {
    match config.kind {
        ProviderKind::Anthropic => Box::new(anthropic::Anthropic::new(config)),
        ProviderKind::Gemini => Box::new(gemini::Gemini::new(config)),
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => {
            Box::new(openai::OpenAi::new(config))
        }
    }
}

/// The parser of `kind`'s 2xx replies for `call`, without a config (for fuzzing and tests).
pub fn parse_reply(kind: ProviderKind, call: &Call, body: &str) -> Result<Reply, ReplyError> {
    match kind {
        ProviderKind::Anthropic => anthropic::parse_reply(body),
        ProviderKind::Gemini => gemini::parse_reply_for(call, body),
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => match call {
            Call::Chat(_) => openai::parse_chat_reply(body),
            Call::Completion(_) => openai::parse_completion_reply(body),
        },
    }
}

// Helpers shared by the wire formats.

pub(crate) fn parse_json(body: &str) -> Result<Value, ReplyError> {
    serde_json::from_str(body).map_err(|e| {
        ReplyError::Malformed(format!(
            "not JSON (line {}, column {}): {e}",
            e.line(),
            e.column()
        ))
    })
}

pub(crate) fn u64_at(v: &Value, path: &[&str]) -> u64 {
    let mut cur = v;
    for p in path {
        match cur.get(p) {
            Some(x) => cur = x,
            None => return 0,
        }
    }
    cur.as_u64().unwrap_or(0)
}

/// An error body's message when it is not the provider's JSON: its first 300 characters.
pub fn body_excerpt(body: &str) -> String {
    let t = body.trim();
    let mut s: String = t.chars().take(300).collect();
    if s.len() < t.len() {
        s.push('…');
    }
    s
}

/// The `{"error": {...}}` object the three APIs wrap their errors in (`None` when the body is
/// not such JSON), and its `message` — else an excerpt of the body.
pub(crate) fn error_object(body: &str) -> (Option<Value>, String) {
    let error = serde_json::from_str::<Value>(body)
        .ok()
        .and_then(|mut v| v.get_mut("error").map(Value::take));
    let message = error
        .as_ref()
        .and_then(|e| e.get("message"))
        .and_then(Value::as_str)
        .map_or_else(|| body_excerpt(body), str::to_string);
    (error, message)
}

/// A string field of an optional JSON object.
pub(crate) fn str_field(object: Option<&Value>, key: &str) -> Option<String> {
    object?.get(key)?.as_str().map(str::to_string)
}

/// A number as JSON (f32 parameters are written as their shortest decimal, so 0.1 stays 0.1).
pub(crate) fn num(x: f32) -> Value {
    let v: f64 = format!("{x}").parse().unwrap_or(x as f64);
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}
