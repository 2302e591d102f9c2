//! The remote model of the lost-in-the-middle page natively: the contexts' prompts are the local
//! engine's (the UDCG paper's system prompt, one "Document:" line per passage, the gold moved),
//! answers are scored by the paper's substring match, a failed call is reported as failed and
//! never scored, the estimate counts the cache, and a rerun is answered from the cache.

use super::litm_remote::{estimate, prepare, prompt, run};
use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use ragscope_infer::utility::{PAPER_SYSTEM_PROMPT, PAPER_USER_TEMPLATE};
use ragscope_judge::{
    Control, Env, HttpRequest, HttpResponse, MemoryCache, Runtime, Transport, TransportError,
};
use ragscope_protocol::judges::ProviderChoice;
use ragscope_protocol::litm::{LitmEvent, LitmQuestion, RemoteModel, RemoteRun};
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// A reader that looks at the first document only: it answers the gold's answer when the first
/// "Document:" line is the gold passage, else NO-RESPONSE; a prompt about "unlucky" gets 400.
#[derive(Default)]
struct FirstDocReader {
    sent: RefCell<usize>,
}

fn chat(text: &str) -> HttpResponse {
    let body = serde_json::json!({
        "choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 100, "completion_tokens": 3}
    });
    HttpResponse {
        status: 200,
        headers: vec![],
        body: body.to_string(),
    }
}

impl Transport for FirstDocReader {
    fn send(&self, r: HttpRequest) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
        *self.sent.borrow_mut() += 1;
        let body: serde_json::Value = serde_json::from_str(&r.body).unwrap();
        let user = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "user")
            .and_then(|m| m["content"].as_str())
            .unwrap()
            .to_string();
        let reply = if user.contains("unlucky") {
            HttpResponse {
                status: 400,
                headers: vec![],
                body: r#"{"error":{"message":"bad request","type":"invalid_request_error"}}"#
                    .into(),
            }
        } else {
            let first = user.lines().find(|l| l.starts_with("Document: ")).unwrap();
            chat(match first.split_once("GOLD ") {
                Some((_, answer)) => answer,
                None => "NO-RESPONSE",
            })
        };
        Box::pin(async move { Ok(reply) })
    }
}

struct Clock;
impl Runtime for Clock {
    fn sleep(&self, _: Duration) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
    fn now_ms(&self) -> u64 {
        0
    }
}

fn question(qid: &str, answer: &str, question: &str) -> LitmQuestion {
    LitmQuestion {
        qid: qid.into(),
        question: question.into(),
        answers: vec![answer.into()],
        gold_index: 1,
        passages: vec![
            "d0".into(),
            format!("GOLD {answer}"),
            "d2".into(),
            "d3".into(),
        ],
    }
}

fn remote_run(tasks: Vec<(usize, usize)>) -> RemoteRun {
    RemoteRun {
        remote: RemoteModel {
            provider: ProviderChoice::OpenAiCompatible,
            model: "fake".into(),
            base_url: "http://127.0.0.1:9/v1".into(),
        },
        questions: vec![
            question("a", "Paris", "capital of France?"),
            question("b", "Rome", "capital of Italy?"),
            question("c", "Bern", "an unlucky question"),
        ],
        k: 3,
        tasks,
        max_tokens: 32,
        concurrency: 2,
        prompt: Default::default(),
        utility: None,
        context_p: false,
        keep: false,
    }
}

fn all_tasks() -> Vec<(usize, usize)> {
    (0..3).flat_map(|q| (1..=3).map(move |p| (q, p))).collect()
}

fn env(t: Rc<FirstDocReader>, cache: Rc<MemoryCache>, p: &super::litm_remote::Prepared) -> Env {
    Env {
        provider: p.provider(),
        transport: t,
        runtime: Rc::new(Clock),
        cache,
    }
}

fn events(t: &Rc<FirstDocReader>, cache: &Rc<MemoryCache>) -> Vec<LitmEvent> {
    let p = prepare(remote_run(all_tasks()), None, false, None).unwrap();
    let env = env(t.clone(), cache.clone(), &p);
    let out = RefCell::new(Vec::new());
    block_on(run(
        p,
        env,
        Control::new(),
        || 0.0,
        |e| out.borrow_mut().push(e),
    ));
    out.into_inner()
}

#[test]
fn the_prompt_is_the_local_engines_with_the_gold_moved() {
    let q = question("a", "Paris", "capital of France?");
    let (system, user) = prompt(&q, 3, 2, Default::default()).unwrap();
    assert_eq!(system.as_deref(), Some(PAPER_SYSTEM_PROMPT));
    assert!(PAPER_USER_TEMPLATE.starts_with("Document: {text}\nQuestion: {question}"));
    assert_eq!(
        user,
        "Document: d0\nDocument: GOLD Paris\nDocument: d2\nQuestion: capital of France?\nAnswer:"
    );
}

#[test]
fn answers_are_scored_failures_reported_and_a_rerun_sends_nothing() {
    let t = Rc::new(FirstDocReader::default());
    let cache = Rc::new(MemoryCache::new());
    let out = events(&t, &cache);
    let items: Vec<_> = out
        .iter()
        .filter_map(|e| match e {
            LitmEvent::Item(i) => Some(i),
            _ => None,
        })
        .collect();
    let failed: Vec<_> = out
        .iter()
        .filter_map(|e| match e {
            LitmEvent::ItemFailed {
                qid,
                position,
                error,
            } => Some((qid, position, error)),
            _ => None,
        })
        .collect();
    // a and b answered at every position; correct exactly where the gold comes first.
    assert_eq!(items.len(), 6);
    for i in &items {
        assert_eq!(i.correct, i.position == 1, "{} at {}", i.qid, i.position);
        assert_eq!(i.abstain, i.position != 1);
        assert_eq!((i.p_no_response, i.udcg, i.prompt_tokens), (None, None, 0));
        // The context's metrics: one relevant passage at `position` of 3.
        let rank = i.position as f64;
        assert!((i.ndcg - 1.0 / (rank + 1.0).log2()).abs() < 1e-12);
        assert_eq!((i.map, i.mrr), (1.0 / rank, 1.0 / rank));
        assert!((i.precision - 1.0 / 3.0).abs() < 1e-12);
    }
    // c's calls fail (400 is not retried): reported, never scored.
    assert_eq!(failed.len(), 3);
    assert!(failed
        .iter()
        .all(|(q, _, e)| q.as_str() == "c" && e.contains("400")));
    assert!(matches!(out.last(), Some(LitmEvent::Done { .. })));
    assert!(out.iter().any(|e| matches!(
        e,
        LitmEvent::Spent {
            requests: 9,
            cost: None
        }
    )));
    assert_eq!(*t.sent.borrow(), 9);

    // The estimate counts the cache; a rerun sends only what failed.
    let p = prepare(remote_run(all_tasks()), None, true, None).unwrap();
    let e = env(t.clone(), cache.clone(), &p);
    match block_on(estimate(&p, &e)) {
        LitmEvent::RemoteEstimate(x) => {
            assert_eq!((x.requests, x.cached), (3, 6));
            assert_eq!(x.endpoint, "http://127.0.0.1:9/v1/chat/completions");
            assert!(x.first_prompt.contains("Document: GOLD Paris"));
            assert_eq!(x.output_tokens, 3 * 32);
        }
        other => panic!("{other:?}"),
    }
    let again = events(&t, &cache);
    assert_eq!(
        *t.sent.borrow(),
        12,
        "only the 3 failed contexts are sent again"
    );
    assert_eq!(
        again
            .iter()
            .filter(|e| matches!(e, LitmEvent::Item(_)))
            .count(),
        6
    );
}

fn refused(r: &RemoteRun) -> String {
    match prepare(r.clone(), None, false, None) {
        Err(e) => e,
        Ok(_) => panic!("accepted"),
    }
}

#[test]
fn bad_settings_are_refused_before_anything_is_sent() {
    let mut r = remote_run(vec![]);
    assert!(refused(&r).contains("nothing to run"));
    r.tasks = vec![(5, 1)];
    assert!(refused(&r).contains("question 5"));
    r.tasks = vec![(0, 4)];
    assert!(refused(&r).contains("position 4"));
    r.tasks = vec![(0, 1)];
    r.remote.provider = ProviderChoice::OpenAi;
    assert!(refused(&r).contains("API key"));
    // The estimate needs no key.
    assert!(prepare(r, None, true, None).is_ok());
}

#[test]
fn a_cancelled_run_sends_nothing_more_and_reports_no_failure() {
    let t = Rc::new(FirstDocReader::default());
    let cache = Rc::new(MemoryCache::new());
    let p = prepare(remote_run(all_tasks()), None, false, None).unwrap();
    let env = env(t.clone(), cache, &p);
    let control = Control::new();
    control.cancel();
    let out = RefCell::new(Vec::new());
    block_on(run(p, env, control, || 0.0, |e| out.borrow_mut().push(e)));
    let out = out.into_inner();
    assert_eq!(*t.sent.borrow(), 0);
    // Not sent is still to do: neither an item nor a failure.
    assert!(!out
        .iter()
        .any(|e| matches!(e, LitmEvent::Item(_) | LitmEvent::ItemFailed { .. })));
    assert!(matches!(out.last(), Some(LitmEvent::Cancelled { done: 0 })));
}
