//! OpenAI Batch (platform.openai.com, "Batch API"): the requests as JSONL lines `{"custom_id",
//! "method": "POST", "url": "/v1/chat/completions", "body"}` uploaded with `POST /v1/files`
//! (multipart, `purpose=batch`); `POST /v1/batches {"input_file_id", "endpoint",
//! "completion_window": "24h"}`; `GET /v1/batches/{id}` until `status` is `completed`, `failed`,
//! `expired` or `cancelled`; then `GET /v1/files/{output_file_id}/content` (lines `{"custom_id",
//! "response": {"status_code", "body"}, "error"}`) and the same for `error_file_id`. An expired
//! batch still has the output of what finished in time.

use super::{api_request, exchange, json_of, BatchError, BatchRequest, ItemResult, Polled};
use crate::runner::Env;
use serde_json::{json, Value};
use std::time::Duration;

const TIMEOUT: Duration = Duration::from_secs(300);

/// The multipart boundary. JSONL holds no raw CR or LF inside a line (JSON escapes them), so
/// `\r\n--` + this cannot occur in the file.
pub const BOUNDARY: &str = "ragscope-batch-7c1f3e9a";

/// The batch's single endpoint (`/v1` + the synchronous endpoint); mixed endpoints are refused.
pub fn batch_endpoint(requests: &[BatchRequest]) -> Result<String, String> {
    let first = requests.first().ok_or("an empty batch")?;
    let e = &first.prepared.endpoint;
    if requests.iter().any(|r| &r.prepared.endpoint != e) {
        return Err("a batch has one endpoint: these requests mix several".into());
    }
    Ok(format!("/v1{e}"))
}

/// The input file: one request a line.
pub fn input_jsonl(requests: &[BatchRequest]) -> Result<String, String> {
    let url = batch_endpoint(requests)?;
    let mut s = String::new();
    for r in requests {
        let line = json!({"custom_id": r.custom_id, "method": "POST", "url": url, "body": r.prepared.body});
        s.push_str(&line.to_string());
        s.push('\n');
    }
    Ok(s)
}

/// The `multipart/form-data` body of the upload (purpose, then the file).
pub fn upload_body(jsonl: &str) -> String {
    format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"purpose\"\r\n\r\nbatch\r\n\
--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"file\"; filename=\"ragscope-batch.jsonl\"\r\n\
Content-Type: application/jsonl\r\n\r\n{jsonl}\r\n--{BOUNDARY}--\r\n"
    )
}

pub fn create_body(file_id: &str, endpoint: &str) -> Value {
    json!({"input_file_id": file_id, "endpoint": endpoint, "completion_window": "24h"})
}

pub fn parse_id(v: &Value, what: &str) -> Result<String, String> {
    v.get("id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .ok_or_else(|| format!("no \"id\" in the {what}"))
}

/// `status`: `validating`, `in_progress`, `finalizing`, `cancelling` (running); `completed`,
/// `failed`, `expired`, `cancelled` (ended).
pub fn parse_status(v: &Value) -> Result<Polled, String> {
    let s = v
        .get("status")
        .and_then(Value::as_str)
        .ok_or("no \"status\" in the batch")?;
    Ok(match s {
        "completed" | "failed" | "expired" | "cancelled" => Polled::Ended {
            state: s.to_string(),
            status: v.clone(),
        },
        other => Polled::Running(other.to_string()),
    })
}

/// Why a `failed` batch failed (`errors.data[].message`, with the line when given).
pub fn batch_errors(v: &Value) -> String {
    let list: Vec<String> = v
        .get("errors")
        .and_then(|e| e.get("data"))
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            let m = e.get("message").and_then(Value::as_str).unwrap_or("?");
            match e.get("line").and_then(Value::as_u64) {
                Some(l) => format!("line {l}: {m}"),
                None => m.to_string(),
            }
        })
        .collect();
    if list.is_empty() {
        "no reason given".into()
    } else {
        list.join("; ")
    }
}

/// An output or error file.
pub fn parse_output(jsonl: &str) -> Result<Vec<(String, ItemResult)>, String> {
    let mut out = Vec::new();
    for (n, line) in jsonl.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = |m: &str| format!("output line {}: {m}", n + 1);
        let v: Value = serde_json::from_str(line).map_err(|e| at(&format!("not JSON: {e}")))?;
        let id = v
            .get("custom_id")
            .and_then(Value::as_str)
            .ok_or_else(|| at("no \"custom_id\""))?;
        let result = match v.get("error").filter(|e| !e.is_null()) {
            Some(e) => {
                let code = e.get("code").and_then(Value::as_str).unwrap_or("error");
                let msg = e.get("message").and_then(Value::as_str).unwrap_or("");
                ItemResult::Failed(format!("{code}: {msg}"))
            }
            None => {
                let resp = v.get("response").ok_or_else(|| at("no \"response\""))?;
                let status = resp
                    .get("status_code")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| at("no \"status_code\""))?;
                let body = resp.get("body").cloned().unwrap_or(Value::Null);
                if (200..300).contains(&status) {
                    ItemResult::Ok(body.to_string())
                } else {
                    let status = u16::try_from(status).unwrap_or(0);
                    let e = crate::provider::openai::parse_error(status, &body.to_string());
                    ItemResult::Failed(e.to_string())
                }
            }
        };
        out.push((id.to_string(), result));
    }
    Ok(out)
}

pub(super) async fn submit(env: &Env, requests: &[BatchRequest]) -> Result<String, BatchError> {
    let base = &env.provider.config().base_url;
    let jsonl = input_jsonl(requests).map_err(BatchError::fatal)?;
    let ct = format!("multipart/form-data; boundary={BOUNDARY}");
    let r = exchange(
        env,
        api_request(
            env,
            "POST",
            format!("{base}/files"),
            Some((&ct, upload_body(&jsonl))),
            TIMEOUT,
        ),
        "uploading the batch file",
    )
    .await?;
    let file_id = parse_id(&json_of(&r, "file")?, "file").map_err(BatchError::fatal)?;
    let endpoint = batch_endpoint(requests).map_err(BatchError::fatal)?;
    let body = create_body(&file_id, &endpoint).to_string();
    let r = exchange(
        env,
        api_request(
            env,
            "POST",
            format!("{base}/batches"),
            Some(("application/json", body)),
            TIMEOUT,
        ),
        "creating the batch",
    )
    .await?;
    parse_id(&json_of(&r, "batch")?, "batch").map_err(BatchError::fatal)
}

pub(super) async fn poll(env: &Env, id: &str) -> Result<Polled, BatchError> {
    let url = format!("{}/batches/{id}", env.provider.config().base_url);
    let r = exchange(
        env,
        api_request(env, "GET", url, None, Duration::from_secs(60)),
        "polling",
    )
    .await?;
    parse_status(&json_of(&r, "batch")?).map_err(BatchError::fatal)
}

pub(super) async fn results(
    env: &Env,
    ids: &[String],
    state: &str,
    status: &Value,
) -> Result<Vec<(String, ItemResult)>, BatchError> {
    if state == "failed" {
        let why = format!("the batch failed: {}", batch_errors(status));
        return Ok(ids
            .iter()
            .map(|i| (i.clone(), ItemResult::Failed(why.clone())))
            .collect());
    }
    let base = &env.provider.config().base_url;
    let mut out = Vec::new();
    for field in ["output_file_id", "error_file_id"] {
        let Some(file) = status
            .get(field)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
        else {
            continue;
        };
        let url = format!("{base}/files/{file}/content");
        let r = exchange(env, api_request(env, "GET", url, None, TIMEOUT), field).await?;
        out.extend(parse_output(&r.body).map_err(|e| BatchError::fatal(format!("{field}: {e}")))?);
    }
    if state != "completed" {
        // What an expired or cancelled batch did not answer.
        let answered: std::collections::HashSet<&str> =
            out.iter().map(|(i, _)| i.as_str()).collect();
        let why = format!("the batch {state} before this request was processed");
        let missing: Vec<(String, ItemResult)> = ids
            .iter()
            .filter(|i| !answered.contains(i.as_str()))
            .map(|i| (i.clone(), ItemResult::Failed(why.clone())))
            .collect();
        out.extend(missing);
    }
    Ok(out)
}
