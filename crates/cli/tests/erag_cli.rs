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
