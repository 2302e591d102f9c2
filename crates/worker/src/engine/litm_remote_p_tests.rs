//! p(NO-RESPONSE) and UDCG of the lost-in-the-middle page's remote model, natively, against
//! crates/judge's fake OpenAI-compatible server over real HTTP. Its fake model serves documented
//! log-probabilities (crates/judge-fake/src/lib.rs): `FAKE{lp=X}` in a passage makes p(NO-RESPONSE)
//! of that passage alone e^X — the chat endpoint lists "NO" at X among its top 20, the echo gives
//! the appended token X — and of a whole context the first `lp` of its prompt; without `lp` the
//! chat endpoint lists no NO-RESPONSE token (an upper bound only); `lpfail` fails the
//! log-probability requests alone (400). Every expected p is e^X or the bound computed here from
//! the fake's documented alternatives, and every expected UDCG is crates/eval's on those p.

use super::litm_remote::{estimate, prepare, run, server_prompts};
use crate::engine::Workspace;
use futures::executor::block_on;
use ragscope_eval::rag::udcg::udcg_of_context;
use ragscope_eval::rag::{Judgment, UdcgParams};
use ragscope_judge::native::{ThreadRuntime, UreqTransport};
use ragscope_judge::{Control, Env, MemoryCache};
use ragscope_judge_fake::{self as fake, FakeServer};
use ragscope_protocol::judges::{ProviderChoice, UtilityTemplate};
use ragscope_protocol::litm::{LitmEvent, LitmItem, LitmQuestion, RemoteModel, RemoteRun};
use std::cell::RefCell;
use std::rc::Rc;

const K: usize = 3;
const TEMPLATE: &str =
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}\
     {% if add_generation_prompt %}<|assistant|>\n{% endif %}";

/// Passages in the data's order (gold at index 1); `lp` per passage (`None`: no directive),
/// plus extra directives for the first distractor.
fn question(qid: &str, answer: &str, lp: [Option<f64>; 4], extra: &str) -> LitmQuestion {
    let d = |x: Option<f64>, more: &str| match x {
        Some(v) => format!("FAKE{{d,lp={v}{more}}}"),
        None => format!("FAKE{{d{more}}}"),
    };
    let gold = match lp[1] {
        Some(v) => format!("FAKE{{answer={answer},lp={v}}}"),
        None => format!("FAKE{{answer={answer}}}"),
    };
    LitmQuestion {
        qid: qid.into(),
        question: format!("question {qid}?"),
        answers: vec![answer.into()],
        gold_index: 1,
        passages: vec![
            format!("first distractor of {qid} {}", d(lp[0], extra)),
            format!("the gold passage of {qid} {gold}"),
            format!("second distractor of {qid} {}", d(lp[2], "")),
            format!("third distractor of {qid} {}", d(lp[3], "")),
        ],
    }
}

fn remote_run(url: &str, questions: Vec<LitmQuestion>, utility: UtilityTemplate) -> RemoteRun {
    let tasks = (0..questions.len())
        .flat_map(|q| (1..=K).map(move |p| (q, p)))
        .collect();
    RemoteRun {
        remote: RemoteModel {
            provider: ProviderChoice::OpenAiCompatible,
            model: "fake".into(),
            base_url: format!("{url}/v1"),
        },
        questions,
        k: K,
        tasks,
        max_tokens: 16,
        concurrency: 2,
        prompt: Default::default(),
        utility: Some(utility),
        context_p: true,
        keep: false,
    }
}

fn text_template() -> UtilityTemplate {
    UtilityTemplate::Text {
        name: "chat.jinja".into(),
        text: TEMPLATE.into(),
    }
}

fn env_of(p: &super::litm_remote::Prepared, cache: &Rc<MemoryCache>) -> Env {
    Env {
        provider: p.provider(),
        transport: Rc::new(UreqTransport::new()),
        runtime: Rc::new(ThreadRuntime),
        cache: cache.clone(),
    }
}

fn go(r: &RemoteRun, cache: &Rc<MemoryCache>) -> Vec<LitmEvent> {
    let ws = Workspace::default();
    let p = prepare(r.clone(), None, false, server_prompts(&ws, r).unwrap()).unwrap();
    run_prepared(p, cache)
}

/// Runs a prepared remote run to its end and returns every event it sent.
fn run_prepared(p: super::litm_remote::Prepared, cache: &Rc<MemoryCache>) -> Vec<LitmEvent> {
    let env = env_of(&p, cache);
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

fn items_of(out: &[LitmEvent]) -> Vec<&LitmItem> {
    out.iter()
        .filter_map(|e| match e {
            LitmEvent::Item(i) => Some(i),
            _ => None,
        })
        .collect()
}

/// The context's passages (data indices) with the gold at `position`: the paper's procedure,
/// written here from the data (the first k − 1 distractors in order, the gold inserted).
fn context_of(position: usize) -> Vec<usize> {
    let mut c = vec![0, 2];
    c.insert(position - 1, 1);
    c
}

/// crates/eval's UDCG of the context with the gold at `position`, on p = e^lp of each passage.
fn expected_udcg(lp: [Option<f64>; 4], position: usize) -> f64 {
    let judgments: Vec<Option<Judgment>> = context_of(position)
        .into_iter()
        .map(|j| {
            Some(Judgment {
                relevant: j == 1,
                p_no_response: lp[j].unwrap().exp(),
            })
        })
        .collect();
    udcg_of_context(&judgments, Some(K), &UdcgParams::default())
}

/// The bound the chat endpoint's top 20 give when no NO-RESPONSE token is listed, from the
/// fake's documented reply: "Sure" at −0.1, then alt1..alt19 at −(4 + 0.25·k).
fn chat_bound() -> f64 {
    let listed: f64 = (-0.1f64).exp()
        + (1..20)
            .map(|k| (-(4.0 + 0.25 * k as f64)).exp())
            .sum::<f64>();
    (1.0 - listed).min((-(4.0f64 + 0.25 * 19.0)).exp())
}

fn item<'a>(items: &[&'a LitmItem], qid: &str, position: usize) -> &'a LitmItem {
    items
        .iter()
        .find(|i| i.qid == qid && i.position == position)
        .copied()
        .unwrap_or_else(|| panic!("no item {qid} at {position}"))
}

const EXACT: [Option<f64>; 4] = [Some(-1.5), Some(-0.25), Some(-3.0), Some(-2.0)];
/// The second distractor (in the context) has no `lp`: its p is only bounded.
const ONE_BOUND: [Option<f64>; 4] = [Some(-1.25), Some(-0.5), None, None];
const NO_LP: [Option<f64>; 4] = [None, None, None, None];

#[test]
fn the_chat_endpoint_gives_values_where_listed_and_bounds_elsewhere_and_udcg_only_from_values() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let questions = vec![
        question("a", "Paris", EXACT, ""),
        question("b", "Rome", ONE_BOUND, ""),
        question("c", "Bern", NO_LP, ""),
    ];
    let r = remote_run(&server.url(), questions, UtilityTemplate::None);
    let cache = Rc::new(MemoryCache::new());
    let out = go(&r, &cache);
    assert!(
        matches!(out.last(), Some(LitmEvent::Done { .. })),
        "{out:?}"
    );
    // 9 answers, 3 × 3 passages alone, 9 whole contexts; nothing failed.
    assert_eq!(server.request_count(), 27);
    assert!(!out.iter().any(|e| matches!(
        e,
        LitmEvent::UtilityFailed { .. } | LitmEvent::ItemFailed { .. }
    )));
    let items = items_of(&out);
    assert_eq!(items.len(), 9);
    for position in 1..=K {
        let first = context_of(position)[0];
        // a: every p exact; UDCG is crates/eval's on e^lp; the context's p is e^lp of the
        // passage placed first (the first `lp` of its prompt).
        let i = item(&items, "a", position);
        assert_eq!(i.correct, position == 1);
        let want = expected_udcg(EXACT, position);
        assert!((i.udcg.unwrap() - want).abs() < 1e-12, "a at {position}");
        assert!((i.p_no_response.unwrap() - EXACT[first].unwrap().exp()).abs() < 1e-12);
        assert!(!i.p_bound && i.udcg_missing.is_none() && !i.retry);
        // b: one passage only bounded → no UDCG, said why; its context's p is a value (the
        // first `lp` of the prompt is that of passage 0 or the gold).
        let i = item(&items, "b", position);
        assert_eq!(i.udcg, None);
        assert!(i
            .udcg_missing
            .as_deref()
            .is_some_and(|w| w.contains("1 of its 3") && w.contains("upper bounds")));
        let lp_b = if first == 2 {
            ONE_BOUND[1]
        } else {
            ONE_BOUND[first]
        };
        assert!((i.p_no_response.unwrap() - lp_b.unwrap().exp()).abs() < 1e-12);
        assert!(!i.p_bound && !i.retry);
        // c: no NO-RESPONSE token listed anywhere: the context's p is only the bound.
        let i = item(&items, "c", position);
        assert_eq!(i.udcg, None);
        assert!(i.p_bound);
        assert!((i.p_no_response.unwrap() - chat_bound()).abs() < 1e-15);
    }
    // Exact passage values are reported for a only (gold first, then the distractors).
    let reported: Vec<(&str, &Vec<f64>)> = out
        .iter()
        .filter_map(|e| match e {
            LitmEvent::Utilities { qid, p } => Some((qid.as_str(), p)),
            _ => None,
        })
        .collect();
    assert_eq!(reported.len(), 1);
    let want: Vec<f64> = [1, 0, 2].iter().map(|&j| EXACT[j].unwrap().exp()).collect();
    assert_eq!(reported[0].0, "a");
    for (x, y) in reported[0].1.iter().zip(&want) {
        assert!((x - y).abs() < 1e-12);
    }

    // The judge cache: the estimate of the same run counts every request as cached, and a
    // rerun sends nothing.
    let ws = Workspace::default();
    let p = prepare(r.clone(), None, true, server_prompts(&ws, &r).unwrap()).unwrap();
    match block_on(estimate(&p, &env_of(&p, &cache))) {
        LitmEvent::RemoteEstimate(e) => {
            assert_eq!((e.requests, e.utility_requests, e.cached), (0, 0, 27));
            assert!(e.scoring.contains("upper bound"), "{}", e.scoring);
        }
        other => panic!("{other:?}"),
    }
    let again = go(&r, &cache);
    assert_eq!(
        server.request_count(),
        27,
        "a rerun is answered by the cache"
    );
    let sorted = |mut v: Vec<&LitmItem>| {
        v.sort_by_key(|i| (i.qid.clone(), i.position));
        v.into_iter().cloned().collect::<Vec<_>>()
    };
    assert_eq!(sorted(items_of(&again)), sorted(items.clone()));
}

#[test]
fn a_failed_utility_call_is_shown_not_scored_and_only_it_is_sent_again() {
    let server = FakeServer::start(fake::markers()).unwrap();
    // d's first distractor fails its log-probability requests: its p alone, and every context
    // (each holds it) — the answers do not fail.
    let questions = vec![
        question("a", "Paris", EXACT, ""),
        question("d", "Oslo", EXACT, ",lpfail"),
    ];
    let r = remote_run(&server.url(), questions, UtilityTemplate::None);
    let ws = Workspace::default();
    let cache = Rc::new(MemoryCache::new());
    // Before anything is sent: 6 answers + 6 passages + 6 contexts, 12 of them utility calls.
    let p = prepare(r.clone(), None, true, server_prompts(&ws, &r).unwrap()).unwrap();
    match block_on(estimate(&p, &env_of(&p, &cache))) {
        LitmEvent::RemoteEstimate(e) => {
            assert_eq!((e.requests, e.utility_requests, e.cached), (18, 12, 0))
        }
        other => panic!("{other:?}"),
    }
    let out = go(&r, &cache);
    assert!(matches!(out.last(), Some(LitmEvent::Done { .. })));
    assert_eq!(server.request_count(), 18, "400 is not retried");
    let failed: Vec<(&str, &str, &str)> = out
        .iter()
        .filter_map(|e| match e {
            LitmEvent::UtilityFailed { qid, what, error } => {
                Some((qid.as_str(), what.as_str(), error.as_str()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(failed.len(), 4, "{failed:?}");
    assert!(failed
        .iter()
        .all(|(q, _, e)| *q == "d" && e.contains("400")));
    assert!(failed.iter().any(|(_, w, _)| *w == "passage 0 alone"));
    let items = items_of(&out);
    assert_eq!(items.len(), 6, "every answer is scored");
    for position in 1..=K {
        let i = item(&items, "d", position);
        // No number in place of the failures.
        assert_eq!((i.udcg, i.p_no_response), (None, None));
        assert!(i.retry);
        assert!(i
            .udcg_missing
            .as_deref()
            .is_some_and(|w| w.contains("failed")));
        assert_eq!(i.correct, position == 1);
        let i = item(&items, "a", position);
        assert!((i.udcg.unwrap() - expected_udcg(EXACT, position)).abs() < 1e-12);
        assert!(!i.retry);
    }
    // The page sends d's contexts again: only the 4 failed calls go out (the answers and
    // d's other passages come from the judge cache).
    let mut retry = r.clone();
    retry.tasks = (1..=K).map(|p| (1, p)).collect();
    let p = prepare(
        retry.clone(),
        None,
        true,
        server_prompts(&ws, &retry).unwrap(),
    )
    .unwrap();
    match block_on(estimate(&p, &env_of(&p, &cache))) {
        LitmEvent::RemoteEstimate(e) => {
            assert_eq!((e.requests, e.utility_requests, e.cached), (4, 4, 5))
        }
        other => panic!("{other:?}"),
    }
    let again = go(&retry, &cache);
    assert_eq!(server.request_count(), 22);
    assert_eq!(
        again
            .iter()
            .filter(|e| matches!(e, LitmEvent::UtilityFailed { .. }))
            .count(),
        4
    );
}

#[test]
fn with_the_models_chat_template_the_echo_is_exact_after_the_probe() {
    let server = FakeServer::start(fake::markers()).unwrap();
    // The echo reads any passage exactly: with `lp` e^lp, else the fake model's own value of
    // the appended token; b's passages 2 and 3 have no `lp`, so only a is checked by value.
    let questions = vec![question("a", "Paris", EXACT, "")];
    let r = remote_run(&server.url(), questions, text_template());
    let ws = Workspace::default();
    let cache = Rc::new(MemoryCache::new());
    let p = prepare(r.clone(), None, true, server_prompts(&ws, &r).unwrap()).unwrap();
    match block_on(estimate(&p, &env_of(&p, &cache))) {
        LitmEvent::RemoteEstimate(e) => {
            // 3 answers, 3 passages, 3 contexts, and the probe's 2 requests.
            assert_eq!((e.requests, e.utility_requests), (11, 8));
            assert!(e.scoring.starts_with("exact"), "{}", e.scoring);
            assert!(e.price_note.contains("probe"));
        }
        other => panic!("{other:?}"),
    }
    let out = go(&r, &cache);
    assert!(
        matches!(out.last(), Some(LitmEvent::Done { .. })),
        "{out:?}"
    );
    assert_eq!(server.request_count(), 11);
    let completions = server
        .requests()
        .iter()
        .filter(|q| q.path.ends_with("/completions") && !q.path.ends_with("chat/completions"))
        .count();
    assert_eq!(
        completions,
        2 + 3 + 3,
        "the probe and every utility call echo"
    );
    let items = items_of(&out);
    for position in 1..=K {
        let i = item(&items, "a", position);
        assert!((i.udcg.unwrap() - expected_udcg(EXACT, position)).abs() < 1e-12);
        let first = context_of(position)[0];
        assert!((i.p_no_response.unwrap() - EXACT[first].unwrap().exp()).abs() < 1e-12);
        assert!(!i.p_bound);
    }
}

#[test]
fn a_misaligned_echo_is_refused_after_the_probe_and_nothing_else_is_sent() {
    let server = FakeServer::start(fake::shifted()).unwrap();
    let r = remote_run(
        &server.url(),
        vec![question("a", "Paris", EXACT, "")],
        text_template(),
    );
    let out = go(&r, &Rc::new(MemoryCache::new()));
    assert_eq!(server.request_count(), 2, "the probe's two requests only");
    match out.last() {
        Some(LitmEvent::Failed(e)) => {
            assert!(e.contains("refused") && e.contains("misaligned"), "{e}")
        }
        other => panic!("{other:?}"),
    }
    assert!(!out.iter().any(|e| matches!(e, LitmEvent::Item(_))));
}

#[test]
fn anthropic_gives_no_p_and_says_why_and_gemini_no_echo() {
    let ws = Workspace::default();
    let mut r = remote_run("http://127.0.0.1:9", vec![], UtilityTemplate::None);
    r.remote.provider = ProviderChoice::Anthropic;
    let e = server_prompts(&ws, &r).err().unwrap();
    assert!(
        e.contains("Anthropic") && e.contains("log-probabilities"),
        "{e}"
    );
    r.utility = None;
    assert!(server_prompts(&ws, &r).unwrap().is_none());
    // Gemini: the top 20, never the echo of a rendered prompt (it has no /completions).
    r.remote.provider = ProviderChoice::Gemini;
    r.utility = Some(UtilityTemplate::None);
    assert!(server_prompts(&ws, &r).unwrap().is_some());
    r.utility = Some(text_template());
    let e = server_prompts(&ws, &r).err().unwrap();
    assert!(e.contains("Gemini") && e.contains("echo"), "{e}");
}

#[test]
fn gemini_gives_its_top_20_values_and_bounds_through_response_logprobs() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let questions = vec![
        question("a", "Paris", EXACT, ""),
        question("c", "Bern", NO_LP, ""),
    ];
    let mut r = remote_run(&server.url(), questions, UtilityTemplate::None);
    r.remote = RemoteModel {
        provider: ProviderChoice::Gemini,
        model: "gemini-2.0-flash".into(),
        base_url: server.url(),
    };
    let ws = Workspace::default();
    let key = Some(ragscope_judge::ApiKey::new("test-key"));
    let p = prepare(r.clone(), key, false, server_prompts(&ws, &r).unwrap()).unwrap();
    let out = run_prepared(p, &Rc::new(MemoryCache::new()));
    assert!(
        matches!(out.last(), Some(LitmEvent::Done { .. })),
        "{out:?}"
    );
    // 6 answers, 2 × 3 passages alone, 6 whole contexts, all to Gemini's endpoint.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 18);
    assert!(reqs
        .iter()
        .all(|q| q.path == "/v1beta/models/gemini-2.0-flash:generateContent"));
    let asked = reqs
        .iter()
        .filter(|q| q.body.contains("\"responseLogprobs\":true"))
        .count();
    assert_eq!(asked, 12, "the utility calls, not the answers");
    let items = items_of(&out);
    assert_eq!(items.len(), 6);
    for position in 1..=K {
        let first = context_of(position)[0];
        let i = item(&items, "a", position);
        assert_eq!(i.correct, position == 1);
        let want = expected_udcg(EXACT, position);
        assert!((i.udcg.unwrap() - want).abs() < 1e-12, "a at {position}");
        assert!((i.p_no_response.unwrap() - EXACT[first].unwrap().exp()).abs() < 1e-12);
        assert!(!i.p_bound && i.udcg_missing.is_none());
        let i = item(&items, "c", position);
        assert_eq!(i.udcg, None);
        assert!(i.p_bound);
        assert!((i.p_no_response.unwrap() - chat_bound()).abs() < 1e-15);
    }
}

#[test]
fn the_served_models_gguf_read_as_the_page_reads_it_gives_exact_values() {
    let path = format!(
        "{}/crates/infer/tests/fixtures/llama-f32.gguf",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../..")
    );
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut ws = Workspace::default();
    let ragscope_protocol::judges::JudgeResponse::GgufRead { result, .. } = ws.read_judge_gguf(
        7,
        "llama-f32.gguf",
        &ragscope_infer::gguf::VecSource::new(bytes),
    ) else {
        panic!()
    };
    result.unwrap();
    let server = FakeServer::start(fake::markers()).unwrap();
    let r = remote_run(
        &server.url(),
        vec![question("a", "Paris", EXACT, "")],
        UtilityTemplate::Gguf {
            id: 7,
            name: "llama-f32.gguf".into(),
        },
    );
    let p = prepare(r.clone(), None, false, server_prompts(&ws, &r).unwrap()).unwrap();
    let out = run_prepared(p, &Rc::new(MemoryCache::new()));
    assert!(
        matches!(out.last(), Some(LitmEvent::Done { .. })),
        "{out:?}"
    );
    // The probe's 2, 3 passages, 3 contexts (all echoed), 3 answers.
    assert_eq!(server.request_count(), 11);
    let items = items_of(&out);
    assert_eq!(items.len(), 3);
    for position in 1..=K {
        let i = item(&items, "a", position);
        assert!((i.udcg.unwrap() - expected_udcg(EXACT, position)).abs() < 1e-12);
        let first = context_of(position)[0];
        assert!((i.p_no_response.unwrap() - EXACT[first].unwrap().exp()).abs() < 1e-12);
    }
    // A GGUF no longer read is refused before anything is sent.
    let mut stale = r.clone();
    stale.utility = Some(UtilityTemplate::Gguf {
        id: 3,
        name: "old.gguf".into(),
    });
    let e = server_prompts(&ws, &stale).err().unwrap();
    assert!(e.contains("old.gguf") && e.contains("pick it again"), "{e}");
}
