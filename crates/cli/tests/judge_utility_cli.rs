//! `ragscope judge utility` end to end against the fake provider (ragscope_judge_fake: its
//! fake tokenizer and model serve documented logprobs; `FAKE{lp=X}` in a passage forces the
//! appended token's): run mode (utilities TSV) with a template file, JSON mode through the chat
//! endpoint with bounds flagged, a misaligned server refused, and a dry run that sends nothing.

use ragscope_judge_fake::{self as fake, fake_alternative_logprob, FakeServer};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ragscope-jutil-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn p(path: &Path) -> String {
    path.display().to_string()
}

/// `ragscope judge utility --provider openai-compatible ... -o OUT --log LOG --no-cache <extra>`.
fn judge_utility(server: &FakeServer, dir: &Path, out: &str, extra: &[String]) -> Output {
    let mut args: Vec<String> = [
        "judge",
        "utility",
        "--provider",
        "openai-compatible",
        "--model",
        "fake-model",
        "--quiet",
        "--no-cache",
        "--base-url",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(format!("{}/v1", server.url()));
    args.extend(["-o".into(), p(&dir.join(out)), "--log".into()]);
    args.push(p(&dir.join("log.jsonl")));
    args.extend(extra.iter().cloned());
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(&args)
        .output()
        .unwrap()
}

/// A run of 2 passages for q1 (d1 relevant), and a ChatML-like template file.
fn run_files(dir: &Path) -> Vec<String> {
    let w = |f: &str, s: &str| std::fs::write(dir.join(f), s).unwrap();
    w("topics.tsv", "q1\twhat is it?\n");
    w(
        "passages.jsonl",
        "{\"docno\": \"d1\", \"text\": \"forced FAKE{lp=-2.5}\"}\n\
         {\"docno\": \"d2\", \"text\": \"forced FAKE{lp=-7.25}\"}\n",
    );
    w("qrels.txt", "q1 0 d1 1\nq1 0 d2 0\n");
    w("run.txt", "q1 Q0 d1 1 2.0 r\nq1 Q0 d2 2 1.0 r\n");
    w(
        "chat.jinja",
        "{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}\n{% endfor %}\
         {% if add_generation_prompt %}<|assistant|>\n{% endif %}",
    );
    let mut v = Vec::new();
    for (flag, f) in [
        ("--topics", "topics.tsv"),
        ("--passages", "passages.jsonl"),
        ("--qrels", "qrels.txt"),
        ("--run", "run.txt"),
    ] {
        v.push(flag.to_string());
        v.push(p(&dir.join(f)));
    }
    v.extend(["--k".into(), "2".into()]);
    v
}

#[test]
fn run_mode_with_a_template_writes_the_utilities_tsv() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let dir = tmp("run");
    let mut extra = run_files(&dir);
    extra.extend(["--template".into(), p(&dir.join("chat.jinja"))]);
    let out = judge_utility(&server, &dir, "u.tsv", &extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("alignment probe passed"), "{stderr}");
    let tsv = std::fs::read_to_string(dir.join("u.tsv")).unwrap();
    assert_eq!(
        tsv,
        format!(
            "qid\tdocno\trelevant\tno_res_prob\nq1\td1\t1\t{}\nq1\td2\t0\t{}\n",
            (-2.5f64).exp(),
            (-7.25f64).exp()
        )
    );
    // Without a tokenizer the whole word is appended after the rendered prompt.
    let reqs = server.requests();
    assert_eq!(reqs.len(), 4, "2 probe requests and 2 items");
    let item = reqs.iter().find(|r| r.body.contains("-2.5")).unwrap();
    let body: Value = serde_json::from_str(&item.body).unwrap();
    let prompt = body["prompt"].as_str().unwrap();
    assert!(
        prompt.starts_with("<|system|>\nYou are given a question"),
        "{prompt}"
    );
    assert!(
        prompt.ends_with("Question: what is it?\nAnswer:\n<|assistant|>\nNO-RESPONSE"),
        "{prompt}"
    );
    let log = std::fs::read_to_string(dir.join("log.jsonl")).unwrap();
    let first: Value = serde_json::from_str(log.lines().next().unwrap()).unwrap();
    assert_eq!(first["qid"], "q1");
    assert_eq!(first["relevant"], "1");
    assert_eq!(first["result"]["token"], "NO-RESPONSE");
    assert_eq!(first["result"]["exact"], true);
}

#[test]
fn json_mode_through_the_chat_endpoint_flags_bounds() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let dir = tmp("json");
    let input = serde_json::json!([{"example_id": "e1", "question": "what is it?",
        "passages": [{"doc_id": "a", "text": "listed FAKE{lp=-3.0}", "is_relevant": true},
                     {"doc_id": "b", "text": "not listed", "is_relevant": false}]}]);
    std::fs::write(dir.join("in.json"), input.to_string()).unwrap();
    let out = judge_utility(&server, &dir, "out.json", &[p(&dir.join("in.json"))]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("1 of 2 probabilities are only upper bounds"),
        "{stderr}"
    );
    let got: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
    let info = |i: usize| &got[0]["passages"][i]["models_info"]["fake-model"];
    assert_eq!(info(0)["no_res_prob"], Value::from((-3.0f64).exp()));
    assert!(info(1).get("no_res_prob").is_none());
    assert_eq!(
        info(1)["no_res_prob_upper_bound"],
        Value::from(fake_alternative_logprob(19).exp())
    );
    // Every other field kept.
    assert_eq!(got[0]["passages"][1]["doc_id"], "b");
    assert_eq!(got[0]["example_id"], "e1");
    // No probe on the chat path: one request per passage.
    assert_eq!(server.request_count(), 2);
}

#[test]
fn a_misaligned_server_is_refused_before_the_job() {
    let server = FakeServer::start(fake::shifted()).unwrap();
    let dir = tmp("shifted");
    let mut extra = run_files(&dir);
    extra.extend(["--template".into(), p(&dir.join("chat.jinja"))]);
    let out = judge_utility(&server, &dir, "u.tsv", &extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("refused") && stderr.contains("misaligned"),
        "{stderr}"
    );
    assert!(!dir.join("u.tsv").exists());
    assert_eq!(server.request_count(), 2, "only the probe");
}

#[test]
fn dry_run_sends_nothing_and_bad_usage_is_exit_2() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let dir = tmp("dry");
    let mut extra = run_files(&dir);
    extra.extend([
        "--template".into(),
        p(&dir.join("chat.jinja")),
        "--dry-run".into(),
    ]);
    let out = judge_utility(&server, &dir, "u.tsv", &extra);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("2 items x 1 samples: 2 requests to send"),
        "{stdout}"
    );
    assert!(stdout.contains("probe"), "{stdout}");
    assert_eq!(server.request_count(), 0);
    // Neither an input file nor a run.
    let out = judge_utility(&server, &dir, "u.tsv", &[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("give either INPUT.json"));
}

/// `ragscope judge utility --provider P --model gemini-2.0-flash --base-url FAKE <extra>` with
/// the provider's key in its environment variable.
fn judge_utility_on(provider: &str, server: &FakeServer, dir: &Path, extra: &[String]) -> Output {
    let mut args: Vec<String> = [
        "judge",
        "utility",
        "--provider",
        provider,
        "--model",
        "gemini-2.0-flash",
        "--quiet",
        "--no-cache",
        "--base-url",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    args.push(server.url());
    args.extend(["--log".into(), p(&dir.join("log.jsonl"))]);
    args.extend(extra.iter().cloned());
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(&args)
        .env("GEMINI_API_KEY", "test-gemini-key")
        .env("ANTHROPIC_API_KEY", "test-anthropic-key")
        .env("OPENAI_API_KEY", "test-openai-key")
        .output()
        .unwrap()
}

#[test]
fn gemini_gives_top_logprobs_and_refuses_echo() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let dir = tmp("gemini");
    let mut extra = run_files(&dir);
    extra.extend(["-o".into(), p(&dir.join("u.tsv"))]);
    let out = judge_utility_on("gemini", &server, &dir, &extra);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("responseLogprobs"), "{stderr}");
    // The fake lists "NO" last among the 20 at each passage's lp: values, not bounds.
    let tsv = std::fs::read_to_string(dir.join("u.tsv")).unwrap();
    assert_eq!(
        tsv,
        format!(
            "qid\tdocno\trelevant\tno_res_prob\nq1\td1\t1\t{}\nq1\td2\t0\t{}\n",
            (-2.5f64).exp(),
            (-7.25f64).exp()
        )
    );
    let reqs = server.requests();
    assert_eq!(reqs.len(), 2, "one request per passage, no probe");
    assert!(reqs
        .iter()
        .all(|r| r.path == "/v1beta/models/gemini-2.0-flash:generateContent"));
    let body: Value = serde_json::from_str(&reqs[0].body).unwrap();
    assert_eq!(body["generationConfig"]["responseLogprobs"], true);
    assert_eq!(body["generationConfig"]["logprobs"], 20);
    // The refusals (exit 2, usage): the run files, `flag file`, writing e.tsv.
    let refused = |provider: &str, flag: Option<(&str, PathBuf)>| {
        let mut args = run_files(&dir);
        if let Some((flag, file)) = flag {
            args.extend([flag.to_string(), p(&file)]);
        }
        args.extend(["-o".into(), p(&dir.join("e.tsv"))]);
        let out = judge_utility_on(provider, &server, &dir, &args);
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        stderr
    };
    // Echo needs /completions: refused for Gemini before anything is sent; Anthropic gives no
    // log-probabilities at all.
    let stderr = refused("gemini", Some(("--template", dir.join("chat.jinja"))));
    assert!(
        stderr.contains("Gemini does not serve") && stderr.contains("/completions"),
        "{stderr}"
    );
    let stderr = refused("anthropic", None);
    assert!(stderr.contains("no log-probabilities"), "{stderr}");
    // A GGUF's chat template fits that model only, which OpenAI's API does not serve (refused
    // before the file is even opened: this one does not exist).
    let stderr = refused("openai", Some(("--gguf", dir.join("absent.gguf"))));
    assert!(
        stderr.contains("--provider openai: --gguf") && stderr.contains("openai-compatible"),
        "{stderr}"
    );
    assert_eq!(server.request_count(), 2, "the refusals sent nothing");
    assert!(!dir.join("e.tsv").exists());
}
