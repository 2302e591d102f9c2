//! The agreement statistics between two judgments, as the CLI (`ragscope agreement`) and the app's
//! Agreement view show them: which statistic, its value, on how many items.
//!
//! Labels and grades come from two qrels files; an item is a (qid, docno) judged in both (items
//! judged by one side only are counted, not used). Runs come from two per-topic score tables
//! ([`super::topic_scores`]). Formulas and sources: [`crate::stats::agreement`].

use std::collections::HashMap;

use super::topic_scores::{common_cells, TopicScores};
use crate::formats::Qrels;
use crate::stats::agreement::{
    cohen_kappa, krippendorff_alpha, run_agreement, weighted_kappa_linear,
    weighted_kappa_quadratic, Level,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Nominal labels: Cohen's κ and nominal α.
    Labels,
    /// Ordered grades (e.g. UMBRELA 0–3): κ, weighted κ, ordinal and interval α.
    Grades,
    /// Per-topic run scores: Kendall τ three ways.
    Runs,
}

impl Kind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Labels => "labels",
            Self::Grades => "grades",
            Self::Runs => "runs",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub statistic: &'static str,
    pub value: Option<f64>,
    pub items: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub kind: Kind,
    pub rows: Vec<Row>,
    /// Items only the first / only the second judgment has (left out).
    pub only_a: usize,
    pub only_b: usize,
    /// For labels and grades: (label of A, label of B, count), sorted.
    pub confusion: Vec<(i64, i64, usize)>,
}

/// Labels of the (qid, docno) items both qrels judge, and the counts judged by one side only.
pub fn paired_labels(a: &Qrels, b: &Qrels) -> (Vec<i64>, Vec<i64>, usize, usize) {
    let mut left = Vec::new();
    let mut right = Vec::new();
    let mut only_a = 0;
    let mut matched = 0;
    for topic in a.topics() {
        let other = b.topic(topic.qid());
        for (docno, rel) in topic.judgments() {
            match other.and_then(|t| t.rel(docno)) {
                Some(r) => {
                    left.push(i64::from(rel));
                    right.push(i64::from(r));
                    matched += 1;
                }
                None => only_a += 1,
            }
        }
    }
    let total_b: usize = b.topics().iter().map(|t| t.num_judgments()).sum();
    (left, right, only_a, total_b - matched)
}

/// Grades when either side uses a label outside {0, 1}, else labels.
pub fn default_kind(a: &Qrels, b: &Qrels) -> Kind {
    let graded = |q: &Qrels| {
        q.topics()
            .iter()
            .any(|t| t.levels().iter().any(|(l, _)| !(0..=1).contains(l)))
    };
    if graded(a) || graded(b) {
        Kind::Grades
    } else {
        Kind::Labels
    }
}

pub fn labels_report(a: &Qrels, b: &Qrels, kind: Kind) -> Report {
    let (x, y, only_a, only_b) = paired_labels(a, b);
    let n = x.len();
    let fx: Vec<f64> = x.iter().map(|&v| v as f64).collect();
    let fy: Vec<f64> = y.iter().map(|&v| v as f64).collect();
    let row = |statistic, value| Row {
        statistic,
        value,
        items: n,
    };
    let mut rows = vec![
        row("Cohen's kappa", cohen_kappa(&x, &y)),
        row(
            "Krippendorff's alpha (nominal)",
            krippendorff_alpha(&fx, &fy, Level::Nominal),
        ),
    ];
    if kind == Kind::Grades {
        rows.extend([
            row("weighted kappa (linear)", weighted_kappa_linear(&x, &y)),
            row(
                "weighted kappa (quadratic)",
                weighted_kappa_quadratic(&x, &y),
            ),
            row(
                "Krippendorff's alpha (ordinal)",
                krippendorff_alpha(&fx, &fy, Level::Ordinal),
            ),
            row(
                "Krippendorff's alpha (interval)",
                krippendorff_alpha(&fx, &fy, Level::Interval),
            ),
        ]);
    }
    let mut counts: HashMap<(i64, i64), usize> = HashMap::new();
    for (&p, &q) in x.iter().zip(&y) {
        *counts.entry((p, q)).or_default() += 1;
    }
    let mut confusion: Vec<(i64, i64, usize)> =
        counts.into_iter().map(|((p, q), c)| (p, q, c)).collect();
    confusion.sort_unstable();
    Report {
        kind,
        rows,
        only_a,
        only_b,
        confusion,
    }
}

pub fn runs_report(a: &TopicScores, b: &TopicScores) -> Report {
    let cells = common_cells(a, b);
    let size = |t: &TopicScores| t.runs.values().map(|r| r.len()).sum::<usize>();
    let agreement = run_agreement(&cells);
    let row = |statistic, tau: crate::stats::agreement::Tau| Row {
        statistic,
        value: tau.tau,
        items: tau.items,
    };
    Report {
        kind: Kind::Runs,
        rows: vec![
            row(
                "Kendall tau over run means (items: runs)",
                agreement.run_means,
            ),
            row(
                "Kendall tau over topic/run pairs (items: pairs)",
                agreement.all_pairs,
            ),
            row(
                "Kendall tau per topic, averaged (items: topics)",
                agreement.per_topic,
            ),
        ],
        only_a: size(a) - cells.len(),
        only_b: size(b) - cells.len(),
        confusion: Vec::new(),
    }
}
