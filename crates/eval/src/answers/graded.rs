//! Retrieval scores over UMBRELA-graded qrels (grades 0–3): P@k, AP@k and MRR with a passage
//! relevant iff its grade is ≥ 2.
//!
//! Source: Upadhyay et al., "UMBRELA: UMbrela is the (Open-Source Reproduction of the) Bing
//! RELevance Assessor" (arXiv 2406.06519) for the grades and the threshold; the default formulas
//! are trec_eval's `P.k`, `map_cut.k` and `recip_rank` at relevance level 2:
//!
//! - P@k = |relevant in the top k| / k
//! - AP@k = Σ_{i ≤ k, d_i relevant} P@i / R, R = relevant passages judged for the topic
//! - RR = 1 / rank of the first relevant passage (whole list), 0 if none
//!
//! `--compat open-rag-eval` reproduces open-rag-eval 0.3.0 `UMBRELAMetric.add_retrieval_metrics`:
//! AP@k divides by the relevant passages *within the top k* (not all judged relevant ones),
//! P@k and AP@k are skipped (absent) when k exceeds the list, and unjudged passages grade 0.
//! Run scores are plain means over the topics that have a value.

use serde::Serialize;

use crate::formats::{Qrels, Run};
use crate::measures::topic::rank;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum GradedCompat {
    #[default]
    TrecEval,
    OpenRagEval,
}

/// The relevance threshold on UMBRELA grades.
pub const RELEVANT_GRADE: i32 = 2;

/// Scores of one ranked list of grades (in rank order; `None` = unjudged).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GradedScores {
    #[serde(rename = "P@k")]
    pub precision: Option<f64>,
    #[serde(rename = "AP@k")]
    pub average_precision: Option<f64>,
    #[serde(rename = "MRR")]
    pub reciprocal_rank: f64,
}

fn relevant(g: Option<i32>) -> bool {
    g.is_some_and(|g| g >= RELEVANT_GRADE)
}

/// The per-topic kernel. `judged_relevant` is R (relevant passages in the qrels for the topic).
pub fn score_list(
    grades: &[Option<i32>],
    k: usize,
    judged_relevant: usize,
    compat: GradedCompat,
) -> GradedScores {
    let reciprocal_rank = grades
        .iter()
        .position(|&g| relevant(g))
        .map_or(0.0, |i| 1.0 / (i + 1) as f64);
    if compat == GradedCompat::OpenRagEval && k > grades.len() {
        return GradedScores {
            precision: None,
            average_precision: None,
            reciprocal_rank,
        };
    }
    let top = &grades[..k.min(grades.len())];
    let mut found = 0usize;
    let mut sum_prec = 0.0;
    for (i, &g) in top.iter().enumerate() {
        if relevant(g) {
            found += 1;
            sum_prec += found as f64 / (i + 1) as f64;
        }
    }
    let precision = if k == 0 { 0.0 } else { found as f64 / k as f64 };
    let denominator = match compat {
        GradedCompat::TrecEval => judged_relevant,
        GradedCompat::OpenRagEval => found,
    };
    let average_precision = if denominator == 0 {
        0.0
    } else {
        sum_prec / denominator as f64
    };
    GradedScores {
        precision: Some(precision),
        average_precision: Some(average_precision),
        reciprocal_rank,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GradedTopic {
    pub qid: String,
    pub scores: GradedScores,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GradedRun {
    pub run_id: String,
    pub mean: GradedScores,
    pub topics: Vec<GradedTopic>,
}

fn mean_of(values: impl Iterator<Item = Option<f64>>) -> Option<f64> {
    let v: Vec<f64> = values.flatten().collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Scores a run against graded qrels: topics of the run that have judgments (trec_eval's
/// default), ranked as trec_eval ranks (score descending, then docno descending).
pub fn score_run(run: &Run, qrels: &Qrels, k: usize, compat: GradedCompat) -> GradedRun {
    let mut scratch = Vec::new();
    let mut topics = Vec::new();
    for topic in run.topics() {
        let Some(judged) = qrels.topic(topic.qid()) else {
            continue;
        };
        rank(run, topic, usize::MAX, &mut scratch);
        let grades: Vec<Option<i32>> = scratch
            .iter()
            .map(|&(_, i)| {
                let g = judged.rel(run.docno(&topic.docs()[i as usize]));
                match compat {
                    GradedCompat::TrecEval => g,
                    GradedCompat::OpenRagEval => Some(g.unwrap_or(0)),
                }
            })
            .collect();
        let r = judged.num_rel(RELEVANT_GRADE) as usize;
        topics.push(GradedTopic {
            qid: topic.qid().to_string(),
            scores: score_list(&grades, k, r, compat),
        });
    }
    let mean = GradedScores {
        precision: mean_of(topics.iter().map(|t| t.scores.precision)),
        average_precision: mean_of(topics.iter().map(|t| t.scores.average_precision)),
        reciprocal_rank: mean_of(topics.iter().map(|t| Some(t.scores.reciprocal_rank)))
            .unwrap_or(0.0),
    };
    GradedRun {
        run_id: run.run_id().to_string(),
        mean,
        topics,
    }
}
