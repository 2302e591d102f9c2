//! The Answers view's copy of a pointwise job's grades: the download (the judge's CSV) leaves
//! failed grades out, as `ragscope judge pointwise` does; the view lists them too, with an empty
//! score, so the Answers view shows them as failed (never scored).

use ragscope_eval::answers::pointwise_grades::{self, Row};
use ragscope_judge::{ItemRecord, Status};
use serde_json::Value;

pub fn pointwise_view(records: &[ItemRecord]) -> (String, String) {
    let failed: Vec<String> = records
        .iter()
        .map(|r| format!("failed: {}", r.error.as_deref().unwrap_or("no grade")))
        .collect();
    let rows: Vec<Row> = records
        .iter()
        .zip(&failed)
        .map(|(r, why)| {
            let ok = r.result.as_ref().filter(|_| r.status == Status::Ok);
            let score = ok.and_then(|v| v.get("score").and_then(Value::as_u64));
            let text = |k: &str| ok.and_then(|v| v.get(k).and_then(Value::as_str));
            Row {
                qid: r.key.get("qid").unwrap_or(""),
                agent: r.key.get("agent").unwrap_or(""),
                raw_answer: text("raw").unwrap_or(""),
                reasoning: if score.is_some() {
                    text("reasoning").unwrap_or("")
                } else {
                    why
                },
                score,
            }
        })
        .collect();
    (
        "pointwise-grades.csv".to_string(),
        pointwise_grades::write(&rows),
    )
}
