//! `ragscope calibrate --agreement`: how far the judge can be trusted, before estimating with
//! it. On the (qid, docno) items both qrels grade: Cohen's κ, weighted κ, Krippendorff's α and
//! the judge's per-class precision and recall, each with a percentile-bootstrap interval
//! (resampling topics with all their items, or single items); the items where judge and human
//! differ, listed; and Kendall τ between the runs' rankings by the measure under judge and
//! under human labels, on the topics labelled for every run, with a bootstrap over topics.
//! Formulas: `ragscope_eval::calibration::agreement_ci`.
//!
//! JSON: `{"items":n,"resample":"topics"|"items","resamples":B,"seed":S,"statistics":[{"statistic",
//! "value","low","high","resamples"}],"ranking":{"value","low","high","resamples","topics","runs"},
//! "disagreements":[{"qid","docno","judge","human"}]}` (null where undefined).

use std::collections::BTreeMap;

use ragscope_eval::calibration::agreement_ci::{
    agreement_intervals, draw_indices, expand_groups, ranking_tau_interval, Interval,
};
use ragscope_eval::calibration::units::Units;
use ragscope_eval::Qrels;

use super::common::{json_number, Format, Grid};

/// What is resampled for the agreement intervals.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Resample {
    /// Whole topics with all their items (items of one topic are not independent)
    Topics,
    /// Single items
    Items,
}

struct Item {
    qid: String,
    docno: String,
    judge: i64,
    human: i64,
}

/// Items both qrels grade (a negative grade, pooled but unjudged, is not a grade), in the human
/// qrels' order.
fn common_items(judge: &Qrels, human: &Qrels) -> Vec<Item> {
    let mut items = Vec::new();
    for topic in human.topics() {
        let Some(other) = judge.topic(topic.qid()) else {
            continue;
        };
        for (docno, h) in topic.judgments() {
            if let Some(j) = other.rel(docno).filter(|j| *j >= 0 && h >= 0) {
                items.push(Item {
                    qid: topic.qid().to_string(),
                    docno: String::from_utf8_lossy(docno).into_owned(),
                    judge: i64::from(j),
                    human: i64::from(h),
                });
            }
        }
    }
    items
}

pub struct Settings {
    pub resample: Resample,
    pub resamples: usize,
    pub seed: u64,
    pub format: Format,
}

/// The report; `per_run` are each run's query units (for the ranking τ).
pub fn report(
    judge: &Qrels,
    human: &Qrels,
    per_run: &[Units],
    s: &Settings,
) -> Result<String, String> {
    let items = common_items(judge, human);
    if items.len() < 2 {
        return Err(format!(
            "'{}' and '{}' grade {} item(s) in common: agreement needs at least 2",
            judge.name(),
            human.name(),
            items.len()
        ));
    }
    let j: Vec<i64> = items.iter().map(|i| i.judge).collect();
    let h: Vec<i64> = items.iter().map(|i| i.human).collect();
    let draws = match s.resample {
        Resample::Items => draw_indices(items.len(), s.resamples, s.seed),
        Resample::Topics => {
            let mut topic_of: BTreeMap<&str, usize> = BTreeMap::new();
            for i in &items {
                let next = topic_of.len();
                topic_of.entry(&i.qid).or_insert(next);
            }
            let groups: Vec<usize> = items.iter().map(|i| topic_of[i.qid.as_str()]).collect();
            draw_indices(topic_of.len(), s.resamples, s.seed)
                .iter()
                .map(|d| expand_groups(&groups, d))
                .collect()
        }
    };
    let rows = agreement_intervals(&j, &h, &draws, 0.95);
    let (ranking, topics) = ranking(per_run, s);
    let disagreements: Vec<&Item> = items.iter().filter(|i| i.judge != i.human).collect();
    Ok(match s.format {
        Format::Json => json(
            &items,
            &rows,
            &ranking,
            topics,
            per_run.len(),
            &disagreements,
            s,
        ),
        other => grid(&items, &rows, &ranking, topics, &disagreements).render(other),
    })
}

/// τ over the topics every run has labelled, resampling those topics.
fn ranking(per_run: &[Units], s: &Settings) -> (Interval, usize) {
    let labelled = |u: &Units| -> BTreeMap<String, (f64, f64)> {
        (u.ids.iter().zip(&u.judge).zip(&u.human))
            .filter_map(|((id, j), h)| h.map(|h| (id.clone(), (*j, h))))
            .collect()
    };
    let tables: Vec<BTreeMap<String, (f64, f64)>> = per_run.iter().map(labelled).collect();
    let topics: Vec<&String> = match tables.first() {
        Some(first) => first
            .keys()
            .filter(|t| tables.iter().all(|m| m.contains_key(*t)))
            .collect(),
        None => Vec::new(),
    };
    let matrix = |pick: fn(&(f64, f64)) -> f64| -> Vec<Vec<f64>> {
        tables
            .iter()
            .map(|m| topics.iter().map(|t| pick(&m[*t])).collect())
            .collect()
    };
    let draws = draw_indices(topics.len(), s.resamples, s.seed);
    let draws = if topics.is_empty() { Vec::new() } else { draws };
    let interval = ranking_tau_interval(&matrix(|p| p.0), &matrix(|p| p.1), &draws, 0.95);
    (interval, topics.len())
}

fn json(
    items: &[Item],
    rows: &[Interval],
    ranking: &Interval,
    topics: usize,
    runs: usize,
    disagreements: &[&Item],
    s: &Settings,
) -> String {
    let stat = |r: &Interval| {
        serde_json::json!({
            "statistic": r.statistic, "value": json_number(r.value), "low": json_number(r.low),
            "high": json_number(r.high), "resamples": r.resamples,
        })
    };
    let value = serde_json::json!({
        "items": items.len(),
        "resample": match s.resample { Resample::Topics => "topics", Resample::Items => "items" },
        "resamples": s.resamples,
        "seed": s.seed,
        "statistics": rows.iter().map(stat).collect::<Vec<_>>(),
        "ranking": {
            "value": json_number(ranking.value), "low": json_number(ranking.low),
            "high": json_number(ranking.high), "resamples": ranking.resamples,
            "topics": topics, "runs": runs,
        },
        "disagreements": disagreements.iter().map(|i| serde_json::json!({
            "qid": i.qid, "docno": i.docno, "judge": i.judge, "human": i.human,
        })).collect::<Vec<_>>(),
    });
    format!("{value}\n")
}

fn grid(
    items: &[Item],
    rows: &[Interval],
    ranking: &Interval,
    topics: usize,
    disagreements: &[&Item],
) -> Grid {
    let f = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.4}"));
    let mut cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.statistic.clone(),
                f(r.value),
                f(r.low),
                f(r.high),
                items.len().to_string(),
            ]
        })
        .collect();
    cells.push(vec![
        "kendall_tau_runs".into(),
        f(ranking.value),
        f(ranking.low),
        f(ranking.high),
        format!("{topics} topics"),
    ]);
    let mut notes = vec![format!(
        "{} of {} items differ (qid docno judge human):",
        disagreements.len(),
        items.len()
    )];
    notes.extend(
        disagreements
            .iter()
            .map(|i| format!("  {} {} {} {}", i.qid, i.docno, i.judge, i.human)),
    );
    Grid {
        header: ["statistic", "value", "low", "high", "on"]
            .map(String::from)
            .to_vec(),
        cells,
        label_columns: 1,
        latex_cells: None,
        notes,
    }
}
