//! `ragscope utility` end to end on the UDCG anchor data (shared/data/udcg) with a tiny fixture
//! model, checked against llama.cpp's p(NO-RESPONSE) for the same passages (fixtures written by
//! tests/oracle/generate.py).

use serde_json::Value;
use std::path::PathBuf;
use std::process::Command;

fn data_dir() -> PathBuf {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/udcg"
    ));
    assert!(p.is_dir(), "anchor data missing: {}", p.display());
    p
}

fn fixtures() -> PathBuf {
    let p = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../infer/tests/fixtures"
    ));
    assert!(
        p.join("llama-f32.json").is_file(),
        "infer fixtures missing: {}",
        p.display()
    );
    p
}

/// llama.cpp's p for (example_id, doc_id).
fn oracle() -> Vec<(String, String, f64)> {
    let fx: Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("llama-f32.json")).unwrap())
            .unwrap();
    fx["udcg_anchor"]
        .as_array()
        .expect("udcg_anchor in llama-f32.json")
        .iter()
        .map(|e| {
            (
                e["example_id"].as_str().unwrap().to_string(),
                e["doc_id"].as_str().unwrap().to_string(),
                e["p_no_response"].as_f64().unwrap(),
            )
        })
        .collect()
}

fn tmpdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("ragscope-utility-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn ragscope() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
}

#[test]
fn json_mode_fills_no_res_prob_and_keeps_everything_else() {
    let input = data_dir().join("dataset_with_scores.json");
    let dir = tmpdir("json");
    let out = dir.join("out.json");
    let st = ragscope()
        .args(["utility", "--quiet", "--model"])
        .arg(fixtures().join("llama-f32.gguf"))
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    let before: Value = serde_json::from_str(&std::fs::read_to_string(&input).unwrap()).unwrap();
    let mut after: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let want = oracle();
    let mut n = 0;
    for ex in after.as_array_mut().unwrap() {
        let eid = ex["example_id"].as_str().unwrap().to_string();
        for p in ex["passages"].as_array_mut().unwrap() {
            let did = p["doc_id"].as_str().unwrap().to_string();
            // MODEL defaults to general.name.
            let info = p["models_info"].as_object_mut().unwrap();
            let got = info
                .shift_remove("llama-f32")
                .expect("models_info[llama-f32]")["no_res_prob"]
                .as_f64()
                .unwrap();
            let (_, _, w) = want
                .iter()
                .find(|(e, d, _)| *e == eid && *d == did)
                .unwrap();
            assert!(
                (got - w).abs() / w <= 1e-4,
                "{eid}/{did}: {got} vs llama.cpp {w}"
            );
            n += 1;
        }
    }
    assert_eq!(n, want.len());
    // With the added entries removed the file is the input, field order included.
    assert_eq!(after, before);
    assert_eq!(
        serde_json::to_string(&after).unwrap(),
        serde_json::to_string(&before).unwrap()
    );

    // --model-name overrides the key.
    let st = ragscope()
        .args(["utility", "--quiet", "--model-name", "tiny", "--model"])
        .arg(fixtures().join("llama-f32.gguf"))
        .arg(&input)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap();
    assert!(st.success());
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(after[0]["passages"][0]["models_info"]["tiny"]["no_res_prob"].is_f64());
}

#[test]
fn run_mode_writes_top_k_and_resumes_after_an_interrupt() {
    let input: Value = serde_json::from_str(
        &std::fs::read_to_string(data_dir().join("dataset_with_scores.json")).unwrap(),
    )
    .unwrap();
    let dir = tmpdir("tsv");
    let (mut topics, mut passages, mut qrels, mut run) =
        (String::new(), String::new(), String::new(), String::new());
    for ex in input.as_array().unwrap() {
        let qid = ex["example_id"].as_str().unwrap();
        topics.push_str(&format!("{qid}\t{}\n", ex["question"].as_str().unwrap()));
        for (i, p) in ex["passages"].as_array().unwrap().iter().enumerate() {
            let d = format!("{qid}-{}", p["doc_id"].as_str().unwrap());
            passages.push_str(&serde_json::json!({"docno": d, "text": p["text"]}).to_string());
            passages.push('\n');
            let rel = u8::from(p["is_relevant"].as_bool().unwrap());
            qrels.push_str(&format!("{qid} 0 {d} {rel}\n"));
            run.push_str(&format!("{qid} Q0 {d} {} {} tag\n", i + 1, 10 - i));
        }
    }
    for (name, text) in [
        ("t.tsv", &topics),
        ("p.jsonl", &passages),
        ("q.txt", &qrels),
        ("r.txt", &run),
    ] {
        std::fs::write(dir.join(name), text).unwrap();
    }
    let out = dir.join("u.tsv");
    let go = || {
        ragscope()
            .args([
                "utility",
                "--quiet",
                "--batch-size",
                "2",
                "--k",
                "3",
                "--model",
            ])
            .arg(fixtures().join("llama-f32.gguf"))
            .args(["--topics"])
            .arg(dir.join("t.tsv"))
            .arg("--passages")
            .arg(dir.join("p.jsonl"))
            .arg("--qrels")
            .arg(dir.join("q.txt"))
            .arg("--run")
            .arg(dir.join("r.txt"))
            .arg("-o")
            .arg(&out)
            .status()
            .unwrap()
    };
    assert!(go().success());
    let full = std::fs::read_to_string(&out).unwrap();
    let lines: Vec<&str> = full.lines().collect();
    assert_eq!(lines[0], "qid\tdocno\trelevant\tno_res_prob");
    assert_eq!(lines.len(), 1 + 3 * input.as_array().unwrap().len());
    let want = oracle();
    for l in &lines[1..] {
        let f: Vec<&str> = l.split('\t').collect();
        let (qid, docno) = (f[0], f[1]);
        let did = docno.strip_prefix(&format!("{qid}-")).unwrap();
        let (_, _, w) = want.iter().find(|(e, d, _)| e == qid && d == did).unwrap();
        let got: f64 = f[3].parse().unwrap();
        assert!((got - w).abs() / w <= 1e-4, "{qid}/{did}: {got} vs {w}");
        // The first three passages per query in the run (scores 10, 9, 8).
        let rank = input
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["example_id"] == qid)
            .unwrap()["passages"]
            .as_array()
            .unwrap()
            .iter()
            .position(|p| p["doc_id"] == did)
            .unwrap();
        assert!(rank < 3);
        let rel = input
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["example_id"] == qid)
            .unwrap()["passages"][rank]["is_relevant"]
            .as_bool()
            .unwrap();
        assert_eq!(f[2], if rel { "1" } else { "0" });
    }
    // Interrupted after two lines, mid-way through the third: the rerun completes the file.
    let cut = lines[..3].join("\n") + "\n" + &lines[3][..5];
    std::fs::write(&out, cut).unwrap();
    assert!(go().success());
    assert_eq!(std::fs::read_to_string(&out).unwrap(), full);
}

#[test]
fn usage_and_input_errors_are_reported() {
    let o = ragscope()
        .args(["utility", "--model", "x.gguf"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let dir = tmpdir("err");
    std::fs::write(
        dir.join("bad.json"),
        "[{\"question\": \"q\", \"passages\": [{\"doc_id\": 1}]}]",
    )
    .unwrap();
    let o = ragscope()
        .args(["utility", "--quiet", "--model"])
        .arg(fixtures().join("llama-f32.gguf"))
        .arg(dir.join("bad.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let msg = String::from_utf8_lossy(&o.stderr);
    assert!(
        msg.contains("bad.json") && msg.contains("passage 0") && msg.contains("text"),
        "{msg}"
    );
    let o = ragscope()
        .args(["utility", "--quiet", "--model"])
        .arg(dir.join("bad.json"))
        .arg(dir.join("bad.json"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not a GGUF file"));
}
