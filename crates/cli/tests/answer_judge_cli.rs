//! `ragscope answer --judge PROVIDER/MODEL` against the fake provider server of ragscope-judge:
//! the judge's verdict decides correct/wrong (even where the substring match says otherwise), a
//! context without a relevant passage is never correct and never sent, an abstention is not
//! sent, a reply without a verdict is a failed outcome (never correct or wrong), a rerun is
//! answered from the cache (0 requests), and `ragscope correlate` reads the judged file.
//!
//! Questions q1..q3 were answered by an earlier run (the answers file holds them, so this run
//! resumes and decodes only q4 with the tiny fixture model); the fake server reads its verdict
//! from a `FAKE{...}` directive in each question.

use ragscope_judge_fake::{self as fake, FakeServer};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn model() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../infer/tests/fixtures/llama-f32.gguf")
}

fn passages() -> Value {
    json!({
        "d1": {"is_relevant": true, "no_res_prob": 0.1, "text": "The capital of France is Paris."},
        "d2": {"is_relevant": false, "no_res_prob": 0.7, "text": "Berlin is in Germany."}
    })
}

/// A context: its passages and the answer an earlier run gave (`None`: not answered yet).
type Ctx = (Vec<&'static str>, Option<&'static str>);

/// (qid, the fake judge's directive, contexts).
fn questions() -> Vec<(&'static str, &'static str, Vec<Ctx>)> {
    vec![
        (
            "q1",
            "verdict=correct",
            vec![
                // The substring match says wrong; the judge says correct.
                (vec!["d1", "d2"], Some("The French capital city")),
                // No relevant passage: wrong whatever the judge would say; not sent.
                (vec!["d2"], Some("Paris")),
                (vec!["d1"], Some("NO-RESPONSE")),
            ],
        ),
        (
            "q2",
            "verdict=incorrect",
            vec![
                // The substring match says correct; the judge says incorrect.
                (vec!["d1"], Some("Paris")),
                (vec!["d1", "d2"], Some("Berlin")),
            ],
        ),
        (
            "q3",
            "garbage",
            vec![
                (vec!["d1"], Some("Lyon")),
                (vec!["d2"], Some("NO-RESPONSE")),
            ],
        ),
        ("q4", "verdict=correct", vec![(vec!["d1", "d2"], None)]),
    ]
}

fn setup(dir: &Path) {
    let (mut input, mut answered) = (String::new(), String::new());
    for (qid, directive, contexts) in questions() {
        let mut line = json!({
            "qid": qid,
            "question": format!("What is the capital of France? FAKE{{{directive}}}"),
            "answers": ["Paris"],
            "passages": passages(),
            "contexts": contexts.iter().map(|(p, _)| json!({"passages": p})).collect::<Vec<_>>(),
        });
        input.push_str(&format!("{line}\n"));
        if contexts.iter().all(|(_, a)| a.is_some()) {
            line["contexts"] = contexts
                .iter()
                .map(|(p, a)| json!({"passages": p, "answer": a, "outcome": "wrong", "stop": "stop"}))
                .collect();
            line["model"] = json!("earlier run");
            answered.push_str(&format!("{line}\n"));
        }
    }
    std::fs::write(dir.join("contexts.jsonl"), input).unwrap();
    std::fs::write(dir.join("answers.jsonl"), answered).unwrap();
}

fn answer(dir: &Path, base: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .current_dir(dir)
        .args(["answer", "--quiet", "--max-new-tokens", "4", "--model"])
        .arg(model())
        .args(["contexts.jsonl", "-o", "answers.jsonl"])
        .args([
            "--judge",
            "openai-compatible/fake-judge",
            "--judge-base-url",
            base,
        ])
        .args(["--judge-cache", "cache"])
        .args(extra)
        .output()
        .unwrap()
}

fn outcomes(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("answers.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn judge_grades_answers_with_the_papers_rule_and_cache() {
    let dir = std::env::temp_dir().join(format!("ragscope-answer-judge-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    setup(&dir);
    let server = FakeServer::start(fake::markers()).unwrap();
    let base = format!("{}/v1", server.url());
    let o = answer(&dir, &base, &[]);
    let stderr = String::from_utf8_lossy(&o.stderr).to_string();
    // A failed judgment: exit 3, as `ragscope judge`.
    assert_eq!(o.status.code(), Some(3), "{stderr}");
    let lines = outcomes(&dir);
    assert_eq!(lines.len(), 4);
    let ctx = |q: usize, c: usize| lines[q]["contexts"][c].clone();
    assert_eq!(ctx(0, 0)["outcome"], "correct");
    assert_eq!(ctx(0, 0)["judge"]["status"], "ok");
    assert_eq!(ctx(0, 1)["outcome"], "wrong");
    assert_eq!(ctx(0, 1)["judge"]["status"], "skipped");
    assert_eq!(ctx(0, 2)["outcome"], "abstain");
    assert_eq!(ctx(1, 0)["outcome"], "wrong");
    assert_eq!(ctx(1, 0)["judge"]["correct"], false);
    assert_eq!(ctx(1, 1)["outcome"], "wrong");
    assert_eq!(ctx(2, 0)["outcome"], "failed");
    assert_eq!(ctx(2, 0)["judge"]["status"], "failed");
    assert!(ctx(2, 0)["judge"]["error"]
        .as_str()
        .unwrap()
        .contains("no verdict"));
    assert_eq!(ctx(2, 1)["outcome"], "abstain");
    // q4 was decoded now, then judged (unless the tiny model abstained).
    let q4 = ctx(3, 0);
    let q4_abstains = q4["answer"].as_str().unwrap().contains("NO-RESPONSE");
    assert_eq!(
        q4["outcome"],
        if q4_abstains { "abstain" } else { "correct" },
        "{q4}"
    );
    // Sent: q1 c0, q2 c0, q2 c1, q3 c0, and q4 c0 when it answered; nothing else.
    let sent = server.request_count();
    assert_eq!(sent, 4 + usize::from(!q4_abstains));
    for r in server.requests() {
        assert!(r
            .body
            .contains("Decide whether the candidate answer is equivalent"));
        assert!(!r.body.contains("NO-RESPONSE"));
    }
    assert!(stderr.contains("1 failed"), "{stderr}");
    let log = std::fs::read_to_string(dir.join("answers.jsonl.judge.jsonl")).unwrap();
    assert_eq!(log.lines().count(), sent);
    assert!(log.contains("\"status\":\"failed\""));

    // A rerun decodes nothing and is answered from the cache: no request.
    let o = answer(&dir, &base, &[]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(server.request_count(), sent);
    assert_eq!(outcomes(&dir), lines);

    // correlate reads the judged outcomes, leaving the failed context out.
    let c = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .current_dir(&dir)
        .args(["correlate", "answers.jsonl", "--format", "json", "--k", "1"])
        .output()
        .unwrap();
    let cerr = String::from_utf8_lossy(&c.stderr);
    assert!(c.status.success(), "{cerr}");
    let report: Value = serde_json::from_slice(&c.stdout).unwrap();
    // Single-passage contexts (k = 1) of the earlier run's questions: q1 has d1 → abstain and
    // d2 → wrong (counted; UDCG orders them the same way: ρ = 1); q2 has one; q3 keeps only d2
    // → abstain once its failed context is left out (counted as "wrong" it would be a second
    // question).
    let g = &report["groups"][0];
    assert_eq!(g["model"], "earlier run", "{report}");
    assert_eq!(g["questions"], 1, "{report}");
    assert_eq!(g["skipped_constant_outcome"], 2, "{report}");
    let udcg = &g["metrics"][0];
    assert_eq!(udcg["metric"], "UDCG");
    assert!((udcg["spearman"]["mean"].as_f64().unwrap() - 1.0).abs() < 1e-12);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn judge_usage_errors_come_before_decoding() {
    let dir = std::env::temp_dir().join(format!("ragscope-answer-judge-u-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    setup(&dir);
    for (spec, want) in [
        ("gemini", "expected PROVIDER/MODEL"),
        ("nope/model", "nope"),
        ("openai/gpt-4o-mini", "needs an API key in OPENAI_API_KEY"),
        ("openai-compatible/m", "needs --judge-base-url"),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_ragscope"))
            .current_dir(&dir)
            .env_remove("OPENAI_API_KEY")
            .args([
                "answer",
                "--quiet",
                "--model",
                "missing.gguf",
                "contexts.jsonl",
            ])
            .args(["-o", "out.jsonl", "--judge", spec])
            .output()
            .unwrap();
        let e = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{spec}: {e}");
        assert!(e.contains(want), "{spec}: {e}");
        assert!(!dir.join("out.jsonl").exists());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
