//! Citation scores of an answer from citation-support judgments, and the no-answer rate.
//!
//! Source: open-rag-eval 0.3.0 `open_rag_eval/metrics/citation_metric.py` (`CitationMetric`),
//! after Gao et al., "Enabling Large Language Models to Generate Text with Citations" (ALCE).
//! Each (answer part, cited passage) pair is judged full_support = 1, partial_support = 0.5,
//! no_support = 0. Then, for one answer:
//!
//! - per citation key c: avg_c = mean of its judgments over all parts citing it
//! - per part p: avg_p = mean of its citations' judgments; a part without citations is 0; a
//!   part whose citations all went unjudged (passage missing, judge failure) is left out
//! - precision = mean_c avg_c, recall = mean_p avg_p (0 when there is nothing to average)
//! - F1 = 2PR / (P + R), 0 when P + R = 0
//!
//! A run's scores are the plain means over its answers. The no-answer rate is the share of
//! judged answers that the judge says do not attempt an answer (`NoAnswerMetric`,
//! `query_answered == "no"`).

use serde::Serialize;

/// A support label's score, or None for a label the source does not know.
pub fn support_score(label: &str) -> Option<f64> {
    match label {
        "full_support" => Some(1.0),
        "partial_support" => Some(0.5),
        "no_support" => Some(0.0),
        _ => None,
    }
}

/// The judgments of one answer part: (citation key, score or None when unjudged).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PartJudgments {
    pub citations: Vec<(String, Option<f64>)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct CitationScores {
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
}

fn avg(v: &[f64]) -> f64 {
    if v.is_empty() {
        0.0
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

/// The per-answer kernel from raw judgments.
pub fn score_answer(parts: &[PartJudgments]) -> CitationScores {
    // Keys in first-judged order, as the source's dicts keep them (sums are order-sensitive).
    let mut by_citation: Vec<(&str, Vec<f64>)> = Vec::new();
    let mut by_part: Vec<Vec<f64>> = Vec::new();
    for part in parts {
        if part.citations.is_empty() {
            by_part.push(Vec::new());
            continue;
        }
        let mut judged = Vec::new();
        for (key, score) in &part.citations {
            let Some(s) = *score else { continue };
            match by_citation.iter_mut().find(|(k, _)| *k == key.as_str()) {
                Some((_, v)) => v.push(s),
                None => by_citation.push((key.as_str(), vec![s])),
            }
            judged.push(s);
        }
        if !judged.is_empty() {
            by_part.push(judged);
        }
    }
    let citation_avgs: Vec<f64> = by_citation.iter().map(|(_, v)| avg(v)).collect();
    let part_avgs: Vec<f64> = by_part.iter().map(|v| avg(v)).collect();
    from_averages(&citation_avgs, &part_avgs)
}

/// Precision, recall and F1 from the per-citation and per-part averages (what Open RAG Eval's
/// results CSV stores as `citation_score_*` and `part_score_*`).
pub fn from_averages(citation_avgs: &[f64], part_avgs: &[f64]) -> CitationScores {
    let precision = avg(citation_avgs);
    let recall = avg(part_avgs);
    let f1 = if precision + recall == 0.0 {
        0.0
    } else {
        2.0 * (precision * recall) / (precision + recall)
    };
    CitationScores {
        precision,
        recall,
        f1,
    }
}

/// One answer's citation scores and no-answer judgment.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AnswerCitations {
    pub qid: String,
    pub scores: Option<CitationScores>,
    /// `Some(false)` when judged as not attempting an answer.
    pub answered: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunCitations {
    pub run_id: String,
    pub mean: CitationScores,
    /// Answers with citation scores.
    pub scored: usize,
    /// Share of answers judged "no answer" among those with a no-answer judgment.
    pub no_answer_rate: Option<f64>,
    pub answers: Vec<AnswerCitations>,
}

pub fn aggregate(run_id: &str, answers: Vec<AnswerCitations>) -> RunCitations {
    let scored: Vec<CitationScores> = answers.iter().filter_map(|a| a.scores).collect();
    let mean = CitationScores {
        precision: avg(&scored.iter().map(|s| s.precision).collect::<Vec<_>>()),
        recall: avg(&scored.iter().map(|s| s.recall).collect::<Vec<_>>()),
        f1: avg(&scored.iter().map(|s| s.f1).collect::<Vec<_>>()),
    };
    let judged: Vec<bool> = answers.iter().filter_map(|a| a.answered).collect();
    let no_answer_rate = (!judged.is_empty())
        .then(|| judged.iter().filter(|a| !**a).count() as f64 / judged.len() as f64);
    RunCitations {
        run_id: run_id.to_string(),
        mean,
        scored: scored.len(),
        no_answer_rate,
        answers,
    }
}
