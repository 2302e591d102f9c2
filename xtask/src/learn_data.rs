//! `cargo xtask learn-data`: passage utilities for the bundled NQ subset (../shared/data/litm,
//! nq20_subset.jsonl) computed with SmolLM2-135M-Instruct by ragscope's own engine (`ragscope
//! utility`, run mode), for the Learn page and the app's default RAG demo.
//!
//! The whole set (60 questions × 20 passages) takes hours on this project's shared 2-core
//! machine (measured: ~1.6 s of CPU per passage), so by default it scores a documented subset:
//! the first `--per-position N` questions (default 4) of each gold position (1, 5, 10, 15, 20),
//! each question's top 10 passages in the subset's order (the RAG tab's k = 10; the score
//! table's UDCG@5 uses the first 5), plus the gold passage where it ranks below 10. `--per-position 12` scores every question.
//!
//! Outputs (committed): www/demo/nq/{qrels.txt, litm-order.run, utilities.smollm2.tsv} (the
//! app's default demo) and www/learn/nq-smollm2.json (the Learn page's real contexts); then
//! www/demo/nq/contexts.smollm2.jsonl, the demo's correlation study (see learn_contexts.rs;
//! `--contexts N` per question, default 6; `--reuse-utilities` skips `ragscope utility` and
//! reads the committed utilities TSV;
//! `--threads T` for `ragscope answer`).

use crate::cmd::{self, root, run, step, Result};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::path::PathBuf;

const MODEL_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
const MODEL_LABEL: &str = "SmolLM2-135M-Instruct (Q4_1 GGUF)";
/// Passages per question scored from the top of the run: 10, the context of the app's RAG tab
/// (UDCG@10 vs nDCG@10), which also covers the score table's UDCG@5.
const K: usize = 10;

pub(crate) fn shared() -> PathBuf {
    std::env::var_os("RAGSCOPE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared"))
}

fn write(path: &std::path::Path, text: &str) -> Result {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

fn str_of<'a>(v: &'a Value, key: &str, line: usize) -> Result<&'a str> {
    v[key]
        .as_str()
        .ok_or_else(|| format!("nq20_subset.jsonl:{line}: `{key}` is not a string"))
}

struct Question {
    qid: String,
    row: Value,
    gold_index: usize,
}

/// The value after `flag`, if given.
fn flag_value<'a>(args: &'a [String], flag: &str) -> Option<&'a str> {
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1).map(String::as_str)
}

pub fn learn_data(args: &[String]) -> Result {
    let per_question: usize = match flag_value(args, "--contexts") {
        Some(v) => v
            .parse()
            .ok()
            .filter(|n| (2..=20).contains(n))
            .ok_or("--contexts needs a number (2 to 20)")?,
        None => 6,
    };
    let study_questions: usize = match flag_value(args, "--questions") {
        Some(v) => v
            .parse()
            .ok()
            .filter(|n| *n >= 1)
            .ok_or("--questions needs a number (at least 1)")?,
        None => usize::MAX,
    };
    let threads = flag_value(args, "--threads");
    let reuse = args.iter().any(|a| a == "--reuse-utilities");
    let per_position: usize = match args.iter().position(|a| a == "--per-position") {
        Some(i) => args
            .get(i + 1)
            .and_then(|v| v.parse().ok())
            .ok_or("--per-position needs a number (1 to 12)")?,
        None => 4,
    };
    let source = shared().join("data/litm/nq20_subset.jsonl");
    let text = std::fs::read_to_string(&source)
        .map_err(|e| format!("{}: {e} (set RAGSCOPE_SHARED)", source.display()))?;
    let model = crate::models::cache_dir().join(MODEL_FILE);
    if !model.exists() {
        return Err(format!(
            "{} is missing: run `cargo xtask models smollm2` first",
            model.display()
        ));
    }

    // The subset: the first `per_position` questions of each gold position, in file order.
    let mut seen = std::collections::HashMap::new();
    let mut questions = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let row: Value =
            serde_json::from_str(line).map_err(|e| format!("nq20_subset.jsonl:{}: {e}", i + 1))?;
        let gold_index = row["gold_index"]
            .as_u64()
            .ok_or_else(|| format!("nq20_subset.jsonl:{}: no gold_index", i + 1))?
            as usize;
        let n = seen.entry(gold_index).or_insert(0usize);
        *n += 1;
        if *n <= per_position {
            questions.push(Question {
                qid: format!("nq{i}"),
                row,
                gold_index,
            });
        }
    }

    let work = root().join("target/learn-data");
    let (mut topics, mut passages, mut qrels, mut run_all, mut run_gold) = (
        String::new(),
        String::new(),
        String::new(),
        String::new(),
        String::new(),
    );
    for (line, q) in questions.iter().enumerate() {
        let question = str_of(&q.row, "question", line + 1)?;
        let _ = writeln!(topics, "{}\t{}", q.qid, question.replace(['\t', '\n'], " "));
        let ctxs = q.row["ctxs"].as_array().ok_or("ctxs is not a list")?;
        for (j, c) in ctxs.iter().enumerate() {
            let docno = format!("{}/p{j}", q.qid);
            // The passage as the lost-in-the-middle prompt shows a document: title, then text.
            let doc = format!(
                "(Title: {}) {}",
                str_of(c, "title", line + 1)?,
                str_of(c, "text", line + 1)?
            );
            let _ = writeln!(passages, "{}", json!({ "docno": docno, "text": doc }));
            let rel = u8::from(c["isgold"].as_bool().unwrap_or(false));
            let _ = writeln!(qrels, "{} 0 {docno} {rel}", q.qid);
            let _ = writeln!(
                run_all,
                "{} Q0 {docno} {} {} litm-order",
                q.qid,
                j + 1,
                ctxs.len() - j
            );
        }
        if q.gold_index >= K {
            let _ = writeln!(
                run_gold,
                "{} Q0 {}/p{} 1 1 gold",
                q.qid, q.qid, q.gold_index
            );
        }
    }
    for (name, body) in [
        ("topics.tsv", &topics),
        ("passages.jsonl", &passages),
        ("qrels.txt", &qrels),
        ("litm-order.run", &run_all),
        ("gold.run", &run_gold),
    ] {
        write(&work.join(name), body)?;
    }

    // With --reuse-utilities the committed TSV stands in for the two `ragscope utility` outputs.
    let committed = root().join("www/demo/nq/utilities.smollm2.tsv");
    if reuse {
        let body = std::fs::read_to_string(&committed)
            .map_err(|e| format!("{}: {e}", committed.display()))?;
        write(&work.join("utilities-top.tsv"), &body)?;
        write(&work.join("utilities-gold.tsv"), "")?;
    } else {
        step(&format!(
            "p(NO-RESPONSE) with {MODEL_LABEL} for {} questions (top {K} + gold): ragscope utility",
            questions.len()
        ));
        let utility = |run_file: &str, k: usize, out: &str| {
            run(cmd::cargo()
                .args([
                    "run",
                    "--quiet",
                    "-p",
                    "ragscope-cli",
                    "--",
                    "utility",
                    "--backend",
                    "cpu",
                    "--model",
                ])
                .arg(&model)
                .arg("--topics")
                .arg(work.join("topics.tsv"))
                .arg("--passages")
                .arg(work.join("passages.jsonl"))
                .arg("--qrels")
                .arg(work.join("qrels.txt"))
                .arg("--run")
                .arg(work.join(run_file))
                .args(["--k", &k.to_string(), "-o"])
                .arg(work.join(out)))
        };
        utility("litm-order.run", K, "utilities-top.tsv")?;
        if !run_gold.is_empty() {
            utility("gold.run", 1, "utilities-gold.tsv")?;
        }
    }

    // p(NO-RESPONSE) by docno, from both outputs (`qid docno relevant no_res_prob`).
    let mut p = std::collections::HashMap::new();
    let mut rows = String::from("qid\tdocno\trelevant\tno_res_prob\n");
    for out in ["utilities-top.tsv", "utilities-gold.tsv"] {
        let Ok(body) = std::fs::read_to_string(work.join(out)) else {
            continue;
        };
        for line in body.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            // A gold passage scored alone by an earlier, smaller K is kept once.
            if f.len() == 4 && !p.contains_key(f[1]) {
                let prob: f64 = f[3].parse().map_err(|e| format!("{out}: {line}: {e}"))?;
                p.insert(f[1].to_string(), prob);
                rows.push_str(line);
                rows.push('\n');
            }
        }
    }

    let demo = root().join("www/demo/nq");
    write(&demo.join("qrels.txt"), &qrels)?;
    write(&demo.join("litm-order.run"), &run_all)?;
    write(&demo.join("utilities.smollm2.tsv"), &rows)?;

    let mut out_questions = Vec::new();
    for q in &questions {
        let ctxs = q.row["ctxs"].as_array().ok_or("ctxs is not a list")?;
        let shown: Vec<Value> = ctxs
            .iter()
            .enumerate()
            .filter_map(|(j, c)| {
                let prob = p.get(&format!("{}/p{j}", q.qid))?;
                // The whole text: "recompute with your model" scores exactly what
                // `ragscope utility` scored, `(Title: title) text` (the cards shorten it).
                let text = c["text"].as_str().unwrap_or("");
                Some(json!({
                    "index": j,
                    "title": c["title"],
                    "text": text,
                    "relevant": c["isgold"],
                    "p_no_response": prob,
                }))
            })
            .collect();
        out_questions.push(json!({
            "qid": q.qid,
            "source_qid": q.row["qid"],
            "question": q.row["question"],
            "answers": q.row["answers"],
            "gold_index": q.gold_index,
            "distractor_source": q.row["distractor_source"],
            "passages": shown,
        }));
    }
    let doc = json!({
        "model": MODEL_LABEL,
        "generator": format!("cargo xtask learn-data --per-position {per_position}"),
        "engine": "ragscope utility (CPU reference engine), the paper's prompt, p of the first token of NO-RESPONSE",
        "data": "../shared/data/litm/nq20_subset.jsonl (NQ-open, Kwiatkowski et al. 2019; Wikipedia, CC BY-SA 3.0; nelson-liu/lost-in-the-middle)",
        "subset": format!("the first {per_position} questions of each gold position (1, 5, 10, 15, 20); each question's top {K} passages, plus the gold passage where it ranks lower"),
        "questions": out_questions,
    });
    write(
        &root().join("www/learn/nq-smollm2.json"),
        &(serde_json::to_string_pretty(&doc).map_err(|e| e.to_string())? + "\n"),
    )?;
    step(&format!(
        "wrote www/demo/nq/ and www/learn/nq-smollm2.json ({} questions, {} passages scored)",
        questions.len(),
        p.len()
    ));
    crate::learn_contexts::contexts(&model, per_question, study_questions, threads)
}
