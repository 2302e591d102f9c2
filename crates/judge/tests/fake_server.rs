//! The judge layer end to end against the fake provider server on 127.0.0.1, over real HTTP
//! (ureq), with a fake clock: sleeps return at once and are recorded, so retry delays are
//! asserted exactly and nothing waits for them.

use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use ragscope_judge::native::{DirCache, UreqTransport};
use ragscope_judge::provider;
use ragscope_judge::runner::estimate;
use ragscope_judge::task::umbrela::Umbrela;
use ragscope_judge::{
    run_job, ApiKey, Budget, CacheStore, Control, Env, Event, Job, JudgeOptions, MemoryCache,
    Price, ProviderConfig, ProviderKind, RunSummary, Runtime, Status,
};
use ragscope_judge_fake::{self as fake, FakeServer, FAKE_INPUT_TOKENS, FAKE_OUTPUT_TOKENS};
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::time::Duration;

const KEY: &str = "sk-fake-SECRET-key-5f3a9c";

/// A clock that jumps: `sleep(d)` records `d`, moves `now` by it, and returns at once. It resumes
/// a paused control on the first pause poll, so pausing is exercised without another thread.
#[derive(Default)]
struct FakeClock {
    now: Cell<u64>,
    sleeps: RefCell<Vec<Duration>>,
    resume: RefCell<Option<Control>>,
}

impl Runtime for FakeClock {
    fn sleep(&self, d: Duration) -> LocalBoxFuture<'static, ()> {
        self.sleeps.borrow_mut().push(d);
        self.now.set(self.now.get() + d.as_millis() as u64);
        if let Some(c) = self.resume.borrow().as_ref() {
            c.resume();
        }
        Box::pin(async {})
    }
    fn now_ms(&self) -> u64 {
        1_700_000_000_000 + self.now.get()
    }
}

struct Setup {
    server: FakeServer,
    clock: Rc<FakeClock>,
    env: Env,
}

fn setup(kind: ProviderKind, cache: Rc<dyn CacheStore>) -> Setup {
    let server = FakeServer::start(fake::markers()).unwrap();
    let base = match kind {
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => format!("{}/v1", server.url()),
        _ => server.url(),
    };
    let config =
        ProviderConfig::new(kind, "fake-model", Some(&base), Some(ApiKey::new(KEY))).unwrap();
    let clock = Rc::new(FakeClock::default());
    let env = Env {
        provider: Rc::from(provider::provider(config)),
        transport: Rc::new(UreqTransport::new()),
        runtime: clock.clone(),
        cache,
    };
    Setup { server, clock, env }
}

fn job(passages: &[(&str, &str)], samples: u32) -> Job {
    let task = Umbrela::new();
    let items = passages
        .iter()
        .map(|(d, text)| {
            task.item("q1", d, "what is the fake answer?", text)
                .unwrap()
        })
        .collect();
    Job {
        task: Rc::new(task),
        items,
        samples,
    }
}

fn opts(concurrency: usize) -> JudgeOptions {
    JudgeOptions {
        concurrency,
        timeout: Duration::from_millis(400),
        ..JudgeOptions::default()
    }
}

fn run(s: &Setup, job: &Job, o: &JudgeOptions, control: &Control) -> (RunSummary, Vec<Event>) {
    let mut events = Vec::new();
    let summary = block_on(run_job(job, &s.env, o, control, &mut |e| events.push(e)));
    (summary, events)
}

/// Every item's passages: directives for the fake server, and the expected outcome.
const CASES: [(&str, &str); 15] = [
    ("d00", "FAKE{grade=0}"),
    ("d01", "FAKE{grade=2}"),
    ("d02", "FAKE{fenced=3}"),
    ("d03", "FAKE{trap=1}"),
    ("d04", "FAKE{429=2,grade=3}"),
    ("d05", "FAKE{529=1,grade=2}"),
    ("d06", "FAKE{503=1,grade=1}"),
    ("d07", "FAKE{500=1,grade=0}"),
    ("d08", "FAKE{reset=1,grade=1}"),
    ("d09", "FAKE{slow=1,grade=2}"),
    ("d10", "FAKE{400}"),
    ("d11", "FAKE{malformed}"),
    ("d12", "FAKE{safety}"),
    ("d13", "FAKE{truncated}"),
    ("d14", "FAKE{quota}"),
];

const QRELS: &str = "q1 0 d00 0\nq1 0 d01 2\nq1 0 d02 3\nq1 0 d03 1\nq1 0 d04 3\nq1 0 d05 2\n\
q1 0 d06 1\nq1 0 d07 0\nq1 0 d08 1\nq1 0 d09 2\n";

/// (docno, attempts, error fragment) of the failures.
const FAILURES: [(&str, u32, &str); 5] = [
    ("d10", 1, "HTTP 400"),
    ("d11", 1, "malformed reply"),
    ("d12", 1, ""),
    ("d13", 1, "max_tokens"),
    ("d14", 1, "insufficient_quota"),
];

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

fn every_provider_grades_records_failures_and_resumes(kind: ProviderKind) {
    let dir = tempfile::tempdir().unwrap();
    block_on(ragscope_judge::cache::check_store(
        &DirCache::open(dir.path().join("check")).unwrap(),
    ))
    .unwrap();
    let cache = Rc::new(DirCache::open(dir.path().join("cache")).unwrap());
    let s = setup(kind, cache);
    let j = job(&CASES, 1);
    let o = opts(4);
    let (sum, events) = run(&s, &j, &o, &Control::new());

    assert_eq!(j.task.write_output(&sum.records), QRELS, "{kind}");
    let by_doc: HashMap<&str, _> = sum
        .records
        .iter()
        .map(|r| (r.key.get("docno").unwrap(), r))
        .collect();
    for (d, attempts, err) in FAILURES {
        let r = by_doc[d];
        assert_eq!(r.status, Status::Failed, "{kind} {d}");
        assert_eq!(r.result, None, "{kind} {d}");
        assert_eq!(r.attempts, attempts, "{kind} {d}");
        assert!(
            r.error.as_deref().unwrap().contains(err),
            "{kind} {d}: {:?}",
            r.error
        );
    }
    let safety = by_doc["d12"].error.as_deref().unwrap();
    match kind {
        ProviderKind::Gemini => assert!(safety.starts_with("blocked by the provider"), "{safety}"),
        _ => assert!(safety.contains("refused"), "{safety}"),
    }
    // One retry each for 529/503/500/reset/slow, two for the 429s.
    for (d, a) in [
        ("d04", 3),
        ("d05", 2),
        ("d06", 2),
        ("d07", 2),
        ("d08", 2),
        ("d09", 2),
        ("d00", 1),
    ] {
        assert_eq!(by_doc[d].attempts, a, "{kind} {d}: {:?}", by_doc[d]);
        assert_eq!(by_doc[d].status, Status::Ok, "{kind} {d}");
    }
    assert!(by_doc["d09"].error.is_none());

    // Retry delays: the 429s' retry-after (1 s) exactly; backoff after the others' first attempt,
    // 0.5 s less up to 25% jitter.
    let retries: Vec<(String, u32, Duration)> = events
        .iter()
        .filter_map(|e| match e {
            Event::Retry {
                key,
                attempt,
                delay,
                ..
            } => Some((key.get("docno").unwrap().to_string(), *attempt, *delay)),
            _ => None,
        })
        .collect();
    assert_eq!(retries.len(), 7, "{kind}: {retries:?}");
    for (d, attempt, delay) in &retries {
        if d == "d04" {
            assert_eq!(*delay, Duration::from_secs(1), "{kind}");
        } else {
            assert_eq!(*attempt, 1);
            assert!(
                *delay <= Duration::from_millis(500) && *delay >= Duration::from_millis(375),
                "{kind} {d}: {delay:?}"
            );
        }
    }
    let mut slept = s.clock.sleeps.borrow().clone();
    slept.sort();
    let mut expected: Vec<Duration> = retries.iter().map(|r| r.2).collect();
    expected.sort();
    assert_eq!(
        slept, expected,
        "{kind}: the runner slept exactly the retry delays"
    );

    // No item paid twice: each body was sent exactly as often as its record says.
    let reqs = s.server.requests();
    let total: u32 = sum.records.iter().map(|r| r.attempts).sum();
    assert_eq!(reqs.len() as u32, total, "{kind}");
    assert_eq!(sum.progress.requests, u64::from(total));
    // Tokens: the 10 graded, the truncated and the refused/blocked replies carry usage.
    let paid = sum.progress.input_tokens;
    assert!(paid >= 10 * FAKE_INPUT_TOKENS, "{kind}: {paid}");
    assert_eq!(by_doc["d01"].input_tokens, FAKE_INPUT_TOKENS);
    assert_eq!(by_doc["d01"].output_tokens, FAKE_OUTPUT_TOKENS);
    // The key reached the server, in its header...
    assert!(reqs
        .iter()
        .all(|r| r.headers.iter().any(|(_, v)| v.contains(KEY))));
    // ...and nothing else: not the records, the log lines, the events, the cache files.
    let mut texts: Vec<String> = sum.records.iter().map(|r| r.log_line()).collect();
    texts.push(j.task.write_output(&sum.records));
    texts.extend(events.iter().map(|e| format!("{e:?}")));
    for f in files_under(dir.path()) {
        texts.push(std::fs::read_to_string(&f).unwrap());
        assert!(!f.to_string_lossy().contains(KEY));
    }
    assert!(
        texts.iter().all(|t| !t.contains(KEY)),
        "{kind}: the key leaked"
    );
    let log: Vec<Value> = sum
        .records
        .iter()
        .map(|r| serde_json::from_str(&r.log_line()).unwrap())
        .collect();
    assert_eq!(log[1]["qid"], "q1");
    assert_eq!(log[1]["docno"], "d01");
    assert_eq!(log[1]["result"], 2);
    assert_eq!(log[1]["status"], "ok");
    assert_eq!(log[10]["status"], "failed");
    assert_eq!(log[10]["result"], Value::Null);

    // Rerun on the cache: the answered requests are not bought again (unparseable ones are parsed
    // again); only the two that never got an answer (400, insufficient_quota) are sent.
    let before = reqs.len();
    let (again, _) = run(&s, &j, &o, &Control::new());
    let mut sent: Vec<String> = s.server.requests()[before..]
        .iter()
        .map(|r| fake::directives(&r.body)[0].0.clone())
        .collect();
    sent.sort();
    assert_eq!(sent, vec!["400".to_string(), "quota".to_string()], "{kind}");
    assert_eq!(j.task.write_output(&again.records), QRELS);
    // The two re-sent requests got error answers: no tokens bought.
    assert_eq!(again.progress.input_tokens, 0, "nothing bought: {kind}");
    assert!(again.records[..10]
        .iter()
        .all(|r| r.cached && r.attempts == 0));
    assert!(again.records[11].cached && again.records[11].status == Status::Failed);
}

#[test]
fn anthropic_end_to_end() {
    every_provider_grades_records_failures_and_resumes(ProviderKind::Anthropic);
}

#[test]
fn gemini_end_to_end() {
    every_provider_grades_records_failures_and_resumes(ProviderKind::Gemini);
}

#[test]
fn openai_end_to_end() {
    every_provider_grades_records_failures_and_resumes(ProviderKind::OpenAi);
}

#[test]
fn openai_compatible_end_to_end() {
    every_provider_grades_records_failures_and_resumes(ProviderKind::OpenAiCompatible);
}

#[test]
fn concurrency_cap_is_reached_and_never_exceeded() {
    let s = setup(ProviderKind::OpenAi, Rc::new(MemoryCache::new()));
    let passages: Vec<(String, String)> = (0..12)
        .map(|i| {
            (
                format!("d{i}"),
                format!("FAKE{{hold=3,grade=2}} passage {i}"),
            )
        })
        .collect();
    let refs: Vec<(&str, &str)> = passages
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let j = job(&refs, 1);
    let mut o = opts(3);
    o.timeout = Duration::from_secs(20);
    let (sum, _) = run(&s, &j, &o, &Control::new());
    assert!(sum.all_ok(), "{:?}", sum.records);
    assert_eq!(s.server.request_count(), 12);
    // `hold=3` keeps each answer until three requests are in flight: the high-water mark is 3
    // when the runner keeps three going, and would exceed 3 if it sent more.
    assert_eq!(s.server.max_in_flight(), 3);
}

/// umbrela's evaluate case: three samples per document, majority per document (the scripted
/// outputs in umbrela's order, with its bare digits written as `##final score: N` — our parser
/// does not read bare digits — and its unparseable outputs left out of the vote, not read as 0).
#[test]
fn samples_vote_like_umbrela_and_are_cached_one_by_one() {
    let case: Value = serde_json::from_str(
        &std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../../../shared/data/umbrela/evaluate_mode_case.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let outs: Vec<&str> = case["scripted_outputs_in_order_d0_d1_d2_d3_x3"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    let passages: Vec<(String, String)> = (0..4)
        .map(|d| {
            let seq: Vec<&str> = outs[d * 3..d * 3 + 3]
                .iter()
                .map(|o| if o.len() == 1 { *o } else { "x" })
                .collect();
            (format!("d{d}"), format!("FAKE{{seq={}}}", seq.join("|")))
        })
        .collect();
    let refs: Vec<(&str, &str)> = passages
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let cache = Rc::new(MemoryCache::new());
    let s = setup(ProviderKind::Anthropic, cache.clone());
    let j = job(&refs, 3);
    let (sum, _) = run(&s, &j, &opts(4), &Control::new());
    let mut expected = String::new();
    for d in 0..4 {
        let g = case["expected_modified_qrel"]["1"][format!("d{d}")]
            .as_str()
            .unwrap();
        expected.push_str(&format!("q1 0 d{d} {g}\n"));
    }
    assert_eq!(j.task.write_output(&sum.records), expected);
    // d0 and d1 each had one unparseable sample: recorded, and left out of the vote.
    assert!(sum.records[0].error.as_deref().unwrap().contains("sample"));
    assert_eq!(cache.len(), 12);
    assert_eq!(s.server.request_count(), 12);
    let (again, _) = run(&s, &j, &opts(4), &Control::new());
    assert_eq!(
        s.server.request_count(),
        12,
        "a rerun on the cache sends nothing"
    );
    assert_eq!(j.task.write_output(&again.records), expected);
    assert_eq!(again.progress.cached, 4);
}

#[test]
fn budget_stops_before_it_is_exceeded_and_estimate_counts_the_cache() {
    let s = setup(ProviderKind::OpenAi, Rc::new(MemoryCache::new()));
    let passages: Vec<(String, String)> = (0..6)
        .map(|i| (format!("d{i}"), format!("FAKE{{grade=1}} passage {i}")))
        .collect();
    let refs: Vec<(&str, &str)> = passages
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let j = job(&refs, 1);
    let price = Price {
        input: 1.0,
        output: 2.0,
    };
    let mut o = opts(1);
    o.price = Some(price);
    let est = block_on(estimate(&j, &s.env, &o)).unwrap();
    assert_eq!((est.requests, est.cached), (6, 0));
    assert_eq!(est.max_output_tokens, 600);
    let per_request = (est.input_tokens + est.max_output_tokens) / 6;
    // A request goes only when what was spent plus its estimated ceiling fits: room for two
    // (the first bills 126 tokens), not three.
    let billed = FAKE_INPUT_TOKENS + FAKE_OUTPUT_TOKENS;
    let max_tokens = per_request + billed + billed / 2;
    o.budget = Budget {
        max_cost: None,
        max_tokens: Some(max_tokens),
    };
    let (sum, _) = run(&s, &j, &o, &Control::new());
    let spent = sum.progress.input_tokens + sum.progress.output_tokens;
    assert!(spent <= max_tokens);
    let sent = s.server.request_count();
    assert_eq!(sent, 2);
    let failed: Vec<_> = sum
        .records
        .iter()
        .filter(|r| r.status == Status::Failed)
        .collect();
    assert_eq!(failed.len(), 6 - sent);
    assert!(failed
        .iter()
        .all(|r| r.error.as_deref().unwrap().contains("token budget")));
    assert!(sum.stopped.as_deref().unwrap().contains("budget"));
    let cost = sum.progress.cost.unwrap();
    assert!((cost - sent as f64 * (120.0 * 1.0 + 6.0 * 2.0) / 1e6).abs() < 1e-12);
    let est = block_on(estimate(&j, &s.env, &o)).unwrap();
    assert_eq!(
        (est.requests as usize, est.cached as usize),
        (6 - sent, sent)
    );

    // A cost budget needs a price.
    let mut o = opts(1);
    o.budget.max_cost = Some(1.0);
    let (sum, _) = run(&s, &j, &o, &Control::new());
    assert!(sum.records.iter().all(|r| r.status == Status::Failed));
    assert_eq!(s.server.request_count(), sent);
}

#[test]
fn cancel_and_pause() {
    let s = setup(ProviderKind::Gemini, Rc::new(MemoryCache::new()));
    let passages: Vec<(String, String)> = (0..5)
        .map(|i| (format!("d{i}"), format!("FAKE{{grade=3}} passage {i}")))
        .collect();
    let refs: Vec<(&str, &str)> = passages
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let j = job(&refs, 1);

    // Pause after the first item; the clock resumes on the first pause poll.
    let control = Control::new();
    *s.clock.resume.borrow_mut() = Some(control.clone());
    let c2 = control.clone();
    let sum = block_on(run_job(&j, &s.env, &opts(1), &control, &mut |e| {
        if matches!(e, Event::Item(_)) {
            c2.pause();
        }
    }));
    assert!(sum.all_ok());
    assert!(s
        .clock
        .sleeps
        .borrow()
        .contains(&Duration::from_millis(200)));
    assert_eq!(s.server.request_count(), 5);

    // Cancel after the first item: the rest are recorded as failed, not sent.
    let j2 = job(&[("e0", "FAKE{grade=0} e0"), ("e1", "e1"), ("e2", "e2")], 1);
    let control = Control::new();
    let c2 = control.clone();
    let sum = block_on(run_job(&j2, &s.env, &opts(1), &control, &mut |e| {
        if matches!(e, Event::Item(_)) {
            c2.cancel();
        }
    }));
    assert_eq!(sum.stopped.as_deref(), Some("cancelled"));
    assert_eq!(sum.records[0].status, Status::Ok);
    for r in &sum.records[1..] {
        assert_eq!(r.status, Status::Failed);
        assert_eq!(r.error.as_deref(), Some("cancelled before sending"));
    }
    assert_eq!(s.server.request_count(), 6);
}

#[test]
fn server_delay_headers_and_preflight() {
    // retry-after-ms wins over retry-after.
    let s = setup(ProviderKind::Anthropic, Rc::new(MemoryCache::new()));
    let j = job(&[("d", "FAKE{429=1,ms,grade=2}")], 1);
    let (sum, _) = run(&s, &j, &opts(1), &Control::new());
    assert!(sum.all_ok());
    assert_eq!(*s.clock.sleeps.borrow(), vec![Duration::from_millis(1500)]);

    // Gemini's RetryInfo in the body when there is no header.
    let g = setup(ProviderKind::Gemini, Rc::new(MemoryCache::new()));
    let j = job(&[("d", "FAKE{429=1,noheader,grade=2}")], 1);
    let (sum, _) = run(&g, &j, &opts(1), &Control::new());
    assert!(sum.all_ok());
    assert_eq!(*g.clock.sleeps.borrow(), vec![Duration::from_secs(2)]);

    // CORS preflight, as a browser sends it.
    use std::io::{Read, Write};
    let mut c = std::net::TcpStream::connect(("127.0.0.1", s.server.port())).unwrap();
    c.write_all(
        b"OPTIONS /v1/messages HTTP/1.1\r\nHost: x\r\nOrigin: http://127.0.0.1:8080\r\n\
Access-Control-Request-Method: POST\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let mut head = vec![0u8; 1024];
    let n = c.read(&mut head).unwrap();
    let head = String::from_utf8_lossy(&head[..n]).to_ascii_lowercase();
    assert!(head.starts_with("http/1.1 204"));
    assert!(head.contains("access-control-allow-origin: *"));
    assert!(head.contains("anthropic-dangerous-direct-browser-access"));
    assert!(head.contains("x-goog-api-key"));
}

#[test]
fn rate_limit_waits_for_the_window() {
    let s = setup(ProviderKind::OpenAiCompatible, Rc::new(MemoryCache::new()));
    let j = job(
        &[
            ("a", "FAKE{grade=1} a"),
            ("b", "FAKE{grade=1} b"),
            ("c", "FAKE{grade=1} c"),
            ("d", "FAKE{grade=1} d"),
        ],
        1,
    );
    let mut o = opts(1);
    o.rate.requests_per_minute = Some(2);
    let (sum, _) = run(&s, &j, &o, &Control::new());
    assert!(sum.all_ok());
    // Two requests at t0, then the third waits until the first leaves the one-minute window;
    // the fourth fits beside the third.
    assert_eq!(*s.clock.sleeps.borrow(), vec![Duration::from_secs(60)]);
    assert_eq!(s.server.request_count(), 4);
}

/// A task that re-asks at a higher temperature after a reply that does not parse (as
/// nuggetizer does): the runner sends the re-ask, caches it on its own, and records the attempts.
#[test]
fn reask_after_an_unparseable_reply() {
    struct Reasking(Umbrela);
    impl ragscope_judge::Task for Reasking {
        fn name(&self) -> &str {
            "umbrela-reask"
        }
        fn template_version(&self) -> &str {
            "test-1"
        }
        fn parse(&self, r: &ragscope_judge::Reply) -> Result<Value, String> {
            self.0.parse(r)
        }
        fn vote(&self, v: &[Value]) -> Option<Value> {
            self.0.vote(v)
        }
        fn write_output(&self, r: &[ragscope_judge::ItemRecord]) -> String {
            self.0.write_output(r)
        }
        fn reask(
            &self,
            call: &ragscope_judge::Call,
            _failed: &str,
            n: u32,
        ) -> Option<ragscope_judge::Call> {
            let ragscope_judge::Call::Chat(c) = call else {
                return None;
            };
            let mut c = c.clone();
            c.params.temperature = Some(0.2 * n as f32);
            Some(ragscope_judge::Call::Chat(c))
        }
    }
    let cache = Rc::new(MemoryCache::new());
    let s = setup(ProviderKind::Anthropic, cache.clone());
    let base = job(
        &[("ok", "FAKE{warm=2} ok"), ("never", "FAKE{seq=x} never")],
        1,
    );
    let j = Job {
        task: Rc::new(Reasking(Umbrela::new())),
        items: base.items,
        samples: 1,
    };
    let mut o = opts(2);
    o.parse_retries = 2;
    let (sum, _) = run(&s, &j, &o, &Control::new());
    assert_eq!(sum.records[0].status, Status::Ok);
    assert_eq!(sum.records[0].result, Some(Value::from(2)));
    assert_eq!(sum.records[0].attempts, 2);
    assert_eq!(sum.records[1].status, Status::Failed);
    assert_eq!(sum.records[1].attempts, 3);
    assert!(sum.records[1]
        .error
        .as_deref()
        .unwrap()
        .ends_with("(after 2 re-asks)"));
    assert_eq!(s.server.request_count(), 5);
    assert_eq!(cache.len(), 5);
    let (again, _) = run(&s, &j, &o, &Control::new());
    assert_eq!(
        s.server.request_count(),
        5,
        "re-asks come from the cache too"
    );
    assert_eq!(again.records[0].result, Some(Value::from(2)));
    assert!(again.records.iter().all(|r| r.cached));
}

/// Any transport plugs in (the browser's is `fetch`): here one in memory that fails as a browser
/// does when CORS or the CSP blocks a request — not retried — or times out — retried.
#[test]
fn transport_errors_in_memory() {
    use ragscope_judge::{HttpRequest, HttpResponse, Transport, TransportError};
    struct Flaky(Cell<u32>);
    impl Transport for Flaky {
        fn send(
            &self,
            req: HttpRequest,
        ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
            self.0.set(self.0.get() + 1);
            let r = if req.body.contains("blocked") {
                Err(TransportError::Other("TypeError: Failed to fetch".into()))
            } else if self.0.get() == 1 {
                Err(TransportError::Timeout(req.timeout.unwrap_or_default()))
            } else {
                Ok(HttpResponse {
                    status: 200,
                    headers: vec![],
                    body: fake::text_body(
                        fake::WireFormat::OpenAiChat,
                        "##final score: 3",
                        fake::Finish::Stop,
                    ),
                })
            };
            Box::pin(async move { r })
        }
    }
    let mut s = setup(ProviderKind::OpenAi, Rc::new(MemoryCache::new()));
    let transport = Rc::new(Flaky(Cell::new(0)));
    s.env.transport = transport.clone();
    let j = job(&[("a", "fine"), ("b", "blocked")], 1);
    let (sum, _) = run(&s, &j, &opts(1), &Control::new());
    assert_eq!(sum.records[0].result, Some(Value::from(3)));
    assert_eq!(sum.records[0].attempts, 2);
    assert_eq!(sum.records[1].status, Status::Failed);
    assert_eq!(sum.records[1].attempts, 1);
    assert_eq!(
        sum.records[1].error.as_deref(),
        Some("TypeError: Failed to fetch")
    );
    assert_eq!(transport.0.get(), 3);
    assert_eq!(s.server.request_count(), 0);
}

/// The fake's free-text reader (the lost-in-the-middle page's e2e test relies on it): it answers
/// `answer=X` only when the first `FAKE{}` block of the request holds it, in every wire format.
#[test]
fn the_fake_reader_answers_from_the_first_passage_only() {
    use ragscope_judge::task::answer::Answer;
    use ragscope_judge::{ItemKey, JobItem};
    for kind in ProviderKind::ALL {
        let s = setup(kind, Rc::new(MemoryCache::new()));
        let task = Answer::new(32);
        let prompt = |docs: &[&str]| {
            let mut p = String::new();
            for d in docs {
                p.push_str(&format!("Document: {d}\n"));
            }
            p + "Question: where?\nAnswer:"
        };
        let items: Vec<JobItem> = [
            prompt(&["Paris FAKE{answer=Paris}", "other FAKE{d}"]),
            prompt(&["other FAKE{d}", "Paris FAKE{answer=Paris}"]),
            prompt(&["Rome FAKE{answer=Rome,400}", "other FAKE{d}"]),
        ]
        .iter()
        .enumerate()
        .map(|(i, p)| task.item(ItemKey(vec![("i".into(), i.to_string())]), Some("sys"), p))
        .collect();
        let job = Job {
            task: Rc::new(task),
            items,
            samples: 1,
        };
        let (summary, _) = run(&s, &job, &opts(1), &Control::new());
        let answers: Vec<Option<Value>> = summary
            .records
            .iter()
            .map(|r| r.result.as_ref().map(|v| v["answer"].clone()))
            .collect();
        assert_eq!(
            answers,
            vec![
                Some(Value::from("Paris")),
                Some(Value::from("NO-RESPONSE")),
                None
            ],
            "{kind}"
        );
        assert!(summary.records[2]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("400")));
    }
}
