//! The batch APIs end to end against the fake provider's in-memory batches: submission, a
//! "killed" client resumed from the saved state without a second submission, polling until the
//! batch ends, per-request errors and expired requests recorded as failures (and sent again by a
//! synchronous rerun), replies in the cache under the synchronous keys (a synchronous rerun sends
//! nothing), and outputs equal to the synchronous path's on the same fake replies. The parsers
//! are also checked on the providers' documented example bodies.

use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use ragscope_judge::batch::{
    self, prefetch, BatchEvent, BatchOnly, BatchOptions, ItemResult, MemoryStateStore, Outcome,
    Polled, StateStore,
};
use ragscope_judge::native::{DirCache, UreqTransport};
use ragscope_judge::provider;
use ragscope_judge::task::umbrela::Umbrela;
use ragscope_judge::{
    run_job, ApiKey, Budget, CacheStore, Control, Env, Job, JudgeOptions, ProviderConfig,
    ProviderKind, RunSummary, Runtime, Status,
};
use ragscope_judge_fake::{self as fake, FakeServer};
use serde_json::json;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::Duration;

const KEY: &str = "sk-batch-SECRET-key-91c2";

/// Sleeps are recorded and return at once.
#[derive(Default)]
struct FakeClock {
    now: Cell<u64>,
    sleeps: RefCell<Vec<Duration>>,
}

impl Runtime for FakeClock {
    fn sleep(&self, d: Duration) -> LocalBoxFuture<'static, ()> {
        self.sleeps.borrow_mut().push(d);
        self.now.set(self.now.get() + d.as_millis() as u64);
        Box::pin(async {})
    }
    fn now_ms(&self) -> u64 {
        1_700_000_000_000 + self.now.get()
    }
}

fn env(server: &FakeServer, kind: ProviderKind, cache: Rc<dyn CacheStore>) -> (Env, Rc<FakeClock>) {
    let base = match kind {
        ProviderKind::OpenAi => format!("{}/v1", server.url()),
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
    (env, clock)
}

fn job(passages: &[(&str, &str)]) -> Job {
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
        samples: 1,
    }
}

fn opts() -> JudgeOptions {
    JudgeOptions {
        timeout: Duration::from_secs(5),
        ..JudgeOptions::default()
    }
}

fn bopts(wait: bool) -> BatchOptions {
    BatchOptions {
        poll_interval: Duration::from_millis(100),
        max_poll_interval: Duration::from_millis(200),
        wait,
        max_poll_failures: 2,
    }
}

/// The run that follows a batch: nothing sent, batch failures recorded.
fn run_after(job: &Job, e: &Env, imported: &batch::Imported) -> RunSummary {
    let mut quiet = e.clone();
    quiet.transport = Rc::new(BatchOnly::new(job, e, imported));
    block_on(run_job(job, &quiet, &opts(), &Control::new(), &mut |_| {}))
}

const WITH_FAILURES: [(&str, &str); 5] = [
    ("d0", "FAKE{grade=2}"),
    ("d1", "FAKE{grade=0}"),
    ("d2", "FAKE{batcherror}"),
    ("d3", "FAKE{batchexpired}"),
    ("d4", "FAKE{fenced=3}"),
];

fn kill_resume_import_and_retry(kind: ProviderKind) {
    let server = FakeServer::start(fake::markers()).unwrap();
    server.set_batch_polls(3);
    let dir = tempfile::tempdir().unwrap();
    let cache = Rc::new(DirCache::open(dir.path().join("cache")).unwrap());
    let store = batch::state::DirStateStore::new(dir.path().join("batches"));
    let j = job(&WITH_FAILURES);

    // First process: submits, saves the state, and stops there (killed right after the save).
    let (e1, _) = env(&server, kind, cache.clone());
    let mut events = Vec::new();
    let first = block_on(prefetch(
        &j,
        &e1,
        &opts(),
        &bopts(false),
        &store,
        &mut |ev| events.push(ev),
    ))
    .unwrap();
    let Outcome::Pending(state) = first else {
        panic!("{kind}: ended at the first poll")
    };
    assert_eq!(server.batch_submissions(), 1, "{kind}");
    assert_eq!(state.batches.len(), 1);
    assert_eq!(state.batches[0].custom_ids.len(), 5);
    assert!(matches!(
        &events[0],
        BatchEvent::Submitted { requests: 5, .. }
    ));
    let saved: Vec<_> = std::fs::read_dir(dir.path().join("batches"))
        .unwrap()
        .map(|f| std::fs::read_to_string(f.unwrap().path()).unwrap())
        .collect();
    assert_eq!(saved.len(), 1);
    assert!(saved[0].contains(&state.batches[0].id));
    assert!(
        !saved[0].contains(KEY) && !saved[0].contains("FAKE{"),
        "{}",
        saved[0]
    );
    assert!(
        !ragscope_judge::cache::CacheKey(state.batches[0].custom_ids[0].clone())
            .as_str()
            .is_empty()
    );

    // Second process, same command: resumes the saved batch; no second submission.
    let (e2, clock) = env(&server, kind, cache.clone());
    let mut events = Vec::new();
    let done = block_on(prefetch(
        &j,
        &e2,
        &opts(),
        &bopts(true),
        &store,
        &mut |ev| events.push(ev),
    ))
    .unwrap();
    assert_eq!(server.batch_submissions(), 1, "{kind}: paid twice");
    assert!(
        matches!(&events[0], BatchEvent::Resumed { ids } if ids == &vec![state.batches[0].id.clone()])
    );
    let Outcome::Done(imported) = done else {
        panic!("{kind}: not done")
    };
    // Polls 2 and 3 (the first was the first process's): one wait between them, the first interval.
    assert_eq!(
        *clock.sleeps.borrow(),
        vec![Duration::from_millis(100)],
        "{kind}"
    );
    assert_eq!(imported.stored, 3, "{kind}");
    assert_eq!(
        imported.failures.len(),
        2,
        "{kind}: {:?}",
        imported.failures
    );
    assert_eq!(
        imported.usage.input_tokens,
        3 * fake::FAKE_INPUT_TOKENS,
        "{kind}"
    );
    assert!(imported.state.batches.iter().all(|b| b.imported));

    let before = server.request_count();
    let sum = run_after(&j, &e2, &imported);
    assert_eq!(
        server.request_count(),
        before,
        "{kind}: the run after a batch sends nothing"
    );
    assert_eq!(
        j.task.write_output(&sum.records),
        "q1 0 d0 2\nq1 0 d1 0\nq1 0 d4 3\n"
    );
    let err = |d: usize| sum.records[d].error.clone().unwrap_or_default();
    assert_eq!(sum.records[2].status, Status::Failed);
    assert_eq!(sum.records[2].result, None);
    assert!(
        err(2).starts_with("batch: ") && err(2).contains("400"),
        "{kind}: {}",
        err(2)
    );
    assert_eq!(sum.records[3].status, Status::Failed);
    assert!(err(3).contains("expire"), "{kind}: {}", err(3));
    assert!(sum.records[0].cached && sum.records[0].status == Status::Ok);

    // A synchronous rerun: the three answered come from the cache; only the two failures are
    // sent (and answered: `batcherror`/`batchexpired` mean nothing outside a batch).
    let before = server.request_count();
    let again = block_on(run_job(&j, &e2, &opts(), &Control::new(), &mut |_| {}));
    assert_eq!(server.request_count() - before, 2, "{kind}");
    assert!(again.all_ok(), "{kind}");
    assert_eq!(
        j.task.write_output(&again.records),
        "q1 0 d0 2\nq1 0 d1 0\nq1 0 d2 1\nq1 0 d3 1\nq1 0 d4 3\n"
    );
    // Every batch request carried the key in its header, and nothing else kept it.
    assert!(server
        .requests()
        .iter()
        .all(|r| r.headers.iter().any(|(_, v)| v.contains(KEY))));
}

#[test]
fn anthropic_batch_resumes_imports_and_retries() {
    kill_resume_import_and_retry(ProviderKind::Anthropic);
}

#[test]
fn openai_batch_resumes_imports_and_retries() {
    kill_resume_import_and_retry(ProviderKind::OpenAi);
}

#[test]
fn gemini_batch_resumes_imports_and_retries() {
    kill_resume_import_and_retry(ProviderKind::Gemini);
}

const SAME_AS_SYNC: [(&str, &str); 6] = [
    ("d0", "FAKE{grade=2}"),
    ("d1", "FAKE{grade=0}"),
    ("d2", "FAKE{trap=1}"),
    ("d3", "FAKE{fenced=3}"),
    ("d4", "FAKE{truncated}"),
    ("d5", "FAKE{safety}"),
];

fn same_output_as_sync(kind: ProviderKind) {
    let j = job(&SAME_AS_SYNC);
    // Synchronous, on its own server and cache.
    let sync_server = FakeServer::start(fake::markers()).unwrap();
    let (se, _) = env(
        &sync_server,
        kind,
        Rc::new(ragscope_judge::MemoryCache::new()),
    );
    let sync = block_on(run_job(&j, &se, &opts(), &Control::new(), &mut |_| {}));
    // Batch.
    let server = FakeServer::start(fake::markers()).unwrap();
    let cache = Rc::new(ragscope_judge::MemoryCache::new());
    let (be, _) = env(&server, kind, cache.clone());
    let store = MemoryStateStore::new();
    let Outcome::Done(imported) = block_on(prefetch(
        &j,
        &be,
        &opts(),
        &bopts(true),
        &store,
        &mut |_| {},
    ))
    .unwrap() else {
        panic!("{kind}: not done")
    };
    assert!(
        imported.failures.is_empty(),
        "{kind}: {:?}",
        imported.failures
    );
    assert_eq!(cache.len(), 6);
    let batched = run_after(&j, &be, &imported);
    assert_eq!(
        j.task.write_output(&batched.records),
        j.task.write_output(&sync.records),
        "{kind}"
    );
    assert_eq!(
        j.task.write_output(&sync.records),
        "q1 0 d0 2\nq1 0 d1 0\nq1 0 d2 1\nq1 0 d3 3\n"
    );
    for (b, s) in batched.records.iter().zip(&sync.records) {
        assert_eq!(
            (&b.result, b.status, &b.error, &b.raw),
            (&s.result, s.status, &s.error, &s.raw),
            "{kind}"
        );
        assert_eq!(
            (b.input_tokens, b.output_tokens),
            (s.input_tokens, s.output_tokens)
        );
    }
    // A synchronous rerun on the batch's cache sends nothing.
    let before = server.request_count();
    let again = block_on(run_job(&j, &be, &opts(), &Control::new(), &mut |_| {}));
    assert_eq!(server.request_count(), before, "{kind}");
    assert_eq!(
        j.task.write_output(&again.records),
        j.task.write_output(&sync.records)
    );
    // And a batch rerun submits nothing: the failures (truncated, blocked) are parse failures of
    // cached replies, not missing replies.
    let Outcome::Done(second) = block_on(prefetch(
        &j,
        &be,
        &opts(),
        &bopts(true),
        &store,
        &mut |_| {},
    ))
    .unwrap() else {
        panic!()
    };
    assert_eq!(server.batch_submissions(), 1);
    assert_eq!(second.stored, 0);
}

#[test]
fn batch_output_equals_sync_output_anthropic() {
    same_output_as_sync(ProviderKind::Anthropic);
}

#[test]
fn batch_output_equals_sync_output_openai() {
    same_output_as_sync(ProviderKind::OpenAi);
}

#[test]
fn batch_output_equals_sync_output_gemini() {
    same_output_as_sync(ProviderKind::Gemini);
}

#[test]
fn budget_refuses_the_whole_submission_and_compatible_servers_are_refused() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let (e, _) = env(
        &server,
        ProviderKind::Anthropic,
        Rc::new(ragscope_judge::MemoryCache::new()),
    );
    let j = job(&SAME_AS_SYNC);
    let mut o = opts();
    o.budget = Budget {
        max_cost: None,
        max_tokens: Some(100),
    };
    let err = block_on(prefetch(
        &j,
        &e,
        &o,
        &bopts(true),
        &MemoryStateStore::new(),
        &mut |_| {},
    ))
    .unwrap_err();
    assert!(err.starts_with("not submitted"), "{err}");
    assert_eq!(server.batch_submissions(), 0);
    assert_eq!(server.request_count(), 0);

    let config = ProviderConfig::new(
        ProviderKind::OpenAiCompatible,
        "m",
        Some(&server.url()),
        None,
    )
    .unwrap();
    let mut e2 = e.clone();
    e2.provider = Rc::from(provider::provider(config));
    let err = block_on(prefetch(
        &j,
        &e2,
        &opts(),
        &bopts(true),
        &MemoryStateStore::new(),
        &mut |_| {},
    ))
    .unwrap_err();
    assert!(err.contains("no batch API"), "{err}");
}

#[test]
fn a_damaged_state_file_is_an_error_with_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let store = batch::state::DirStateStore::new(dir.path());
    std::fs::write(store.path("abcd"), "{\"version\": 1, \"run_key\": ").unwrap();
    let err = block_on(store.load("abcd")).unwrap_err();
    assert!(err.contains("abcd.json: line 1, column"), "{err}");
    assert!(block_on(store.load("../etc")).is_err());
    assert_eq!(block_on(store.load("0123")).unwrap(), None);
}

// The parsers on the providers' documented examples (bodies as the API references show them).

#[test]
fn anthropic_documented_results() {
    let jsonl = concat!(
        r#"{"custom_id":"my-second-request","result":{"type":"succeeded","message":{"id":"msg_014VwiXbi91y3JMjcpyGBHX5","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hello again! It's nice to see you."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":11,"output_tokens":36}}}}"#,
        "\n",
        r#"{"custom_id":"my-first-request","result":{"type":"errored","error":{"type":"error","error":{"type":"invalid_request_error","message":"Validation error"}}}}"#,
        "\n",
        r#"{"custom_id":"third","result":{"type":"expired"}}"#,
        "\n",
        r#"{"custom_id":"fourth","result":{"type":"canceled"}}"#,
        "\n"
    );
    let r = batch::anthropic::parse_results(jsonl).unwrap();
    assert_eq!(r.len(), 4);
    let ItemResult::Ok(body) = &r[0].1 else {
        panic!()
    };
    let reply = provider::anthropic::parse_reply(body).unwrap();
    assert_eq!(reply.text, "Hello again! It's nice to see you.");
    assert_eq!(reply.usage.output_tokens, 36);
    assert_eq!(
        r[1].1,
        ItemResult::Failed("errored: invalid_request_error: Validation error".into())
    );
    assert!(matches!(&r[2].1, ItemResult::Failed(m) if m.starts_with("expired")));
    assert_eq!(r[3].1, ItemResult::Failed("canceled".into()));
    let bad = batch::anthropic::parse_results("{\"custom_id\": \"a\"}\nnot json\n").unwrap_err();
    assert!(bad.starts_with("results line 1"), "{bad}");
    let status = json!({"id": "msgbatch_013Zva2CMHLNnXjNJJKqJ2EF", "type": "message_batch",
        "processing_status": "in_progress", "results_url": null});
    assert_eq!(
        batch::anthropic::parse_status(&status).unwrap(),
        Polled::Running("in_progress".into())
    );
    // The key is only sent to results under the configured API.
    let cfg =
        ProviderConfig::new(ProviderKind::Anthropic, "m", None, Some(ApiKey::new("k"))).unwrap();
    let ended = json!({"processing_status": "ended",
        "results_url": "https://api.anthropic.com/v1/messages/batches/msgbatch_01/results"});
    assert!(batch::anthropic::results_url(&cfg, &ended).is_ok());
    let elsewhere = json!({"processing_status": "ended", "results_url": "https://evil.example/x"});
    assert!(batch::anthropic::results_url(&cfg, &elsewhere).is_err());
}

#[test]
fn openai_documented_output_and_status() {
    let jsonl = concat!(
        r#"{"id": "batch_req_123", "custom_id": "request-2", "response": {"status_code": 200, "request_id": "req_123", "body": {"id": "chatcmpl-123", "object": "chat.completion", "created": 1711652795, "model": "gpt-3.5-turbo-0125", "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello."}, "logprobs": null, "finish_reason": "stop"}], "usage": {"prompt_tokens": 22, "completion_tokens": 2, "total_tokens": 24}, "system_fingerprint": "fp_123"}}, "error": null}"#,
        "\n",
        r#"{"id": "batch_req_456", "custom_id": "request-1", "response": {"status_code": 400, "request_id": "req_789", "body": {"error": {"message": "Bad", "type": "invalid_request_error", "param": null, "code": null}}}, "error": null}"#,
        "\n",
        r#"{"id": "batch_req_789", "custom_id": "request-3", "response": null, "error": {"code": "batch_expired", "message": "This request could not be executed before the completion window expired."}}"#,
        "\n"
    );
    let r = batch::openai::parse_output(jsonl).unwrap();
    let ItemResult::Ok(body) = &r[0].1 else {
        panic!()
    };
    assert_eq!(
        provider::openai::parse_chat_reply(body).unwrap().text,
        "Hello."
    );
    assert_eq!(
        r[1].1,
        ItemResult::Failed("HTTP 400 invalid_request_error: Bad".into())
    );
    assert!(matches!(&r[2].1, ItemResult::Failed(m) if m.starts_with("batch_expired: ")));
    let failed = json!({"id": "batch_abc123", "object": "batch", "status": "failed",
        "errors": {"object": "list", "data": [{"code": "invalid_json", "message": "bad line", "line": 3}]}});
    assert!(matches!(
        batch::openai::parse_status(&failed).unwrap(),
        Polled::Ended { .. }
    ));
    assert_eq!(batch::openai::batch_errors(&failed), "line 3: bad line");
    let running = json!({"id": "batch_abc123", "status": "finalizing"});
    assert_eq!(
        batch::openai::parse_status(&running).unwrap(),
        Polled::Running("finalizing".into())
    );
}

#[test]
fn gemini_operation_states_and_inline_responses() {
    let pending = json!({"name": "batches/123456", "metadata": {"state": "BATCH_STATE_PENDING"}});
    assert_eq!(
        batch::gemini::parse_status(&pending).unwrap(),
        Polled::Running("PENDING".into())
    );
    assert_eq!(
        batch::gemini::parse_name(&pending).unwrap(),
        "batches/123456"
    );
    assert!(batch::gemini::parse_name(&json!({"name": "batches/../x"})).is_err());
    let done = json!({"name": "batches/123456", "done": true,
    "metadata": {"state": "JOB_STATE_SUCCEEDED"},
    "response": {"inlinedResponses": {"inlinedResponses": [
        {"response": {"candidates": [{"content": {"parts": [{"text": "Hi"}], "role": "model"}, "finishReason": "STOP"}]}},
        {"error": {"code": 400, "message": "bad", "status": "INVALID_ARGUMENT"}}
    ]}}});
    let Polled::Ended { state, status } = batch::gemini::parse_status(&done).unwrap() else {
        panic!()
    };
    assert_eq!(state, "SUCCEEDED");
    let ids = vec!["a".to_string(), "b".to_string(), "c".to_string()];
    let r = batch::gemini::parse_results(&state, &status, &ids).unwrap();
    assert_eq!(
        r.len(),
        2,
        "a SUCCEEDED batch adds nothing for c: the import reports it"
    );
    let ItemResult::Ok(body) = &r[0].1 else {
        panic!()
    };
    assert_eq!(provider::gemini::parse_reply(body).unwrap().text, "Hi");
    assert_eq!(
        r[1],
        (
            "b".into(),
            ItemResult::Failed("INVALID_ARGUMENT: bad".into())
        )
    );
    let expired = json!({"name": "batches/1", "metadata": {"state": "BATCH_STATE_EXPIRED"}});
    let Polled::Ended { state, status } = batch::gemini::parse_status(&expired).unwrap() else {
        panic!()
    };
    let r = batch::gemini::parse_results(&state, &status, &ids).unwrap();
    assert_eq!(r.len(), 3);
    assert!(r
        .iter()
        .all(|(_, x)| matches!(x, ItemResult::Failed(m) if m.contains("EXPIRED"))));
}

#[test]
fn states_kept_in_a_reply_cache_resume_too() {
    // The browser's store: the state rides in the reply cache (IndexedDB there, memory here).
    let server = FakeServer::start(fake::markers()).unwrap();
    let cache: Rc<dyn CacheStore> = Rc::new(ragscope_judge::MemoryCache::new());
    let store = batch::state::CacheStateStore::new(cache.clone());
    let (e, _) = env(&server, ProviderKind::Gemini, cache.clone());
    let j = job(&SAME_AS_SYNC);
    let first = block_on(prefetch(
        &j,
        &e,
        &opts(),
        &bopts(false),
        &store,
        &mut |_| {},
    ))
    .unwrap();
    assert!(matches!(first, Outcome::Pending(_)));
    let second = block_on(prefetch(&j, &e, &opts(), &bopts(true), &store, &mut |_| {})).unwrap();
    let Outcome::Done(imported) = second else {
        panic!()
    };
    assert_eq!(server.batch_submissions(), 1);
    assert_eq!(imported.stored, 6);
    assert!(imported.state.batches[0].imported);
}

#[test]
fn a_job_changed_while_its_batch_runs_buys_only_the_new_requests() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let cache: Rc<dyn CacheStore> = Rc::new(ragscope_judge::MemoryCache::new());
    let store = MemoryStateStore::new();
    let (e, _) = env(&server, ProviderKind::OpenAi, cache.clone());
    let a = job(&SAME_AS_SYNC[..3]);
    let first = block_on(prefetch(
        &a,
        &e,
        &opts(),
        &bopts(false),
        &store,
        &mut |_| {},
    ))
    .unwrap();
    assert!(matches!(first, Outcome::Pending(_)));
    // A passage added before the batch ended: one new request in a second batch.
    let b = job(&SAME_AS_SYNC[..4]);
    let mut events = Vec::new();
    let Outcome::Done(imported) =
        block_on(prefetch(&b, &e, &opts(), &bopts(true), &store, &mut |ev| {
            events.push(ev)
        }))
        .unwrap()
    else {
        panic!()
    };
    assert_eq!(server.batch_submissions(), 2);
    assert!(events
        .iter()
        .any(|ev| matches!(ev, BatchEvent::Submitted { requests: 1, .. })));
    assert_eq!(imported.stored, 4);
    // The first job, run again: everything is in the cache, nothing submitted.
    let Outcome::Done(again) =
        block_on(prefetch(&a, &e, &opts(), &bopts(true), &store, &mut |_| {})).unwrap()
    else {
        panic!()
    };
    assert_eq!(again.stored, 0);
    assert_eq!(server.batch_submissions(), 2);
}
