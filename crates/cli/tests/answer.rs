//! `ragscope answer` end to end with a tiny fixture model: the greedy answers equal llama.cpp's
//! (fixtures written by tests/oracle/generate_decode.py), outcomes follow the lost-in-the-middle
//! rule, the output feeds `ragscope correlate`, runs resume, and a passage too long for the
//! context window is named in the error (for `answer` and `utility`).

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn here(rel: &str) -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"))).join(rel)
}

fn model() -> PathBuf {
    here("../infer/tests/fixtures/llama-f32.gguf")
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ragscope-answer-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ragscope() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
}

fn lines(path: &PathBuf) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn answers_equal_llama_cpp_and_feed_correlate() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(here("tests/fixtures/answer/expected.json")).unwrap(),
    )
    .unwrap();
    let dir = tmpdir("e2e");
    let out = dir.join("answers.jsonl");
    let run = |extra: &[&str]| {
        ragscope()
            .args(["answer", "--quiet", "--batch-size", "2", "--max-new-tokens"])
            .arg(expected["max_new_tokens"].as_u64().unwrap().to_string())
            .args(extra)
            .arg("--model")
            .arg(model())
            .arg(here("tests/fixtures/answer/contexts.jsonl"))
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap()
    };
    let o = run(&["--erag"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = lines(&out);
    let mut n = 0;
    for want in expected["answers"].as_array().unwrap() {
        let q = got
            .iter()
            .find(|l| l["qid"] == want["qid"])
            .expect("question written");
        let c = &q["contexts"][want["context"].as_u64().unwrap() as usize];
        assert_eq!(
            c["answer"], want["answer"],
            "{} context {}",
            want["qid"], want["context"]
        );
        // The fixture's answers are random text: never NO-RESPONSE, never the gold answer.
        assert_eq!(c["outcome"], "wrong");
        assert_eq!(q["model"], "llama-f32");
        n += 1;
    }
    assert_eq!(n, 6);
    for q in &got {
        for (_, p) in q["passages"].as_object().unwrap() {
            assert!(p["erag"].is_f64(), "eRAG per-passage score written");
            assert_eq!(p["erag_metric"], "substring");
        }
    }
    // Rerunning skips the questions already written.
    let before = std::fs::read_to_string(&out).unwrap();
    assert!(run(&[]).status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);
    // A cut-off last line is dropped and its question answered again.
    let first_line_len = before.find('\n').unwrap() + 1;
    std::fs::write(&out, &before[..first_line_len + 10]).unwrap();
    assert!(run(&["--erag"]).status.success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), before);

    // (`--judge` works: tests/answer_judge_cli.rs; `--backend gpu`: the test below.)
}

/// `--backend gpu`: the same answers as llama.cpp's (KV cache and decoding steps on the GPU;
/// lavapipe here). Without an adapter: SKIPPED.
#[test]
fn answers_on_the_gpu_equal_llama_cpp() {
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(here("tests/fixtures/answer/expected.json")).unwrap(),
    )
    .unwrap();
    let dir = tmpdir("gpu");
    let out = dir.join("answers.jsonl");
    let o = ragscope()
        .args(["answer", "--quiet", "--backend", "gpu", "--max-new-tokens"])
        .arg(expected["max_new_tokens"].as_u64().unwrap().to_string())
        .arg("--model")
        .arg(model())
        .arg(here("tests/fixtures/answer/contexts.jsonl"))
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&o.stderr);
    if stderr.contains("no GPU adapter") || stderr.contains("built without the GPU backend") {
        ragscope_infer::test_support::skip(&stderr);
        return;
    }
    assert!(o.status.success(), "{stderr}");
    assert!(stderr.contains("GPU backend on"), "{stderr}");
    let got = lines(&out);
    let mut n = 0;
    for want in expected["answers"].as_array().unwrap() {
        let q = got
            .iter()
            .find(|l| l["qid"] == want["qid"])
            .expect("question written");
        let c = &q["contexts"][want["context"].as_u64().unwrap() as usize];
        assert_eq!(
            c["answer"], want["answer"],
            "{} context {}",
            want["qid"], want["context"]
        );
        n += 1;
    }
    assert_eq!(n, 6);
}

#[test]
fn outcomes_drive_correlate() {
    // Answers written by `answer` (outcomes + judgments inline) are `correlate`'s input as is:
    // here with gold answers the random model cannot produce, every outcome is "wrong", so the
    // study has nothing to correlate and says so (rather than reporting made-up numbers).
    let dir = tmpdir("correlate");
    let out = dir.join("answers.jsonl");
    let st = ragscope()
        .args(["answer", "--quiet", "--max-new-tokens", "4", "--model"])
        .arg(model())
        .arg(here("tests/fixtures/answer/contexts.jsonl"))
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    let o = ragscope().arg("correlate").arg(&out).output().unwrap();
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("no question has two or more"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn a_passage_longer_than_the_context_is_named() {
    let dir = tmpdir("long");
    let long = "lorem ipsum dolor sit amet ".repeat(400);
    let line = serde_json::json!({
        "qid": "q7", "question": "Why?", "answers": ["x"],
        "passages": {"short": {"is_relevant": true, "no_res_prob": 0.5, "text": "short"},
                     "huge": {"is_relevant": false, "no_res_prob": 0.5, "text": long}},
        "contexts": [{"passages": ["short"], "outcome": "wrong"},
                     {"passages": ["short", "huge"], "outcome": "wrong"}]
    });
    let input = dir.join("c.jsonl");
    std::fs::write(&input, format!("{line}\n")).unwrap();
    let o = ragscope()
        .args(["answer", "--quiet", "--model"])
        .arg(model())
        .arg(&input)
        .arg("-o")
        .arg(dir.join("a.jsonl"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("\"q7\"")
            && e.contains("context 1 (passages short, huge)")
            && e.contains("context length of 1024"),
        "{e}"
    );

    let udcg = serde_json::json!([{"example_id": "ex9", "question": "Why?", "passages": [
        {"doc_id": "ok", "text": "short", "is_relevant": true},
        {"doc_id": "too-long", "text": long, "is_relevant": false}]}]);
    let input = dir.join("u.json");
    std::fs::write(&input, udcg.to_string()).unwrap();
    let o = ragscope()
        .args(["utility", "--quiet", "--model"])
        .arg(model())
        .arg(&input)
        .arg("-o")
        .arg(dir.join("u.out.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("example 0 (ex9), passage 1 (too-long)") && e.contains("context length of 1024"),
        "{e}"
    );
}
