//! A fake provider server for tests, on 127.0.0.1: it speaks the Anthropic, Gemini, OpenAI chat
//! and `/completions` wire formats (chosen by the request path), records every request, tracks
//! how many were in flight at once, answers CORS preflights (for the browser e2e test), and
//! injects the faults a script asks for.
//!
//! The HTTP/1.1 server is hand-written on `std::net`: fault injection needs control of the socket
//! (closing it mid-exchange, stalling a reply, holding requests until N are in flight) that server
//! crates hide, and a test server needs no more than Content-Length bodies and keep-alive.
//!
//! The ready-made [`markers`] script reads directives from the request body itself, so a test
//! (or the browser e2e test, through passages in its data files) picks each item's behaviour by
//! writing `FAKE{...}` into the passage text. Directives, comma-separated:
//!
//! | directive     | reply                                                                      |
//! |---------------|----------------------------------------------------------------------------|
//! | `grade=N`     | `##final score: N` (the default reply is grade 1)                           |
//! | `seq=a\|b\|c` | the k-th request with this exact body gets the k-th entry: a digit → grade, `x` → unparseable text |
//! | `429=N`       | the first N requests: 429 with `retry-after: 1` (and `retry-after-ms: 1500` when `ms`, no header when `noheader`; Gemini's body says `retryDelay: 2s`) |
//! | `529=N` `503=N` `500=N` | the first N requests: that status with the format's error body   |
//! | `400` `401` `404` | always that status                                                    |
//! | `quota`       | always 429 `insufficient_quota` (OpenAI's error body)                       |
//! | `reset=N`     | the first N requests: the connection is closed without an answer            |
//! | `slow=N`      | the first N requests: the answer comes after 2 s                            |
//! | `hold=N`      | the answer waits until N requests are in flight (at most 5 s)               |
//! | `malformed`   | 200 with a truncated JSON body                                              |
//! | `warm=N`      | grade N when the request's temperature is above 0, else unparseable text    |
//! | `fenced=N`    | ```` ```json {"final score": N} ``` ````                                    |
//! | `safety`      | Gemini: 200 without candidates (blockReason SAFETY); OpenAI: content_filter; Anthropic: refusal |
//! | `truncated`   | text without a score, finish = max tokens / length / MAX_TOKENS             |
//! | `trap=N`      | `On a scale from 0 to 3, ##final score: N` (umbrela's parser reads 3)       |
//!
//! Part-2 tasks are recognised by their prompt's phrase and answered in their own format:
//!
//! | task | default reply | directives |
//! |------|---------------|------------|
//! | nuggets create | `['fake nugget']` | `nuggets=a\|b` the list |
//! | nuggets score / assign | a list of exactly N labels (N read from "Return exactly N"): all `vital` / `support` | `labels=a\|b` (cycled to N), `short` one label short at temperature 0 (a re-ask fixes it), `shortalways`, `json` (double quotes), `fence` (```` ```python ```` fences) |
//! | pairwise | `{"answer_a_analysis", ..., "winner": "C"}` | `win` (in an answer: that answer wins in both orders), `first` (A always: the orders disagree), `bracket` (RAGElo text ending `[[X]]`), `fence` |
//! | pointwise | `{"reasoning", "score": 1}` | `score=N`, `fence` |
//! | citations | `{"support": "full"}` | `support=partial\|none`, `word` (the bare word) |
//! | answer equivalence | `CORRECT` | `verdict=correct\|incorrect`, `verdictline` (`Verdict: X` after a sentence), `fence` |
//!
//! and for every task `garbage` (an unparseable reply, at any temperature) and `truncated`.
//!
//! Free-text answers (the lost-in-the-middle page's remote model): when a passage of the prompt
//! carries `answer=X`, the fake is a reader that looks at the **first** passage only: the reply is
//! X when the first `FAKE{...}` block of the request holds `answer=X`, else `NO-RESPONSE`. With
//! `FAKE{answer=...}` in each gold passage and a `FAKE{...}` block in every distractor, a context
//! is answered correctly exactly when its gold passage comes first. A request that asks for
//! log-probabilities (the utility task: OpenAI `/completions` or chat, Gemini with
//! `responseLogprobs`) gets the fake model's instead (below), `answer=` or not:
//! `lp=X` in a passage then sets p(NO-RESPONSE) of that passage alone (and of a whole context,
//! the first `lp` of its prompt), and `lpfail` answers such a request 400 (the answers are not
//! affected).
//!
//! The three batch APIs are served too, in memory (see `fake/batch.rs`): requests inside a batch
//! get the replies above, plus `batcherror` (a per-request error) and `batchexpired`.

mod batch;

use serde_json::{json, Value};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Which wire format a request path speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WireFormat {
    Anthropic,
    Gemini,
    OpenAiChat,
    OpenAiCompletions,
}

impl WireFormat {
    pub fn of_path(path: &str) -> Option<Self> {
        let path = path.split('?').next().unwrap_or(path);
        if path.ends_with("/v1/messages") {
            Some(WireFormat::Anthropic)
        } else if path.ends_with(":generateContent") {
            Some(WireFormat::Gemini)
        } else if path.ends_with("/chat/completions") {
            Some(WireFormat::OpenAiChat)
        } else if path.ends_with("/completions") {
            Some(WireFormat::OpenAiCompletions)
        } else {
            None
        }
    }
}

/// A request as the server saw it.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// Names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub format: Option<WireFormat>,
    /// 1 for the first request with this exact body, 2 for the second, ...
    pub nth: u32,
}

impl RecordedRequest {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What to answer.
#[derive(Clone, Debug)]
pub enum Action {
    /// A reply text wrapped in the request's wire format (usage: 120 in, 6 out), with its finish.
    Text { text: String, finish: Finish },
    /// Raw status, extra headers and body.
    Raw {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// The provider's error body for that status (`code`: its error type/status/code).
    Error {
        status: u16,
        code: String,
        headers: Vec<(String, String)>,
    },
    /// Gemini's safety block (or the closest thing in the other formats).
    Blocked,
    /// Close the connection without answering.
    Drop,
    /// Answer after a pause.
    Delay(Duration, Box<Action>),
    /// Answer once `n` requests are in flight (or after 5 s).
    Hold(usize, Box<Action>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Finish {
    Stop,
    Length,
}

/// Decides the answer to each request.
pub type Script = Arc<dyn Fn(&RecordedRequest) -> Action + Send + Sync>;

/// Fixed usage in every text reply, so tests can check token sums.
pub const FAKE_INPUT_TOKENS: u64 = 120;
pub const FAKE_OUTPUT_TOKENS: u64 = 6;

struct State {
    script: Script,
    requests: Mutex<Vec<RecordedRequest>>,
    seen: Mutex<HashMap<String, u32>>,
    in_flight: Mutex<usize>,
    /// Requests waiting at the `hold` gate, and how many groups it has let through.
    hold: Mutex<(usize, u64)>,
    hold_changed: Condvar,
    max_in_flight: AtomicUsize,
    stop: AtomicBool,
    /// `http://127.0.0.1:PORT` (Anthropic's `results_url` points back here).
    base: String,
    batches: Mutex<batch::Batches>,
}

/// The running server; stops when dropped.
pub struct FakeServer {
    addr: SocketAddr,
    state: Arc<State>,
}

impl FakeServer {
    /// Starts on an ephemeral port of 127.0.0.1.
    pub fn start(script: Script) -> std::io::Result<Self> {
        Self::start_on(0, script)
    }

    pub fn start_on(port: u16, script: Script) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port))?;
        let addr = listener.local_addr()?;
        let state = Arc::new(State {
            script,
            requests: Mutex::new(Vec::new()),
            seen: Mutex::new(HashMap::new()),
            in_flight: Mutex::new(0),
            hold: Mutex::new((0, 0)),
            hold_changed: Condvar::new(),
            max_in_flight: AtomicUsize::new(0),
            stop: AtomicBool::new(false),
            base: format!("http://{addr}"),
            batches: Mutex::new(batch::Batches::default()),
        });
        let st = state.clone();
        std::thread::Builder::new()
            .name("fake-provider".into())
            .spawn(move || {
                for conn in listener.incoming() {
                    if st.stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(conn) = conn else { continue };
                    let st = st.clone();
                    let _ = std::thread::Builder::new()
                        .name("fake-provider-conn".into())
                        .spawn(move || serve(conn, &st));
                }
            })?;
        Ok(FakeServer { addr, state })
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every provider request so far (CORS preflights and `/__fake/` excluded).
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state
            .requests
            .lock()
            .map(|r| r.clone())
            .unwrap_or_default()
    }

    pub fn request_count(&self) -> usize {
        self.state.requests.lock().map(|r| r.len()).unwrap_or(0)
    }

    /// Batches submitted so far (all three batch APIs).
    pub fn batch_submissions(&self) -> usize {
        self.state
            .batches
            .lock()
            .map(|b| b.submissions)
            .unwrap_or(0)
    }

    /// A batch ends at its `n`-th poll (default 2: one poll sees it running).
    pub fn set_batch_polls(&self, n: u32) {
        if let Ok(mut b) = self.state.batches.lock() {
            b.polls_to_end = n.max(1);
        }
    }

    /// The most requests that were in flight at once.
    pub fn max_in_flight(&self) -> usize {
        self.state.max_in_flight.load(Ordering::SeqCst)
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.state.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(self.addr);
    }
}

struct Parsed {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: String,
}

fn read_request(r: &mut BufReader<TcpStream>) -> Option<Parsed> {
    let mut line = String::new();
    if r.read_line(&mut line).ok()? == 0 {
        return None;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if r.read_line(&mut h).ok()? == 0 {
            return None;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    r.read_exact(&mut body).ok()?;
    Some(Parsed {
        method,
        path,
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    })
}

const CORS: &str = "access-control-allow-origin: *\r\n\
access-control-expose-headers: retry-after, retry-after-ms\r\n";

fn write_response(
    s: &mut TcpStream,
    status: u16,
    headers: &[(String, String)],
    body: &str,
) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n{CORS}", reason(status));
    head.push_str("content-type: application/json\r\n");
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str(&format!("content-length: {}\r\n\r\n", body.len()));
    s.write_all(head.as_bytes())?;
    s.write_all(body.as_bytes())?;
    s.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        529 => "Overloaded",
        _ => "Status",
    }
}

fn serve(conn: TcpStream, st: &State) {
    let Ok(mut out) = conn.try_clone() else {
        return;
    };
    let mut reader = BufReader::new(conn);
    while let Some(req) = read_request(&mut reader) {
        if req.method == "OPTIONS" {
            let head = format!(
                "HTTP/1.1 204 No Content\r\n{CORS}access-control-allow-methods: POST, GET, OPTIONS\r\n\
access-control-allow-headers: content-type, authorization, x-api-key, anthropic-version, \
anthropic-dangerous-direct-browser-access, x-goog-api-key\r\naccess-control-max-age: 600\r\n\
content-length: 0\r\n\r\n"
            );
            if out.write_all(head.as_bytes()).is_err() {
                return;
            }
            continue;
        }
        if req.path.starts_with("/__fake/requests") {
            let list: Vec<Value> = st
                .requests
                .lock()
                .map(|r| {
                    r.iter()
                        .map(|q| json!({"method": q.method, "path": q.path, "body": q.body, "nth": q.nth}))
                        .collect()
                })
                .unwrap_or_default();
            let body = json!({
                "count": list.len(),
                "max_in_flight": st.max_in_flight.load(Ordering::SeqCst),
                "requests": list,
            });
            if write_response(&mut out, 200, &[], &body.to_string()).is_err() {
                return;
            }
            continue;
        }
        let nth = {
            let mut seen = st.seen.lock().unwrap_or_else(|e| e.into_inner());
            let n = seen.entry(req.body.clone()).or_insert(0);
            *n += 1;
            *n
        };
        let rec = RecordedRequest {
            format: WireFormat::of_path(&req.path),
            method: req.method,
            path: req.path,
            headers: req.headers,
            body: req.body,
            nth,
        };
        if let Ok(mut r) = st.requests.lock() {
            r.push(rec.clone());
        }
        if let Some(answer) = batch::handle(st, &st.base, &rec) {
            let written = match answer {
                Some((status, headers, body)) => write_response(&mut out, status, &headers, &body),
                None => Err(std::io::ErrorKind::ConnectionAborted.into()),
            };
            if written.is_err() {
                let _ = out.shutdown(Shutdown::Both);
                return;
            }
            continue;
        }
        {
            let mut n = st.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            *n += 1;
            st.max_in_flight.fetch_max(*n, Ordering::SeqCst);
        }
        let action = match auth_problem(&rec) {
            Some(a) => a,
            None => (st.script)(&rec),
        };
        let answer = decide(st, &rec, action);
        // Out of flight before the answer is written: the client can only start its next
        // request after reading this one, so the count never includes a finished request.
        {
            let mut n = st.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            *n = n.saturating_sub(1);
        }
        let written = match answer {
            Some((status, headers, body)) => write_response(&mut out, status, &headers, &body),
            None => Err(std::io::ErrorKind::ConnectionAborted.into()),
        };
        if written.is_err() {
            let _ = out.shutdown(Shutdown::Both);
            return;
        }
    }
}

/// 401 when the format's key header is missing (OpenAI-compatible servers may go without).
fn auth_problem(r: &RecordedRequest) -> Option<Action> {
    let missing = match r.format? {
        WireFormat::Anthropic => {
            r.header("x-api-key").is_none_or(str::is_empty)
                || r.header("anthropic-version") != Some("2023-06-01")
        }
        WireFormat::Gemini => r.header("x-goog-api-key").is_none_or(str::is_empty),
        WireFormat::OpenAiChat | WireFormat::OpenAiCompletions => r
            .header("authorization")
            .is_some_and(|a| !a.starts_with("Bearer ")),
    };
    missing.then(|| Action::Error {
        status: 401,
        code: "authentication_error".into(),
        headers: Vec::new(),
    })
}

type Answer = Option<(u16, Vec<(String, String)>, String)>;

/// The answer to write (`None`: close the connection), after any pause the action asks for.
fn decide(st: &State, r: &RecordedRequest, action: Action) -> Answer {
    let Some(format) = r.format else {
        return Some((
            404,
            Vec::new(),
            r#"{"error":{"message":"no such endpoint"}}"#.into(),
        ));
    };
    match action {
        Action::Drop => None,
        Action::Delay(d, next) => {
            std::thread::sleep(d);
            decide(st, r, *next)
        }
        Action::Hold(n, next) => {
            // A gate for groups of `n`: the n-th request waiting opens it for its whole group
            // (a new epoch), so waiters that wake late are released too.
            let deadline = Instant::now() + Duration::from_secs(5);
            let mut g = st.hold.lock().unwrap_or_else(|e| e.into_inner());
            let epoch = g.1;
            g.0 += 1;
            if g.0 >= n {
                *g = (0, epoch + 1);
                st.hold_changed.notify_all();
            }
            while g.1 == epoch && Instant::now() < deadline {
                let (next_g, _) = st
                    .hold_changed
                    .wait_timeout(g, Duration::from_millis(50))
                    .unwrap_or_else(|e| e.into_inner());
                g = next_g;
            }
            if g.1 == epoch {
                g.0 = g.0.saturating_sub(1);
            }
            drop(g);
            decide(st, r, *next)
        }
        Action::Raw {
            status,
            headers,
            body,
        } => Some((status, headers, body)),
        Action::Error {
            status,
            code,
            headers,
        } => Some((status, headers, error_body(format, status, &code))),
        Action::Text { text, finish } => Some((200, Vec::new(), text_body(format, &text, finish))),
        Action::Blocked => Some((200, Vec::new(), blocked_body(format))),
    }
}

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

fn blocked_body(format: WireFormat) -> String {
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

/// The `FAKE{...}` directives in a request body, as (name, value) pairs.
pub fn directives(body: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut rest = body;
    while let Some(i) = rest.find("FAKE{") {
        let after = &rest[i + 5..];
        let Some(j) = after.find('}') else { break };
        for d in after[..j].split(',') {
            let d = d.trim();
            if d.is_empty() {
                continue;
            }
            let (k, v) = d.split_once('=').unwrap_or((d, ""));
            out.push((k.trim().to_string(), v.trim().to_string()));
        }
        rest = &after[j..];
    }
    out
}

fn grade_text(g: &str) -> String {
    format!("##final score: {g}")
}

/// The directive-driven script (see the module documentation).
pub fn markers() -> Script {
    Arc::new(|r: &RecordedRequest| {
        let ds = directives(&r.body);
        let get = |k: &str| ds.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let count = |k: &str| get(k).map(|v| v.parse::<u32>().unwrap_or(1));
        let text = |t: String| Action::Text {
            text: t,
            finish: Finish::Stop,
        };
        let mut action = if let Some(seq) = get("seq") {
            let entries: Vec<&str> = seq.split('|').collect();
            let e = entries
                .get((r.nth as usize).saturating_sub(1))
                .or(entries.last())
                .copied()
                .unwrap_or("x");
            if e.len() == 1 && e.chars().all(|c| c.is_ascii_digit()) {
                text(grade_text(e))
            } else {
                text("I cannot tell.".into())
            }
        } else if let Some(g) = get("warm") {
            let v: Value = serde_json::from_str(&r.body).unwrap_or(Value::Null);
            let t = v
                .get("temperature")
                .or_else(|| v.get("generationConfig").and_then(|c| c.get("temperature")))
                .and_then(Value::as_f64)
                .unwrap_or(0.0);
            if t > 0.0 {
                text(grade_text(g))
            } else {
                text("I cannot tell.".into())
            }
        } else if let Some(g) = get("fenced") {
            text(format!("```json\n{{\"final score\": {g}}}\n```"))
        } else if let Some(g) = get("trap") {
            text(format!("On a scale from 0 to 3, ##final score: {g}"))
        } else if get("truncated").is_some() {
            Action::Text {
                text: "The passage mentions the topic of the query, and to weigh its".into(),
                finish: Finish::Length,
            }
        } else if get("safety").is_some() {
            Action::Blocked
        } else if get("malformed").is_some() {
            Action::Raw {
                status: 200,
                headers: Vec::new(),
                body: "{\"choices\": [{\"message\": {\"content\": \"##final sc".into(),
            }
        } else if let Some(a) = utility_reply(r, &ds, false) {
            // Asked for log-probabilities (the utility task, also on a lost-in-the-middle
            // passage that carries `answer=`): the fake model's, not the reader's answer;
            // `lpfail` fails these requests only (400), not the answers.
            if get("lpfail").is_some() {
                return Action::Error {
                    status: 400,
                    code: "invalid_request_error".into(),
                    headers: Vec::new(),
                };
            }
            a
        } else if get("answer").is_some() {
            let first = r
                .body
                .find("FAKE{")
                .map(|i| &r.body[i..r.body[i..].find('}').map_or(r.body.len(), |j| i + j + 1)])
                .unwrap_or("");
            let answer = directives(first)
                .into_iter()
                .find(|(k, _)| k == "answer")
                .map_or_else(|| "NO-RESPONSE".to_string(), |(_, v)| v);
            text(answer)
        } else if let Some(a) = task_reply(r, &ds) {
            a
        } else {
            text(grade_text(get("grade").unwrap_or("1")))
        };
        let err = |status: u16, code: &str, headers: Vec<(String, String)>| Action::Error {
            status,
            code: code.into(),
            headers,
        };
        let code_for = |status: u16| match r.format {
            Some(WireFormat::Anthropic) => match status {
                429 => "rate_limit_error",
                529 => "overloaded_error",
                400 => "invalid_request_error",
                401 => "authentication_error",
                404 => "not_found_error",
                _ => "api_error",
            },
            Some(WireFormat::Gemini) => match status {
                429 => "RESOURCE_EXHAUSTED",
                503 => "UNAVAILABLE",
                400 => "INVALID_ARGUMENT",
                401 => "UNAUTHENTICATED",
                404 => "NOT_FOUND",
                _ => "INTERNAL",
            },
            _ => match status {
                429 => "rate_limit_exceeded",
                400 => "invalid_request_error",
                401 => "invalid_api_key",
                404 => "model_not_found",
                _ => "server_error",
            },
        };
        for status in [400u16, 401, 404] {
            if get(&status.to_string()).is_some() {
                return err(status, code_for(status), Vec::new());
            }
        }
        if get("quota").is_some() {
            return err(429, "insufficient_quota", Vec::new());
        }
        if count("429").is_some_and(|n| r.nth <= n) {
            let mut h = vec![("retry-after".to_string(), "1".to_string())];
            if get("noheader").is_some() {
                h.clear();
            } else if get("ms").is_some() {
                h.push(("retry-after-ms".into(), "1500".into()));
            }
            return err(429, code_for(429), h);
        }
        for status in [529u16, 503, 500] {
            if count(&status.to_string()).is_some_and(|n| r.nth <= n) {
                return err(status, code_for(status), Vec::new());
            }
        }
        if count("reset").is_some_and(|n| r.nth <= n) {
            return Action::Drop;
        }
        if count("slow").is_some_and(|n| r.nth <= n) {
            action = Action::Delay(Duration::from_secs(2), Box::new(action));
        }
        if let Some(n) = count("hold") {
            action = Action::Hold(n as usize, Box::new(action));
        }
        action
    })
}

fn request_temperature(body: &str) -> f64 {
    let v: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    v.get("temperature")
        .or_else(|| v.get("generationConfig").and_then(|c| c.get("temperature")))
        .and_then(Value::as_f64)
        .unwrap_or(0.0)
}

/// The reply of a part-2 task, recognised by its prompt's phrase (see the module documentation).
fn task_reply(r: &RecordedRequest, ds: &[(String, String)]) -> Option<Action> {
    use crate::task::{answer_equivalence, citations, nuggets, pairwise, pointwise};
    let has = |k: &str| ds.iter().any(|(n, _)| n == k);
    let get = |k: &str| ds.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let text = |t: String| Action::Text {
        text: t,
        finish: Finish::Stop,
    };
    let body = r.body.as_str();
    let is = |mark: &str| body.contains(mark) || body.contains(&mark.replace('\'', "\\u0027"));
    let task = if is(nuggets::CREATE_MARK) {
        "create"
    } else if is(nuggets::SCORE_MARK) {
        "score"
    } else if is(nuggets::ASSIGN_MARK) {
        "assign"
    } else if is(pairwise::MARK) {
        "pairwise"
    } else if is(pointwise::MARK) {
        "pointwise"
    } else if is(citations::MARK) {
        "citations"
    } else if is(answer_equivalence::MARK) {
        "equivalence"
    } else {
        return None;
    };
    if has("garbage") {
        return Some(text("I am not sure what you are asking.".into()));
    }
    let fence = |t: String, lang: &str| {
        if has("fence") {
            format!("```{lang}\n{t}\n```")
        } else {
            t
        }
    };
    let list = |items: &[String]| {
        if has("json") {
            serde_json::to_string(items).unwrap_or_default()
        } else {
            let quoted: Vec<String> = items.iter().map(|i| format!("'{i}'")).collect();
            format!("[{}]", quoted.join(", "))
        }
    };
    Some(match task {
        "create" => {
            let items: Vec<String> = get("nuggets")
                .unwrap_or("fake nugget")
                .split('|')
                .map(String::from)
                .collect();
            text(fence(list(&items), "python"))
        }
        "score" | "assign" => {
            let n = body
                .find("Return exactly ")
                .map(|i| &body[i + 15..])
                .and_then(|t| t.split(' ').next())
                .and_then(|d| d.parse::<usize>().ok())
                .unwrap_or(1);
            let default = if task == "score" { "vital" } else { "support" };
            let pool: Vec<&str> = get("labels").unwrap_or(default).split('|').collect();
            let mut items: Vec<String> = (0..n).map(|i| pool[i % pool.len()].to_string()).collect();
            if has("shortalways") || (has("short") && request_temperature(body) == 0.0) {
                items.pop();
            }
            text(fence(list(&items), "python"))
        }
        "pairwise" => {
            let b_start = body.find("[The Start of Assistant B").unwrap_or(body.len());
            let winner = if has("first") {
                "A"
            } else if let Some(i) = body.match_indices("FAKE{").map(|(i, _)| i).find(|&i| {
                directives(&body[i..body[i..].find('}').map_or(body.len(), |j| i + j + 1)])
                    .iter()
                    .any(|(k, _)| k == "win")
            }) {
                if i < b_start {
                    "A"
                } else {
                    "B"
                }
            } else {
                "C"
            };
            if has("bracket") {
                text(format!(
                    "Both assistants address the question.\n\nFinal verdict: [[{winner}]]"
                ))
            } else {
                let j = json!({"answer_a_analysis": "fake analysis of A",
                               "answer_b_analysis": "fake analysis of B",
                               "comparison_reasoning": "fake comparison",
                               "winner": winner});
                text(fence(j.to_string(), "json"))
            }
        }
        "equivalence" => {
            let verdict = get("verdict").unwrap_or("correct").to_ascii_uppercase();
            if has("verdictline") {
                text(format!(
                    "The candidate names the same thing.\nVerdict: {verdict}"
                ))
            } else {
                text(fence(verdict, ""))
            }
        }
        "pointwise" => {
            let score: i64 = get("score").and_then(|s| s.parse().ok()).unwrap_or(1);
            let j = json!({"reasoning": "fake reasoning", "score": score});
            text(fence(j.to_string(), "json"))
        }
        _ => {
            let level = get("support").unwrap_or("full");
            if has("word") {
                text(level.to_string())
            } else {
                text(fence(json!({ "support": level }).to_string(), "json"))
            }
        }
    })
}

/// Every request answered 503 (a provider that is down).
pub fn down() -> Script {
    Arc::new(|_r: &RecordedRequest| Action::Error {
        status: 503,
        code: "unavailable".into(),
        headers: Vec::new(),
    })
}

/// [`markers`], but `/completions` echoes are misaligned the way llama-cpp-python's are for a
/// prompt without BOS: token i carries the value of the distribution after it.
pub fn shifted() -> Script {
    let base = markers();
    Arc::new(move |r: &RecordedRequest| {
        utility_reply(r, &directives(&r.body), true).unwrap_or_else(|| base(r))
    })
}

/// A script by name: `markers` (default), `down` or `shifted`.
pub fn scenario(name: &str) -> Option<Script> {
    match name {
        "markers" => Some(markers()),
        "down" => Some(down()),
        "shifted" => Some(shifted()),
        _ => None,
    }
}

// ------------------------------------------------------------------ utilities (logprobs)
//
// `/completions` with `logprobs` and chat requests with `top_logprobs` get log-probabilities
// from a fake model over a fake tokenizer, so tests can compute every served value:
//
// * tokens ([`fake_tokens`]): a newline or tab alone, a space alone before whitespace, else an
//   optional space and a run of other characters;
// * the log-probability of token t at position i is [`fake_logprob`]`(i, t)` =
//   −(0.5 + 0.1·chars(t) + 3·(i mod 2)); directive `lp=X` makes the last prompt token's X;
// * generation always produces "Sure" (position n = the prompt's token count), alternatives
//   " Yes" one nat below;
// * echo: the prompt's tokens then "Sure", the first logprob null; `cut` drops the last 3;
//   the `shifted` script gives token i the value at position i + 1 (the completion included);
// * chat `top_logprobs: N`: "Sure" at −0.1, then "alt1".."alt{N-1}" at −(4 + 0.25·k); with
//   `lp=X` the last alternative is "NO" at X;
// * Gemini `generationConfig.responseLogprobs: true, logprobs: N`: the same N alternatives as
//   `logprobsResult.topCandidates[0].candidates` (`logProbability`), "Sure" at −0.1 as its
//   `chosenCandidates[0]`.

/// The fake server's tokens of `text` (see above).
pub fn fake_tokens(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if c.is_whitespace() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            if c == ' ' {
                cur.push(' ');
            } else {
                out.push(c.to_string());
            }
        } else {
            cur.push(c);
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The fake model's log-probability of `token` at `position` (see above).
pub fn fake_logprob(position: usize, token: &str) -> f64 {
    -(0.5 + 0.1 * token.chars().count() as f64 + 3.0 * (position % 2) as f64)
}

/// The generated token and the alternative the fake lists with it.
pub const FAKE_GENERATED: &str = "Sure";
pub const FAKE_ALTERNATIVE: &str = " Yes";
/// The generated token's logprob in chat replies.
pub const FAKE_CHAT_LOGPROB: f64 = -0.1;

/// The chat alternatives' log-probability at rank k ≥ 1.
pub fn fake_alternative_logprob(k: usize) -> f64 {
    -(4.0 + 0.25 * k as f64)
}

/// The first token's top `k` alternatives of chat and Gemini replies (see above), as
/// (token, log-probability, token id): the generated token, then "alt1".., with `forced`'s "NO"
/// last.
fn top_alternatives(k: usize, forced: Option<f64>) -> Vec<(String, f64, usize)> {
    let mut top = vec![(FAKE_GENERATED.to_string(), FAKE_CHAT_LOGPROB, 1)];
    for i in 1..k.max(1) {
        top.push((format!("alt{i}"), fake_alternative_logprob(i), 100 + i));
    }
    if let (Some(x), true) = (forced, k > 1) {
        top[k - 1] = ("NO".to_string(), x, 2);
    }
    top
}

fn utility_reply(r: &RecordedRequest, ds: &[(String, String)], shifted: bool) -> Option<Action> {
    let v: Value = serde_json::from_str(&r.body).ok()?;
    let get = |k: &str| ds.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    let forced: Option<f64> = get("lp").and_then(|x| x.parse().ok());
    let body = match r.format? {
        WireFormat::OpenAiCompletions if v.get("logprobs").is_some_and(Value::is_u64) => {
            let prompt = v.get("prompt")?.as_str()?;
            let echo = v.get("echo").and_then(Value::as_bool) == Some(true);
            let toks = fake_tokens(prompt);
            let n = toks.len();
            let gen = fake_logprob(n, FAKE_GENERATED);
            let (mut tokens, mut values): (Vec<String>, Vec<Option<f64>>) = if echo {
                let mut vals: Vec<Option<f64>> = toks
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        if shifted {
                            Some(fake_logprob(i + 1, t))
                        } else if i + 1 == n && forced.is_some() {
                            forced
                        } else {
                            Some(fake_logprob(i, t))
                        }
                    })
                    .collect();
                if let Some(first) = vals.first_mut() {
                    *first = None;
                }
                let mut tokens = toks.clone();
                tokens.push(FAKE_GENERATED.into());
                vals.push(Some(if shifted {
                    fake_logprob(n + 1, FAKE_GENERATED)
                } else {
                    gen
                }));
                (tokens, vals)
            } else {
                (vec![FAKE_GENERATED.into()], vec![Some(gen)])
            };
            if get("cut").is_some() {
                let keep = tokens.len().saturating_sub(3);
                tokens.truncate(keep);
                values.truncate(keep);
            }
            let top: Vec<Value> = tokens
                .iter()
                .zip(&values)
                .enumerate()
                .map(|(i, (t, v))| match v {
                    None => Value::Null,
                    Some(x) if !echo || i == tokens.len() - 1 => {
                        json!({ t.clone(): x, FAKE_ALTERNATIVE: x - 1.0 })
                    }
                    Some(x) => json!({ t.clone(): x }),
                })
                .collect();
            let text = if echo {
                format!("{prompt}{FAKE_GENERATED}")
            } else {
                FAKE_GENERATED.to_string()
            };
            json!({
                "id": "cmpl-fake", "object": "text_completion", "model": "fake",
                "choices": [{"index": 0, "text": text, "finish_reason": "length",
                             "logprobs": {"tokens": tokens, "token_logprobs": values,
                                          "top_logprobs": top}}],
                "usage": {"prompt_tokens": n, "completion_tokens": 1, "total_tokens": n + 1}
            })
        }
        WireFormat::OpenAiChat => {
            let k = v.get("top_logprobs")?.as_u64()? as usize;
            let top: Vec<Value> = top_alternatives(k, forced)
                .into_iter()
                .map(|(token, lp, _)| json!({"token": token, "logprob": lp, "bytes": null}))
                .collect();
            json!({
                "id": "chatcmpl-fake", "object": "chat.completion", "model": "fake",
                "choices": [{"index": 0,
                             "message": {"role": "assistant", "content": FAKE_GENERATED},
                             "logprobs": {"content": [{"token": FAKE_GENERATED,
                                                       "logprob": FAKE_CHAT_LOGPROB,
                                                       "bytes": null, "top_logprobs": top}],
                                          "refusal": null},
                             "finish_reason": "length"}],
                "usage": {"prompt_tokens": FAKE_INPUT_TOKENS, "completion_tokens": 1,
                          "total_tokens": FAKE_INPUT_TOKENS + 1}
            })
        }
        WireFormat::Gemini
            if v.pointer("/generationConfig/responseLogprobs") == Some(&Value::Bool(true)) =>
        {
            // The chat alternatives above in Gemini's `logprobsResult` (the API's own maximum
            // of 20 top candidates is the caller's to respect).
            let k = v
                .pointer("/generationConfig/logprobs")
                .and_then(Value::as_u64)
                .unwrap_or(0) as usize;
            let cand = |token: &str, lp: f64, id: usize| json!({"token": token, "tokenId": id, "logProbability": lp});
            let top: Vec<Value> = top_alternatives(k, forced)
                .into_iter()
                .map(|(token, lp, id)| cand(&token, lp, id))
                .collect();
            json!({
                "candidates": [{"content": {"role": "model", "parts": [{"text": FAKE_GENERATED}]},
                                "finishReason": "MAX_TOKENS", "index": 0,
                                "avgLogprobs": FAKE_CHAT_LOGPROB,
                                "logprobsResult": {
                                    "topCandidates": [{"candidates": top}],
                                    "chosenCandidates": [cand(FAKE_GENERATED, FAKE_CHAT_LOGPROB, 1)]
                                }}],
                "usageMetadata": {"promptTokenCount": FAKE_INPUT_TOKENS, "candidatesTokenCount": 1,
                                  "totalTokenCount": FAKE_INPUT_TOKENS + 1},
                "modelVersion": "fake"
            })
        }
        _ => return None,
    };
    Some(Action::Raw {
        status: 200,
        headers: Vec::new(),
        body: body.to_string(),
    })
}
