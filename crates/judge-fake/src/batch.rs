//! The fake server's batch endpoints, in memory: Anthropic Message Batches, OpenAI files +
//! batches, Gemini `batchGenerateContent`. Each request inside a batch is answered by the same
//! script as a synchronous request (so the same `FAKE{...}` directives give the same replies),
//! at submission; the batch reports itself running for the first `polls - 1` polls and ended at
//! the `polls`-th ([`super::FakeServer::set_batch_polls`]). Two more directives act only inside a
//! batch: `batcherror` (that request fails with a 400 in the batch's own error format) and
//! `batchexpired` (the batch ended before that request ran). Batches outlive any client, so a
//! test can "kill" a client after submission and resume with a new one.

use super::{
    blocked_body, directives, error_body, text_body, Action, RecordedRequest, State, WireFormat,
};
use serde_json::{json, Value};
use std::collections::HashMap;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Api {
    Anthropic,
    OpenAi,
    Gemini,
}

#[derive(Clone, Debug)]
enum Outcome {
    Ok(Value),
    /// HTTP status and the format's error body.
    Error(u16, Value),
    Expired,
}

struct Batch {
    api: Api,
    polls: u32,
    /// (custom_id, outcome) in submission order.
    items: Vec<(String, Outcome)>,
}

/// The batches and files a fake server holds.
pub(super) struct Batches {
    next: u64,
    batches: HashMap<String, Batch>,
    /// OpenAI uploads by file id.
    files: HashMap<String, String>,
    pub(super) submissions: usize,
    pub(super) polls_to_end: u32,
}

impl Default for Batches {
    fn default() -> Self {
        Batches {
            next: 0,
            batches: HashMap::new(),
            files: HashMap::new(),
            submissions: 0,
            polls_to_end: 2,
        }
    }
}

type Answer = (u16, Vec<(String, String)>, String);

fn ok(v: Value) -> Option<Answer> {
    Some((200, Vec::new(), v.to_string()))
}

fn err(status: u16, message: &str) -> Option<Answer> {
    Some((
        status,
        Vec::new(),
        json!({"type": "error", "error": {"type": "invalid_request_error", "message": message,
               "code": "invalid_request_error", "status": "INVALID_ARGUMENT"}})
        .to_string(),
    ))
}

fn authorized(api: Api, r: &RecordedRequest) -> bool {
    let has = |k: &str| r.header(k).is_some_and(|v| !v.is_empty());
    match api {
        Api::Anthropic => has("x-api-key") && r.header("anthropic-version") == Some("2023-06-01"),
        Api::Gemini => has("x-goog-api-key"),
        Api::OpenAi => r
            .header("authorization")
            .is_none_or(|a| a.starts_with("Bearer ")),
    }
}

/// The answer to a batch endpoint request, `None` when the path is not one.
pub(super) fn handle(st: &State, base: &str, r: &RecordedRequest) -> Option<Option<Answer>> {
    let path = r.path.split('?').next().unwrap_or(&r.path);
    let post = r.method == "POST";
    let api = if path.ends_with("/v1/messages/batches") || path.contains("/v1/messages/batches/") {
        Api::Anthropic
    } else if path.ends_with(":batchGenerateContent") || path.contains("/v1beta/batches/") {
        Api::Gemini
    } else if path.ends_with("/files")
        || path.contains("/files/")
        || path.ends_with("/batches")
        || path.contains("/batches/")
    {
        Api::OpenAi
    } else {
        return None;
    };
    if !authorized(api, r) {
        return Some(Some((
            401,
            Vec::new(),
            json!({"error": {"message": "fake: no key", "type": "authentication_error"}})
                .to_string(),
        )));
    }
    let mut b = st.batches.lock().unwrap_or_else(|e| e.into_inner());
    Some(match (api, post) {
        (Api::Anthropic, true) => {
            let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
            let Some(list) = v.get("requests").and_then(Value::as_array) else {
                return Some(err(400, "fake: no requests"));
            };
            let mut items = Vec::new();
            for q in list {
                let id = q.get("custom_id").and_then(Value::as_str).unwrap_or("");
                let params = q.get("params").cloned().unwrap_or(Value::Null);
                items.push((id.to_string(), answer(st, WireFormat::Anthropic, &params)));
            }
            let id = new_batch(&mut b, Api::Anthropic, items, "msgbatch_fake");
            ok(anthropic_status(&b, &id, base))
        }
        (Api::Anthropic, false) => {
            let rest = path.split("/v1/messages/batches/").nth(1).unwrap_or("");
            if let Some(id) = rest.strip_suffix("/results") {
                match b.batches.get(id) {
                    Some(batch) if batch.polls >= b.polls_to_end => {
                        Some((200, Vec::new(), anthropic_results(batch)))
                    }
                    Some(_) => err(400, "fake: the batch has not ended"),
                    None => err(404, "fake: no such batch"),
                }
            } else {
                if let Some(batch) = b.batches.get_mut(rest) {
                    batch.polls += 1;
                } else {
                    return Some(err(404, "fake: no such batch"));
                }
                ok(anthropic_status(&b, rest, base))
            }
        }
        (Api::OpenAi, true) if path.ends_with("/files") => {
            let Some(content) = multipart_file(r) else {
                return Some(err(400, "fake: no file part"));
            };
            b.next += 1;
            let id = format!("file-fake{}", b.next);
            b.files.insert(id.clone(), content);
            ok(json!({"id": id, "object": "file", "purpose": "batch"}))
        }
        (Api::OpenAi, true) => {
            let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
            let file = v.get("input_file_id").and_then(Value::as_str).unwrap_or("");
            let endpoint = v.get("endpoint").and_then(Value::as_str).unwrap_or("");
            if v.get("completion_window").and_then(Value::as_str) != Some("24h") {
                return Some(err(400, "fake: completion_window must be 24h"));
            }
            let Some(content) = b.files.get(file).cloned() else {
                return Some(err(404, "fake: no such file"));
            };
            let mut items = Vec::new();
            for line in content.lines().filter(|l| !l.trim().is_empty()) {
                let q: Value = serde_json::from_str(line).unwrap_or(Value::Null);
                let url = q.get("url").and_then(Value::as_str).unwrap_or("");
                if url != endpoint || q.get("method").and_then(Value::as_str) != Some("POST") {
                    return Some(err(400, "fake: a line's url or method differs"));
                }
                let format = WireFormat::of_path(url).unwrap_or(WireFormat::OpenAiChat);
                let id = q.get("custom_id").and_then(Value::as_str).unwrap_or("");
                let body = q.get("body").cloned().unwrap_or(Value::Null);
                items.push((id.to_string(), answer(st, format, &body)));
            }
            let id = new_batch(&mut b, Api::OpenAi, items, "batch_fake");
            ok(openai_status(&b, &id))
        }
        (Api::OpenAi, false) => {
            if let Some(rest) = path.split("/files/").nth(1) {
                let Some(file) = rest.strip_suffix("/content") else {
                    return Some(err(404, "fake: no such endpoint"));
                };
                openai_file(&b, file).map(|text| (200, Vec::new(), text))
            } else {
                let id = path.split("/batches/").nth(1).unwrap_or("");
                if let Some(batch) = b.batches.get_mut(id) {
                    batch.polls += 1;
                } else {
                    return Some(err(404, "fake: no such batch"));
                }
                ok(openai_status(&b, id))
            }
        }
        (Api::Gemini, true) => {
            let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
            let list = v
                .pointer("/batch/inputConfig/requests/requests")
                .and_then(Value::as_array);
            let Some(list) = list else {
                return Some(err(400, "fake: no batch.inputConfig.requests.requests"));
            };
            let mut items = Vec::new();
            for (n, q) in list.iter().enumerate() {
                let key = q
                    .pointer("/metadata/key")
                    .and_then(Value::as_str)
                    .map_or_else(|| n.to_string(), str::to_string);
                let req = q.get("request").cloned().unwrap_or(Value::Null);
                items.push((key, answer(st, WireFormat::Gemini, &req)));
            }
            let id = new_batch(&mut b, Api::Gemini, items, "batches/fake");
            ok(gemini_operation(&b, &id))
        }
        (Api::Gemini, false) => {
            let id = path.split("/v1beta/").nth(1).unwrap_or("");
            if let Some(batch) = b.batches.get_mut(id) {
                batch.polls += 1;
            } else {
                return Some(err(404, "fake: no such batch"));
            }
            ok(gemini_operation(&b, id))
        }
    })
}

fn new_batch(b: &mut Batches, api: Api, items: Vec<(String, Outcome)>, prefix: &str) -> String {
    b.next += 1;
    b.submissions += 1;
    let id = format!("{prefix}{}", b.next);
    b.batches.insert(
        id.clone(),
        Batch {
            api,
            polls: 0,
            items,
        },
    );
    id
}

/// The file part of a `multipart/form-data` upload.
fn multipart_file(r: &RecordedRequest) -> Option<String> {
    let ct = r.header("content-type")?;
    let boundary = ct.split("boundary=").nth(1)?.trim_matches('"');
    let delim = format!("--{boundary}");
    r.body.split(&delim).find_map(|part| {
        let (head, content) = part.split_once("\r\n\r\n")?;
        if !head.contains("name=\"file\"") {
            return None;
        }
        Some(content.strip_suffix("\r\n").unwrap_or(content).to_string())
    })
}

/// What the script answers to one request of a batch (no pauses, no dropped connections).
fn answer(st: &State, format: WireFormat, body: &Value) -> Outcome {
    let text = body.to_string();
    let ds = directives(&text);
    if ds.iter().any(|(k, _)| k == "batchexpired") {
        return Outcome::Expired;
    }
    if ds.iter().any(|(k, _)| k == "batcherror") {
        let code = match format {
            WireFormat::Anthropic => "invalid_request_error",
            WireFormat::Gemini => "INVALID_ARGUMENT",
            _ => "invalid_request_error",
        };
        return Outcome::Error(400, parse(&error_body(format, 400, code)));
    }
    let nth = {
        let mut seen = st.seen.lock().unwrap_or_else(|e| e.into_inner());
        let n = seen.entry(text.clone()).or_insert(0);
        *n += 1;
        *n
    };
    let rec = RecordedRequest {
        method: "POST".into(),
        path: String::new(),
        headers: Vec::new(),
        body: text,
        format: Some(format),
        nth,
    };
    let mut action = (st.script)(&rec);
    loop {
        action = match action {
            Action::Delay(_, next) | Action::Hold(_, next) => *next,
            Action::Drop => {
                return Outcome::Error(500, parse(&error_body(format, 500, "api_error")))
            }
            Action::Text { text, finish } => {
                return Outcome::Ok(parse(&text_body(format, &text, finish)))
            }
            Action::Blocked => return Outcome::Ok(parse(&blocked_body(format))),
            Action::Raw { status, body, .. } => {
                let v = serde_json::from_str(&body).unwrap_or(Value::String(body));
                return if (200..300).contains(&status) {
                    Outcome::Ok(v)
                } else {
                    Outcome::Error(status, v)
                };
            }
            Action::Error { status, code, .. } => {
                return Outcome::Error(status, parse(&error_body(format, status, &code)))
            }
        };
    }
}

fn parse(s: &str) -> Value {
    serde_json::from_str(s).unwrap_or(Value::Null)
}

fn ended(b: &Batches, batch: &Batch) -> bool {
    batch.polls >= b.polls_to_end
}

fn anthropic_status(b: &Batches, id: &str, base: &str) -> Value {
    let Some(batch) = b.batches.get(id) else {
        return Value::Null;
    };
    let done = ended(b, batch);
    let count = |f: fn(&Outcome) -> bool| batch.items.iter().filter(|(_, o)| f(o)).count();
    json!({
        "id": id, "type": "message_batch",
        "processing_status": if done { "ended" } else { "in_progress" },
        "request_counts": {
            "processing": if done { 0 } else { batch.items.len() },
            "succeeded": if done { count(|o| matches!(o, Outcome::Ok(_))) } else { 0 },
            "errored": if done { count(|o| matches!(o, Outcome::Error(..))) } else { 0 },
            "canceled": 0,
            "expired": if done { count(|o| matches!(o, Outcome::Expired)) } else { 0 },
        },
        "created_at": "2026-11-22T00:00:00Z",
        "expires_at": "2026-11-23T00:00:00Z",
        "ended_at": if done { json!("2026-11-22T01:00:00Z") } else { Value::Null },
        "results_url": if done { json!(format!("{base}/v1/messages/batches/{id}/results")) } else { Value::Null },
    })
}

fn anthropic_results(batch: &Batch) -> String {
    // Unordered, as the API warns: the fake answers in reverse.
    let mut s = String::new();
    for (id, o) in batch.items.iter().rev() {
        let result = match o {
            Outcome::Ok(m) => json!({"type": "succeeded", "message": m}),
            Outcome::Error(_, e) => json!({"type": "errored", "error": e}),
            Outcome::Expired => json!({"type": "expired"}),
        };
        s.push_str(&json!({"custom_id": id, "result": result}).to_string());
        s.push('\n');
    }
    s
}

fn openai_status(b: &Batches, id: &str) -> Value {
    let Some(batch) = b.batches.get(id) else {
        return Value::Null;
    };
    let done = ended(b, batch);
    let failed = batch
        .items
        .iter()
        .filter(|(_, o)| !matches!(o, Outcome::Ok(_)))
        .count();
    let status = match (done, batch.polls) {
        (true, _) => "completed",
        (false, 0) => "validating",
        _ => "in_progress",
    };
    json!({
        "id": id, "object": "batch", "endpoint": "/v1/chat/completions",
        "completion_window": "24h", "status": status,
        "output_file_id": if done { json!(format!("file-out-{id}")) } else { Value::Null },
        "error_file_id": if done && failed > 0 { json!(format!("file-err-{id}")) } else { Value::Null },
        "request_counts": {"total": batch.items.len(),
                           "completed": if done { batch.items.len() - failed } else { 0 },
                           "failed": if done { failed } else { 0 }},
        "errors": null,
    })
}

fn openai_file(b: &Batches, file: &str) -> Option<String> {
    let (errors, id) = if let Some(id) = file.strip_prefix("file-out-") {
        (false, id)
    } else if let Some(id) = file.strip_prefix("file-err-") {
        (true, id)
    } else {
        return b.files.get(file).cloned();
    };
    let batch = b.batches.get(id)?;
    let mut s = String::new();
    for (n, (cid, o)) in batch.items.iter().enumerate() {
        let line = match (o, errors) {
            (Outcome::Ok(body), false) => json!({"id": format!("batch_req_{n}"), "custom_id": cid,
                "response": {"status_code": 200, "request_id": format!("req_{n}"), "body": body},
                "error": null}),
            (Outcome::Error(status, body), true) => {
                json!({"id": format!("batch_req_{n}"), "custom_id": cid,
                "response": {"status_code": status, "request_id": format!("req_{n}"), "body": body},
                "error": null})
            }
            (Outcome::Expired, true) => json!({"id": format!("batch_req_{n}"), "custom_id": cid,
                "response": null,
                "error": {"code": "batch_expired",
                          "message": "This request could not be executed before the completion window expired."}}),
            _ => continue,
        };
        s.push_str(&line.to_string());
        s.push('\n');
    }
    Some(s)
}

fn gemini_operation(b: &Batches, id: &str) -> Value {
    let Some(batch) = b.batches.get(id) else {
        return Value::Null;
    };
    debug_assert_eq!(batch.api, Api::Gemini);
    let done = ended(b, batch);
    let state = match (done, batch.polls) {
        (true, _) => "BATCH_STATE_SUCCEEDED",
        (false, 0) => "BATCH_STATE_PENDING",
        _ => "BATCH_STATE_RUNNING",
    };
    let mut op = json!({
        "name": id,
        "metadata": {"@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatch",
                     "name": id, "state": state},
        "done": done,
    });
    if done {
        let list: Vec<Value> = batch
            .items
            .iter()
            .map(|(key, o)| match o {
                Outcome::Ok(r) => json!({"response": r, "metadata": {"key": key}}),
                Outcome::Error(_, e) => {
                    json!({"error": e.get("error").cloned().unwrap_or(Value::Null), "metadata": {"key": key}})
                }
                Outcome::Expired => json!({"error": {"code": 504, "status": "DEADLINE_EXCEEDED",
                    "message": "fake: the batch expired before this request ran"}, "metadata": {"key": key}}),
            })
            .collect();
        op["response"] = json!({
            "@type": "type.googleapis.com/google.ai.generativelanguage.v1main.GenerateContentBatchOutput",
            "inlinedResponses": {"inlinedResponses": list}
        });
    }
    op
}
