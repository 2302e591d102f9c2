//! `ragscope judge umbrela` end to end against the fake provider server of ragscope-judge, on
//! umbrela's own sample run and qrels (shared/data/umbrela): the fake server answers each passage
//! with the grade umbrela's sample qrels give it, so the written qrels must reproduce them.

use ragscope_judge_fake::{self as fake, FakeServer};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const KEY: &str = "sk-cli-SECRET-4242-abcdef";

fn umbrela_data(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/umbrela"
    ))
    .join(name)
}

struct Files {
    dir: PathBuf,
}

impl Files {
    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }
    fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).unwrap_or_default()
    }
}

/// Topics, passages and a run: umbrela's sample run plus two passages that fail (a 400 and a
/// Gemini-style safety block / refusal), and one that needs a retry after a 500.
fn files(tag: &str) -> Files {
    let dir = std::env::temp_dir().join(format!("ragscope-judge-cli-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let qrels = std::fs::read_to_string(umbrela_data("sample.qrels")).unwrap();
    let mut passages = String::new();
    for line in qrels.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let retry = if f[2] == "d1" { "500=1," } else { "" };
        passages.push_str(&format!(
            "{{\"docno\": \"{}\", \"text\": \"FAKE{{{retry}grade={}}} passage {}\"}}\n",
            f[2], f[3], f[2]
        ));
    }
    passages.push_str("{\"docno\": \"bad\", \"text\": \"FAKE{400}\"}\n");
    passages.push_str("{\"docno\": \"blocked\", \"text\": \"FAKE{safety}\"}\n");
    let mut run = std::fs::read_to_string(umbrela_data("sample.run")).unwrap();
    run.push_str("1 Q0 bad 5 6.0 fixture\n1 Q0 blocked 6 5.0 fixture\n");
    std::fs::write(dir.join("topics.tsv"), "1\twhat does the fixture say?\n").unwrap();
    std::fs::write(dir.join("passages.jsonl"), passages).unwrap();
    std::fs::write(dir.join("run"), run).unwrap();
    Files { dir }
}

fn judge(f: &Files, provider: &str, base: &str, extra: &[&str]) -> Output {
    let mut args: Vec<String> = [
        "judge",
        "umbrela",
        "--provider",
        provider,
        "--model",
        "gpt-4o-mini",
        "--base-url",
        base,
        "--k",
        "6",
        "--quiet",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    for (flag, file) in [
        ("--topics", "topics.tsv"),
        ("--passages", "passages.jsonl"),
        ("--run", "run"),
        ("-o", "out.qrels"),
        ("--log", "log.jsonl"),
        ("--cache", "cache"),
    ] {
        args.push(flag.into());
        args.push(f.path(file).display().to_string());
    }
    args.extend(extra.iter().map(|s| s.to_string()));
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(&args)
        .env("OPENAI_API_KEY", KEY)
        .env("GEMINI_API_KEY", KEY)
        .output()
        .unwrap()
}

fn all_text_under(dir: &Path) -> String {
    let mut s = String::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            s.push_str(&all_text_under(&p));
        } else {
            s.push_str(&p.display().to_string());
            s.push_str(&std::fs::read_to_string(&p).unwrap_or_default());
        }
    }
    s
}

#[test]
fn umbrela_qrels_log_exit_codes_resume_and_no_key_anywhere() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let f = files("main");
    let base = format!("{}/v1", server.url());
    let out = judge(&f, "openai", &base, &[]);
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    // umbrela's sample qrels, in the run's order (score descending), iteration 0.
    assert_eq!(
        f.read("out.qrels"),
        "1 0 d3 3\n1 0 d2 2\n1 0 d1 1\n1 0 d0 0\n"
    );
    let log: Vec<serde_json::Value> = f
        .read("log.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(log.len(), 6);
    assert_eq!(log[2]["docno"], "d1");
    assert_eq!(log[2]["attempts"], 2);
    assert_eq!(log[2]["result"], 1);
    assert_eq!(log[2]["input_tokens"], 120);
    assert_eq!(log[2]["output_tokens"], 6);
    assert_eq!(log[4]["docno"], "bad");
    assert_eq!(log[4]["status"], "failed");
    assert_eq!(log[4]["result"], serde_json::Value::Null);
    assert!(log[4]["error"].as_str().unwrap().contains("HTTP 400"));
    assert_eq!(log[5]["status"], "failed");
    for l in &log {
        for field in [
            "qid",
            "docno",
            "result",
            "status",
            "error",
            "attempts",
            "cached",
            "input_tokens",
            "output_tokens",
        ] {
            assert!(l.get(field).is_some(), "{field} missing in {l}");
        }
    }
    assert_eq!(server.request_count(), 7);

    // The rerun buys nothing already answered: only the 400 goes out again.
    let out = judge(&f, "openai", &base, &[]);
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(server.request_count(), 8);
    assert_eq!(
        f.read("out.qrels"),
        "1 0 d3 3\n1 0 d2 2\n1 0 d1 1\n1 0 d0 0\n"
    );
    assert!(f
        .read("log.jsonl")
        .lines()
        .take(4)
        .all(|l| l.contains("\"cached\":true")));

    let everything = format!(
        "{stderr}{}{}",
        String::from_utf8_lossy(&out.stdout),
        all_text_under(&f.dir)
    );
    assert!(!everything.contains(KEY), "the key leaked");
    assert!(server
        .requests()
        .iter()
        .all(|r| r.header("authorization") == Some(&format!("Bearer {KEY}"))));
    let _ = std::fs::remove_dir_all(&f.dir);
}

#[test]
fn dry_run_sends_nothing_and_usage_errors_exit_2() {
    let server = FakeServer::start(fake::markers()).unwrap();
    let f = files("dry");
    let out = judge(
        &f,
        "gemini",
        &server.url(),
        &["--dry-run", "--max-cost", "1"],
    );
    // gpt-4o-mini has no Gemini price: a cost budget cannot be kept.
    assert_eq!(out.status.code(), Some(2));
    let out = judge(
        &f,
        "gemini",
        &server.url(),
        &["--dry-run", "--samples", "3"],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("6 items x 3 samples: 18 requests to send, 0 answered from the cache"),
        "{stdout}"
    );
    assert!(
        stdout.contains("Query: what does the fixture say?\nPassage: FAKE{grade=3} passage d3"),
        "{stdout}"
    );
    assert_eq!(server.request_count(), 0);

    let out = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args([
            "judge",
            "umbrela",
            "--provider",
            "anthropic",
            "--model",
            "m",
            "--k",
            "1",
        ])
        .args(["--topics", &f.path("topics.tsv").display().to_string()])
        .args([
            "--passages",
            &f.path("passages.jsonl").display().to_string(),
        ])
        .args(["--run", &f.path("run").display().to_string()])
        .args(["-o", "/dev/null", "--log", "/dev/null", "--no-cache"])
        .env_remove("ANTHROPIC_API_KEY")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("ANTHROPIC_API_KEY"));
    let out = judge(&f, "claude", &server.url(), &[]);
    assert_eq!(out.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&f.dir);
}
