//! eRAG as a registered measure in `ragscope eval` and `ragscope compare`: every value equals an
//! independent Python computation (tests/oracle/rouge/generate_erag.py → fixtures/erag, with
//! ROUGE-L from the `rouge-score` package and the lost-in-the-middle repository's matcher).

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/erag")
        .join(name)
}

fn expected() -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixture("expected.json")).unwrap()).unwrap()
}

fn ragscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .current_dir(fixture(""))
        .args(args)
        .output()
        .unwrap()
}

fn close(got: &Value, want: &Value, what: &str) {
    let (g, w) = (got.as_f64().unwrap(), want.as_f64().unwrap());
    assert!((g - w).abs() <= 1e-12, "{what}: {g} vs {w}");
}

#[test]
fn eval_equals_the_python_oracle() {
    let exp = expected();
    let measures: Vec<&str> = exp["measures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m.as_str().unwrap())
        .collect();
    let list = measures.join(",");
    let o = ragscope(&[
        "eval",
        "--qrels",
        "qrels.txt",
        "--erag-outcomes",
        "outcomes.jsonl",
        "--measures",
        &list,
        "--per-query",
        "--format",
        "json",
        "run_a.txt",
        "run_b.txt",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: Value = serde_json::from_slice(&o.stdout).unwrap();
    // Names print back as given.
    assert_eq!(got["measures"], exp["measures"]);
    let mut checked = 0;
    for run in got["runs"].as_array().unwrap() {
        let name = run["run"].as_str().unwrap().trim_end_matches(".txt");
        let want = &exp["runs"][name];
        for m in &measures {
            close(&run["summary"][m], &want["mean"][m], &format!("{name} {m}"));
            assert_eq!(run["unjudged"][m], want["unscored"][m], "{name} {m}");
            for (qid, values) in want["per_topic"].as_object().unwrap() {
                close(
                    &run["per_query"][qid][m],
                    &values[m],
                    &format!("{name} {qid} {m}"),
                );
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 7 * (4 + 3));
    // Passages the outcomes cannot score are reported, not silently scored.
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("eRAG-P@2: 2 retrieved passage(s) within the cutoff have no eRAG outcome"),
        "{stderr}"
    );
}

#[test]
fn compare_equals_the_python_oracle() {
    let exp = expected();
    for (m, want) in exp["compare"].as_object().unwrap() {
        let o = ragscope(&[
            "compare",
            "--qrels",
            "qrels.txt",
            "--erag-outcomes",
            "outcomes.jsonl",
            "--measures",
            m,
            "--format",
            "json",
            "--baseline",
            "run_a.txt",
            "run_b.txt",
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let got: Value = serde_json::from_slice(&o.stdout).unwrap();
        let rows = got["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 2);
        close(&rows[0]["mean"], &want["mean"]["run_a"], m);
        close(&rows[1]["mean"], &want["mean"]["run_b"], m);
        if want["t"].is_f64() {
            close(&rows[1]["difference"], &want["difference"], m);
            close(&rows[1]["statistic"], &want["t"], m);
        } else {
            // Every paired difference is equal (here 0): no t statistic, said so.
            assert!(rows[1]["error"]
                .as_str()
                .unwrap()
                .contains("all paired differences"));
        }
    }
}

#[test]
fn missing_or_bad_outcomes_are_clear_errors() {
    for cmd in ["eval", "compare"] {
        let mut args = vec![
            cmd,
            "--qrels",
            "qrels.txt",
            "--measures",
            "nDCG@10,eRAG-success(metric=rouge_l)@3",
        ];
        if cmd == "compare" {
            args.extend(["--baseline", "run_a.txt"]);
        }
        args.push("run_b.txt");
        let o = ragscope(&args);
        assert_eq!(o.status.code(), Some(2), "{cmd}");
        let e = String::from_utf8_lossy(&o.stderr);
        assert!(
            e.contains("eRAG-success(metric=rouge_l)@3 needs eRAG outcomes")
                && e.contains("--erag-outcomes FILE"),
            "{e}"
        );
    }
    let dir = std::env::temp_dir().join(format!("ragscope-erag-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.jsonl");
    std::fs::write(
        &bad,
        "{\"qid\": \"q1\", \"answers\": [\"x\"], \"passages\": {}}\n{\"qid\": \"q2\", \"passages\": {\"d1\": {\"erag\": 1.5}}}\n",
    )
    .unwrap();
    let o = ragscope(&[
        "eval",
        "--qrels",
        "qrels.txt",
        "--erag-outcomes",
        bad.to_str().unwrap(),
        "--measures",
        "eRAG-P@2",
        "run_a.txt",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("bad.jsonl:2: field `passages.") && e.contains("outside [0, 1]"),
        "{e}"
    );
    // Unknown metric and a missing cutoff are name errors.
    for (m, why) in [
        ("eRAG-P(metric=bleu)@3", "unsupported eRAG metric"),
        ("eRAG-P", "needs a cutoff"),
    ] {
        let o = ragscope(&["eval", "--qrels", "qrels.txt", "--measures", m, "run_a.txt"]);
        assert_eq!(o.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&o.stderr).contains(why), "{m}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The format contract: what `ragscope answer --erag` writes is what `--erag-outcomes` reads.
/// Every passage answered alone is scored (none reported missing: a renamed field would make them
/// all missing), and `eval`'s value equals the mean of the scores `answer` stored with that
/// metric (with this random fixture model all of them are 0, so the values are a weak check;
/// `eval_equals_the_python_oracle` checks the arithmetic).
#[test]
fn answer_erag_output_is_an_outcomes_file() {
    let dir = std::env::temp_dir().join(format!("ragscope-erag-chain-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let here = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let contexts = here.join("tests/fixtures/answer/contexts.jsonl");
    std::fs::write(
        dir.join("qrels"),
        "q1 0 d1 1\nq1 0 d2 0\nq1 0 d3 0\nq2 0 d4 1\nq2 0 d5 0\nq2 0 d6 0\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("run"),
        "q1 Q0 d1 1 3 r\nq1 Q0 d2 2 2 r\nq1 Q0 d3 3 1 r\nq2 Q0 d4 1 3 r\nq2 Q0 d5 2 2 r\nq2 Q0 d6 3 1 r\n",
    )
    .unwrap();
    for metric in ["substring", "rouge_l"] {
        let out = dir.join(format!("answers-{metric}.jsonl"));
        let o = Command::new(env!("CARGO_BIN_EXE_ragscope"))
            .args(["answer", "--quiet", "--max-new-tokens", "4", "--erag"])
            .args(["--erag-metric", metric, "--model"])
            .arg(here.join("../infer/tests/fixtures/llama-f32.gguf"))
            .arg(&contexts)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let mut stored = Vec::new();
        for line in std::fs::read_to_string(&out).unwrap().lines() {
            let v: Value = serde_json::from_str(line).unwrap();
            let p = &v["passages"];
            let s: Vec<f64> = ["d1", "d2", "d3", "d4", "d5", "d6"]
                .iter()
                .filter_map(|d| p[d]["erag"].as_f64())
                .collect();
            assert_eq!(s.len(), 3);
            stored.push(s.iter().sum::<f64>() / 3.0);
        }
        let m = format!("eRAG-P(metric={metric})@3");
        let o = Command::new(env!("CARGO_BIN_EXE_ragscope"))
            .current_dir(&dir)
            .args([
                "eval",
                "--qrels",
                "qrels",
                "--per-query",
                "--format",
                "json",
            ])
            .args(["--measures", &m, "--erag-outcomes"])
            .arg(&out)
            .arg("run")
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let got: Value = serde_json::from_slice(&o.stdout).unwrap();
        let run = &got["runs"][0];
        let m = if metric == "substring" {
            "eRAG-P@3".to_string()
        } else {
            m
        };
        assert_eq!(run["unjudged"][&m], 0, "{got}");
        for (qid, want) in ["q1", "q2"].iter().zip(&stored) {
            close(&run["per_query"][qid][&m], &Value::from(*want), qid);
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
