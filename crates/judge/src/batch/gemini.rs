//! Gemini batch mode (ai.google.dev, "Batch API"): `POST
//! /v1beta/models/{model}:batchGenerateContent {"batch": {"displayName", "inputConfig":
//! {"requests": {"requests": [{"request": <generateContent body>, "metadata": {"key"}}]}}}}`
//! answers a long-running operation `{"name": "batches/...", "metadata": {"state"}, "done"}`;
//! `GET /v1beta/{name}` until the state is `BATCH_STATE_SUCCEEDED`, `_FAILED`, `_CANCELLED` or
//! `_EXPIRED` (the SDKs show `JOB_STATE_*`: both are read); the responses come inline
//! (`response.inlinedResponses.inlinedResponses[{"response" | "error", "metadata"}]`) in input
//! order.

use super::{api_request, exchange, json_of, BatchError, BatchRequest, ItemResult, Polled};
use crate::provider::gemini::endpoint;
use crate::runner::Env;
use serde_json::{json, Value};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(300);

/// `/v1beta/models/{model}:batchGenerateContent`.
pub fn create_endpoint(model: &str) -> Result<String, String> {
    let e = endpoint(model).map_err(|e| e.to_string())?;
    Ok(e.replace(":generateContent", ":batchGenerateContent"))
}

pub fn create_body(requests: &[BatchRequest], display_name: &str) -> Value {
    let list: Vec<Value> = requests
        .iter()
        .map(|r| json!({"request": r.prepared.body, "metadata": {"key": r.custom_id}}))
        .collect();
    json!({"batch": {"displayName": display_name, "inputConfig": {"requests": {"requests": list}}}})
}

/// The operation's (batch's) name, `batches/...`.
pub fn parse_name(v: &Value) -> Result<String, String> {
    let name = v
        .get("name")
        .and_then(Value::as_str)
        .ok_or("no \"name\" in the batch operation")?;
    if !name.starts_with("batches/")
        || !name[8..]
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))
        || name.len() == 8
    {
        return Err(format!("not a batch name: {name:?}"));
    }
    Ok(name.to_string())
}

/// The state word without its `BATCH_STATE_` / `JOB_STATE_` prefix.
fn state_of(v: &Value) -> Option<String> {
    let s = v
        .get("metadata")
        .and_then(|m| m.get("state"))
        .or_else(|| v.get("state"))
        .and_then(Value::as_str)?;
    let s = s
        .strip_prefix("BATCH_STATE_")
        .or_else(|| s.strip_prefix("JOB_STATE_"))
        .unwrap_or(s);
    Some(s.to_string())
}

pub fn parse_status(v: &Value) -> Result<Polled, String> {
    let state = state_of(v);
    let done = v.get("done").and_then(Value::as_bool).unwrap_or(false);
    let ended = matches!(
        state.as_deref(),
        Some("SUCCEEDED" | "FAILED" | "CANCELLED" | "EXPIRED")
    );
    if ended || done {
        return Ok(Polled::Ended {
            state: state.unwrap_or_else(|| "DONE".into()),
            status: v.clone(),
        });
    }
    Ok(Polled::Running(
        state.ok_or("no \"metadata.state\" in the batch operation")?,
    ))
}

/// The inline responses wherever the operation keeps them.
fn inlined(v: &Value) -> Option<&Vec<Value>> {
    let roots = [
        v.get("response"),
        v.get("response").and_then(|r| r.get("output")),
        v.get("metadata").and_then(|m| m.get("output")),
        v.get("output"),
    ];
    roots.into_iter().flatten().find_map(|r| {
        let x = r.get("inlinedResponses")?;
        x.get("inlinedResponses")
            .and_then(Value::as_array)
            .or_else(|| x.as_array())
    })
}

/// The results of an ended batch submitted with `ids` (in that order).
pub fn parse_results(
    state: &str,
    v: &Value,
    ids: &[String],
) -> Result<Vec<(String, ItemResult)>, String> {
    if let Some(e) = v.get("error").filter(|e| !e.is_null()) {
        let msg = e.get("message").and_then(Value::as_str).unwrap_or("?");
        let why = format!("the batch failed ({state}): {msg}");
        return Ok(ids
            .iter()
            .map(|i| (i.clone(), ItemResult::Failed(why.clone())))
            .collect());
    }
    let mut out = Vec::new();
    if let Some(list) = inlined(v) {
        if list.len() > ids.len() {
            return Err(format!(
                "{} inline responses for {} requests",
                list.len(),
                ids.len()
            ));
        }
        for (n, r) in list.iter().enumerate() {
            let id = r
                .get("metadata")
                .and_then(|m| m.get("key"))
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| ids[n].clone());
            let result = if let Some(resp) = r.get("response") {
                ItemResult::Ok(resp.to_string())
            } else if let Some(e) = r.get("error") {
                let status = e.get("status").and_then(Value::as_str).unwrap_or("error");
                let msg = e.get("message").and_then(Value::as_str).unwrap_or("");
                ItemResult::Failed(format!("{status}: {msg}"))
            } else {
                return Err(format!(
                    "inline response {}: neither \"response\" nor \"error\"",
                    n + 1
                ));
            };
            out.push((id, result));
        }
    }
    if state != "SUCCEEDED" {
        let answered: std::collections::HashSet<String> =
            out.iter().map(|(i, _)| i.clone()).collect();
        let why = format!("the batch ended {state} before this request was answered");
        out.extend(
            ids.iter()
                .filter(|i| !answered.contains(*i))
                .map(|i| (i.clone(), ItemResult::Failed(why.clone()))),
        );
    }
    Ok(out)
}

pub(super) async fn submit(
    env: &Env,
    requests: &[BatchRequest],
    label: &str,
) -> Result<String, BatchError> {
    let c = env.provider.config();
    let url = format!(
        "{}{}",
        c.base_url,
        create_endpoint(&c.model).map_err(BatchError::fatal)?
    );
    let body = create_body(requests, label).to_string();
    let r = exchange(
        env,
        api_request(env, "POST", url, Some(("application/json", body)), TIMEOUT),
        "creating the batch",
    )
    .await?;
    parse_name(&json_of(&r, "batch operation")?).map_err(BatchError::fatal)
}

pub(super) async fn poll(env: &Env, name: &str) -> Result<Polled, BatchError> {
    let url = format!("{}/v1beta/{name}", env.provider.config().base_url);
    let r = exchange(env, api_request(env, "GET", url, None, TIMEOUT), "polling").await?;
    parse_status(&json_of(&r, "batch operation")?).map_err(BatchError::fatal)
}

pub(super) fn results(
    state: &str,
    status: &Value,
    ids: &[String],
) -> Result<Vec<(String, ItemResult)>, BatchError> {
    parse_results(state, status, ids).map_err(BatchError::fatal)
}
