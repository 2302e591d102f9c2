//! Anthropic Message Batches (docs.anthropic.com, "Message Batches"): `POST
//! /v1/messages/batches {"requests": [{"custom_id", "params": <Messages body>}]}` answers a
//! `message_batch` object; `GET /v1/messages/batches/{id}` until `processing_status` is `ended`;
//! then `results_url` gives JSONL, one `{"custom_id", "result": {"type": "succeeded", "message"}
//! | {"type": "errored", "error": {...}} | {"type": "canceled"} | {"type": "expired"}}` a line, in
//! no particular order.

use super::{api_request, exchange, json_of, BatchError, BatchRequest, ItemResult, Polled};
use crate::provider::ProviderConfig;
use crate::runner::Env;
use serde_json::{json, Value};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(300);

/// The create body.
pub fn create_body(requests: &[BatchRequest]) -> Value {
    let list: Vec<Value> = requests
        .iter()
        .map(|r| json!({"custom_id": r.custom_id, "params": r.prepared.body}))
        .collect();
    json!({ "requests": list })
}

/// The batch id of a create (or get) answer.
pub fn parse_id(v: &Value) -> Result<String, String> {
    v.get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| "no \"id\" in the message_batch".into())
}

/// `processing_status`: `in_progress`, `canceling` (running) or `ended`.
pub fn parse_status(v: &Value) -> Result<Polled, String> {
    let s = v
        .get("processing_status")
        .and_then(Value::as_str)
        .ok_or("no \"processing_status\" in the message_batch")?;
    Ok(match s {
        "ended" => Polled::Ended {
            state: s.to_string(),
            status: v.clone(),
        },
        other => Polled::Running(other.to_string()),
    })
}

/// The results URL, only when it is on the configured API (the key goes with the request).
pub fn results_url(config: &ProviderConfig, status: &Value) -> Result<String, String> {
    let url = status
        .get("results_url")
        .and_then(Value::as_str)
        .ok_or("the ended batch has no \"results_url\"")?;
    let base = &config.base_url;
    if !url.starts_with(&format!("{base}/")) {
        return Err(format!(
            "results_url {url:?} is not under {base}: not sending the API key there"
        ));
    }
    Ok(url.to_string())
}

/// The results JSONL; a line that cannot be read is an error naming its line.
pub fn parse_results(jsonl: &str) -> Result<Vec<(String, ItemResult)>, String> {
    let mut out = Vec::new();
    for (n, line) in jsonl.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |m: &str| format!("results line {}: {m}", n + 1);
        let v: Value = serde_json::from_str(line).map_err(|e| at(&format!("not JSON: {e}")))?;
        let id = v
            .get("custom_id")
            .and_then(Value::as_str)
            .ok_or_else(|| at("no \"custom_id\""))?;
        let r = v.get("result").ok_or_else(|| at("no \"result\""))?;
        let result = match r.get("type").and_then(Value::as_str) {
            Some("succeeded") => {
                let m = r
                    .get("message")
                    .ok_or_else(|| at("succeeded without \"message\""))?;
                ItemResult::Ok(m.to_string())
            }
            Some("errored") => {
                // {"type": "error", "error": {"type", "message"}} as in a synchronous error.
                let e = r.get("error");
                let inner = e.and_then(|e| e.get("error")).or(e);
                let kind = inner
                    .and_then(|e| e.get("type"))
                    .and_then(Value::as_str)
                    .unwrap_or("error");
                let msg = inner
                    .and_then(|e| e.get("message"))
                    .and_then(Value::as_str)
                    .unwrap_or("");
                ItemResult::Failed(format!("errored: {kind}: {msg}"))
            }
            Some("canceled") => ItemResult::Failed("canceled".into()),
            Some("expired") => ItemResult::Failed(
                "expired (the batch ended before this request was processed)".into(),
            ),
            other => return Err(at(&format!("unknown result type {other:?}"))),
        };
        out.push((id.to_string(), result));
    }
    Ok(out)
}

pub(super) async fn submit(env: &Env, requests: &[BatchRequest]) -> Result<String, BatchError> {
    let url = format!("{}/v1/messages/batches", env.provider.config().base_url);
    let body = create_body(requests);
    let r = exchange(
        env,
        api_request(
            env,
            "POST",
            url,
            Some(("application/json", body.to_string())),
            TIMEOUT,
        ),
        "creating the message batch",
    )
    .await?;
    parse_id(&json_of(&r, "message batch")?).map_err(BatchError::fatal)
}

pub(super) async fn poll(env: &Env, id: &str) -> Result<Polled, BatchError> {
    let url = format!(
        "{}/v1/messages/batches/{id}",
        env.provider.config().base_url
    );
    let r = exchange(
        env,
        api_request(env, "GET", url, None, Duration::from_secs(60)),
        "polling",
    )
    .await?;
    parse_status(&json_of(&r, "message batch")?).map_err(BatchError::fatal)
}

pub(super) async fn results(
    env: &Env,
    status: &Value,
) -> Result<Vec<(String, ItemResult)>, BatchError> {
    let url = results_url(env.provider.config(), status).map_err(BatchError::fatal)?;
    let r = exchange(env, api_request(env, "GET", url, None, TIMEOUT), "results").await?;
    parse_results(&r.body).map_err(BatchError::fatal)
}
