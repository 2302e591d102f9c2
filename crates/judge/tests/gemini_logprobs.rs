//! Gemini log-probabilities (`generationConfig.responseLogprobs`, `candidates[0].logprobsResult`):
//! the request fields, the strict reply parser (good, malformed, missing, thinking) on
//! hand-written replies in the API reference's shape, and the utility task's bound mode through
//! the fake server's Gemini wire format. Expected probabilities are e^logProbability of the
//! numbers written in each fixture (or served by the fake's documented model).

use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use ragscope_judge::native::UreqTransport;
use ragscope_judge::provider::{self, gemini, Call, ReplyError};
use ragscope_judge::task::utility::{Prompt, Scoring, Utility, TOP_LOGPROBS};
use ragscope_judge::{
    run_job, ApiKey, Control, Env, ItemKey, Job, JudgeOptions, MemoryCache, ProviderConfig,
    ProviderKind, RetryPolicy, Runtime, Status, Task,
};
use ragscope_judge_fake::{self as fake, fake_alternative_logprob, FakeServer, FAKE_CHAT_LOGPROB};
use serde_json::{json, Value};
use std::rc::Rc;
use std::time::Duration;

const SYSTEM: &str = "Answer or say NO-RESPONSE.";

fn chat_call() -> Call {
    ragscope_judge::task::utility::chat_call(SYSTEM, "question and passage")
}

fn plain_call() -> Call {
    match chat_call() {
        Call::Chat(mut c) => {
            c.top_logprobs = None;
            Call::Chat(c)
        }
        other => other,
    }
}

/// A generateContent reply with one decoding step: `chosen` and the listed `top` candidates.
fn reply(chosen: (&str, f64), top: &[(&str, f64)]) -> String {
    let c = |(t, lp): (&str, f64)| json!({"token": t, "tokenId": 7, "logProbability": lp});
    json!({
        "candidates": [{
            "content": {"role": "model", "parts": [{"text": chosen.0}]},
            "finishReason": "MAX_TOKENS",
            "logprobsResult": {
                "topCandidates": [{"candidates": top.iter().map(|&x| c(x)).collect::<Vec<_>>()}],
                "chosenCandidates": [c(chosen)]
            }
        }],
        "usageMetadata": {"promptTokenCount": 50, "candidatesTokenCount": 1}
    })
    .to_string()
}

#[test]
fn the_request_asks_for_top_logprobs_clamped_to_the_apis_range() {
    let body = |n: Option<u32>| {
        let Call::Chat(mut c) = chat_call() else {
            unreachable!()
        };
        c.top_logprobs = n;
        gemini::build_body(&Call::Chat(c)).unwrap()["generationConfig"].clone()
    };
    let asked = body(Some(20));
    assert_eq!(asked["responseLogprobs"], true);
    assert_eq!(asked["logprobs"], 20);
    assert_eq!(asked["maxOutputTokens"], 1);
    assert_eq!(body(Some(50))["logprobs"], 20, "the API takes at most 20");
    assert_eq!(body(Some(0))["logprobs"], 1);
    let plain = body(None);
    assert!(plain.get("responseLogprobs").is_none() && plain.get("logprobs").is_none());
}

#[test]
fn a_reply_with_logprobs_result_is_read_like_openai_chat_logprobs() {
    let body = reply(
        ("NO", -0.25),
        &[("NO", -0.25), ("The", -1.5), ("Paris", -3.75)],
    );
    let r = provider::parse_reply(ProviderKind::Gemini, &chat_call(), &body).unwrap();
    assert_eq!(r.text, "NO");
    let lp = r.logprobs.unwrap();
    assert_eq!(lp.tokens, vec!["NO"]);
    assert_eq!(lp.token_logprobs, vec![Some(-0.25)]);
    assert_eq!(
        lp.top_logprobs,
        vec![vec![
            ("NO".to_string(), -0.25),
            ("The".to_string(), -1.5),
            ("Paris".to_string(), -3.75)
        ]]
    );
    // The utility task reads it: NO-RESPONSE's first token "NO" is listed, p = e^-0.25.
    let task = Utility::new(Scoring::TopLogprobs { first_token: None });
    let v = task
        .parse(&provider::parse_reply(ProviderKind::Gemini, &chat_call(), &body).unwrap())
        .unwrap();
    assert_eq!(v["exact"], true);
    assert_eq!(v["token"], "NO");
    assert_eq!(v["no_res_prob"], Value::from(0.7788007830714049));
    assert_eq!(v["logprob"], Value::from(-0.25));
    // Not listed among 3 (fewer than the 20 asked): only the rest of the mass bounds it.
    let body = reply(("The", -1.0), &[("The", -1.0), ("A", -2.0), ("It", -3.0)]);
    let v = task
        .parse(&provider::parse_reply(ProviderKind::Gemini, &chat_call(), &body).unwrap())
        .unwrap();
    assert_eq!(v["exact"], false);
    let rest = 1.0 - 0.36787944117144233 - 0.1353352832366127 - 0.049787068367863944;
    assert!(rest > 0.4);
    assert!((v["no_res_prob"].as_f64().unwrap() - rest).abs() < 1e-15);
}

#[test]
fn protocol_buffer_json_omissions_are_read_as_their_defaults() {
    // proto3 JSON leaves out a zero logProbability and empty lists.
    let body = json!({"candidates": [{
        "content": {"parts": [{"text": "Sure"}]}, "finishReason": "STOP",
        "logprobsResult": {"chosenCandidates": [{"token": "Sure"}],
                           "topCandidates": [{"candidates": [{"token": "Sure"}]}]}
    }]})
    .to_string();
    let lp = gemini::parse_reply(&body).unwrap().logprobs.unwrap();
    assert_eq!(lp.token_logprobs, vec![Some(0.0)]);
    assert_eq!(lp.top_logprobs, vec![vec![("Sure".to_string(), 0.0)]]);
    let empty = json!({"candidates": [{"content": {"parts": [{"text": ""}]},
                                       "finishReason": "STOP", "logprobsResult": {}}]})
    .to_string();
    let lp = gemini::parse_reply(&empty).unwrap().logprobs.unwrap();
    assert!(lp.tokens.is_empty() && lp.top_logprobs.is_empty());
    // ...which the utility task then refuses (no alternatives for a first token).
    let task = Utility::new(Scoring::TopLogprobs { first_token: None });
    let e = task
        .parse(&gemini::parse_reply(&empty).unwrap())
        .unwrap_err();
    assert!(e.contains("no top_logprobs"), "{e}");
}

#[test]
fn malformed_logprobs_fail_with_their_place_and_reason() {
    let with = |lr: Value| {
        json!({"candidates": [{"content": {"parts": [{"text": "x"}]}, "finishReason": "STOP",
                               "logprobsResult": lr}]})
        .to_string()
    };
    let cases = [
        (json!([1, 2]), "candidates[0].logprobsResult: not an object"),
        (
            json!({"chosenCandidates": "NO"}),
            "candidates[0].logprobsResult.chosenCandidates: not a list",
        ),
        (
            json!({"chosenCandidates": [{"token": "x", "logProbability": -1.0}],
                   "topCandidates": [{"candidates": [{"token": "x", "logProbability": "-1"}]}]}),
            "candidates[0].logprobsResult.topCandidates[0].candidates[0].logProbability: not a \
             number",
        ),
        (
            json!({"chosenCandidates": [{"tokenId": 3, "logProbability": -1.0}]}),
            "candidates[0].logprobsResult.chosenCandidates[0]: no \"token\"",
        ),
        (
            json!({"chosenCandidates": [{"token": 3}]}),
            "candidates[0].logprobsResult.chosenCandidates[0].token: not a string",
        ),
        (
            json!({"chosenCandidates": [{"token": "x"}],
                   "topCandidates": [{"candidates": []}, {"candidates": []}]}),
            "candidates[0].logprobsResult: 1 chosenCandidates but 2 topCandidates",
        ),
        (
            json!({"chosenCandidates": [{"token": "x"}], "topCandidates": [[]]}),
            "candidates[0].logprobsResult.topCandidates[0]: not an object",
        ),
        (
            json!({"chosenCandidates": [{"token": "x"}],
                   "topCandidates": [{"candidates": {"token": "x"}}]}),
            "candidates[0].logprobsResult.topCandidates[0].candidates: not a list",
        ),
    ];
    for (lr, want) in cases {
        match gemini::parse_reply(&with(lr.clone())) {
            Err(ReplyError::Malformed(m)) => assert!(m.contains(want), "{lr}: {m}"),
            other => panic!("{lr}: {other:?}"),
        }
    }
}

#[test]
fn no_logprobs_when_asked_is_an_error_never_a_value() {
    let text_only = fake::text_body(fake::WireFormat::Gemini, "NO", fake::Finish::Stop);
    // Not asked: an ordinary answer.
    let r = provider::parse_reply(ProviderKind::Gemini, &plain_call(), &text_only).unwrap();
    assert!(r.logprobs.is_none());
    // Asked: the model served none.
    let e = provider::parse_reply(ProviderKind::Gemini, &chat_call(), &text_only).unwrap_err();
    assert!(matches!(e, ReplyError::Unusable(_)), "{e:?}");
    let e = e.to_string();
    assert!(e.contains("this model returned no logprobs"), "{e}");
    assert!(e.contains("Gemini serves them only for some models"), "{e}");
    // A thinking reply: its decoding steps may start with thoughts, so it is refused.
    let mut v: Value = serde_json::from_str(&reply(("NO", -0.25), &[("NO", -0.25)])).unwrap();
    v["usageMetadata"]["thoughtsTokenCount"] = json!(12);
    let e = provider::parse_reply(ProviderKind::Gemini, &chat_call(), &v.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("thinking"), "{e}");
    let mut v: Value = serde_json::from_str(&reply(("NO", -0.25), &[("NO", -0.25)])).unwrap();
    v["candidates"][0]["content"]["parts"] =
        json!([{"text": "Let me see", "thought": true}, {"text": "NO"}]);
    let e = provider::parse_reply(ProviderKind::Gemini, &chat_call(), &v.to_string())
        .unwrap_err()
        .to_string();
    assert!(e.contains("thinking"), "{e}");
    // A safety block stays a block.
    let blocked = r#"{"promptFeedback": {"blockReason": "SAFETY"}}"#;
    assert!(matches!(
        provider::parse_reply(ProviderKind::Gemini, &chat_call(), blocked),
        Err(ReplyError::Blocked(_))
    ));
}

// ------------------------------------------------------------------ through the fake server

struct Instant;

impl Runtime for Instant {
    fn sleep(&self, _d: Duration) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
    fn now_ms(&self) -> u64 {
        1_700_000_000_000
    }
}

#[test]
fn the_utility_task_reads_gemini_top_candidates_from_the_fake_server() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let config = ProviderConfig::new(
        ProviderKind::Gemini,
        "gemini-2.0-flash",
        Some(&server.url()),
        Some(ApiKey::new("test-key")),
    )
    .unwrap();
    let env = Env {
        provider: Rc::from(provider::provider(config)),
        transport: Rc::new(UreqTransport::new()),
        runtime: Rc::new(Instant),
        cache: Rc::new(MemoryCache::new()),
    };
    let opts = JudgeOptions {
        retry: RetryPolicy {
            max_attempts: 2,
            ..RetryPolicy::default()
        },
        ..JudgeOptions::default()
    };
    let task = Utility::new(Scoring::TopLogprobs { first_token: None });
    let chat = |user: &str| Prompt::Chat {
        system: SYSTEM.into(),
        user: user.into(),
    };
    let prompts = [
        chat("listed FAKE{lp=-2.75}"),
        chat("not listed"),
        chat("refused FAKE{lp=-1,lpfail}"),
    ];
    let items = task.items(
        prompts
            .iter()
            .enumerate()
            .map(|(i, p)| (ItemKey(vec![("i".into(), i.to_string())]), p.clone()))
            .collect(),
    );
    let job = Job {
        task: Rc::new(task.clone()),
        items,
        samples: 1,
    };
    let s = block_on(run_job(&job, &env, &opts, &Control::new(), &mut |_| {}));
    let result = |i: usize| s.records[i].result.clone().unwrap();
    assert_eq!(s.records[0].status, Status::Ok, "{:?}", s.records[0]);
    let listed = result(0);
    assert_eq!(listed["exact"], true);
    assert_eq!(listed["token"], "NO");
    assert_eq!(listed["no_res_prob"], Value::from((-2.75f64).exp()));
    // Not among the 20: at most the 20th candidate's probability, the smaller bound here.
    let bound = result(1);
    assert_eq!(bound["exact"], false);
    let k = TOP_LOGPROBS as usize;
    let lowest = fake_alternative_logprob(k - 1).exp();
    let rest = 1.0
        - FAKE_CHAT_LOGPROB.exp()
        - (1..k)
            .map(|i| fake_alternative_logprob(i).exp())
            .sum::<f64>();
    assert!(lowest < rest);
    assert_eq!(bound["no_res_prob"], Value::from(lowest));
    // A 400 is recorded as a failure, never as a value.
    assert_ne!(s.records[2].status, Status::Ok);
    assert!(s.records[2].result.is_none());
    assert_eq!(
        task.write_output(&s.records),
        format!("0\t{}\n1\t<={lowest}\n", (-2.75f64).exp())
    );
    // The wire: Gemini's path, key header and generationConfig.
    let reqs = server.requests();
    let first = reqs
        .iter()
        .find(|r| r.body.contains("lp=-2.75"))
        .expect("the listed item's request");
    assert_eq!(
        first.path,
        "/v1beta/models/gemini-2.0-flash:generateContent"
    );
    assert_eq!(first.header("x-goog-api-key"), Some("test-key"));
    let body: Value = serde_json::from_str(&first.body).unwrap();
    assert_eq!(body["generationConfig"]["responseLogprobs"], true);
    assert_eq!(body["generationConfig"]["logprobs"], 20);
    assert_eq!(body["generationConfig"]["maxOutputTokens"], 1);
    assert_eq!(body["systemInstruction"]["parts"][0]["text"], SYSTEM);
}
