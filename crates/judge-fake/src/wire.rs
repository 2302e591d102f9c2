//! The providers' reply bodies: text, errors and blocked replies, in each wire format.

use super::*;
use serde_json::json;

/// A 2xx body carrying `text` in `format`.
pub fn text_body(format: WireFormat, text: &str, finish: Finish) -> String {
    let (i, o) = (FAKE_INPUT_TOKENS, FAKE_OUTPUT_TOKENS);
    let long = finish == Finish::Length;
    match format {
        WireFormat::Anthropic => json!({
            "id": "msg_fake", "type": "message", "role": "assistant", "model": "fake",
            "content": [{"type": "text", "text": text}],
            "stop_reason": if long { "max_tokens" } else { "end_turn" },
            "stop_sequence": null,
            "usage": {"input_tokens": i, "output_tokens": o,
                      "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
        }),
        WireFormat::Gemini => json!({
            "candidates": [{"content": {"role": "model", "parts": [{"text": text}]},
                            "finishReason": if long { "MAX_TOKENS" } else { "STOP" }, "index": 0}],
            "usageMetadata": {"promptTokenCount": i, "candidatesTokenCount": o, "totalTokenCount": i + o},
            "modelVersion": "fake"
        }),
        WireFormat::OpenAiChat => json!({
            "id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text, "refusal": null},
                         "finish_reason": if long { "length" } else { "stop" }}],
            "usage": {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o}
        }),
        WireFormat::OpenAiCompletions => json!({
            "id": "cmpl-fake", "object": "text_completion", "model": "fake",
            "choices": [{"index": 0, "text": text, "logprobs": null,
                         "finish_reason": if long { "length" } else { "stop" }}],
            "usage": {"prompt_tokens": i, "completion_tokens": o, "total_tokens": i + o}
        }),
    }
    .to_string()
}

/// The provider's error body for `status`.
pub fn error_body(format: WireFormat, status: u16, code: &str) -> String {
    let message = format!("fake {status} {code}");
    match format {
        WireFormat::Anthropic => {
            json!({"type": "error", "error": {"type": code, "message": message}})
        }
        // Gemini says how long to wait in the body (RetryInfo), not in a header.
        WireFormat::Gemini if status == 429 => json!({"error": {
            "code": status, "message": message, "status": code,
            "details": [{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "2s"}]
        }}),
        WireFormat::Gemini => {
            json!({"error": {"code": status, "message": message, "status": code}})
        }
        WireFormat::OpenAiChat | WireFormat::OpenAiCompletions => {
            json!({"error": {"message": message, "type": code, "param": null, "code": code}})
        }
    }
    .to_string()
}

pub(crate) fn blocked_body(format: WireFormat) -> String {
    match format {
        WireFormat::Gemini => json!({
            "promptFeedback": {"blockReason": "SAFETY",
                               "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH"}]},
            "usageMetadata": {"promptTokenCount": FAKE_INPUT_TOKENS, "totalTokenCount": FAKE_INPUT_TOKENS}
        }),
        WireFormat::Anthropic => json!({
            "id": "msg_fake", "type": "message", "role": "assistant", "content": [],
            "stop_reason": "refusal",
            "usage": {"input_tokens": FAKE_INPUT_TOKENS, "output_tokens": 0}
        }),
        WireFormat::OpenAiChat | WireFormat::OpenAiCompletions => json!({
            "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "refusal": "fake refusal"},
                         "finish_reason": "content_filter"}],
            "usage": {"prompt_tokens": FAKE_INPUT_TOKENS, "completion_tokens": 0}
        }),
    }
    .to_string()
}
