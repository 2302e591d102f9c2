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
mod logprobs;
mod scripts;
mod wire;

pub use logprobs::*;
pub use scripts::*;
pub use wire::*;

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
