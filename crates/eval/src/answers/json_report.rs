//! The JSON documents of `ragscope nuggets score`, `elo`, `citations`, `graded` and
//! `agreement` (`--format json`), built here so that the CLI and the Python package return the
//! same values. Numbers keep full f64 precision; a missing or non-finite value is `null`.

use serde_json::{json, Map, Value};

use super::agreement_report::Report;
use super::citations::RunCitations;
use super::graded::{GradedCompat, GradedRun, GradedScores};
use super::leaderboard::Leaderboard;
use super::nugget_scores::{NuggetScores, RunScores};

/// A JSON number, or `null` for a missing or non-finite value.
pub fn number(v: Option<f64>) -> Value {
    v.and_then(serde_json::Number::from_f64)
        .map(Value::Number)
        .unwrap_or(Value::Null)
}

/// Key order of the nugget scores' contract.
const NUGGET_KEYS: [&str; 7] = ["A", "A_strict", "V", "V_strict", "W", "W_strict", "L"];

fn nugget_scores(s: &NuggetScores) -> Value {
    let map: Map<String, Value> = NUGGET_KEYS
        .iter()
        .map(|k| (k.to_string(), number(s.get(k))))
        .collect();
    Value::Object(map)
}

/// `{"runs":[{"run_id":R,"mean":{"A","A_strict","V","V_strict","W","W_strict","L"},
/// "topics":{QID:{same keys}}}]}`, `topics` only with `per_topic`.
pub fn nugget_runs(results: &[RunScores], per_topic: bool) -> Value {
    let runs: Vec<Value> = results
        .iter()
        .map(|r| {
            let mut run = json!({"run_id": r.run_id, "mean": nugget_scores(&r.mean)});
            if per_topic {
                let topics: Map<String, Value> = r
                    .topics
                    .iter()
                    .map(|t| (t.qid.clone(), nugget_scores(&t.scores)))
                    .collect();
                run["topics"] = Value::Object(topics);
            }
            run
        })
        .collect();
    json!({ "runs": runs })
}

/// `{"runs":[{"run_id","precision","recall","f1","answers_scored","no_answer_rate",
/// "answers":{QID:{"precision","recall","f1","answered"}}}]}`, `answers` only with `per_answer`.
pub fn citation_runs(results: &[RunCitations], per_answer: bool) -> Value {
    let runs: Vec<Value> = results
        .iter()
        .map(|r| {
            let mut run = json!({
                "run_id": r.run_id,
                "precision": number(Some(r.mean.precision)),
                "recall": number(Some(r.mean.recall)),
                "f1": number(Some(r.mean.f1)),
                "answers_scored": r.scored,
                "no_answer_rate": number(r.no_answer_rate),
            });
            if per_answer {
                let answers: Map<String, Value> = r
                    .answers
                    .iter()
                    .map(|a| {
                        let scores = json!({
                            "precision": number(a.scores.map(|s| s.precision)),
                            "recall": number(a.scores.map(|s| s.recall)),
                            "f1": number(a.scores.map(|s| s.f1)),
                            "answered": a.answered,
                        });
                        (a.qid.clone(), scores)
                    })
                    .collect();
                run["answers"] = Value::Object(answers);
            }
            run
        })
        .collect();
    json!({ "runs": runs })
}

fn graded_scores(k: usize, s: &GradedScores) -> Value {
    json!({
        format!("P@{k}"): number(s.precision),
        format!("AP@{k}"): number(s.average_precision),
        "MRR": number(Some(s.reciprocal_rank)),
    })
}

/// `{"k":K,"compat":C,"runs":[{"run_id":R,"mean":{"P@K","AP@K","MRR"},"topics":{QID:{…}}}]}`,
/// `topics` only with `per_topic`.
pub fn graded_runs(
    results: &[GradedRun],
    k: usize,
    compat: GradedCompat,
    per_topic: bool,
) -> Value {
    let runs: Vec<Value> = results
        .iter()
        .map(|r| {
            let mut run = json!({"run_id": r.run_id, "mean": graded_scores(k, &r.mean)});
            if per_topic {
                let topics: Map<String, Value> = r
                    .topics
                    .iter()
                    .map(|t| (t.qid.clone(), graded_scores(k, &t.scores)))
                    .collect();
                run["topics"] = Value::Object(topics);
            }
            run
        })
        .collect();
    json!({"k": k, "compat": compat, "runs": runs})
}

/// `{"model":"elo"|"bradley-terry","ratings":{AGENT:{"rating":x,"std":y}}}`, best first.
pub fn ratings(board: &Leaderboard, bradley_terry: bool) -> Value {
    let mut rows: Vec<(&str, f64, f64)> = board
        .rows
        .iter()
        .map(|r| match (bradley_terry, &r.bt) {
            (true, Some(bt)) => (r.agent.as_str(), bt.rating, bt.std),
            _ => (r.agent.as_str(), r.elo.rating, r.elo.std),
        })
        .collect();
    rows.sort_by(|x, y| y.1.total_cmp(&x.1));
    let mut ratings = Map::new();
    for (agent, rating, std) in rows {
        ratings.insert(
            agent.to_string(),
            json!({"rating": number(Some(rating)), "std": number(Some(std))}),
        );
    }
    json!({
        "model": if bradley_terry { "bradley-terry" } else { "elo" },
        "ratings": ratings,
    })
}

/// `{"kind":K,"statistics":[{"statistic","value","items"}],"only_a":n,"only_b":m}`.
pub fn agreement(report: &Report) -> Value {
    let rows: Vec<Value> = report
        .rows
        .iter()
        .map(|r| json!({"statistic": r.statistic, "value": number(r.value), "items": r.items}))
        .collect();
    json!({
        "kind": report.kind.name(),
        "statistics": rows,
        "only_a": report.only_a,
        "only_b": report.only_b,
    })
}
