//! The worker's judge glue natively: loaded topics, passages and run → items, estimate, a run
//! through crates/judge on a scripted OpenAI-compatible server → the messages the Judges panel
//! gets (progress, failures with raw replies, qrels), and a rerun answered by the cache.

use super::job;
use crate::engine::Workspace;
use futures::future::LocalBoxFuture;
use ragscope_judge::{
    Control, Env, HttpRequest, HttpResponse, MemoryCache, Runtime, Transport, TransportError,
};
use ragscope_protocol::judges::{JudgeResponse, JudgeSpec, ProviderChoice, TaskInputs};
use ragscope_protocol::{FileKind, Request, Response};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

const TOPICS: &str = "q1\tWhat is Python used for?\nq2\tWho wrote Hamlet?\n";
const PASSAGES: &str = concat!(
    "{\"docno\":\"d1\",\"text\":\"Python is used for web development and data analysis.\"}\n",
    "{\"docno\":\"d2\",\"text\":\"Pythons are large snakes.\"}\n",
    "{\"docno\":\"d3\",\"text\":\"Hamlet is a tragedy written by William Shakespeare.\"}\n",
    "{\"docno\":\"d4\",\"text\":\"Denmark is a country in Europe.\"}\n",
);
/// q1: d1 > d2 > d9 (no text); q2: d3 > d4; q3 has no question.
const RUN: &str = "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d9 3 1.0 r\nq2 Q0 d3 1 2.0 r\nq2 Q0 d4 2 1.0 r\nq3 Q0 d1 1 1.0 r\n";

fn load(ws: &mut Workspace, id: u32, name: &str, text: &str) -> FileKind {
    match ws.load_whole(id, name, text.as_bytes()).pop() {
        Some(Response::Loaded { kind, .. }) => kind,
        other => panic!("{name}: {other:?}"),
    }
}

fn workspace() -> Workspace {
    let mut ws = Workspace::default();
    assert_eq!(load(&mut ws, 1, "topics.tsv", TOPICS), FileKind::Topics);
    assert_eq!(
        load(&mut ws, 2, "passages.jsonl", PASSAGES),
        FileKind::Passages
    );
    assert_eq!(load(&mut ws, 3, "a.run", RUN), FileKind::Run);
    ws
}

fn spec() -> JudgeSpec {
    JudgeSpec {
        provider: ProviderChoice::OpenAiCompatible,
        model: "judge-model".into(),
        base_url: "http://127.0.0.1:9/v1".into(),
        concurrency: 2,
        max_cost: None,
        max_tokens: None,
        inputs: TaskInputs::Umbrela {
            topics: 1,
            passages: 2,
            run: 3,
            k: 3,
        },
        batch: false,
        keep_replies: false,
    }
}

/// Answers chat completions by the passage in the prompt: d1 → grade 3, d2 → a 429 first and
/// then grade 0, d3 → umbrela's "0 to 3" trap ending in grade 2, d4 → no score at all.
#[derive(Default)]
struct Scripted {
    sent: RefCell<Vec<HttpRequest>>,
}

fn chat(text: &str) -> HttpResponse {
    let body = serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 7}
    });
    HttpResponse {
        status: 200,
        headers: vec![],
        body: body.to_string(),
    }
}

impl Transport for Scripted {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
        let body = request.body.clone();
        let earlier_d2 = self
            .sent
            .borrow()
            .iter()
            .filter(|r| r.body.contains("large snakes"))
            .count();
        self.sent.borrow_mut().push(request);
        let reply = if body.contains("web development") {
            chat("M=3 T=3 ##final score: 3")
        } else if body.contains("large snakes") && earlier_d2 == 0 {
            HttpResponse {
                status: 429,
                headers: vec![("retry-after".into(), "1".into())],
                body: r#"{"error":{"message":"slow down","type":"rate_limit_exceeded","code":"rate_limit_exceeded"}}"#.into(),
            }
        } else if body.contains("large snakes") {
            chat("##final score: 0")
        } else if body.contains("Shakespeare") {
            chat("On a scale from 0 to 3, ##final score: 2")
        } else {
            chat("I would rather not say.")
        };
        Box::pin(async move { Ok(reply) })
    }
}

#[derive(Default)]
struct Clock {
    slept: RefCell<Vec<Duration>>,
}

impl Runtime for Clock {
    fn sleep(&self, d: Duration) -> LocalBoxFuture<'static, ()> {
        self.slept.borrow_mut().push(d);
        Box::pin(async {})
    }
    fn now_ms(&self) -> u64 {
        1_700_000_000_000
    }
}

fn env(ws: &Workspace, transport: Rc<Scripted>, cache: Rc<MemoryCache>) -> (Env, job::PreparedJob) {
    let prepared = ws.prepare_judge(&spec(), None, false).unwrap();
    let env = Env {
        provider: prepared.env_provider(),
        transport,
        runtime: Rc::new(Clock::default()),
        cache,
    };
    (env, prepared)
}

fn run(ws: &Workspace, transport: Rc<Scripted>, cache: Rc<MemoryCache>) -> Vec<JudgeResponse> {
    let (env, prepared) = env(ws, transport, cache);
    let out = RefCell::new(Vec::new());
    futures::executor::block_on(job::run(
        prepared,
        env,
        Control::new(),
        5,
        || 0.0,
        |r| out.borrow_mut().push(r),
    ));
    out.into_inner()
}

#[test]
fn the_estimate_counts_the_run_top_k_that_has_texts_and_sends_nothing() {
    let mut ws = workspace();
    let r = ws.handle(Request::Judge(
        ragscope_protocol::judges::JudgeRequest::Estimate {
            ticket: 4,
            spec: spec(),
        },
    ));
    let [Response::Judge(JudgeResponse::Estimate(e))] = &r[..] else {
        panic!("{r:?}")
    };
    // q1 d1 d2 (d9 has no text), q2 d3 d4; q3 has no question.
    assert_eq!((e.ticket, e.items, e.requests, e.cached), (4, 4, 4, 0));
    assert_eq!(e.endpoint, "http://127.0.0.1:9/v1/chat/completions");
    assert!(
        e.first_prompt.contains("What is Python used for?"),
        "{}",
        e.first_prompt
    );
    assert!(
        e.first_prompt.contains("web development"),
        "{}",
        e.first_prompt
    );
    assert_eq!(
        e.output_tokens,
        4 * 100,
        "UMBRELA's max_tokens is 100 per request"
    );
    assert_eq!((e.cost, e.batch_cost), (None, None));
    assert!(
        e.skipped.iter().any(|s| s.contains("q3")),
        "{:?}",
        e.skipped
    );
    assert!(
        e.skipped.iter().any(|s| s.contains("q1/d9")),
        "{:?}",
        e.skipped
    );
    // A hosted model with a price gets a cost; a cost budget without a price is refused.
    let priced = JudgeSpec {
        provider: ProviderChoice::OpenAi,
        model: "gpt-4o-mini".into(),
        base_url: "https://api.openai.com/v1".into(),
        ..spec()
    };
    let r = ws.judge_now(ragscope_protocol::judges::JudgeRequest::Estimate {
        ticket: 5,
        spec: priced,
    });
    let [Response::Judge(JudgeResponse::Estimate(e))] = &r[..] else {
        panic!("{r:?}")
    };
    let want = (e.input_tokens as f64 * 0.15 + e.output_tokens as f64 * 0.6) / 1e6;
    assert!(
        (e.cost.unwrap() - want).abs() < 1e-12,
        "{:?} vs {want}",
        e.cost
    );
    // The batch API's price beside it: prices.json's discount for OpenAI is 50 %.
    assert!((e.batch_cost.unwrap() - want / 2.0).abs() < 1e-12);
    let r = ws.judge_now(ragscope_protocol::judges::JudgeRequest::Estimate {
        ticket: 6,
        spec: JudgeSpec {
            max_cost: Some(1.0),
            ..spec()
        },
    });
    assert!(
        matches!(&r[..], [Response::Judge(JudgeResponse::EstimateFailed { ticket: 6, error })] if error.contains("price table")),
        "{r:?}"
    );
}

#[test]
fn a_run_grades_records_failures_with_raw_replies_and_a_rerun_sends_nothing() {
    let ws = workspace();
    let transport = Rc::new(Scripted::default());
    let cache = Rc::new(MemoryCache::new());
    let out = run(&ws, transport.clone(), cache.clone());
    // d1, d2 twice (429, then ok), d3, d4.
    assert_eq!(transport.sent.borrow().len(), 5);
    let Some(JudgeResponse::Finished(outcome)) = out.last() else {
        panic!("{out:?}")
    };
    assert_eq!(outcome.name, "umbrela-judge-model.qrels");
    // Anchored on "##final score:", the trap is 2 (umbrela says 3); d4 failed, not made up.
    assert_eq!(outcome.qrels, "q1 0 d1 3\nq1 0 d2 0\nq2 0 d3 2\n");
    assert_eq!(
        (outcome.judged, outcome.failed, outcome.stopped.as_deref()),
        (3, 1, None)
    );
    let failures: Vec<_> = out
        .iter()
        .filter_map(|r| match r {
            JudgeResponse::Failure { job: 5, failure } => Some(failure),
            _ => None,
        })
        .collect();
    assert_eq!(failures.len(), 1);
    assert_eq!(
        (failures[0].qid.as_str(), failures[0].docno.as_str()),
        ("q2", "d4")
    );
    assert_eq!(failures[0].raw.as_deref(), Some("I would rather not say."));
    assert_eq!(failures[0].attempts, 1);
    let Some(JudgeResponse::Progress(p)) = out
        .iter()
        .rev()
        .find(|r| matches!(r, JudgeResponse::Progress(_)))
    else {
        panic!("{out:?}")
    };
    assert_eq!((p.total, p.done, p.failed, p.cached), (4, 4, 1, 0));
    assert_eq!((p.input_tokens, p.output_tokens), (400, 28));
    // No key anywhere: none was given, and the cache holds reply bodies only.
    assert_eq!(cache.len(), 4);

    let again = Rc::new(Scripted::default());
    let out = run(&ws, again.clone(), cache);
    assert!(
        again.sent.borrow().is_empty(),
        "a rerun sent {:?}",
        again.sent.borrow()
    );
    let Some(JudgeResponse::Finished(second)) = out.last() else {
        panic!("{out:?}")
    };
    assert_eq!(second.qrels, outcome.qrels);
    let Some(JudgeResponse::Progress(p)) = out
        .iter()
        .rev()
        .find(|r| matches!(r, JudgeResponse::Progress(_)))
    else {
        panic!("{out:?}")
    };
    // The unparseable cached reply is parsed again (and fails again), never bought again.
    assert_eq!((p.done, p.cached, p.failed, p.input_tokens), (4, 3, 1, 0));
}

#[test]
fn a_key_goes_only_into_the_request_headers() {
    let ws = workspace();
    let mut spec = spec();
    spec.provider = ProviderChoice::OpenAi;
    let key = ragscope_judge::ApiKey::new("sk-test-SECRET-42");
    let prepared = ws.prepare_judge(&spec, Some(key), false).unwrap();
    let transport = Rc::new(Scripted::default());
    let cache = Rc::new(MemoryCache::new());
    let env = Env {
        provider: prepared.env_provider(),
        transport: transport.clone(),
        runtime: Rc::new(Clock::default()),
        cache: cache.clone(),
    };
    let out = RefCell::new(Vec::new());
    futures::executor::block_on(job::run(
        prepared,
        env,
        Control::new(),
        1,
        || 0.0,
        |r| out.borrow_mut().push(r),
    ));
    let sent = transport.sent.borrow();
    assert!(sent.iter().all(|r| r
        .headers
        .iter()
        .any(|(k, v)| k == "authorization" && v == "Bearer sk-test-SECRET-42")));
    assert!(!format!("{:?}", out.borrow()).contains("SECRET"));
    assert!(!format!("{:?}", cache.entries()).contains("SECRET"));
    // Without a key a hosted provider is refused before anything is built.
    assert!(ws.prepare_judge(&spec, None, false).is_err());
}

/// The browser e2e test's inputs (tests/browser/fixtures/judges) through the same glue, natively,
/// against crates/judge's fake provider: the grades its FAKE{...} directives script, a 429
/// retried, the unparseable reply a failure, and a rerun on the cache sending nothing.
#[test]
fn the_e2e_fixtures_against_the_fake_provider() {
    use ragscope_judge::native::{ThreadRuntime, UreqTransport};
    use ragscope_judge_fake::{markers, FakeServer};
    let dir = concat!(
        concat!(env!("CARGO_MANIFEST_DIR"), "/../.."),
        "/tests/browser/fixtures/judges/"
    );
    let read = |f: &str| std::fs::read_to_string(format!("{dir}{f}")).unwrap();
    let mut ws = Workspace::default();
    assert_eq!(
        load(&mut ws, 1, "topics.tsv", &read("topics.tsv")),
        FileKind::Topics
    );
    assert_eq!(
        load(&mut ws, 2, "passages.jsonl", &read("passages.jsonl")),
        FileKind::Passages
    );
    assert_eq!(load(&mut ws, 3, "run.txt", &read("run.txt")), FileKind::Run);
    let server = FakeServer::start(markers()).unwrap();
    let spec = JudgeSpec {
        model: "fake-judge".into(),
        base_url: format!("{}/v1", server.url()),
        ..spec()
    };
    let cache = Rc::new(MemoryCache::new());
    let go = || {
        let prepared = ws.prepare_judge(&spec, None, false).unwrap();
        let env = Env {
            provider: prepared.env_provider(),
            transport: Rc::new(UreqTransport::new()),
            runtime: Rc::new(ThreadRuntime),
            cache: cache.clone(),
        };
        let out = RefCell::new(Vec::new());
        futures::executor::block_on(job::run(
            prepared,
            env,
            Control::new(),
            1,
            || 0.0,
            |r| out.borrow_mut().push(r),
        ));
        out.into_inner()
    };
    let out = go();
    let Some(JudgeResponse::Finished(outcome)) = out.last() else {
        panic!("{out:?}")
    };
    assert_eq!(
        outcome.qrels,
        "q1 0 d1 3\nq1 0 d2 0\nq1 0 d3 2\nq2 0 d5 1\n"
    );
    assert_eq!(outcome.name, "umbrela-fake-judge.qrels");
    let failures: Vec<_> = out
        .iter()
        .filter_map(|r| match r {
            JudgeResponse::Failure { failure, .. } => {
                Some((failure.docno.as_str(), failure.raw.as_deref()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(failures, vec![("d4", Some("I cannot tell."))]);
    // d1, d2 twice (429, then the answer), d3, d4, d5.
    assert_eq!(server.request_count(), 6);
    let again = go();
    assert_eq!(server.request_count(), 6, "the rerun sent nothing");
    assert!(matches!(again.last(), Some(JudgeResponse::Finished(o)) if o.qrels == outcome.qrels));
}
