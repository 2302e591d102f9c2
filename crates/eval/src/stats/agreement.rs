//! Agreement between two judgments of the same items: two label sets (e.g. UMBRELA grades
//! against human qrels) or two score tables of the same runs (e.g. automatic against manual
//! nugget scores).
//!
//! - Cohen's κ (Cohen 1960): κ = (p_o − p_e) / (1 − p_e), p_o the share of items with equal
//!   labels, p_e = Σ_c p_A(c) p_B(c). `sklearn.metrics.cohen_kappa_score`.
//! - Weighted κ (Cohen 1968): κ_w = 1 − Σ w_ij o_ij / Σ w_ij e_ij over the confusion matrix o and
//!   its chance expectation e = row·column / n, disagreement weights w_ij = |g_i − g_j| (linear)
//!   or (g_i − g_j)² (quadratic) on the grade values. Equals scikit-learn's
//!   `cohen_kappa_score(weights=..., labels=range(min, max + 1))` (scikit-learn weights by label
//!   index, which is the grade value when every grade in the range is listed).
//! - Krippendorff's α (Krippendorff 2011, "Computing Krippendorff's Alpha-Reliability", §C–E):
//!   α = 1 − D_o / D_e from the coincidence matrix o_ck (each item with values (a, b) adds 1 to
//!   o_ab and o_ba), n_c = Σ_k o_ck, n = Σ n_c: D_o = Σ o_ck δ²_ck / n,
//!   D_e = Σ n_c n_k δ²_ck / (n (n − 1)); δ² nominal = [c ≠ k], interval = (c − k)², ordinal =
//!   (Σ_{g between c and k} n_g − (n_c + n_k)/2)². The `krippendorff` package on PyPI.
//! - Run rankings (Pradeep et al. 2024, "Initial Nugget Evaluation Results for the TREC 2024 RAG
//!   Track with the AutoNuggetizer Framework", Figure 6): Kendall τ-b between the two judgments
//!   over run means, over all (topic, run) pairs, and per topic averaged over topics.
//!
//! Every function returns `None` when the statistic is undefined (no items, no variation).

use std::collections::BTreeMap;

use super::correlation::kendall_tau_b;

/// Cohen's κ of two label sequences of the same items.
pub fn cohen_kappa(a: &[i64], b: &[i64]) -> Option<f64> {
    weighted(a, b, |x, y| if x == y { 0.0 } else { 1.0 })
}

/// Weighted κ with linear disagreement weights |x − y|.
pub fn weighted_kappa_linear(a: &[i64], b: &[i64]) -> Option<f64> {
    weighted(a, b, |x, y| (x - y).abs() as f64)
}

/// Weighted κ with quadratic disagreement weights (x − y)².
pub fn weighted_kappa_quadratic(a: &[i64], b: &[i64]) -> Option<f64> {
    weighted(a, b, |x, y| ((x - y) * (x - y)) as f64)
}

/// κ_w = 1 − Σ w o / Σ w e; unweighted κ is the 0/1 weight.
fn weighted(a: &[i64], b: &[i64], w: impl Fn(i64, i64) -> f64) -> Option<f64> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let n = a.len() as f64;
    let mut observed: BTreeMap<(i64, i64), f64> = BTreeMap::new();
    let mut row: BTreeMap<i64, f64> = BTreeMap::new();
    let mut col: BTreeMap<i64, f64> = BTreeMap::new();
    for (&x, &y) in a.iter().zip(b) {
        *observed.entry((x, y)).or_default() += 1.0;
        *row.entry(x).or_default() += 1.0;
        *col.entry(y).or_default() += 1.0;
    }
    let disagreement: f64 = observed.iter().map(|(&(x, y), o)| w(x, y) * o).sum();
    let mut expected = 0.0;
    for (&x, rx) in &row {
        for (&y, cy) in &col {
            expected += w(x, y) * rx * cy / n;
        }
    }
    if expected == 0.0 {
        return None;
    }
    Some(1.0 - disagreement / expected)
}

/// Krippendorff's level of measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Nominal,
    Ordinal,
    Interval,
}

/// Krippendorff's α for two coders who both judged every item.
pub fn krippendorff_alpha(a: &[f64], b: &[f64], level: Level) -> Option<f64> {
    if a.len() != b.len() || a.is_empty() || a.iter().chain(b).any(|v| !v.is_finite()) {
        return None;
    }
    // Distinct values in order; index into them.
    let mut values: Vec<f64> = a.iter().chain(b).copied().collect();
    values.sort_by(f64::total_cmp);
    values.dedup();
    let m = values.len();
    let index = |v: f64| values.partition_point(|x| *x < v);
    let mut o = vec![vec![0.0f64; m]; m];
    for (&x, &y) in a.iter().zip(b) {
        let (i, j) = (index(x), index(y));
        o[i][j] += 1.0;
        o[j][i] += 1.0;
    }
    let n_c: Vec<f64> = o.iter().map(|r| r.iter().sum()).collect();
    let n: f64 = n_c.iter().sum();
    let delta = |c: usize, k: usize| -> f64 {
        match level {
            Level::Nominal => f64::from(u8::from(c != k)),
            Level::Interval => (values[c] - values[k]).powi(2),
            Level::Ordinal => {
                let (lo, hi) = (c.min(k), c.max(k));
                let between: f64 = n_c[lo..=hi].iter().sum();
                (between - (n_c[c] + n_c[k]) / 2.0).powi(2)
            }
        }
    };
    let (mut d_o, mut d_e) = (0.0, 0.0);
    for c in 0..m {
        for k in 0..m {
            let d = delta(c, k);
            d_o += o[c][k] * d;
            d_e += n_c[c] * n_c[k] * d;
        }
    }
    if d_e == 0.0 || n < 2.0 {
        return None;
    }
    Some(1.0 - (n - 1.0) * d_o / d_e)
}

/// A Kendall τ with the number of items it was computed on.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tau {
    pub tau: Option<f64>,
    pub items: usize,
}

/// The three run-ranking agreements of the TREC 2024 RAG report's Figure 6.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunAgreement {
    /// τ between the runs' mean scores (items = runs).
    pub run_means: Tau,
    /// τ over every (topic, run) score (items = pairs).
    pub all_pairs: Tau,
    /// Mean of the per-topic τ over runs (items = topics where τ is defined).
    pub per_topic: Tau,
}

/// `cells` are (topic, run, score by judgment A, score by judgment B) for the (topic, run) pairs
/// both judgments scored. A run's mean is taken over these pairs only, so both sides average
/// the same topics.
pub fn run_agreement(cells: &[(String, String, f64, f64)]) -> RunAgreement {
    let mut runs: BTreeMap<&str, (f64, f64, usize)> = BTreeMap::new();
    let mut topics: BTreeMap<&str, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for (topic, run, a, b) in cells {
        let r = runs.entry(run).or_insert((0.0, 0.0, 0));
        r.0 += a;
        r.1 += b;
        r.2 += 1;
        let t = topics.entry(topic).or_default();
        t.0.push(*a);
        t.1.push(*b);
    }
    let (means_a, means_b): (Vec<f64>, Vec<f64>) = runs
        .values()
        .map(|(a, b, n)| (a / *n as f64, b / *n as f64))
        .unzip();
    let all_a: Vec<f64> = cells.iter().map(|c| c.2).collect();
    let all_b: Vec<f64> = cells.iter().map(|c| c.3).collect();
    let per_topic: Vec<f64> = topics
        .values()
        .filter_map(|(a, b)| kendall_tau_b(a, b))
        .collect();
    RunAgreement {
        run_means: Tau {
            tau: kendall_tau_b(&means_a, &means_b),
            items: means_a.len(),
        },
        all_pairs: Tau {
            tau: kendall_tau_b(&all_a, &all_b),
            items: cells.len(),
        },
        per_topic: Tau {
            tau: (!per_topic.is_empty())
                .then(|| per_topic.iter().sum::<f64>() / per_topic.len() as f64),
            items: per_topic.len(),
        },
    }
}
