//! The utility task in the worker natively, against crates/judge's fake OpenAI-compatible
//! server over real HTTP (its fake model serves documented logprobs: `FAKE{lp=X}` in a passage
//! makes the appended token's log-probability X, so p = e^X is known without our code): the
//! GGUF read for its metadata, the estimate (probe requests counted), exact echo scoring of a
//! run's top k with a template file, the chat path's bounds in the UDCG JSON, and a misaligned
//! server refused after its two probe requests with the CLI's message.

use super::job;
use crate::engine::Workspace;
use ragscope_infer::gguf::VecSource;
use ragscope_judge::native::{ThreadRuntime, UreqTransport};
use ragscope_judge::{Control, Env, MemoryCache};
use ragscope_judge_fake::{self as fake, fake_alternative_logprob, FakeServer};
use ragscope_protocol::compute::ComputeSource;
use ragscope_protocol::judges::{
    JudgeOutcome, JudgeRequest, JudgeResponse, JudgeSpec, ProviderChoice, TaskInputs,
    UtilityTemplate,
};
use ragscope_protocol::{FileKind, Response};
use serde_json::Value;
use std::cell::RefCell;
use std::rc::Rc;

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
const TEMPLATE: &str =
    "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}\
                        {% if add_generation_prompt %}<|assistant|>\n{% endif %}";

fn load(ws: &mut Workspace, id: u32, name: &str, text: &str) -> FileKind {
    match ws.load_whole(id, name, text.as_bytes()).pop() {
        Some(Response::Loaded { kind, .. }) => kind,
        other => panic!("{name}: {other:?}"),
    }
}

/// q1's run: d1 (relevant, forced −2.5), d2 (forced −7.25), d3 (not in the top 2).
fn run_workspace() -> Workspace {
    let mut ws = Workspace::default();
    assert_eq!(
        load(&mut ws, 1, "topics.tsv", "q1\twhat is it?\n"),
        FileKind::Topics
    );
    assert_eq!(
        load(
            &mut ws,
            2,
            "passages.jsonl",
            "{\"docno\": \"d1\", \"text\": \"forced FAKE{lp=-2.5}\"}\n\
             {\"docno\": \"d2\", \"text\": \"forced FAKE{lp=-7.25}\"}\n\
             {\"docno\": \"d3\", \"text\": \"third\"}\n"
        ),
        FileKind::Passages
    );
    assert_eq!(
        load(&mut ws, 3, "qrels.txt", "q1 0 d1 1\nq1 0 d2 0\n"),
        FileKind::Qrels
    );
    assert_eq!(
        load(
            &mut ws,
            4,
            "run.txt",
            "q1 Q0 d1 1 3.0 r\nq1 Q0 d2 2 2.0 r\nq1 Q0 d3 3 1.0 r\n"
        ),
        FileKind::Run
    );
    ws
}

fn spec(url: &str, source: ComputeSource, template: UtilityTemplate) -> JudgeSpec {
    JudgeSpec {
        provider: ProviderChoice::OpenAiCompatible,
        model: "fake model".into(),
        base_url: format!("{url}/v1"),
        concurrency: 2,
        max_cost: None,
        max_tokens: None,
        batch: false,
        keep_replies: false,
        inputs: TaskInputs::Utility { source, template },
    }
}

fn run(ws: &Workspace, spec: &JudgeSpec) -> Vec<JudgeResponse> {
    let prepared = ws.prepare_judge(spec, None, false).unwrap();
    let env = Env {
        provider: prepared.env_provider(),
        transport: Rc::new(UreqTransport::new()),
        runtime: Rc::new(ThreadRuntime),
        cache: Rc::new(MemoryCache::new()),
    };
    let out = RefCell::new(Vec::new());
    futures::executor::block_on(job::run(
        prepared,
        env,
        Control::new(),
        9,
        || 0.0,
        |r| out.borrow_mut().push(r),
    ));
    out.into_inner()
}

fn outcome(out: &[JudgeResponse]) -> &JudgeOutcome {
    match out.last() {
        Some(JudgeResponse::Finished(o)) => o,
        other => panic!("{other:?} (all: {out:?})"),
    }
}

fn text_template() -> UtilityTemplate {
    UtilityTemplate::Text {
        name: "chat.jinja".into(),
        text: TEMPLATE.into(),
    }
}

#[test]
fn a_run_top_k_with_a_template_is_scored_exactly_after_the_probe() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let mut ws = run_workspace();
    let spec = spec(
        &server.url(),
        ComputeSource::Run { run: 4, k: 2 },
        text_template(),
    );
    // The estimate: 2 items + the 2 probe requests, nothing sent.
    let r = ws.judge_now(JudgeRequest::Estimate {
        ticket: 1,
        spec: spec.clone(),
    });
    let [Response::Judge(JudgeResponse::Estimate(e))] = &r[..] else {
        panic!("{r:?}")
    };
    assert_eq!((e.items, e.requests), (2, 4));
    assert!(e.endpoint.ends_with("/v1/completions"), "{}", e.endpoint);
    assert!(
        e.first_prompt
            .starts_with("<|system|>\nYou are given a question")
            && e.first_prompt.ends_with("<|assistant|>\nNO-RESPONSE"),
        "{}",
        e.first_prompt
    );
    assert!(e.price_note.contains("probe"), "{}", e.price_note);
    assert_eq!(server.request_count(), 0);

    let out = run(&ws, &spec);
    let o = outcome(&out);
    assert_eq!(server.request_count(), 4, "2 probe requests and 2 items");
    assert_eq!(o.name, "utilities-fake_model.tsv");
    // `ragscope utility`'s run-mode TSV, values from the fake's documented logprobs.
    assert_eq!(
        o.qrels,
        format!(
            "qid\tdocno\trelevant\tno_res_prob\nq1\td1\t1\t{}\nq1\td2\t0\t{}\n",
            (-2.5f64).exp(),
            (-7.25f64).exp()
        )
    );
    let (view_name, view) = o.view.as_ref().unwrap();
    assert_eq!(view_name, "utilities-fake_model-run-top2.tsv");
    assert_eq!(
        *view,
        format!(
            "qid\tdocno\trelevant\tno_res_prob\tmodel\nq1\td1\t1\t{}\tfake_model\nq1\td2\t0\t{}\tfake_model\n",
            (-2.5f64).exp(),
            (-7.25f64).exp()
        )
    );
    assert_eq!((o.judged, o.failed, o.note.as_deref()), (2, 0, None));
    // The view loads as the utilities the RAG views read.
    assert_eq!(load(&mut ws, 20, view_name, view), FileKind::Utilities);
}

#[test]
fn a_misaligned_server_is_refused_with_the_clis_message_after_the_probe() {
    let server = FakeServer::start(fake::shifted()).unwrap();
    let ws = run_workspace();
    let out = run(
        &ws,
        &spec(
            &server.url(),
            ComputeSource::Run { run: 4, k: 2 },
            text_template(),
        ),
    );
    let [JudgeResponse::Failed { job: 9, error }] = &out[..] else {
        panic!("{out:?}")
    };
    assert!(
        error.starts_with(&format!("{}/v1: refused: ", server.url()))
            && error.contains("misaligned"),
        "{error}"
    );
    assert_eq!(server.request_count(), 2, "only the probe");
}

#[test]
fn the_chat_path_fills_the_udcg_json_and_keeps_bounds_out_of_the_rag_views() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let mut ws = Workspace::default();
    let input = serde_json::json!([{"example_id": "e1", "question": "what is it?",
        "passages": [{"doc_id": "a", "text": "listed FAKE{lp=-3.0}", "is_relevant": true},
                     {"doc_id": "b", "text": "not listed", "is_relevant": false}]}]);
    assert_eq!(
        load(&mut ws, 5, "in.json", &input.to_string()),
        FileKind::UdcgJson
    );
    let out = run(
        &ws,
        &spec(&server.url(), ComputeSource::Udcg(5), UtilityTemplate::None),
    );
    let o = outcome(&out);
    assert_eq!(server.request_count(), 2, "no probe on the chat path");
    assert_eq!(o.name, "utilities-fake_model.json");
    let got: Value = serde_json::from_str(&o.qrels).unwrap();
    let info = |i: usize| &got[0]["passages"][i]["models_info"]["fake model"];
    assert_eq!(info(0)["no_res_prob"], Value::from((-3.0f64).exp()));
    assert!(info(1).get("no_res_prob").is_none());
    assert_eq!(
        info(1)["no_res_prob_upper_bound"],
        Value::from(fake_alternative_logprob(19).exp())
    );
    let note = o.note.as_deref().unwrap();
    assert!(
        note.contains("1 of 2 probabilities are only upper bounds")
            && note.contains("1 passages are not in the RAG views"),
        "{note}"
    );
    let (name, view) = o.view.as_ref().unwrap();
    assert_eq!(name, "utilities-fake_model-in.tsv");
    assert_eq!(
        *view,
        format!(
            "qid\tdocno\trelevant\tno_res_prob\tmodel\ne1\ta\t1\t{}\tfake_model\n",
            (-3.0f64).exp()
        )
    );
}

#[test]
fn gemini_fills_the_udcg_json_from_its_top_20_through_response_logprobs() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let mut ws = Workspace::default();
    let input = serde_json::json!([{"example_id": "e1", "question": "what is it?",
        "passages": [{"doc_id": "a", "text": "listed FAKE{lp=-3.0}", "is_relevant": true},
                     {"doc_id": "b", "text": "not listed", "is_relevant": false}]}]);
    load(&mut ws, 5, "in.json", &input.to_string());
    let spec = JudgeSpec {
        provider: ProviderChoice::Gemini,
        model: "gemini-2.0-flash".into(),
        base_url: server.url(),
        ..spec(&server.url(), ComputeSource::Udcg(5), UtilityTemplate::None)
    };
    let prepared = ws
        .prepare_judge(&spec, Some(ragscope_judge::ApiKey::new("k")), false)
        .unwrap();
    let env = Env {
        provider: prepared.env_provider(),
        transport: Rc::new(UreqTransport::new()),
        runtime: Rc::new(ThreadRuntime),
        cache: Rc::new(MemoryCache::new()),
    };
    let out = RefCell::new(Vec::new());
    futures::executor::block_on(job::run(
        prepared,
        env,
        Control::new(),
        9,
        || 0.0,
        |r| out.borrow_mut().push(r),
    ));
    let out = out.into_inner();
    let o = outcome(&out);
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs.iter().all(
        |r| r.path == "/v1beta/models/gemini-2.0-flash:generateContent"
            && r.body.contains("\"responseLogprobs\":true")
    ));
    let got: Value = serde_json::from_str(&o.qrels).unwrap();
    let info = |i: usize| &got[0]["passages"][i]["models_info"]["gemini-2.0-flash"];
    assert_eq!(info(0)["no_res_prob"], Value::from((-3.0f64).exp()));
    assert!(info(1).get("no_res_prob").is_none());
    assert_eq!(
        info(1)["no_res_prob_upper_bound"],
        Value::from(fake_alternative_logprob(19).exp())
    );
    // The advice on exact values names what Gemini cannot do.
    let note = o.note.as_deref().unwrap();
    assert!(
        note.contains("1 of 2 probabilities are only upper bounds")
            && note.contains("an OpenAI-compatible server"),
        "{note}"
    );
}

#[test]
fn a_gguf_is_read_for_its_template_and_tokenizer_and_gives_exact_single_token_scoring() {
    let p = format!("{ROOT}/crates/infer/tests/fixtures/llama-f32.gguf");
    let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
    let mut ws = run_workspace();
    let JudgeResponse::GgufRead { id: 7, result } =
        ws.read_judge_gguf(7, "llama-f32.gguf", &VecSource::new(bytes))
    else {
        panic!()
    };
    let info = result.unwrap();
    assert_eq!(info.file_name, "llama-f32.gguf");
    assert!(info.summary.contains("chat template"), "{}", info.summary);
    // Not a GGUF: refused with its name, and the GGUF read before is kept.
    let JudgeResponse::GgufRead { result, .. } =
        ws.read_judge_gguf(8, "x.gguf", &VecSource::new(b"[1, 2]".to_vec()))
    else {
        panic!()
    };
    let e = result.unwrap_err();
    assert!(e.contains("x.gguf"), "{e}");
    let server = FakeServer::start(fake::markers()).unwrap();
    let gguf = UtilityTemplate::Gguf {
        id: 7,
        name: "llama-f32.gguf".into(),
    };
    let s = spec(&server.url(), ComputeSource::Run { run: 4, k: 2 }, gguf);
    let prepared = ws.prepare_judge(&s, None, true).unwrap();
    assert!(prepared.probe.is_some());
    // The GGUF's own chat template rendered the prompt; the appended text is one token.
    let out = run(&ws, &s);
    let o = outcome(&out);
    assert_eq!(server.request_count(), 4);
    let rows: Vec<&str> = o.qrels.lines().collect();
    assert_eq!(rows.len(), 3, "{}", o.qrels);
    let p1: f64 = rows[1].split('\t').nth(3).unwrap().parse().unwrap();
    assert_eq!(p1, (-2.5f64).exp());
    // A GGUF id no longer read is an error that says so.
    let stale = spec(
        &server.url(),
        ComputeSource::Run { run: 4, k: 2 },
        UtilityTemplate::Gguf {
            id: 3,
            name: "old.gguf".into(),
        },
    );
    let e = ws.prepare_judge(&stale, None, true).err().unwrap();
    assert!(e.contains("old.gguf") && e.contains("pick it again"), "{e}");
}

#[test]
fn cancel_reaches_the_probe_and_nothing_is_sent_or_called_refused() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let ws = run_workspace();
    let s = spec(
        &server.url(),
        ComputeSource::Run { run: 4, k: 2 },
        text_template(),
    );
    let prepared = ws.prepare_judge(&s, None, false).unwrap();
    let env = Env {
        provider: prepared.env_provider(),
        transport: Rc::new(UreqTransport::new()),
        runtime: Rc::new(ThreadRuntime),
        cache: Rc::new(MemoryCache::new()),
    };
    let control = Control::new();
    control.cancel();
    let out = RefCell::new(Vec::new());
    futures::executor::block_on(job::run(
        prepared,
        env,
        control,
        9,
        || 0.0,
        |r| out.borrow_mut().push(r),
    ));
    let out = out.into_inner();
    let [JudgeResponse::Failed { job: 9, error }] = &out[..] else {
        panic!("{out:?}")
    };
    assert_eq!(
        error,
        "cancelled during the alignment probe: nothing was judged"
    );
    assert_eq!(server.request_count(), 0);
}
