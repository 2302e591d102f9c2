//! The built binary's RAG and comparison commands: `udcg` (both forms), `eval --utilities`,
//! `correlate`, `udcg-train`, `compare`, and their error exits. Oracles: the values stored by
//! the UDCG authors' code (../shared/data/udcg), the scipy study fixture of crates/eval, and the
//! scipy-checked `stats` functions applied to `ragscope eval --per-query` output.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ragscope_eval::stats::{self, Alternative};
use serde_json::Value;

const MODEL: &str = "meta-llama/Llama-3.2-3B-Instruct";

fn shared(path: &str) -> PathBuf {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/"
    ))
    .join(path);
    assert!(p.exists(), "anchor data missing: {}", p.display());
    p
}

fn study_fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../eval/tests/fixtures/rag/"
    ))
    .join(name)
}

/// A fresh directory per test under cargo's scratch space for integration tests.
fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("rag_cli_{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn ragscope(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run ragscope")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn ok(o: Output) -> Output {
    assert!(o.status.success(), "{}", stderr(&o));
    o
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| panic!("{e}: {}", stdout(o)))
}

struct Example {
    qid: String,
    passages: Vec<(String, bool)>,
    stored: f64,
}

fn reference_examples() -> Vec<Example> {
    let text = std::fs::read_to_string(shared("udcg/dataset_with_udcg.json")).expect("json");
    let v: Value = serde_json::from_str(&text).expect("json");
    v.as_array()
        .expect("list")
        .iter()
        .map(|e| Example {
            qid: e["example_id"].as_str().expect("id").into(),
            passages: e["passages"]
                .as_array()
                .expect("passages")
                .iter()
                .map(|p| {
                    (
                        p["doc_id"].as_str().expect("doc").into(),
                        p["is_relevant"].as_bool().expect("rel"),
                    )
                })
                .collect(),
            stored: e["udcg"][MODEL].as_f64().expect("stored"),
        })
        .collect()
}

/// In `dir`: `run.txt` (passages in list order), `rev.txt` (reversed), `qrels.txt`
/// (is_relevant), and `u.tsv` written by `ragscope udcg --utilities-out` from the reference JSON.
fn udcg_files(dir: &Path) -> Vec<Example> {
    let ex = reference_examples();
    let (mut run, mut rev, mut qrels) = (String::new(), String::new(), String::new());
    for e in &ex {
        let n = e.passages.len();
        for (i, (docno, rel)) in e.passages.iter().enumerate() {
            run += &format!("{} Q0 {docno} {} {} ref\n", e.qid, i + 1, n - i);
            rev += &format!("{} Q0 {docno} {} {} rev\n", e.qid, n - i, i + 1);
            qrels += &format!("{} 0 {docno} {}\n", e.qid, u8::from(*rel));
        }
    }
    std::fs::write(dir.join("run.txt"), run).expect("write");
    std::fs::write(dir.join("rev.txt"), rev).expect("write");
    std::fs::write(dir.join("qrels.txt"), qrels).expect("write");
    let json = shared("udcg/dataset_with_udcg.json");
    ok(ragscope(
        dir,
        &[
            "udcg",
            "--compat",
            "udcg-ref",
            "--utilities-out",
            "u.tsv",
            "-o",
            "filled.json",
            json.to_str().expect("path"),
        ],
    ));
    ex
}

#[test]
fn udcg_run_form_reproduces_the_reference_values() {
    let dir = scratch("udcg_run_form");
    let ex = udcg_files(&dir);
    let o = ok(ragscope(
        &dir,
        &[
            "udcg",
            "--qrels",
            "qrels.txt",
            "--utilities",
            "u.tsv",
            "--compat",
            "udcg-ref",
            "--per-query",
            "--format",
            "json",
            "run.txt",
            "rev.txt",
        ],
    ));
    let doc = json(&o);
    assert_eq!(doc["measures"][0], "UDCG(compat=udcg-ref)");
    let per_query = &doc["runs"][0]["per_query"];
    for e in &ex {
        let got = per_query[&e.qid]["UDCG(compat=udcg-ref)"]
            .as_f64()
            .expect("value");
        assert!(
            (got - e.stored).abs() <= 1e-9,
            "{}: {got} vs {}",
            e.qid,
            e.stored
        );
    }
    // No discount: the reversed run has the same UDCG over the whole list.
    let mean = |r: usize| doc["runs"][r]["summary"]["UDCG(compat=udcg-ref)"].as_f64();
    assert!((mean(0).expect("run") - mean(1).expect("rev")).abs() < 1e-12);
    assert_eq!(doc["runs"][0]["unjudged"]["UDCG(compat=udcg-ref)"], 0);

    // Flags map onto the measure name; the table prints 4 decimals of the stored mean.
    let o = ok(ragscope(
        &dir,
        &[
            "udcg",
            "--qrels",
            "qrels.txt",
            "--utilities",
            "u.tsv",
            "--k",
            "2",
            "--gamma",
            "0",
            "--binary",
            "run.txt",
        ],
    ));
    assert!(stdout(&o).starts_with("run      UDCG(gamma=0,gain=binary)@2\n"));
    // Top 2 are relevant in examples 1 and 2, one relevant in 3: σ(1), σ(1), σ(0.5).
    let sig = |x: f64| 1.0 / (1.0 + (-x).exp());
    let want = (2.0 * sig(1.0) + sig(0.5)) / 3.0;
    assert!(
        stdout(&o)
            .lines()
            .nth(1)
            .map(|l| l.split_whitespace().collect::<Vec<_>>())
            == Some(vec!["run.txt", &format!("{want:.4}")]),
        "{}",
        stdout(&o)
    );

    // The JSON form filled the same values as the authors' file.
    let filled: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("filled.json")).expect("filled"))
            .expect("json");
    for (e, f) in ex.iter().zip(filled.as_array().expect("list")) {
        let got = f["udcg"][MODEL].as_f64().expect("udcg");
        assert!((got - e.stored).abs() <= 1e-9);
    }
}

#[test]
fn eval_takes_utilities_and_reports_unjudged_passages() {
    let dir = scratch("eval_utilities");
    let ex = udcg_files(&dir);
    let o = ok(ragscope(
        &dir,
        &[
            "eval",
            "--qrels",
            "qrels.txt",
            "--utilities",
            "u.tsv",
            "--measures",
            "UDCG(compat=udcg-ref)@5,nDCG@5,P@1",
            "--format",
            "csv",
            "run.txt",
        ],
    ));
    let mean = ex.iter().map(|e| e.stored).sum::<f64>() / ex.len() as f64;
    assert_eq!(
        stdout(&o),
        format!("run,UDCG(compat=udcg-ref)@5,nDCG@5,P@1\nrun.txt,{mean:.4},1.0000,1.0000\n")
    );
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));

    // Drop one utility row: the passage is counted and reported, not silently scored.
    let tsv = std::fs::read_to_string(dir.join("u.tsv")).expect("tsv");
    let kept: String = tsv
        .lines()
        .filter(|l| !l.starts_with("example_2\tdoc_8\t"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(kept.lines().count() + 1, tsv.lines().count());
    std::fs::write(dir.join("u_missing.tsv"), kept).expect("write");
    let o = ok(ragscope(
        &dir,
        &[
            "eval",
            "--qrels",
            "qrels.txt",
            "--utilities",
            "u_missing.tsv",
            "-m",
            "UDCG@5,UDCG@2",
            "--format",
            "json",
            "run.txt",
        ],
    ));
    let doc = json(&o);
    assert_eq!(doc["runs"][0]["unjudged"]["UDCG@5"], 1);
    assert_eq!(doc["runs"][0]["unjudged"]["UDCG@2"], 0);
    let err = stderr(&o);
    assert!(
        err.contains("run.txt: UDCG@5: 1 retrieved passage(s)") && !err.contains("UDCG@2"),
        "{err}"
    );
}

#[test]
fn utilities_models_are_chosen_explicitly() {
    let dir = scratch("models");
    udcg_files(&dir);
    let tsv = std::fs::read_to_string(dir.join("u.tsv")).expect("tsv");
    // The --utilities-out file names the model in a 5th column; add a second model.
    assert!(tsv.lines().nth(1).expect("row").ends_with(MODEL));
    let mut two = tsv.clone();
    for line in tsv.lines().skip(1) {
        two += &format!("{}\n", line.replace(MODEL, "other"));
    }
    std::fs::write(dir.join("two.tsv"), two).expect("write");
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            "eval",
            "--qrels",
            "qrels.txt",
            "--utilities",
            "two.tsv",
            "-m",
            "UDCG@5",
        ];
        a.extend_from_slice(extra);
        a.push("run.txt");
        a
    };
    let o = ragscope(&dir, &args(&[]));
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("two.tsv: the utilities name several models"),
        "{}",
        stderr(&o)
    );
    let o = ragscope(&dir, &args(&["--model", "nope"]));
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("no row names the model \"nope\""));
    let with_model = ok(ragscope(&dir, &args(&["--model", MODEL])));
    let single = ok(ragscope(
        &dir,
        &[
            "eval",
            "--qrels",
            "qrels.txt",
            "--utilities",
            "u.tsv",
            "-m",
            "UDCG@5",
            "run.txt",
        ],
    ));
    assert_eq!(stdout(&with_model), stdout(&single));
}

#[test]
fn errors_name_the_file_and_line() {
    let dir = scratch("errors");
    udcg_files(&dir);
    // UDCG without utilities: a usage error before any file is read.
    for cmd in [
        vec![
            "eval",
            "--qrels",
            "qrels.txt",
            "-m",
            "nDCG@5,UDCG@5",
            "run.txt",
        ],
        vec![
            "compare",
            "--qrels",
            "qrels.txt",
            "-m",
            "UDCG@5",
            "--baseline",
            "run.txt",
            "rev.txt",
        ],
    ] {
        let o = ragscope(&dir, &cmd);
        assert_eq!(o.status.code(), Some(2), "{cmd:?}");
        assert!(
            stderr(&o).contains("UDCG@5 needs passage utilities")
                && stderr(&o).contains("--utilities"),
            "{}",
            stderr(&o)
        );
    }
    // The run form of udcg requires --utilities with --qrels (clap usage error).
    let o = ragscope(&dir, &["udcg", "--qrels", "qrels.txt", "run.txt"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--utilities"));

    std::fs::write(
        dir.join("bad.tsv"),
        "qid\tdocno\trelevant\tno_res_prob\nexample_1\tdoc_1\t1\t0.5\nexample_1\tdoc_2\t1\t1.5\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("bad.run"),
        "example_1 Q0 doc_1 1 1.0 r\nexample_1 Q0 doc_2 2 x r\n",
    )
    .expect("write");
    for (cmd, want) in [
        (
            vec!["eval", "--qrels", "qrels.txt", "--utilities", "bad.tsv", "-m", "UDCG@5", "run.txt"],
            "ragscope eval: bad.tsv:3: field `no_res_prob`: probability must be a finite number in [0, 1], got 1.5",
        ),
        (
            vec!["udcg", "--qrels", "qrels.txt", "--utilities", "bad.tsv", "run.txt"],
            "ragscope udcg: bad.tsv:3: field `no_res_prob`",
        ),
        (
            vec!["eval", "--qrels", "qrels.txt", "bad.run"],
            "ragscope eval: bad.run:2:",
        ),
        (
            vec!["compare", "--qrels", "qrels.txt", "--baseline", "run.txt", "bad.run"],
            "ragscope compare: bad.run:2:",
        ),
        (
            vec!["compare", "--qrels", "qrels.txt", "--baseline", "missing.run", "run.txt"],
            "ragscope compare: cannot read 'missing.run'",
        ),
        (
            vec!["udcg", "run.txt"],
            "ragscope udcg: run.txt:1:1:",
        ),
    ] {
        let o = ragscope(&dir, &cmd);
        assert_eq!(o.status.code(), Some(1), "{cmd:?}: {}", stderr(&o));
        assert!(stderr(&o).starts_with(want), "{cmd:?}: {}", stderr(&o));
    }
}

#[test]
fn correlate_matches_the_scipy_study() {
    let dir = scratch("correlate");
    let contexts = study_fixture("study_contexts.jsonl");
    let o = ok(ragscope(
        &dir,
        &[
            "correlate",
            contexts.to_str().expect("path"),
            "--k",
            "4",
            "--resamples",
            "200",
            "--format",
            "json",
        ],
    ));
    let ours = json(&o);
    let expected: Value = serde_json::from_str(
        &std::fs::read_to_string(study_fixture("study_expected.json")).expect("fixture"),
    )
    .expect("json");
    let mut compared = 0;
    for (g, want) in ours["groups"]
        .as_array()
        .expect("groups")
        .iter()
        .zip(expected["groups"].as_array().expect("groups"))
    {
        assert_eq!(g["dataset"], want["dataset"]);
        for (metric, coefficients) in want["means"].as_object().expect("means") {
            let row = g["metrics"]
                .as_array()
                .expect("metrics")
                .iter()
                .find(|r| r["metric"] == metric.as_str())
                .unwrap_or_else(|| panic!("{metric} missing"));
            for (ours_key, key) in [
                ("spearman", "spearman"),
                ("kendall_tau_b", "kendall-tau-b"),
                ("pearson", "pearson"),
            ] {
                let got = row[ours_key]["mean"].as_f64().expect("mean");
                let w = coefficients[key].as_f64().expect("expected");
                assert!((got - w).abs() < 1e-12, "{metric} {key}: {got} vs {w}");
                compared += 1;
            }
        }
    }
    assert_eq!(compared, 60);
    // Mixed context sizes without --k: refused, naming the lines.
    let o = ragscope(&dir, &["correlate", contexts.to_str().expect("path")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("study_contexts.jsonl: contexts of unequal k"));
}

#[test]
fn udcg_train_feeds_correlate_theta() {
    let dir = scratch("udcg_train");
    let contexts = study_fixture("study_contexts.jsonl");
    let c = contexts.to_str().expect("path");
    ok(ragscope(
        &dir,
        &["udcg-train", c, "--k", "4", "-o", "theta.json"],
    ));
    let again = ok(ragscope(&dir, &["udcg-train", c, "--k", "4"]));
    let model_text = std::fs::read_to_string(dir.join("theta.json")).expect("model");
    assert_eq!(
        model_text.trim(),
        stdout(&again).trim(),
        "seeded, deterministic"
    );
    let model: Value = serde_json::from_str(&model_text).expect("json");
    assert_eq!(model["kind"], "udcg-theta");
    assert_eq!(model["k"], 4);
    assert_eq!(model["alpha"].as_array().map(Vec::len), Some(4));
    assert_eq!(model["beta"].as_array().map(Vec::len), Some(4));
    assert_eq!(model["converged"], true);
    let o = ok(ragscope(
        &dir,
        &[
            "correlate",
            c,
            "--k",
            "4",
            "--resamples",
            "50",
            "--theta",
            "theta.json",
            "--format",
            "json",
        ],
    ));
    let doc = json(&o);
    let theta = doc["groups"][0]["metrics"]
        .as_array()
        .expect("metrics")
        .iter()
        .find(|r| r["metric"].as_str().is_some_and(|m| m.contains("θ")))
        .unwrap_or_else(|| panic!("no UDCGθ row: {doc}"));
    assert!(theta["spearman"]["mean"]
        .as_f64()
        .expect("mean")
        .is_finite());
    // A model for another k is refused.
    let o = ragscope(&dir, &["correlate", c, "--k", "3", "--theta", "theta.json"]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

/// 40 topics of 30 documents; `better` puts relevant documents higher on most topics.
fn synthetic(dir: &Path) {
    let mut state = 0x9e3779b97f4a7c15u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as f64 / (1u64 << 31) as f64
    };
    let (mut qrels, mut base, mut better, mut same) =
        (String::new(), String::new(), String::new(), String::new());
    for t in 0..40 {
        for d in 0..30 {
            let rel = u8::from(next() < 0.25) * (1 + u8::from(next() < 0.4));
            qrels += &format!("t{t:02} 0 d{d:02} {rel}\n");
            let noise = next();
            base += &format!("t{t:02} Q0 d{d:02} 0 {noise:.6} base\n");
            let boost = if rel > 0 && next() < 0.6 { 0.5 } else { 0.0 };
            better += &format!("t{t:02} Q0 d{d:02} 0 {:.6} better\n", noise + boost);
            let jitter = if next() < 0.1 { 0.3 * next() } else { 0.0 };
            same += &format!("t{t:02} Q0 d{d:02} 0 {:.6} same\n", noise + jitter);
        }
    }
    // "same" lacks topic t39: under -c it scores 0 there.
    let same: String = same
        .lines()
        .filter(|l| !l.starts_with("t39"))
        .map(|l| format!("{l}\n"))
        .collect();
    for (name, text) in [
        ("qrels", qrels),
        ("base.run", base),
        ("better.run", better),
        ("same.run", same),
    ] {
        std::fs::write(dir.join(name), text).expect("write");
    }
}

fn per_query(dir: &Path, measures: &str, run: &str) -> Vec<Vec<f64>> {
    let o = ok(ragscope(
        dir,
        &[
            "eval",
            "--qrels",
            "qrels",
            "-c",
            "-m",
            measures,
            "--per-query",
            "--format",
            "json",
            run,
        ],
    ));
    let doc = json(&o);
    let names: Vec<String> = doc["measures"]
        .as_array()
        .expect("measures")
        .iter()
        .map(|m| m.as_str().expect("name").to_string())
        .collect();
    let pq = doc["runs"][0]["per_query"].as_object().expect("per_query");
    assert_eq!(pq.len(), 40);
    names
        .iter()
        .map(|n| pq.values().map(|t| t[n].as_f64().expect("value")).collect())
        .collect()
}

#[test]
fn compare_p_values_and_markers_follow_paired_t_and_holm() {
    let dir = scratch("compare");
    synthetic(&dir);
    let measures = "nDCG@10,MAP,P@5";
    let base = per_query(&dir, measures, "base.run");
    let others = [
        per_query(&dir, measures, "better.run"),
        per_query(&dir, measures, "same.run"),
    ];
    let mut raw = Vec::new();
    for other in &others {
        for (m, b) in base.iter().enumerate() {
            raw.push(
                stats::paired::paired_t(&other[m], b, Alternative::TwoSided)
                    .expect("t")
                    .p_value,
            );
        }
    }
    let holm = stats::holm(&raw);
    let o = ok(ragscope(
        &dir,
        &[
            "compare",
            "--qrels",
            "qrels",
            "-m",
            measures,
            "--baseline",
            "base.run",
            "better.run",
            "same.run",
            "--format",
            "json",
        ],
    ));
    let doc = json(&o);
    assert!(
        stderr(&o).contains("same.run has no results for 1 of the 40 qrels topics"),
        "{}",
        stderr(&o)
    );
    assert_eq!(doc["num_topics"], 40);
    assert_eq!(doc["comparisons"], 6);
    let rows: Vec<&Value> = doc["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .filter(|r| r["baseline"] != true)
        .collect();
    assert_eq!(rows.len(), 6);
    let mut marked = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let p = row["p_value"].as_f64().expect("p");
        assert!(
            (p - raw[i]).abs() <= 1e-12 * raw[i].max(1e-300) + 1e-300,
            "{row}: {p} vs {}",
            raw[i]
        );
        let adj = row["p_adjusted"].as_f64().expect("adjusted");
        assert!(
            (adj - holm[i]).abs() <= 1e-12,
            "{row}: {adj} vs {}",
            holm[i]
        );
        let significant = holm[i] < 0.05;
        assert_eq!(row["significant"], significant, "{row}");
        let diff = row["difference"].as_f64().expect("difference");
        let b = &base[i % 3];
        let o = &others[i / 3][i % 3];
        let want = (o.iter().sum::<f64>() - b.iter().sum::<f64>()) / 40.0;
        assert!((diff - want).abs() < 1e-12);
        assert!(row["ci_low"].as_f64() < Some(diff) && Some(diff) < row["ci_high"].as_f64());
        if significant {
            marked.push((i, if diff > 0.0 { "better" } else { "worse" }));
            assert_eq!(
                row["direction"],
                if diff > 0.0 { "better" } else { "worse" }
            );
        }
    }
    // The data are built so that "better" wins on every measure and "same" on none.
    assert_eq!(
        marked,
        vec![(0, "better"), (1, "better"), (2, "better")],
        "raw {raw:?} holm {holm:?}"
    );

    let table = stdout(&ok(ragscope(
        &dir,
        &[
            "compare",
            "--qrels",
            "qrels",
            "-m",
            measures,
            "--baseline",
            "base.run",
            "better.run",
            "same.run",
        ],
    )));
    let lines: Vec<&str> = table.lines().collect();
    assert!(lines[1].starts_with("base.run (baseline)") && !lines[1].contains('†'));
    assert_eq!(lines[2].matches('†').count(), 3, "{table}");
    assert!(
        !lines[3].contains('†') && !lines[3].contains('‡'),
        "{table}"
    );
    assert!(table.contains(
        "paired t-test over 40 topics, p < 0.05 after Holm correction over 6 comparisons"
    ));

    let latex = stdout(&ok(ragscope(
        &dir,
        &[
            "compare",
            "--qrels",
            "qrels",
            "-m",
            measures,
            "--baseline",
            "base.run",
            "better.run",
            "same.run",
            "--format",
            "latex",
        ],
    )));
    let better_line = latex
        .lines()
        .find(|l| l.starts_with("better.run &"))
        .expect("row");
    assert_eq!(better_line.matches("$^{\\dagger}$").count(), 3, "{latex}");
    assert!(latex
        .contains("\\footnotesize $^{\\dagger}$ / $^{\\ddagger}$: significantly better / worse"));

    let csv = stdout(&ok(ragscope(
        &dir,
        &[
            "compare",
            "--qrels",
            "qrels",
            "-m",
            measures,
            "--baseline",
            "base.run",
            "better.run",
            "same.run",
            "--format",
            "csv",
            "--correction",
            "bonferroni",
        ],
    )));
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 9);
    assert!(lines[0].ends_with("p_value,p_adjusted,significant"));
    for (i, line) in lines[4..].iter().enumerate() {
        let f: Vec<&str> = line.split(',').collect();
        let p: f64 = f[11].parse().expect("p");
        let adj: f64 = f[12].parse().expect("adjusted");
        assert!((p - raw[i]).abs() <= 1e-12 * raw[i].max(1e-300) + 1e-300);
        assert!((adj - (raw[i] * 6.0).min(1.0)).abs() <= 1e-12);
    }
}

#[test]
fn compare_wilcoxon_matches_the_stats_module() {
    let dir = scratch("compare_wilcoxon");
    synthetic(&dir);
    let base = per_query(&dir, "nDCG@10", "base.run");
    let same = per_query(&dir, "nDCG@10", "same.run");
    let want = stats::wilcoxon::wilcoxon_default(&same[0], &base[0]).expect("wilcoxon");
    let o = ok(ragscope(
        &dir,
        &[
            "compare",
            "--qrels",
            "qrels",
            "-m",
            "nDCG@10",
            "--baseline",
            "base.run",
            "same.run",
            "--test",
            "wilcoxon",
            "--correction",
            "none",
            "--format",
            "json",
        ],
    ));
    let doc = json(&o);
    let row = &doc["rows"][1];
    assert_eq!(row["p_value"].as_f64(), Some(want.p_value));
    assert_eq!(row["p_adjusted"].as_f64(), Some(want.p_value));
    assert_eq!(row["statistic"].as_f64(), Some(want.statistic));
    assert_eq!(doc["test"], "wilcoxon");
}
