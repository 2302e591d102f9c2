//! `ragscope calibrate` on the small qrels and runs of tests/oracle/calibration/generate.py:
//! the JSON's shape exactly, its numbers against ppi-python (within 1e-9), and the refusals.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn fixtures() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../eval/tests/fixtures/calibration"
    ))
}

fn ragscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .current_dir(fixtures())
        .arg("calibrate")
        .args(args)
        .output()
        .expect("run ragscope")
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

fn close(got: &Value, want: &Value, what: &str) {
    let (g, w) = (got.as_f64().unwrap(), want.as_f64().unwrap());
    assert!((g - w).abs() <= 1e-9, "{what}: got {g}, ppi-python {w}");
}

#[test]
fn json_matches_ppi_python_and_its_shape() {
    let text = std::fs::read_to_string(fixtures().join("calibrate_cli.json")).unwrap();
    let oracle: Value = serde_json::from_str(&text).unwrap();
    let cases = oracle["cases"].as_array().unwrap();
    // One command line per (measure, unit, weights): all three runs, in this order.
    let order = ["hybrid", "bm25", "dense"];
    let mut groups: Vec<(&str, &str, f64, Option<&str>)> = Vec::new();
    for c in cases {
        let key = (
            c["measure"].as_str().unwrap(),
            c["unit"].as_str().unwrap(),
            c["alpha"].as_f64().unwrap(),
            c.get("weights").and_then(Value::as_str),
        );
        if !groups.contains(&key) {
            groups.push(key);
        }
    }
    assert_eq!(groups.len(), 6);
    for (measure, unit, alpha, weights) in groups {
        let alpha_text = alpha.to_string();
        let mut args = vec![
            "--judge",
            "judge.qrels",
            "--human",
            "human.qrels",
            "-m",
            measure,
            "--unit",
            unit,
            "--alpha",
            &alpha_text,
            "--format",
            "json",
        ];
        let runs: Vec<String> = order.iter().map(|r| format!("run_{r}.txt")).collect();
        if let Some(w) = weights {
            args.extend(["--weights", w, &runs[1]]);
        } else {
            args.extend(runs.iter().map(String::as_str));
        }
        let out = ragscope(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(keys(&got), ["alpha", "unit", "measure", "runs"]);
        assert_eq!(got["alpha"].as_f64(), Some(alpha));
        assert_eq!(got["unit"], unit);
        assert_eq!(got["measure"], measure);
        let got_runs = got["runs"].as_array().unwrap();
        let expected_runs: Vec<&str> = if weights.is_some() {
            vec!["bm25"]
        } else {
            order.to_vec()
        };
        assert_eq!(got_runs.len(), expected_runs.len());
        for (row, run) in got_runs.iter().zip(expected_runs) {
            let what = format!("{measure} {unit} {run} weights={weights:?}");
            assert_eq!(
                keys(row),
                [
                    "run",
                    "units",
                    "labelled",
                    "judge",
                    "classical",
                    "ppi",
                    "ppi++"
                ],
                "{what}"
            );
            let want = cases
                .iter()
                .find(|c| {
                    c["measure"] == measure
                        && c["unit"] == unit
                        && c["run"] == run
                        && c.get("weights").and_then(Value::as_str) == weights
                })
                .unwrap();
            assert_eq!(row["run"], run);
            assert_eq!(row["units"], want["units"], "{what}");
            assert_eq!(row["labelled"], want["labelled"], "{what}");
            close(&row["judge"], &want["judge"], &what);
            for method in ["classical", "ppi", "ppi++"] {
                let fields: &[&str] = if method == "classical" {
                    &["estimate", "low", "high"]
                } else {
                    &["estimate", "low", "high", "lambda"]
                };
                assert_eq!(keys(&row[method]), fields, "{what} {method}");
                for f in fields {
                    close(
                        &row[method][f],
                        &want[method][f],
                        &format!("{what} {method} {f}"),
                    );
                }
            }
            assert_eq!(row["ppi"]["lambda"].as_f64(), Some(1.0));
        }
    }
}

#[test]
fn planner_and_method_selection() {
    let out = ragscope(&[
        "--judge",
        "judge.qrels",
        "--human",
        "human.qrels",
        "-m",
        "P@5",
        "--unit",
        "item",
        "--method",
        "ppi++",
        "--target-width",
        "0.1",
        "--format",
        "json",
        "run_bm25.txt",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    let row = &got["runs"][0];
    assert_eq!(
        keys(row),
        [
            "run",
            "units",
            "labelled",
            "judge",
            "ppi++",
            "more_labels_needed"
        ]
    );
    let width = row["ppi++"]["high"].as_f64().unwrap() - row["ppi++"]["low"].as_f64().unwrap();
    let more = row["more_labels_needed"].as_u64().unwrap();
    // Wider than 0.1 now, so more labels are needed; a width already met needs none.
    assert!(width > 0.1 && more > 0, "width {width}, more {more}");
    let out = ragscope(&[
        "--judge",
        "judge.qrels",
        "--human",
        "human.qrels",
        "-m",
        "P@5",
        "--unit",
        "item",
        "--target-width",
        "0.9",
        "--format",
        "json",
        "run_bm25.txt",
    ]);
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["runs"][0]["more_labels_needed"], 0);
}

fn refused(out: &Output, needle: &str) {
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {err}");
    assert!(err.contains(needle), "stderr lacks {needle:?}: {err}");
    assert!(out.stdout.is_empty());
}

fn scratch(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("calibrate_cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn refusals_name_the_reason() {
    let base = ["--judge", "judge.qrels", "-m", "P@5"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend(extra);
        ragscope(&a)
    };
    refused(
        &with(&["--human", "human_audit.qrels", "run_bm25.txt"]),
        "disagreements-first",
    );
    refused(
        &with(&[
            "--human",
            "human_audit.qrels",
            "--sample",
            "random",
            "run_bm25.txt",
        ]),
        "but --sample says random",
    );
    let stratified = std::fs::read_to_string(fixtures().join("human.qrels")).unwrap();
    let stratified = scratch(
        "stratified.qrels",
        &format!("# ragscope-sample: stratified\n{stratified}"),
    );
    refused(
        &with(&["--human", s(&stratified), "run_bm25.txt"]),
        "--weights",
    );
    refused(
        &ragscope(&[
            "--judge",
            "judge.qrels",
            "--human",
            "human.qrels",
            "-m",
            "nDCG@5",
            "--unit",
            "item",
            "run_bm25.txt",
        ]),
        "use --unit query",
    );
    let bad_weights = scratch("weights.txt", "q1 dq1_0 2\nq1 dq1_1 -1\n");
    refused(
        &with(&[
            "--human",
            "human.qrels",
            "--unit",
            "item",
            "--weights",
            s(&bad_weights),
            "run_bm25.txt",
        ]),
        "weights.txt:2: weight \"-1\"",
    );
    let partial_weights = scratch("partial.txt", "q1 dq1_0 2\n");
    refused(
        &with(&[
            "--human",
            "human.qrels",
            "--unit",
            "item",
            "--weights",
            s(&partial_weights),
            "run_bm25.txt",
        ]),
        "no weight for the labelled unit",
    );
    let bad_qrels = scratch("bad.qrels", "q1 0 d1 1\nq1 0 d2\n");
    let out = with(&["--human", s(&bad_qrels), "run_bm25.txt"]);
    refused(&out, "bad.qrels");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(":2") || err.contains("line 2"),
        "no line number: {err}"
    );
    refused(
        &with(&["--human", "human.qrels", "--alpha", "1.5", "run_bm25.txt"]),
        "--alpha",
    );
    refused(
        &ragscope(&[
            "--judge",
            "judge.qrels",
            "--human",
            "human.qrels",
            "-m",
            "MAP",
            "run_bm25.txt",
        ]),
        "give --k",
    );
}

/// `--agreement`: point values against scikit-learn / krippendorff / scipy (on the items both
/// qrels grade and the topics every run has labelled), and a seeded, reproducible bootstrap.
#[test]
fn agreement_matches_sklearn_and_is_seeded() {
    let text = std::fs::read_to_string(fixtures().join("calibrate_cli.json")).unwrap();
    let oracle: Value = serde_json::from_str(&text).unwrap();
    let want = &oracle["agreement"];
    let args = |seed: &str| {
        ragscope(&[
            "--agreement",
            "--judge",
            "judge.qrels",
            "--human",
            "human.qrels",
            "-m",
            "P@5",
            "--resamples",
            "500",
            "--seed",
            seed,
            "--format",
            "json",
            "run_hybrid.txt",
            "run_bm25.txt",
            "run_dense.txt",
        ])
    };
    let out = args("7");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        keys(&got),
        [
            "items",
            "resample",
            "resamples",
            "seed",
            "statistics",
            "ranking",
            "disagreements"
        ]
    );
    assert_eq!(got["items"], want["items"]);
    assert_eq!(
        got["disagreements"].as_array().unwrap().len() as u64,
        want["disagreements"].as_u64().unwrap()
    );
    let stats = got["statistics"].as_array().unwrap();
    assert_eq!(stats.len(), want["statistics"].as_object().unwrap().len());
    for row in stats {
        let name = row["statistic"].as_str().unwrap();
        close(&row["value"], &want["statistics"][name], name);
        let (low, high) = (row["low"].as_f64().unwrap(), row["high"].as_f64().unwrap());
        assert!(
            low <= high && row["resamples"].as_u64().unwrap() <= 500,
            "{name}"
        );
    }
    assert_eq!(got["ranking"]["topics"], want["topics"]);
    assert_eq!(got["ranking"]["runs"], 3);
    close(&got["ranking"]["value"], &want["tau"], "tau");
    assert_eq!(args("7").stdout, out.stdout, "same seed, same output");
    assert_ne!(
        args("8").stdout,
        out.stdout,
        "another seed, other resamples"
    );
}

/// `--nuggets`: per-topic nugget scores of judge and human assignment files, estimates against
/// ppi-python on scores computed in the generator from the paper's formulas.
#[test]
fn nugget_scores_match_ppi_python() {
    let text = std::fs::read_to_string(fixtures().join("calibrate_cli.json")).unwrap();
    let oracle: Value = serde_json::from_str(&text).unwrap();
    let cases = oracle["nugget_cases"].as_array().unwrap();
    for measure in ["V_strict", "A"] {
        let out = ragscope(&[
            "--nuggets",
            "--judge",
            "judge_nuggets.jsonl",
            "--human",
            "human_nuggets.jsonl",
            "-m",
            measure,
            "--format",
            "json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let got: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(keys(&got), ["alpha", "unit", "measure", "runs"]);
        assert_eq!(got["unit"], "query");
        assert_eq!(got["measure"], measure);
        let runs = got["runs"].as_array().unwrap();
        assert_eq!(runs.len(), 2);
        for row in runs {
            let want = cases
                .iter()
                .find(|c| c["measure"] == measure && c["run"] == row["run"])
                .unwrap();
            let what = format!("{measure} {}", row["run"]);
            assert_eq!(row["units"], want["units"], "{what}");
            assert_eq!(row["labelled"], want["labelled"], "{what}");
            close(&row["judge"], &want["judge"], &what);
            for method in ["classical", "ppi", "ppi++"] {
                for f in keys(&want[method]) {
                    close(
                        &row[method][f],
                        &want[method][f],
                        &format!("{what} {method} {f}"),
                    );
                }
            }
        }
    }
    // Run ids pick and order the runs; a disagreements-first sample is refused by flag too.
    let out = ragscope(&[
        "--nuggets",
        "--judge",
        "judge_nuggets.jsonl",
        "--human",
        "human_nuggets.jsonl",
        "-m",
        "V_strict",
        "--format",
        "json",
        "run-b",
    ]);
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(got["runs"].as_array().unwrap().len(), 1);
    assert_eq!(got["runs"][0]["run"], "run-b");
    refused(
        &ragscope(&[
            "--nuggets",
            "--judge",
            "judge_nuggets.jsonl",
            "--human",
            "human_nuggets.jsonl",
            "-m",
            "V_strict",
            "--sample",
            "disagreements-first",
        ]),
        "disagreements-first",
    );
    refused(
        &ragscope(&[
            "--nuggets",
            "--judge",
            "judge_nuggets.jsonl",
            "--human",
            "human_nuggets.jsonl",
            "-m",
            "nDCG@5",
        ]),
        "one of V_strict",
    );
    refused(
        &ragscope(&[
            "--nuggets",
            "--judge",
            "judge_nuggets.jsonl",
            "--human",
            "human_nuggets.jsonl",
            "-m",
            "V_strict",
            "run-z",
        ]),
        "no run 'run-z'",
    );
}

/// `--pairwise`: win rates per pair of agents from judge and human RAGElo pairwise CSVs,
/// against ppi-python on the generator's own game scoring.
#[test]
fn pairwise_win_rates_match_ppi_python() {
    let text = std::fs::read_to_string(fixtures().join("calibrate_cli.json")).unwrap();
    let oracle: Value = serde_json::from_str(&text).unwrap();
    let cases = oracle["pairwise_cases"].as_array().unwrap();
    let out = ragscope(&[
        "--pairwise",
        "--judge",
        "judge_pairwise.csv",
        "--human",
        "human_pairwise.csv",
        "-m",
        "win_rate",
        "--format",
        "json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(keys(&got), ["alpha", "unit", "measure", "runs"]);
    assert_eq!(got["unit"], "game");
    let runs = got["runs"].as_array().unwrap();
    assert_eq!(runs.len(), cases.len());
    for (row, want) in runs.iter().zip(cases) {
        let what = want["run"].as_str().unwrap();
        assert_eq!(row["run"], want["run"]);
        assert_eq!(row["units"], want["units"], "{what}");
        assert_eq!(row["labelled"], want["labelled"], "{what}");
        close(&row["judge"], &want["judge"], what);
        for method in ["classical", "ppi", "ppi++"] {
            for f in keys(&want[method]) {
                close(
                    &row[method][f],
                    &want[method][f],
                    &format!("{what} {method} {f}"),
                );
            }
        }
    }
    refused(
        &ragscope(&[
            "--pairwise",
            "--judge",
            "judge_pairwise.csv",
            "--human",
            "human_pairwise.csv",
            "-m",
            "P@5",
        ]),
        "-m is win_rate",
    );
}
