//! The JSON document of `ragscope eval` / `udcg` (run form) with `--format json`, built here so
//! that the CLI and the Python package (`ragscope.udcg`, `ragscope.erag`) return the same values:
//! `{"qrels":Q,"measures":[..],"runs":[{"run","run_id","num_topics","summary":{M:v},
//! "unjudged":{M:n},"per_query":{QID:{M:v}}}]}` (`unjudged` for UDCG and eRAG measures only,
//! `per_query` with `per_query`). Full f64 precision; NaN is `null`.

use serde_json::{json, Map, Value};

use crate::answers::json_report::number;
use crate::{Measure, Results};

/// The document for `(run file, results)` pairs scored on `measures` against the qrels `qrels`.
pub fn eval_runs(
    qrels: &str,
    per_query: bool,
    measures: &[Measure],
    results: &[(String, Results)],
) -> Value {
    let names: Vec<String> = measures.iter().map(|m| m.to_string()).collect();
    let runs: Vec<Value> = results
        .iter()
        .map(|(name, r)| {
            let summary: Map<String, Value> = measures
                .iter()
                .zip(&names)
                .map(|(m, n)| (n.clone(), number(r.summary(m))))
                .collect();
            let mut run = json!({
                "run": name,
                "run_id": r.run,
                "num_topics": r.topics.len(),
                "summary": summary,
            });
            let unjudged: Map<String, Value> = measures
                .iter()
                .zip(&names)
                .filter(|(m, _)| m.needs_utilities() || m.needs_erag_outcomes())
                .map(|(m, n)| (n.clone(), r.unjudged(m).unwrap_or(0).into()))
                .collect();
            if !unjudged.is_empty() {
                run["unjudged"] = Value::Object(unjudged);
            }
            if per_query {
                let per_query: Map<String, Value> = r
                    .topics
                    .iter()
                    .enumerate()
                    .map(|(t, qid)| {
                        let values: Map<String, Value> = names
                            .iter()
                            .enumerate()
                            .map(|(m, n)| (n.clone(), number(Some(r.values[m][t]))))
                            .collect();
                        (qid.clone(), Value::Object(values))
                    })
                    .collect();
                run["per_query"] = Value::Object(per_query);
            }
            run
        })
        .collect();
    json!({ "qrels": qrels, "measures": names, "runs": runs })
}
