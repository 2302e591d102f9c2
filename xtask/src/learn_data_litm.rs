//! `cargo xtask litm-data`: the bundled NQ subset of the lost-in-the-middle page
//! (www/learn/litm-nq.json), from ../shared/data/litm/nq20_subset.jsonl. No model is needed: the
//! page runs the user's own. Each question keeps its 20 passages in the file's order (the gold at
//! `gold_index`; the page moves it as the paper does: remove, then insert at the new index), each
//! passage written as the lost-in-the-middle prompt shows a document, "(Title: …) text", as
//! `cargo xtask learn-data` writes them for the utilities (same qids `nq<line>`, docnos
//! `nq<line>/p<j>`), and whether its distractors are the paper's originals (3 of 60) or the
//! easier BM25 substitutes (57), which the page must say.

use crate::cmd::{root, Result};
use serde_json::{json, Value};
use std::path::PathBuf;

fn shared() -> PathBuf {
    std::env::var_os("RAGSCOPE_SHARED")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared"))
}

pub fn litm_data() -> Result {
    let source = shared().join("data/litm/nq20_subset.jsonl");
    let text = std::fs::read_to_string(&source)
        .map_err(|e| format!("{}: {e} (set RAGSCOPE_SHARED)", source.display()))?;
    let mut questions = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = |what: &str| format!("nq20_subset.jsonl:{}: {what}", i + 1);
        let row: Value = serde_json::from_str(line).map_err(|e| at(&e.to_string()))?;
        let s = |v: &Value, key: &str| -> Result<String> {
            v[key]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| at(&format!("`{key}` is not a string")))
        };
        let ctxs = row["ctxs"]
            .as_array()
            .ok_or_else(|| at("`ctxs` is not a list"))?;
        let gold_index = row["gold_index"]
            .as_u64()
            .ok_or_else(|| at("no gold_index"))? as usize;
        let golds: Vec<usize> = ctxs
            .iter()
            .enumerate()
            .filter(|(_, c)| c["isgold"].as_bool() == Some(true))
            .map(|(j, _)| j)
            .collect();
        if golds != [gold_index] {
            return Err(at("exactly one passage, at gold_index, must be the gold"));
        }
        let passages = ctxs
            .iter()
            .map(|c| Ok(format!("(Title: {}) {}", s(c, "title")?, s(c, "text")?)))
            .collect::<Result<Vec<_>>>()?;
        let answers: Vec<String> = row["answers"]
            .as_array()
            .ok_or_else(|| at("`answers` is not a list"))?
            .iter()
            .filter_map(|a| a.as_str().map(str::to_string))
            .collect();
        questions.push(json!({
            "qid": format!("nq{i}"),
            "source_qid": s(&row, "qid")?,
            "question": s(&row, "question")?,
            "answers": answers,
            "gold_index": gold_index,
            "original_distractors": s(&row, "distractor_source")? == "original_contriever_msmarco",
            "passages": passages,
        }));
    }
    let out = json!({
        "source": "nelson-liu/lost-in-the-middle (MIT; commit 29b8a6d) qa_data/nq-open-oracle.jsonl.gz: NQ-open questions, answers and gold chunks (Natural Questions, Kwiatkowski et al. 2019; Wikipedia; CC BY-SA 3.0). Distractors: the paper's 19 Contriever-MSMARCO results for 3 questions (rebuilt from GalSarid21/enhancing-long-context-utilization-in-llms-biu, MIT); for the other 57, substitutes: the top-19 BM25 matches among the other gold chunks without an answer (easier than the paper's). Subset and provenance: ../shared/data/litm/SOURCE.txt.",
        "questions": questions,
    });
    let path = root().join("www/learn/litm-nq.json");
    let body = serde_json::to_string(&out).map_err(|e| e.to_string())?;
    std::fs::write(&path, body + "\n").map_err(|e| format!("{}: {e}", path.display()))?;
    println!(
        "wrote {} ({} questions)",
        path.display(),
        questions_len(&out)
    );
    Ok(())
}

fn questions_len(v: &Value) -> usize {
    v["questions"].as_array().map_or(0, Vec::len)
}
