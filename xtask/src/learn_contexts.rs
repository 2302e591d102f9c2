//! The correlation study's input for the app's default RAG demo (`cargo xtask learn-data`, after
//! the utilities, also with `--reuse-utilities`, which reads the committed utilities).
//!
//! For the first `--questions Q` questions of the demo (www/demo/nq; default all 20), `--contexts N` contexts of k = 5 passages
//! (default 6) drawn from the passages whose utilities the demo holds (the question's top 10
//! in the subset's order, plus its gold passage): half of them hold the gold passage, at
//! positions spread over 1..5 (1, 3, 5 for three), with 4 distractors; the other half hold 5
//! distractors and no relevant passage — the paper's balance (UDCG §7.2: 50/50 contexts
//! with/without a relevant passage). The distractors of each context are drawn without
//! replacement by a fixed-seed generator (SplitMix64, seed 2025), so the file is reproducible.
//!
//! Their outcomes come from `ragscope answer` with SmolLM2-135M-Instruct (Q4_1), CPU engine,
//! greedy, `--max-new-tokens 32` (the answer is cut at its first newline anyway): correct
//! (normalised substring match with a gold answer), abstain (NO-RESPONSE) or wrong. The output,
//! www/demo/nq/contexts.smollm2.jsonl, is what `ragscope correlate` reads; the demo loads it,
//! so the RAG tab's correlation view is full at first load. Rerunning resumes the answers from
//! target/learn-data/answers.jsonl (delete it to start over).

use crate::cmd::{self, root, run, step, Result};
use serde_json::{json, Map, Value};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::Path;

/// Passages per context, the k of the score table's UDCG@5.
const K: usize = 5;
const SEED: u64 = 2025;
const MAX_NEW_TOKENS: &str = "32";
/// The reader's name in the output's `model` field (the GGUF's own `general.name` is the
/// training run's, "Smollm2 135M 8k Lc100K Mix1 Ep2").
const MODEL_NAME: &str = "SmolLM2-135M-Instruct (Q4_1)";
pub const OUTPUT: &str = "www/demo/nq/contexts.smollm2.jsonl";

/// SplitMix64 (Steele, Lea & Flood 2014): a few lines for a fixed, documented draw, where a
/// crate's generator could change its stream between versions.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `n` distinct items of `from`, in draw order (a partial Fisher–Yates shuffle).
    fn sample(&mut self, from: &[String], n: usize) -> Vec<String> {
        let mut pool = from.to_vec();
        let n = n.min(pool.len());
        for i in 0..n {
            let j = i + (self.next() % (pool.len() - i) as u64) as usize;
            pool.swap(i, j);
        }
        pool.truncate(n);
        pool
    }
}

/// Gold positions (0-based) of the `n` contexts that hold the gold passage: spread evenly
/// from the first slot to the last.
fn gold_positions(n: usize) -> Vec<usize> {
    match n {
        0 => Vec::new(),
        1 => vec![0],
        _ => (0..n).map(|i| i * (K - 1) / (n - 1)).collect(),
    }
}

/// One question's pool: docno → (relevant, p(NO-RESPONSE)), from the demo's utilities TSV.
type Pool = Vec<(String, bool, f64)>;

fn read_pools(tsv: &str) -> Result<(Vec<String>, HashMap<String, Pool>)> {
    let mut order = Vec::new();
    let mut pools: HashMap<String, Pool> = HashMap::new();
    for (i, line) in tsv.lines().enumerate().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 4 {
            return Err(format!(
                "utilities.smollm2.tsv:{}: expected 4 columns",
                i + 1
            ));
        }
        let p: f64 = f[3]
            .parse()
            .map_err(|e| format!("utilities.smollm2.tsv:{}: {e}", i + 1))?;
        if !pools.contains_key(f[0]) {
            order.push(f[0].to_string());
        }
        pools
            .entry(f[0].to_string())
            .or_default()
            .push((f[1].to_string(), f[2] == "1", p));
    }
    Ok((order, pools))
}

/// Writes the input of `ragscope answer` (one line per question, the passages with their text
/// and utilities inline, the contexts without outcomes).
fn answer_input(
    rows: &HashMap<String, Value>,
    per_question: usize,
    questions: usize,
) -> Result<(String, usize)> {
    let tsv = std::fs::read_to_string(root().join("www/demo/nq/utilities.smollm2.tsv"))
        .map_err(|e| format!("www/demo/nq/utilities.smollm2.tsv: {e} (run learn-data first)"))?;
    let (order, pools) = read_pools(&tsv)?;
    let mut rng = SplitMix(SEED);
    let mut out = String::new();
    let mut contexts_total = 0;
    for qid in order.iter().take(questions) {
        let row = rows
            .get(qid)
            .ok_or_else(|| format!("{qid} of the demo is not in nq20_subset.jsonl"))?;
        let pool = &pools[qid];
        let ctxs = row["ctxs"].as_array().ok_or("ctxs is not a list")?;
        let mut passages = Map::new();
        for (docno, relevant, p) in pool {
            let j: usize = docno
                .rsplit_once("/p")
                .and_then(|(_, j)| j.parse().ok())
                .ok_or_else(|| format!("{docno}: not a demo docno"))?;
            let c = ctxs
                .get(j)
                .ok_or_else(|| format!("{docno}: no such passage"))?;
            // The text exactly as `learn-data` scored it with `ragscope utility`.
            let text = format!(
                "(Title: {}) {}",
                c["title"].as_str().unwrap_or(""),
                c["text"].as_str().unwrap_or("")
            );
            passages.insert(
                docno.clone(),
                json!({ "is_relevant": relevant, "no_res_prob": p, "text": text }),
            );
        }
        let gold: Vec<&String> = pool.iter().filter(|x| x.1).map(|x| &x.0).collect();
        let [gold] = gold[..] else {
            return Err(format!("{qid}: expected exactly one judged gold passage"));
        };
        let distractors: Vec<String> = pool.iter().filter(|x| !x.1).map(|x| x.0.clone()).collect();
        let with_gold = per_question.div_ceil(2);
        let mut contexts = Vec::new();
        for pos in gold_positions(with_gold) {
            let mut ids = rng.sample(&distractors, K - 1);
            ids.insert(pos.min(ids.len()), gold.clone());
            contexts.push(json!({ "passages": ids }));
        }
        for _ in with_gold..per_question {
            contexts.push(json!({ "passages": rng.sample(&distractors, K) }));
        }
        contexts_total += contexts.len();
        let line = json!({
            "qid": qid,
            "dataset": "NQ-open (lost-in-the-middle subset)",
            "question": row["question"],
            "answers": row["answers"],
            "distractor_source": row["distractor_source"],
            "passages": passages,
            "contexts": contexts,
        });
        let _ = writeln!(out, "{line}");
    }
    Ok((out, contexts_total))
}

/// Builds the contexts, answers them with `model` and writes [`OUTPUT`].
pub fn contexts(
    model: &Path,
    per_question: usize,
    questions: usize,
    threads: Option<&str>,
) -> Result {
    let source = super::learn_data::shared().join("data/litm/nq20_subset.jsonl");
    let text = std::fs::read_to_string(&source)
        .map_err(|e| format!("{}: {e} (set RAGSCOPE_SHARED)", source.display()))?;
    let mut rows = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        let row: Value =
            serde_json::from_str(line).map_err(|e| format!("nq20_subset.jsonl:{}: {e}", i + 1))?;
        rows.insert(format!("nq{i}"), row);
    }
    let (input, n) = answer_input(&rows, per_question, questions)?;
    let work = root().join("target/learn-data");
    std::fs::create_dir_all(&work).map_err(|e| format!("{}: {e}", work.display()))?;
    let input_path = work.join("contexts-input.jsonl");
    let answers = work.join("answers.jsonl");
    // Answers of another input would be resumed wrongly: start over when the input changed,
    // unless it is the first questions of the earlier input (`--questions` lowered).
    let old = std::fs::read_to_string(&input_path).unwrap_or_default();
    if !old.starts_with(&input) {
        let _ = std::fs::remove_file(&answers);
    }
    std::fs::write(&input_path, &input).map_err(|e| format!("{}: {e}", input_path.display()))?;
    let wanted: std::collections::HashSet<String> = input
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter_map(|v| v["qid"].as_str().map(str::to_string))
        .collect();
    step(&format!(
        "outcomes of {n} contexts (k = {K}, {per_question} per question) with SmolLM2-135M-Instruct: ragscope answer"
    ));
    let mut c = cmd::cargo();
    c.args([
        "run",
        "--quiet",
        "-p",
        "ragscope-cli",
        "--",
        "answer",
        "--backend",
        "cpu",
        "--max-new-tokens",
        MAX_NEW_TOKENS,
        "--model-name",
        MODEL_NAME,
        "--model",
    ])
    .arg(model)
    .arg(&input_path)
    .arg("-o")
    .arg(&answers);
    if let Some(t) = threads {
        c.args(["--threads", t]);
    }
    run(&mut c)?;
    let body =
        std::fs::read_to_string(&answers).map_err(|e| format!("{}: {e}", answers.display()))?;
    // Outcomes by label, for the generator's summary line.
    let mut counts: HashMap<String, usize> = HashMap::new();
    let mut kept = String::new();
    for line in body.lines() {
        let mut v: Value = serde_json::from_str(line).map_err(|e| format!("answers.jsonl: {e}"))?;
        if !v["qid"].as_str().is_some_and(|q| wanted.contains(q)) {
            continue;
        }
        // Lines answered before `--model-name` was passed carry the GGUF's name.
        v["model"] = Value::String(MODEL_NAME.into());
        kept.push_str(&v.to_string());
        kept.push('\n');
        for c in v["contexts"].as_array().into_iter().flatten() {
            *counts
                .entry(c["outcome"].as_str().unwrap_or("?").to_string())
                .or_default() += 1;
        }
    }
    std::fs::write(root().join(OUTPUT), &kept).map_err(|e| format!("{OUTPUT}: {e}"))?;
    let mut counts: Vec<_> = counts.into_iter().collect();
    counts.sort();
    step(&format!(
        "wrote {OUTPUT}: {n} contexts, outcomes {counts:?}"
    ));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gold_positions_spread_over_the_context() {
        assert_eq!(gold_positions(3), [0, 2, 4]);
        assert_eq!(gold_positions(5), [0, 1, 2, 3, 4]);
        assert_eq!(gold_positions(1), [0]);
    }

    #[test]
    fn samples_are_distinct() {
        let from: Vec<String> = (0..9).map(|i| format!("d{i}")).collect();
        let mut r = SplitMix(SEED);
        for _ in 0..50 {
            let mut s = r.sample(&from, 5);
            s.sort();
            s.dedup();
            assert_eq!(s.len(), 5);
        }
    }
}
