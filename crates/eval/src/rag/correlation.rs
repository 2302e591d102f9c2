//! The correlation study of Trappolini et al. 2025 (§7.2, Table 3; Fig. 2 for the cutoff):
//! for every question, each metric orders the question's contexts; that order is compared with
//! the ideal order of their end-to-end outcomes (correct > abstain > wrong) by Spearman's ρ
//! (ties by average rank), Kendall's τ-b and Pearson's r; the per-question coefficients are
//! averaged over questions, with percentile-bootstrap 95% intervals over questions, and a
//! paired bootstrap test (Sakai 2006) of "metric A correlates better than metric B".
//!
//! Conventions (documented, counted, never silent):
//! - a question whose contexts all share one outcome has no ideal order: it is skipped and
//!   counted in `skipped_constant_outcome` (for every metric alike);
//! - a metric that scores all contexts of a question equally cannot order them: its
//!   coefficient for that question is 0 (no information), not a skipped value that would
//!   flatter it;
//! - only contexts of exactly k passages are used; others are counted in `skipped_contexts`.

use std::collections::HashMap;

use serde::Serialize;

use super::classic::{average_precision, hits, ndcg, precision, reciprocal_rank};
use super::contexts::ContextSet;
use super::erag::{erag_precision, erag_success};
use super::theta::ThetaModel;
use super::udcg::{udcg_of_utilities, Gain, UdcgParams};
use super::utility::Judgment;
use crate::stats::correlation::{kendall_tau_b, pearson, spearman_with, RankScratch};
use crate::stats::paired::{joint_resample_means, quantile_sorted};

/// The metrics of the paper's Table 3 (plus the UDCG ablations and eRAG).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Metric {
    #[serde(rename = "UDCG")]
    Udcg,
    #[serde(rename = "UDCGθ")]
    UdcgTheta,
    #[serde(rename = "UDCG-rel")]
    UdcgRelOnly,
    #[serde(rename = "UDCG-binary")]
    UdcgBinary,
    #[serde(rename = "nDCG")]
    Ndcg,
    #[serde(rename = "MRR")]
    Mrr,
    #[serde(rename = "MAP")]
    Map,
    #[serde(rename = "Precision")]
    Precision,
    #[serde(rename = "HITS")]
    Hits,
    #[serde(rename = "eRAG-P")]
    EragPrecision,
    #[serde(rename = "eRAG-success")]
    EragSuccess,
}

impl Metric {
    pub const ALL: [Metric; 11] = [
        Metric::Udcg,
        Metric::UdcgTheta,
        Metric::UdcgRelOnly,
        Metric::UdcgBinary,
        Metric::Ndcg,
        Metric::Mrr,
        Metric::Map,
        Metric::Precision,
        Metric::Hits,
        Metric::EragPrecision,
        Metric::EragSuccess,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Metric::Udcg => "UDCG",
            Metric::UdcgTheta => "UDCGθ",
            Metric::UdcgRelOnly => "UDCG-rel",
            Metric::UdcgBinary => "UDCG-binary",
            Metric::Ndcg => "nDCG",
            Metric::Mrr => "MRR",
            Metric::Map => "MAP",
            Metric::Precision => "Precision",
            Metric::Hits => "HITS",
            Metric::EragPrecision => "eRAG-P",
            Metric::EragSuccess => "eRAG-success",
        }
    }
}

/// Which correlation coefficient.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Coefficient {
    Spearman,
    KendallTauB,
    Pearson,
}

#[derive(Debug, Clone)]
pub struct StudyConfig {
    /// Context size to study; `None` requires every context of the input to share one size.
    pub k: Option<usize>,
    /// γ (and gain) of UDCG; the rel-only and binary ablations derive from it.
    pub udcg: UdcgParams,
    pub theta: Option<ThetaModel>,
    /// Bootstrap resamples for the intervals and the paired tests.
    pub resamples: usize,
    pub seed: u64,
    /// The metric tested against every other one ("A correlates better than B").
    pub reference: Metric,
}

impl Default for StudyConfig {
    fn default() -> Self {
        Self {
            k: None,
            udcg: UdcgParams::default(),
            theta: None,
            resamples: 1000,
            seed: 0,
            reference: Metric::Udcg,
        }
    }
}

/// A mean over questions with its bootstrap interval.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    pub mean: f64,
    pub ci_low: f64,
    pub ci_high: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct MetricResult {
    pub metric: Metric,
    pub spearman: Summary,
    pub kendall_tau_b: Summary,
    pub pearson: Summary,
}

impl MetricResult {
    pub fn get(&self, coefficient: Coefficient) -> Summary {
        match coefficient {
            Coefficient::Spearman => self.spearman,
            Coefficient::KendallTauB => self.kendall_tau_b,
            Coefficient::Pearson => self.pearson,
        }
    }
}

/// One-sided paired bootstrap test that `reference` has the higher mean Spearman ρ.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PairedComparison {
    pub reference: Metric,
    pub other: Metric,
    /// Mean over questions of ρ(reference) − ρ(other).
    pub mean_difference: f64,
    /// Fraction of resamples at least as favourable to `other`; 0 means below 1/`resamples`.
    pub p_value: f64,
    pub resamples: usize,
}

/// Results for one (dataset, model) column of Table 3.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct GroupResult {
    pub dataset: String,
    pub model: String,
    pub k: usize,
    pub questions: usize,
    pub skipped_constant_outcome: usize,
    pub skipped_contexts: usize,
    pub metrics: Vec<MetricResult>,
    pub comparisons: Vec<PairedComparison>,
    /// Metrics that could not be computed for this group, with the reason.
    pub unavailable: Vec<(Metric, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct StudyResult {
    pub groups: Vec<GroupResult>,
}

/// Why the study cannot run; names the input line when one is to blame.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StudyError {
    #[error("contexts of unequal k: {first_k} passages (line {first_line}) vs {other_k} (line {other_line}); choose one size with --k")]
    UnequalK {
        first_k: usize,
        first_line: usize,
        other_k: usize,
        other_line: usize,
    },
    #[error("no question has two or more {k}-passage contexts with different outcomes")]
    NothingToCorrelate { k: usize },
    #[error("no context has {k} passages (sizes present: {sizes})")]
    NoContextOfSize { k: usize, sizes: String },
    #[error("{resamples} bootstrap resamples is over the limit of {MAX_RESAMPLES}")]
    TooManyResamples { resamples: usize },
}

/// Bootstrap resamples a study accepts. Each resample is a pass over every question, so far
/// more would run for days; the bound also keeps the resample buffers' size sane.
pub const MAX_RESAMPLES: usize = 10_000_000;

/// Refuses a context size no context has, before anything is sized by it (a `--k` of 10¹¹
/// must be an error, not an allocation failure).
fn check_size_present(sets: &[ContextSet], k: usize) -> Result<(), StudyError> {
    let mut sizes = std::collections::BTreeSet::new();
    for set in sets {
        for c in &set.contexts {
            if c.passages.len() == k {
                return Ok(());
            }
            sizes.insert(c.passages.len());
        }
    }
    let sizes: Vec<String> = sizes.iter().map(|s| s.to_string()).collect();
    Err(StudyError::NoContextOfSize {
        k,
        sizes: if sizes.is_empty() {
            "none".into()
        } else {
            sizes.join(", ")
        },
    })
}

/// The context size to study: the requested one, or the single size present.
pub fn resolve_k(sets: &[ContextSet], k: Option<usize>) -> Result<usize, StudyError> {
    if let Some(k) = k {
        check_size_present(sets, k)?;
        return Ok(k);
    }
    let mut first: Option<(usize, usize)> = None;
    for set in sets {
        for c in &set.contexts {
            match first {
                None => first = Some((c.passages.len(), set.line)),
                Some((k0, line0)) if k0 != c.passages.len() => {
                    return Err(StudyError::UnequalK {
                        first_k: k0,
                        first_line: line0,
                        other_k: c.passages.len(),
                        other_line: set.line,
                    })
                }
                _ => {}
            }
        }
    }
    first
        .map(|(k, _)| k)
        .ok_or(StudyError::NothingToCorrelate { k: 0 })
}

/// Per-question coefficients of every metric, then summaries; groups in order of appearance.
pub fn study(sets: &[ContextSet], config: &StudyConfig) -> Result<StudyResult, StudyError> {
    if config.resamples > MAX_RESAMPLES {
        return Err(StudyError::TooManyResamples {
            resamples: config.resamples,
        });
    }
    let k = resolve_k(sets, config.k)?;
    let mut order: Vec<(String, String)> = Vec::new();
    let mut members: HashMap<(String, String), Vec<&ContextSet>> = HashMap::new();
    for set in sets {
        let key = (set.dataset.clone(), set.model.clone());
        if !members.contains_key(&key) {
            order.push(key.clone());
        }
        members.entry(key).or_default().push(set);
    }
    let mut groups = Vec::new();
    for key in order {
        let group_sets = members.remove(&key).unwrap_or_default();
        if let Some(result) = study_group(&key.0, &key.1, &group_sets, k, config) {
            groups.push(result);
        }
    }
    if groups.is_empty() {
        return Err(StudyError::NothingToCorrelate { k });
    }
    Ok(StudyResult { groups })
}

/// Sensitivity to the context size (paper Fig. 2): the study at each k in `ks`, for inputs
/// holding contexts of several sizes. Sizes with nothing to correlate are left out.
pub fn sensitivity(
    sets: &[ContextSet],
    ks: &[usize],
    config: &StudyConfig,
) -> Vec<(usize, StudyResult)> {
    ks.iter()
        .filter_map(|&k| {
            let cfg = StudyConfig {
                k: Some(k),
                ..config.clone()
            };
            study(sets, &cfg).ok().map(|r| (k, r))
        })
        .collect()
}

/// Reusable per-question buffers: the study's hot path allocates nothing per context.
struct Scratch {
    judgments: Vec<Judgment>,
    relevant: Vec<bool>,
    erag: Vec<f64>,
    outcome: Vec<f64>,
    values: Vec<Vec<f64>>,
    ranks: RankScratch,
}

fn study_group(
    dataset: &str,
    model: &str,
    sets: &[&ContextSet],
    k: usize,
    config: &StudyConfig,
) -> Option<GroupResult> {
    let mut unavailable: Vec<(Metric, String)> = Vec::new();
    match &config.theta {
        None => unavailable.push((Metric::UdcgTheta, "no UDCGθ model given".into())),
        Some(t) if t.k != k => unavailable.push((
            Metric::UdcgTheta,
            format!("UDCGθ model was trained for k = {}, not {k}", t.k),
        )),
        Some(_) => {}
    }
    let erag_missing = sets.iter().find_map(|set| {
        set.contexts
            .iter()
            .filter(|c| c.passages.len() == k)
            .flat_map(|c| &c.passages)
            .find(|&&i| set.pool[i as usize].info.erag.is_none())
            .map(|&i| (set, i))
    });
    if let Some((set, i)) = erag_missing {
        let why = format!(
            "passage {:?} of question {:?} (line {}) has no erag score",
            set.pool[i as usize].id, set.qid, set.line
        );
        unavailable.push((Metric::EragPrecision, why.clone()));
        unavailable.push((Metric::EragSuccess, why));
    }
    let metrics: Vec<Metric> = Metric::ALL
        .into_iter()
        .filter(|m| !unavailable.iter().any(|(u, _)| u == m))
        .collect();

    let mut scratch = Scratch {
        judgments: Vec::new(),
        relevant: Vec::new(),
        erag: Vec::new(),
        outcome: Vec::new(),
        values: vec![Vec::new(); metrics.len()],
        ranks: RankScratch::default(),
    };
    // per_question[metric][coefficient] → coefficients over used questions.
    let mut per_question = vec![[Vec::new(), Vec::new(), Vec::new()]; metrics.len()];
    let (mut skipped_constant, mut skipped_contexts, mut used) = (0, 0, 0);
    for set in sets {
        scratch.outcome.clear();
        for v in &mut scratch.values {
            v.clear();
        }
        let judged_relevant = set.judged_relevant();
        for context in &set.contexts {
            if context.passages.len() != k {
                skipped_contexts += 1;
                continue;
            }
            scratch.outcome.push(context.outcome.level());
            fill_context(set, &context.passages, &mut scratch);
            for (mi, metric) in metrics.iter().enumerate() {
                let value = score(*metric, &scratch, judged_relevant, k, config);
                scratch.values[mi].push(value);
            }
        }
        let outcome = &scratch.outcome;
        if outcome.len() < 2 || outcome.iter().all(|o| *o == outcome[0]) {
            skipped_constant += 1;
            continue;
        }
        used += 1;
        for (mi, values) in scratch.values.iter().enumerate() {
            let rho = spearman_with(outcome, values, &mut scratch.ranks).unwrap_or(0.0);
            let tau = kendall_tau_b(outcome, values).unwrap_or(0.0);
            let r = pearson(outcome, values).unwrap_or(0.0);
            per_question[mi][0].push(rho);
            per_question[mi][1].push(tau);
            per_question[mi][2].push(r);
        }
    }
    if used == 0 {
        return None;
    }
    // One joint bootstrap over questions for every metric × coefficient (paired draws).
    let series = metrics.len() * 3;
    let mut rows = Vec::with_capacity(used * series);
    for q in 0..used {
        for pq in &per_question {
            rows.extend([pq[0][q], pq[1][q], pq[2][q]]);
        }
    }
    let resamples = config.resamples.max(1);
    let boot = joint_resample_means(&rows, series, resamples, config.seed);
    let mean_of = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    let summarise = |mi: usize, c: usize| -> Summary {
        let mut sorted = boot[mi * 3 + c].clone();
        sorted.sort_by(f64::total_cmp);
        Summary {
            mean: mean_of(&per_question[mi][c]),
            ci_low: quantile_sorted(&sorted, 0.025),
            ci_high: quantile_sorted(&sorted, 0.975),
        }
    };
    let results: Vec<MetricResult> = metrics
        .iter()
        .enumerate()
        .map(|(mi, m)| MetricResult {
            metric: *m,
            spearman: summarise(mi, 0),
            kendall_tau_b: summarise(mi, 1),
            pearson: summarise(mi, 2),
        })
        .collect();
    // Paired bootstrap test (Sakai 2006) of "reference has the higher mean ρ": the resampled
    // difference, shifted to mean zero, reaching the observed difference.
    let mut comparisons = Vec::new();
    if let Some(ri) = metrics.iter().position(|m| *m == config.reference) {
        for (oi, other) in metrics.iter().enumerate() {
            if oi == ri {
                continue;
            }
            let observed = mean_of(&per_question[ri][0]) - mean_of(&per_question[oi][0]);
            let (a, b) = (&boot[ri * 3], &boot[oi * 3]);
            let extreme = a
                .iter()
                .zip(b)
                .filter(|(x, y)| (*x - *y) - observed >= observed)
                .count();
            comparisons.push(PairedComparison {
                reference: config.reference,
                other: *other,
                mean_difference: observed,
                p_value: extreme as f64 / resamples as f64,
                resamples,
            });
        }
    }
    Some(GroupResult {
        dataset: dataset.to_string(),
        model: model.to_string(),
        k,
        questions: used,
        skipped_constant_outcome: skipped_constant,
        skipped_contexts,
        metrics: results,
        comparisons,
        unavailable,
    })
}

fn fill_context(set: &ContextSet, passages: &[u32], s: &mut Scratch) {
    s.judgments.clear();
    s.relevant.clear();
    s.erag.clear();
    for &i in passages {
        let info = &set.pool[i as usize].info;
        s.judgments.push(info.judgment);
        s.relevant.push(info.judgment.relevant);
        s.erag.push(info.erag.unwrap_or(0.0));
    }
}

fn score(
    metric: Metric,
    s: &Scratch,
    judged_relevant: usize,
    k: usize,
    config: &StudyConfig,
) -> f64 {
    let udcg_with = |gamma: f64, gain: Gain| {
        let utilities = s.judgments.iter().map(|j| match gain {
            Gain::Utility => j.utility(),
            Gain::Binary => j.binary_utility(),
        });
        udcg_of_utilities(utilities, k, gamma)
    };
    match metric {
        Metric::Udcg => udcg_with(config.udcg.gamma, config.udcg.gain),
        Metric::UdcgRelOnly => udcg_with(0.0, config.udcg.gain),
        Metric::UdcgBinary => udcg_with(config.udcg.gamma, Gain::Binary),
        Metric::UdcgTheta => config.theta.as_ref().map_or(0.0, |t| t.score(&s.judgments)),
        Metric::Ndcg => ndcg(&s.relevant, judged_relevant),
        Metric::Mrr => reciprocal_rank(&s.relevant),
        Metric::Map => average_precision(&s.relevant, judged_relevant),
        Metric::Precision => precision(&s.relevant),
        Metric::Hits => hits(&s.relevant),
        Metric::EragPrecision => erag_precision(&s.erag),
        Metric::EragSuccess => erag_success(&s.erag),
    }
}
