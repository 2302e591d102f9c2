//! Utilities at cluster scale against the fake provider server: echoed logprobs (aligned, and
//! misaligned: refused by the probe), the chat endpoint's top_logprobs (exact when listed, an
//! upper bound otherwise), a truncated echo, and server errors. Every expected number is the
//! value the fake serves, computed from its documented model (fake::fake_logprob).

use futures::executor::block_on;
use futures::future::LocalBoxFuture;
use ragscope_judge::native::UreqTransport;
use ragscope_judge::provider;
use ragscope_judge::task::utility::{
    self, probe, Prompt, Scoring, Utility, NO_RESPONSE, TOP_LOGPROBS,
};
use ragscope_judge::{
    run_job, Control, Env, ItemKey, Job, JudgeOptions, MemoryCache, ProviderConfig, ProviderKind,
    RetryPolicy, RunSummary, Runtime, Status, Task,
};
use ragscope_judge_fake::{
    self as fake, fake_alternative_logprob, fake_logprob, fake_tokens, FakeServer, Script,
    FAKE_CHAT_LOGPROB, FAKE_GENERATED,
};
use serde_json::Value;
use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

/// Sleeps return at once and are recorded (retry delays are not waited for).
#[derive(Default)]
struct Instant {
    sleeps: RefCell<Vec<Duration>>,
}

impl Runtime for Instant {
    fn sleep(&self, d: Duration) -> LocalBoxFuture<'static, ()> {
        self.sleeps.borrow_mut().push(d);
        Box::pin(async {})
    }
    fn now_ms(&self) -> u64 {
        1_700_000_000_000
    }
}

fn env(server: &FakeServer) -> Env {
    let base = format!("{}/v1", server.url());
    let config = ProviderConfig::new(
        ProviderKind::OpenAiCompatible,
        "fake-model",
        Some(&base),
        None,
    )
    .unwrap();
    Env {
        provider: Rc::from(provider::provider(config)),
        transport: Rc::new(UreqTransport::new()),
        runtime: Rc::new(Instant::default()),
        cache: Rc::new(MemoryCache::new()),
    }
}

fn opts() -> JudgeOptions {
    JudgeOptions {
        retry: RetryPolicy {
            max_attempts: 3,
            ..RetryPolicy::default()
        },
        ..JudgeOptions::default()
    }
}

/// A chat-templated prompt (ChatML, as SmolLM2's template renders it) for one passage.
fn rendered(passage: &str) -> String {
    format!(
        "<|im_start|>system\nAnswer from the document or say NO-RESPONSE.<|im_end|>\n\
         <|im_start|>user\nDocument: {passage}\nQuestion: what is it?\nAnswer:<|im_end|>\n\
         <|im_start|>assistant\n"
    )
}

/// One item per prompt, keyed by its index.
fn job(task: &Utility, prompts: &[Prompt]) -> Job {
    let items = task.items(
        prompts
            .iter()
            .enumerate()
            .map(|(i, p)| (ItemKey(vec![("i".into(), i.to_string())]), p.clone()))
            .collect(),
    );
    Job {
        task: Rc::new(task.clone()),
        items,
        samples: 1,
    }
}

fn run(script: Script, task: &Utility, prompts: &[Prompt]) -> (RunSummary, FakeServer) {
    let server = FakeServer::start(script).unwrap();
    let job = job(task, prompts);
    let s = block_on(run_job(
        &job,
        &env(&server),
        &opts(),
        &Control::new(),
        &mut |_| {},
    ));
    (s, server)
}

fn echo_task() -> Utility {
    Utility::new(Scoring::Echo {
        appended: "NO".into(),
        single_token: true,
    })
}

fn result(s: &RunSummary, i: usize) -> &Value {
    s.records[i].result.as_ref().unwrap()
}

#[test]
fn echo_reads_the_appended_token_logprob() {
    let prompts = [
        Prompt::Rendered(rendered("Forced FAKE{lp=-3.5} value.")),
        Prompt::Rendered(rendered("The fake model's own value.")),
    ];
    let (s, server) = run(fake::markers(), &echo_task(), &prompts);
    assert!(s.all_ok(), "{:?}", s.records);
    // The forced value, exactly as served.
    let r = result(&s, 0);
    assert_eq!(r["logprob"], Value::from(-3.5));
    assert_eq!(r["no_res_prob"], Value::from((-3.5f64).exp()));
    assert_eq!(r["token"], "NO");
    assert_eq!(r["exact"], true);
    // The fake model's value at the appended token's position.
    let sent = format!("{}NO", rendered("The fake model's own value."));
    let toks = fake_tokens(&sent);
    assert_eq!(toks.last().map(String::as_str), Some("NO"));
    let want = fake_logprob(toks.len() - 1, "NO");
    assert_eq!(result(&s, 1)["logprob"], Value::from(want));
    // What was sent: the prompt with the token appended, echo, one logprob, one token.
    let reqs = server.requests();
    let req = reqs.iter().find(|r| r.body.contains("own value")).unwrap();
    let body: Value = serde_json::from_str(&req.body).unwrap();
    assert_eq!(body["prompt"], Value::from(sent));
    assert_eq!(body["echo"], true);
    assert_eq!(body["logprobs"], 1);
    assert_eq!(body["max_tokens"], 1);
    assert!(req.path.ends_with("/v1/completions"));
    // The output: key, probability.
    let out = echo_task().write_output(&s.records);
    assert_eq!(out, format!("0\t{}\n1\t{}\n", (-3.5f64).exp(), want.exp()));
}

#[test]
fn echo_of_the_whole_word_scores_its_first_token() {
    // Without a tokenizer the whole word is appended; the fake echoes it as one token.
    let task = Utility::new(Scoring::Echo {
        appended: NO_RESPONSE.into(),
        single_token: false,
    });
    let (s, _server) = run(
        fake::markers(),
        &task,
        &[Prompt::Rendered(rendered("FAKE{lp=-0.25}"))],
    );
    assert!(s.all_ok(), "{:?}", s.records);
    assert_eq!(result(&s, 0)["logprob"], Value::from(-0.25));
    assert_eq!(result(&s, 0)["token"], NO_RESPONSE);
}

#[test]
fn probe_accepts_an_aligned_server() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let prompt = rendered(utility::PROBE_PASSAGE);
    let report = block_on(probe(&env(&server), &opts(), &prompt)).unwrap();
    let n = fake_tokens(&prompt).len();
    assert_eq!(report.token, FAKE_GENERATED);
    assert_eq!(report.generated, fake_logprob(n, FAKE_GENERATED));
    assert_eq!(report.echoed, report.generated);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    let gen: Value = serde_json::from_str(&reqs[0].body).unwrap();
    assert_eq!(gen["prompt"], Value::from(prompt.clone()));
    assert!(gen.get("echo").is_none());
    let echo: Value = serde_json::from_str(&reqs[1].body).unwrap();
    assert_eq!(
        echo["prompt"],
        Value::from(format!("{prompt}{FAKE_GENERATED}"))
    );
}

#[test]
fn probe_refuses_a_misaligned_server() {
    let server = FakeServer::start(fake::shifted()).unwrap();
    let prompt = rendered(utility::PROBE_PASSAGE);
    let e = block_on(probe(&env(&server), &opts(), &prompt)).unwrap_err();
    let n = fake_tokens(&prompt).len();
    // Generated at position n; echoed with the value of position n + 1 (3 nats apart).
    assert!(e.contains("misaligned"), "{e}");
    assert!(
        e.contains(&format!("{}", fake_logprob(n, FAKE_GENERATED)))
            && e.contains(&format!("{}", fake_logprob(n + 1, FAKE_GENERATED))),
        "{e}"
    );
}

#[test]
fn chat_top_logprobs_exact_when_listed_else_an_upper_bound() {
    let task = Utility::new(Scoring::TopLogprobs { first_token: None });
    let chat = |user: &str| Prompt::Chat {
        system: "Answer or say NO-RESPONSE.".into(),
        user: user.into(),
    };
    let (s, server) = run(
        fake::markers(),
        &task,
        &[chat("listed FAKE{lp=-2.75}"), chat("not listed")],
    );
    assert!(s.all_ok(), "{:?}", s.records);
    let listed = result(&s, 0);
    assert_eq!(listed["exact"], true);
    assert_eq!(listed["token"], "NO");
    assert_eq!(listed["no_res_prob"], Value::from((-2.75f64).exp()));
    // Not among the 20: at most the 20th's probability (the smaller of the two bounds here).
    let bound = result(&s, 1);
    assert_eq!(bound["exact"], false);
    assert_eq!(bound["logprob"], Value::Null);
    let k = TOP_LOGPROBS as usize;
    let lowest = fake_alternative_logprob(k - 1).exp();
    let rest = 1.0
        - FAKE_CHAT_LOGPROB.exp()
        - (1..k)
            .map(|i| fake_alternative_logprob(i).exp())
            .sum::<f64>();
    assert!(lowest < rest);
    assert_eq!(bound["no_res_prob"], Value::from(lowest));
    assert_ne!(bound["no_res_prob"], Value::from(0.0));
    let out = task.write_output(&s.records);
    assert_eq!(out, format!("0\t{}\n1\t<={lowest}\n", (-2.75f64).exp()));
    let body: Value = serde_json::from_str(&server.requests()[0].body).unwrap();
    assert_eq!(body["logprobs"], true);
    assert_eq!(body["top_logprobs"], 20);
    assert_eq!(body["max_tokens"], 1);
}

#[test]
fn truncated_replies_and_echoes_fail_with_their_reason() {
    let prompts = [
        // The echo lost its last 3 tokens: the appended token is not where it must be.
        Prompt::Rendered(rendered("FAKE{cut}")),
        // finish = length and no logprobs at all.
        Prompt::Rendered(rendered("FAKE{truncated}")),
    ];
    let (s, _server) = run(fake::markers(), &echo_task(), &prompts);
    assert_eq!(s.records[0].status, Status::Failed);
    let e0 = s.records[0].error.as_deref().unwrap();
    assert!(e0.contains("do not end with \"NO\""), "{e0}");
    assert_eq!(s.records[1].status, Status::Failed);
    let e1 = s.records[1].error.as_deref().unwrap();
    assert!(e1.contains("no logprobs"), "{e1}");
    assert_eq!(echo_task().write_output(&s.records), "");
}

#[test]
fn server_errors_are_retried_or_recorded() {
    let prompts = [
        Prompt::Rendered(rendered("FAKE{lp=-1.5,503=2}")),
        Prompt::Rendered(rendered("FAKE{400}")),
        Prompt::Rendered(rendered("FAKE{malformed}")),
    ];
    let (s, server) = run(fake::markers(), &echo_task(), &prompts);
    assert_eq!(s.records[0].status, Status::Ok);
    assert_eq!(s.records[0].attempts, 3);
    assert_eq!(result(&s, 0)["logprob"], Value::from(-1.5));
    assert_eq!(s.records[1].status, Status::Failed);
    assert!(s.records[1].error.as_deref().unwrap().contains("HTTP 400"));
    assert_eq!(s.records[1].attempts, 1);
    assert_eq!(s.records[2].status, Status::Failed);
    assert!(s.records[2]
        .error
        .as_deref()
        .unwrap()
        .contains("malformed reply"));
    assert_eq!(server.request_count(), 5);
}

#[test]
fn a_server_that_splits_the_appended_token_is_refused() {
    // Appending "NO RESPONSE" (two fake tokens) as if it were one token.
    let task = Utility::new(Scoring::Echo {
        appended: "NO RESPONSE".into(),
        single_token: true,
    });
    let (s, _server) = run(fake::markers(), &task, &[Prompt::Rendered(rendered("x"))]);
    let e = s.records[0].error.as_deref().unwrap();
    assert!(e.contains("split \"NO RESPONSE\" into 2 tokens"), "{e}");
}

/// Replies captured from llama-cpp-python 0.3.36's server (SmolLM2-135M Q4_1, logits_all):
/// a chat prompt (starting with the BOS `<|im_start|>`) echoes aligned values — "The" has the
/// logprob the server gave it when generating it, −0.6227359771728516 — while a plain prompt
/// without BOS is shifted and loses its completion token (" Paris" at −8.77 instead of the
/// generated −0.268).
#[test]
fn llama_cpp_python_echo_replies() {
    use ragscope_judge::provider::openai::parse_completion_reply;
    let seed = include_bytes!("../../../fuzz/seeds/judge_replies/completions_echo_llama_cpp");
    let aligned = parse_completion_reply(std::str::from_utf8(&seed[1..]).unwrap()).unwrap();
    let (lp, token) = utility::echoed_logprob(&aligned, "The", true).unwrap();
    assert_eq!((lp, token.as_str()), (-0.6227359771728516, "The"));
    let report = utility::probe_check("The", -0.6227359771728516, &aligned).unwrap();
    assert_eq!(report.echoed, report.generated);

    let shifted = parse_completion_reply(
        r#"{"id":"cmpl-c7d8","object":"text_completion","created":1795371451,"model":"smol",
        "choices":[{"text":"The capital of France is Paris.","index":0,"logprobs":{
        "text_offset":[0,3,11,14,21,24],
        "token_logprobs":[null,-9.538983345031738,-10.535320281982422,-11.71572494506836,-11.659981727600098,-8.766325950622559],
        "tokens":["The"," capital"," of"," France"," is"," Paris"],
        "top_logprobs":[null,{" of":-0.357787162065506," capital":-9.538983345031738},{" the":-1.9775750637054443," of":-10.535320281982422},{" is":-0.3886377215385437," France":-11.71572494506836},{" Paris":-0.26792988181114197," is":-11.659981727600098},{".":-0.40775978565216064," Paris":-8.766325950622559}]},
        "finish_reason":"length"}],"usage":{"prompt_tokens":6,"completion_tokens":1,"total_tokens":7}}"#,
    )
    .unwrap();
    let e = utility::probe_check(" Paris", -0.26792988181114197, &shifted).unwrap_err();
    assert!(e.contains("do not end with \" Paris\""), "{e}");
    // Had it kept its completion token, the values would still be 8.5 nats apart.
    let mut kept = shifted.clone();
    let lps = kept.logprobs.as_mut().unwrap();
    lps.tokens.push(".".into());
    lps.token_logprobs.push(Some(-0.4));
    let e = utility::probe_check(" Paris", -0.26792988181114197, &kept).unwrap_err();
    assert!(e.contains("misaligned"), "{e}");
}

/// Issue #41: an echo reply repeats the whole prompt (the user's passage), so the cache keeps
/// only its last tokens; a rerun from that cache sends nothing and reads the same values.
#[test]
fn the_cache_keeps_no_echoed_prompt_and_still_resumes() {
    let secret = "Quarterly revenue of the Zanzibar account was 41 million";
    let prompts = [
        Prompt::Rendered(rendered(&format!("{secret}. FAKE{{lp=-2.25}}"))),
        Prompt::Rendered(rendered(&format!("{secret}, again."))),
    ];
    let task = echo_task();
    let server = FakeServer::start(fake::markers()).unwrap();
    let cache = Rc::new(MemoryCache::new());
    let mut e = env(&server);
    e.cache = cache.clone();
    let job = job(&task, &prompts);
    let run = || block_on(run_job(&job, &e, &opts(), &Control::new(), &mut |_| {}));
    let first = run();
    assert_eq!(server.requests().len(), 2);
    assert_eq!(result(&first, 0)["logprob"], Value::from(-2.25));
    // The server echoed the prompt (the fake does, like a real server)...
    assert!(server
        .requests()
        .iter()
        .all(|r| r.body.contains("Zanzibar")));
    // ...and nothing of it is kept.
    let entries = cache.entries();
    assert_eq!(entries.len(), 2);
    for (_, reply) in &entries {
        assert!(!reply.body.contains("Zanzibar"), "{}", reply.body);
        assert!(!reply.body.contains("Document:"), "{}", reply.body);
    }
    let again = run();
    assert_eq!(
        server.requests().len(),
        2,
        "a cached reply was bought again"
    );
    for i in 0..2 {
        assert_eq!(result(&again, i), result(&first, i), "item {i}");
    }
}
