//! `ragscope elo` and `ragscope agreement`: the JSON contract of issue #9 and the values of the
//! oracles — RAGElo's own test data (agents_ranking.csv: 1030 / 969), the PyPI ragelo 0.7.0 and
//! scipy fixtures of tests/oracle/tournament, scikit-learn and krippendorff for agreement.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn shared(path: &str) -> String {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/"
    ))
    .join(path);
    assert!(p.exists(), "anchor data missing: {}", p.display());
    p.display().to_string()
}

fn fixture(name: &str) -> Vec<Value> {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../eval/tests/fixtures/tournament/"
    ))
    .join(name);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    v["cases"].as_array().unwrap().clone()
}

fn case(file: &str, name: &str) -> Value {
    fixture(file)
        .into_iter()
        .find(|c| c["name"] == name)
        .unwrap()
}

fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("tournament_cli_{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn ragscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .args(args)
        .output()
        .unwrap()
}

fn json(args: &[&str]) -> Value {
    let out = ragscope(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

const PAIRWISE: &str = "ragelo/tests_data/pairwise_answers_evaluations.csv";
const NOTEBOOK: &str = "ragelo/notebooks/pairwise_answers_evaluations.csv";

#[test]
fn compat_ragelo_no_shuffle_prints_1030_969_exactly() {
    let out = ragscope(&[
        "elo",
        &shared(PAIRWISE),
        "--compat",
        "ragelo",
        "--no-shuffle",
        "--format",
        "json",
    ]);
    assert!(out.status.success());
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        "{\"model\":\"elo\",\"ratings\":{\"agent1\":{\"rating\":1030.0,\"std\":0.0},\
         \"agent2\":{\"rating\":969.0,\"std\":0.0}}}\n"
    );
    // RAGElo's answers_eval.jsonl holds the same games in both orders; ragelo keeps one per pair.
    let v = json(&[
        "elo",
        &shared("ragelo/tests_data/answers_eval.jsonl"),
        "--compat",
        "ragelo",
        "--no-shuffle",
        "--format",
        "json",
    ]);
    assert_eq!(v["ratings"]["agent1"]["rating"], 1030.0);
    assert_eq!(v["ratings"]["agent2"]["rating"], 969.0);
}

#[test]
fn compat_ragelo_on_the_notebook_experiment_matches_ragelo_070() {
    let want = case("ragelo_elo.json", "notebook_noshuffle_t10");
    let v = json(&[
        "elo",
        &shared(NOTEBOOK),
        "--compat",
        "ragelo",
        "--no-shuffle",
        "--format",
        "json",
    ]);
    assert_eq!(v["model"], "elo");
    let got = v["ratings"].as_object().unwrap();
    assert_eq!(got.len(), 6);
    for (agent, w) in want["expected"].as_object().unwrap() {
        assert_eq!(got[agent]["rating"], w["rating"], "{agent}");
        assert_eq!(got[agent]["std"], 0.0);
    }
    // Best first.
    let ratings: Vec<f64> = got
        .values()
        .map(|r| r["rating"].as_f64().unwrap())
        .collect();
    assert!(ratings.windows(2).all(|w| w[0] >= w[1]));
}

#[test]
fn default_elo_is_seeded_and_one_tournament_has_std_zero() {
    let args = ["elo", &shared(NOTEBOOK), "--seed", "7", "--format", "json"];
    let first = json(&args);
    assert_eq!(first, json(&args), "same seed, same ratings");
    assert_ne!(
        first,
        json(&["elo", &shared(NOTEBOOK), "--seed", "8", "--format", "json"])
    );
    let ratings = first["ratings"].as_object().unwrap();
    // Real-valued, zero-sum per game: the ratings average to the initial 1000.
    let mean: f64 = ratings
        .values()
        .map(|r| r["rating"].as_f64().unwrap())
        .sum::<f64>()
        / 6.0;
    assert!((mean - 1000.0).abs() < 1e-9, "{mean}");
    assert!(ratings.values().any(|r| r["std"].as_f64().unwrap() > 0.0));
    let one = json(&[
        "elo",
        &shared(NOTEBOOK),
        "--tournaments",
        "1",
        "--initial",
        "1500",
        "--format",
        "json",
    ]);
    for r in one["ratings"].as_object().unwrap().values() {
        assert_eq!(r["std"], 0.0);
    }
}

#[test]
fn bradley_terry_json_matches_scipy_and_has_bootstrap_errors() {
    let want = case("bradley_terry.json", "notebook");
    let v = json(&[
        "elo",
        &shared(NOTEBOOK),
        "--model",
        "bradley-terry",
        "--resamples",
        "200",
        "--format",
        "json",
    ]);
    assert_eq!(v["model"], "bradley-terry");
    let got = v["ratings"].as_object().unwrap();
    for (agent, w) in want["expected"].as_object().unwrap() {
        let g = got[agent]["rating"].as_f64().unwrap();
        assert!(
            (g - w.as_f64().unwrap()).abs() < 1e-6,
            "{agent}: {g} vs {w}"
        );
        assert!(got[agent]["std"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn bradley_terry_without_mle_is_a_clear_error() {
    let out = ragscope(&["elo", &shared(PAIRWISE), "--model", "bradley-terry"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("MLE does not exist") && err.contains("'agent1' never lost"),
        "{err}"
    );
}

#[test]
fn bad_verdict_is_reported_with_file_line_and_column() {
    let dir = scratch("bad_verdict");
    let path = dir.join("games.csv");
    std::fs::write(
        &path,
        "qid,agent_a,agent_b,raw_answer,answer,relevance\r\n\
         q1,x,y,\"multi\r\nline, with \"\"quotes\"\"\",A,\r\n\
         q1,y,x,\"fine\",maybe,\r\n",
    )
    .unwrap();
    let out = ragscope(&["elo", path.to_str().unwrap()]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("games.csv:4:15: field `answer`: verdict 'maybe'"),
        "{err}"
    );
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

#[test]
fn agreement_of_umbrela_judges_matches_sklearn_and_krippendorff() {
    let dir = scratch("umbrela");
    let inputs: Value = serde_json::from_str(
        &std::fs::read_to_string(shared("umbrela/ensemble_case_inputs.json")).unwrap(),
    )
    .unwrap();
    let a = write(&dir, "one.qrels", inputs["judge_one"].as_str().unwrap());
    let b = write(&dir, "two.qrels", inputs["judge_two"].as_str().unwrap());
    let want = case("agreement_labels.json", "umbrela_judges");
    let v = json(&["agreement", &a, &b, "--format", "json"]);
    assert_eq!(v["kind"], "grades");
    let stat = |name: &str| {
        v["statistics"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["statistic"] == name)
            .unwrap()
            .clone()
    };
    for (name, key) in [
        ("Cohen's kappa", "cohen"),
        ("weighted kappa (linear)", "linear"),
        ("weighted kappa (quadratic)", "quadratic"),
        ("Krippendorff's alpha (nominal)", "alpha_nominal"),
        ("Krippendorff's alpha (ordinal)", "alpha_ordinal"),
        ("Krippendorff's alpha (interval)", "alpha_interval"),
    ] {
        let s = stat(name);
        let (g, w) = (s["value"].as_f64().unwrap(), want[key].as_f64().unwrap());
        assert!((g - w).abs() < 1e-12, "{name}: {g} vs {w}");
        assert_eq!(s["items"], 4);
    }
}

#[test]
fn run_agreement_from_nugget_json_matches_scipy() {
    let want = case("agreement_runs.json", "runs1");
    // Two nugget score files in the shape `ragscope nuggets score --format json --per-topic`
    // prints, built from the fixture's cells.
    let file = |side: usize| {
        let mut runs: indexmap_like::Runs = Vec::new();
        for c in want["cells"].as_array().unwrap() {
            let (topic, run) = (c[0].as_str().unwrap(), c[1].as_str().unwrap());
            let v = c[2 + side].as_f64().unwrap();
            match runs.iter_mut().find(|(r, _)| r == run) {
                Some((_, t)) => t.push((topic.to_string(), v)),
                None => runs.push((run.to_string(), vec![(topic.to_string(), v)])),
            }
        }
        let runs: Vec<Value> = runs
            .into_iter()
            .map(|(r, topics)| {
                let t: serde_json::Map<String, Value> = topics
                    .into_iter()
                    .map(|(q, v)| (q, serde_json::json!({"V_strict": v, "A": 0.5})))
                    .collect();
                serde_json::json!({"run_id": r, "mean": {"V_strict": 0.0}, "topics": t})
            })
            .collect();
        serde_json::json!({ "runs": runs }).to_string()
    };
    let dir = scratch("runs");
    let a = write(&dir, "auto.json", &file(0));
    let b = write(&dir, "manual.json", &file(1));
    let v = json(&["agreement", &a, &b, "--format", "json"]);
    assert_eq!(v["kind"], "runs");
    let s = v["statistics"].as_array().unwrap();
    for (i, (key, items)) in [
        ("run_means", want["runs"].clone()),
        (
            "all_pairs",
            Value::from(want["cells"].as_array().unwrap().len()),
        ),
        ("per_topic", want["topics"].clone()),
    ]
    .into_iter()
    .enumerate()
    {
        let (g, w) = (s[i]["value"].as_f64().unwrap(), want[key].as_f64().unwrap());
        assert!((g - w).abs() < 1e-12, "{key}: {g} vs {w}");
        assert_eq!(s[i]["items"], items, "{key}");
    }
}

mod indexmap_like {
    pub type Runs = Vec<(String, Vec<(String, f64)>)>;
}
