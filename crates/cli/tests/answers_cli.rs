//! The built binary's answer-side commands: `nuggets score` (its JSON contract, against the
//! packages' own scores recorded by tests/oracle/answers/generate.py), `graded`, `citations`,
//! and their error exits.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

fn fixture(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../eval/tests/fixtures/answers")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

fn shared(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(path)
        .to_string_lossy()
        .into_owned()
}

fn ragscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(args)
        .output()
        .expect("run ragscope")
}

fn json(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON on stdout")
}

#[test]
fn nuggets_score_json_contract_matches_the_packages() {
    let expected: Value =
        serde_json::from_slice(&std::fs::read(fixture("expected.json")).unwrap()).unwrap();
    for mode in ["paper", "nuggetizer", "open-rag-eval"] {
        // Command-line order: gamma, the anchor's demo run, alpha, beta (beta has no run_id
        // field: its id is the file stem).
        let out = ragscope(&[
            "nuggets",
            "score",
            "--compat",
            mode,
            "--per-topic",
            "--format",
            "json",
            &fixture("run-gamma.jsonl"),
            &shared("nuggetizer/assignments.jsonl"),
            &fixture("run-alpha.jsonl"),
            &fixture("run-beta.jsonl"),
        ]);
        let doc = json(&out);
        let runs = doc["runs"].as_array().unwrap();
        let ids: Vec<&str> = runs.iter().map(|r| r["run_id"].as_str().unwrap()).collect();
        assert_eq!(ids, ["run-gamma", "demo-run", "run-alpha", "run-beta"]);
        for run in runs {
            let keys: Vec<&String> = run["mean"].as_object().unwrap().keys().collect();
            assert_eq!(
                keys,
                ["A", "A_strict", "V", "V_strict", "W", "W_strict", "L"]
            );
            let Some(want) = expected["modes"][mode]
                .as_array()
                .unwrap()
                .iter()
                .find(|w| w["run_id"] == run["run_id"])
            else {
                continue;
            };
            // Full precision: the printed numbers are the oracle's, bit for bit.
            assert_eq!(run["mean"], want["mean"], "{mode}");
            assert_eq!(run["topics"], want["topics"], "{mode}");
        }
        // nuggetizer's expected_metrics.jsonl for the anchor's run.
        let demo = &runs[1];
        assert_eq!(demo["mean"]["V_strict"], 1.0);
        assert_eq!(demo["mean"]["A"], 0.75);
        assert_eq!(demo["topics"]["q1"]["A_strict"], 0.5);
    }
    // Without --per-topic there is no `topics`.
    let doc = json(&ragscope(&[
        "nuggets",
        "score",
        "--format",
        "json",
        &shared("nuggetizer/assignments.jsonl"),
    ]));
    assert!(doc["runs"][0].get("topics").is_none());
    assert_eq!(doc["runs"][0]["mean"]["W"], 0.8333333333333334);
}

#[test]
fn nuggets_score_other_formats_and_errors() {
    for format in ["table", "csv", "markdown", "latex"] {
        let out = ragscope(&[
            "nuggets",
            "score",
            "--format",
            format,
            &shared("nuggetizer/assignments.jsonl"),
        ]);
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        assert!(
            text.contains("V_strict") || text.contains("V\\_strict"),
            "{text}"
        );
        assert!(
            text.contains("demo-run") || text.contains("demo-run"),
            "{text}"
        );
    }
    let dir = std::env::temp_dir().join(format!("ragscope-nuggets-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"qid\":\"1\",\"nuggets\":[]}\n{\"qid\":\"2\",\"nuggets\":[{\"text\":\"t\",\"assignment\":7}]}\n",
    )
    .unwrap();
    let out = ragscope(&["nuggets", "score", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.jsonl:2:"), "{err}");
    assert!(err.contains("nuggets[0].assignment"), "{err}");
    let out = ragscope(&[
        "nuggets",
        "score",
        "--compat",
        "nope",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    let out = ragscope(&[
        "nuggets",
        "score",
        dir.join("missing.jsonl").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn graded_on_umbrela_sample() {
    let qrels = shared("umbrela/sample.qrels");
    let run = shared("umbrela/sample.run");
    let doc = json(&ragscope(&[
        "graded", "--qrels", &qrels, "--k", "4", "--format", "json", &run,
    ]));
    // d3 (3), d2 (2), d1 (1), d0 (0): relevant at ranks 1, 2 of 4.
    assert_eq!(doc["runs"][0]["mean"]["P@4"], 0.5);
    assert_eq!(doc["runs"][0]["mean"]["AP@4"], 1.0);
    assert_eq!(doc["runs"][0]["mean"]["MRR"], 1.0);
    let doc = json(&ragscope(&[
        "graded",
        "--qrels",
        &qrels,
        "--k",
        "5",
        "--compat",
        "open-rag-eval",
        "--format",
        "json",
        &run,
    ]));
    assert_eq!(doc["runs"][0]["mean"]["P@5"], Value::Null);
    let out = ragscope(&["graded", "--qrels", &run, &run]);
    assert_eq!(out.status.code(), Some(2), "a run is not graded qrels");
}

#[test]
fn citations_from_open_rag_eval_results() {
    let expected: Value =
        serde_json::from_slice(&std::fs::read(fixture("expected.json")).unwrap()).unwrap();
    let doc = json(&ragscope(&[
        "citations",
        "--per-answer",
        "--format",
        "json",
        &fixture("ore_results.csv"),
    ]));
    let runs = doc["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 2);
    for (i, run) in runs.iter().enumerate() {
        assert_eq!(run["run_id"], format!("ore_results#run_{}", i + 1));
        let want: Vec<&Value> = expected["ore_results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|w| w["run"] == i + 1)
            .collect();
        for w in &want {
            let a = &run["answers"][w["query_id"].as_str().unwrap()];
            assert_eq!(a["precision"], w["precision"]);
            assert_eq!(a["recall"], w["recall"]);
            assert_eq!(a["f1"], w["f1"]);
        }
        let no = want.iter().filter(|w| w["answered"] == "no").count() as f64;
        assert_eq!(
            run["no_answer_rate"].as_f64().unwrap(),
            no / want.len() as f64
        );
        let mean_p = want
            .iter()
            .map(|w| w["precision"].as_f64().unwrap())
            .sum::<f64>()
            / want.len() as f64;
        assert!((run["precision"].as_f64().unwrap() - mean_p).abs() < 1e-15);
    }
}
