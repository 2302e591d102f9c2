//! Nugget scores of the TREC 2024 RAG AutoNuggetizer framework.
//!
//! Source: Pradeep et al., "Initial Nugget Evaluation Results for the TREC 2024 RAG Track with
//! the AutoNuggetizer Framework" (arXiv 2411.09607), §3. Per answer, with s(n) = 1 for
//! `support`, 0.5 for `partial_support`, 0 otherwise, and s*(n) = 1 for `support` only:
//!
//! - A = Σ_n s(n) / N over all N nuggets; A_strict the same with s*
//! - V, V_strict: the same over the vital nuggets only (V_strict is the track's primary score)
//! - W = (Σ_vital s + ½ Σ_okay s) / (|vital| + ½ |okay|); W_strict with s*
//! - L = the answer's length in whitespace-separated words
//!
//! A kind with no nuggets scores 0. A nugget without importance is vital (all modes). A failed
//! assignment scores 0, stays in the denominator, and is counted. A run's score is the mean over
//! its topics, rounded once (Python's `statistics.mean`, see [`super::exact_mean`]).
//!
//! Compatibility modes reproduce two implementations exactly:
//! - [`Compat::Nuggetizer`]: nuggetizer 0.0.5 `nuggetizer/core/metrics.py`
//!   (`calculate_nugget_scores`): vital iff importance is exactly `vital`, every nugget counts in
//!   A whatever its importance, 0 for an empty kind. It has no W: W/W_strict follow the paper.
//!   L is the record's `response_length` when present.
//! - [`Compat::OpenRagEval`]: open-rag-eval 0.3.0 `AutoNuggetMetric`: nuggets stably sorted with
//!   `okay` last (`sorted(..., key=lambda x: x[1] == "okay")`) and cut to the first 20
//!   (`_score_and_sort_nuggets`), then `_evaluate_answer`: denominators clamped with max(n, 1),
//!   so W = (Σ_vital s + ½ Σ_okay s) / (max(|vital|,1) + ½ max(|okay|,1)) — two supported vital
//!   nuggets and no okay one give 2 / 2.5 = 0.8, where the paper gives 1.
//!
//! In paper mode importance labels other than vital/okay (nuggetizer's `failed`) count in A
//! only, as in nuggetizer.

use serde::Serialize;

use super::exact_mean;
use super::nuggetizer::{AssignedAnswer, AssignedRun, Assignment, Importance};

/// Which implementation's conventions to follow.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Compat {
    #[default]
    Paper,
    Nuggetizer,
    OpenRagEval,
}

impl std::str::FromStr for Compat {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "paper" => Ok(Compat::Paper),
            "nuggetizer" => Ok(Compat::Nuggetizer),
            "open-rag-eval" => Ok(Compat::OpenRagEval),
            _ => Err(format!(
                "unknown compat mode '{s}' (paper, nuggetizer, open-rag-eval)"
            )),
        }
    }
}

/// Open RAG Eval keeps the first 20 nuggets after sorting (the paper's setting).
pub const OPEN_RAG_EVAL_MAX_NUGGETS: usize = 20;

/// The seven scores, in the order they are shown (V_strict first, the primary score).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct NuggetScores {
    #[serde(rename = "V_strict")]
    pub v_strict: f64,
    #[serde(rename = "V")]
    pub v: f64,
    #[serde(rename = "W_strict")]
    pub w_strict: f64,
    #[serde(rename = "W")]
    pub w: f64,
    #[serde(rename = "A_strict")]
    pub a_strict: f64,
    #[serde(rename = "A")]
    pub a: f64,
    #[serde(rename = "L")]
    pub l: f64,
}

/// Score names in display order, and how to read each from [`NuggetScores`].
pub const SCORE_NAMES: [&str; 7] = ["V_strict", "V", "W_strict", "W", "A_strict", "A", "L"];

impl NuggetScores {
    pub fn get(&self, name: &str) -> Option<f64> {
        Some(match name {
            "V_strict" => self.v_strict,
            "V" => self.v,
            "W_strict" => self.w_strict,
            "W" => self.w,
            "A_strict" => self.a_strict,
            "A" => self.a,
            "L" => self.l,
            _ => return None,
        })
    }
    pub fn values(&self) -> [f64; 7] {
        SCORE_NAMES.map(|n| self.get(n).unwrap_or(f64::NAN))
    }
}

/// Per-nugget credit: (lenient, strict).
fn credit(a: &Assignment) -> (f64, f64) {
    match a {
        Assignment::Support => (1.0, 1.0),
        Assignment::PartialSupport => (0.5, 0.0),
        _ => (0.0, 0.0),
    }
}

fn ratio(num: f64, den: f64) -> f64 {
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

/// The per-answer kernel: scores of one answer's nuggets (L is set by the caller).
pub fn score_nuggets<'a>(
    nuggets: impl IntoIterator<Item = (&'a Importance, &'a Assignment)>,
    compat: Compat,
) -> NuggetScores {
    let mut items: Vec<(&Importance, &Assignment)> = nuggets.into_iter().collect();
    if compat == Compat::OpenRagEval {
        // Python's sorted() is stable; key False (not "okay") sorts first.
        items.sort_by_key(|(imp, _)| **imp == Importance::Okay);
        items.truncate(OPEN_RAG_EVAL_MAX_NUGGETS);
    }
    let (mut all, mut all_s, mut vital, mut vital_s, mut okay, mut okay_s) =
        (0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let (mut n_vital, mut n_okay) = (0usize, 0usize);
    // Sums accumulate in nugget order with the same float operations as the sources (all
    // partial credits are 0.5 and counts are small integers, so they are exact anyway).
    for (imp, a) in &items {
        let (s, s_strict) = credit(a);
        all += s;
        all_s += s_strict;
        match imp {
            Importance::Vital => {
                n_vital += 1;
                vital += s;
                vital_s += s_strict;
            }
            Importance::Okay => {
                n_okay += 1;
                okay += s;
                okay_s += s_strict;
            }
            Importance::Other(_) => {}
        }
    }
    let n = items.len();
    let (nv, no) = (n_vital as f64, n_okay as f64);
    let paper_w = |v: f64, o: f64| ratio(v + 0.5 * o, nv + 0.5 * no);
    match compat {
        Compat::Paper | Compat::Nuggetizer => NuggetScores {
            a: ratio(all, n as f64),
            a_strict: ratio(all_s, n as f64),
            v: ratio(vital, nv),
            v_strict: ratio(vital_s, nv),
            w: paper_w(vital, okay),
            w_strict: paper_w(vital_s, okay_s),
            l: 0.0,
        },
        Compat::OpenRagEval => {
            let n1 = n.max(1) as f64;
            let nv1 = n_vital.max(1) as f64;
            let no1 = n_okay.max(1) as f64;
            NuggetScores {
                a: all / n1,
                a_strict: all_s / n1,
                v: vital / nv1,
                v_strict: vital_s / nv1,
                w: (vital + 0.5 * okay) / (nv1 + 0.5 * no1),
                w_strict: (vital_s + 0.5 * okay_s) / (nv1 + 0.5 * no1),
                l: 0.0,
            }
        }
    }
}

/// Answer length in whitespace-separated words (Python's `len(text.split())`).
pub fn word_count(text: &str) -> usize {
    text.split_whitespace().count()
}

/// One topic's scores for one run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopicScores {
    pub qid: String,
    pub scores: NuggetScores,
    pub nuggets: usize,
    pub failed: usize,
}

pub fn score_answer(answer: &AssignedAnswer, compat: Compat) -> TopicScores {
    let mut scores = score_nuggets(
        answer
            .nuggets
            .iter()
            .map(|n| (&n.importance, &n.assignment)),
        compat,
    );
    scores.l = match (compat, answer.response_length) {
        (Compat::Nuggetizer, Some(len)) => len,
        _ => word_count(&answer.answer_text) as f64,
    };
    TopicScores {
        qid: answer.qid.clone(),
        scores,
        nuggets: answer.nuggets.len(),
        failed: answer
            .nuggets
            .iter()
            .filter(|n| n.assignment.is_failure())
            .count(),
    }
}

/// A run's scores: per topic in file order, and their means.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunScores {
    pub run_id: String,
    pub mean: NuggetScores,
    pub topics: Vec<TopicScores>,
    /// Failed assignments over all topics (scored 0, kept in the denominators).
    pub failed: usize,
}

/// Means over topics, each rounded once like `statistics.mean`.
pub fn mean_scores(topics: &[TopicScores]) -> NuggetScores {
    let col = |f: fn(&NuggetScores) -> f64| {
        let v: Vec<f64> = topics.iter().map(|t| f(&t.scores)).collect();
        if v.is_empty() {
            0.0
        } else {
            exact_mean::mean(&v)
        }
    };
    NuggetScores {
        v_strict: col(|s| s.v_strict),
        v: col(|s| s.v),
        w_strict: col(|s| s.w_strict),
        w: col(|s| s.w),
        a_strict: col(|s| s.a_strict),
        a: col(|s| s.a),
        l: col(|s| s.l),
    }
}

pub fn score_run(run: &AssignedRun, compat: Compat) -> RunScores {
    let topics: Vec<TopicScores> = run
        .answers
        .iter()
        .map(|a| score_answer(a, compat))
        .collect();
    RunScores {
        run_id: run.run_id.clone(),
        mean: mean_scores(&topics),
        failed: topics.iter().map(|t| t.failed).sum(),
        topics,
    }
}
