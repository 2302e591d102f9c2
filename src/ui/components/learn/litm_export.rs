//! Exports of the lost-in-the-middle page: the summary per position and every context's result
//! as CSV, and the run's contexts in the form `ragscope answer` reads (JSON Lines: one line per
//! question, its passages with relevance, p(NO-RESPONSE) and text, one context per position), so
//! the CLI can recompute the answers, and — as qrels, runs and utilities — every metric.

use super::litm_state::LitmState;
use ragscope_protocol::litm::{context, utility_passages};
use serde_json::{json, Map, Value};
use std::fmt::Write as _;

/// The passage's id in exports: `cargo xtask learn-data`'s docnos (`nq<line>/p<index>`).
pub fn docno(qid: &str, j: usize) -> String {
    format!("{qid}/p{j}")
}

fn num(v: f64) -> String {
    if v.is_finite() {
        format!("{v}")
    } else {
        String::new()
    }
}

/// One row per chosen position: n, accuracy, its band, abstentions, p(NO-RESPONSE), metrics.
pub fn summary_csv(s: &LitmState) -> String {
    let model = s.model_name().unwrap_or_default();
    let model = model.as_str();
    let mut out = String::from(
        "model,data,k,position,questions,failed,accuracy,accuracy_ci95_low,accuracy_ci95_high,abstain,p_no_response,ndcg,map,mrr,precision,udcg,udcg_missing\n",
    );
    for r in s.summary() {
        let (lo, hi) = r.band.unwrap_or((f64::NAN, f64::NAN));
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            csv_field(model),
            csv_field(&s.data_key()),
            s.k,
            r.position,
            r.n,
            r.failed,
            num(r.accuracy),
            num(lo),
            num(hi),
            num(r.abstain),
            p_field(r.p_no_response, r.p_bound),
            num(r.ndcg),
            num(r.map),
            num(r.mrr),
            num(r.precision),
            num(r.udcg),
            r.udcg_missing
        );
    }
    out
}

/// p(NO-RESPONSE), or `<=p` when it is only an upper bound (`ragscope judge utility`'s form,
/// which no utilities reader takes for a value); empty when there is none.
fn p_field(p: Option<f64>, bound: bool) -> String {
    match p {
        Some(p) if p.is_finite() => ragscope_judge::task::utility::format_probability(p, !bound),
        _ => String::new(),
    }
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Every computed context of the chosen questions and positions.
pub fn items_csv(s: &LitmState) -> String {
    let mut out = String::from(
        "qid,position,answer,correct,abstain,p_no_response,ndcg,map,mrr,precision,udcg,prompt_tokens,udcg_missing\n",
    );
    for q in s.chosen() {
        // No gold answers (a UDCG reference JSON): no correctness either.
        let scored = q.answers.iter().any(|a| !a.trim().is_empty());
        for &p in &s.positions {
            if let Some(i) = s.items.get(&(q.qid.clone(), p)) {
                let _ = writeln!(
                    out,
                    "{},{},{},{},{},{},{},{},{},{},{},{},{}",
                    i.qid,
                    i.position,
                    csv_field(&i.answer),
                    if scored {
                        i.correct.to_string()
                    } else {
                        String::new()
                    },
                    i.abstain,
                    p_field(i.p_no_response, i.p_bound),
                    num(i.ndcg),
                    num(i.map),
                    num(i.mrr),
                    num(i.precision),
                    i.udcg.map(num).unwrap_or_default(),
                    i.prompt_tokens,
                    csv_field(i.udcg_missing.as_deref().unwrap_or(""))
                );
            }
        }
    }
    out
}

/// The contexts of every chosen question with utilities, as `ragscope answer` reads them.
pub fn contexts_jsonl(s: &LitmState) -> String {
    let mut out = String::new();
    for q in s.chosen() {
        let Some(p) = s.utilities.get(&q.qid) else {
            continue;
        };
        let Ok(order) = utility_passages(&q.to_request(), s.k) else {
            continue;
        };
        let mut passages = Map::new();
        for (i, j) in order.iter().enumerate() {
            passages.insert(
                docno(&q.qid, *j),
                json!({
                    "is_relevant": *j == q.gold_index,
                    "no_res_prob": p.get(i).copied().unwrap_or(f64::NAN),
                    "text": q.passages[*j],
                }),
            );
        }
        let contexts: Vec<Value> = s
            .positions
            .iter()
            .filter_map(|&pos| {
                let c = context(&q.to_request(), s.k, pos).ok()?;
                Some(json!({
                    "position": pos,
                    "passages": c.iter().map(|(j, _)| docno(&q.qid, *j)).collect::<Vec<_>>(),
                }))
            })
            .collect();
        let line = json!({
            "qid": q.qid,
            "question": q.question,
            "answers": q.answers,
            "passages": passages,
            "contexts": contexts,
        });
        let _ = writeln!(out, "{line}");
    }
    out
}
