//! Statistics: correlations, significance tests for paired per-query scores, bootstrap, and
//! multiple-testing corrections. Every test is checked against scipy on generated data
//! (tests/oracle/stats/generate.py → crates/eval/tests/fixtures/stats).
//!
//! Randomness comes only from [`rng::SeededRng`] (ChaCha8): the same seed gives the same stream
//! on native and wasm32, so every Monte-Carlo result is reproducible everywhere.

pub mod agreement;
pub mod compare;
pub mod correction;
pub mod correlation;
pub mod distributions;
pub mod effect;
pub mod paired;
pub mod rank;
pub mod rng;
pub mod wilcoxon;

pub use compare::{compare, Test, TestResult};
pub use correction::{benjamini_hochberg, bonferroni, holm};
pub use correlation::{kendall_tau_b, pearson, spearman};
pub use paired::Alternative;

/// Why a statistic cannot be computed; callers print "n/a" instead of a made-up number.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StatsError {
    #[error("paired samples differ in length ({0} vs {1})")]
    LengthMismatch(usize, usize),
    #[error("need at least {needed} paired values, got {got}")]
    TooFew { needed: usize, got: usize },
    #[error("non-finite value at position {0}")]
    NonFinite(usize),
    #[error("statistic undefined: {0}")]
    Degenerate(&'static str),
}

/// Paired differences `a − b`, validated (same length, finite).
pub(crate) fn differences(a: &[f64], b: &[f64]) -> Result<Vec<f64>, StatsError> {
    if a.len() != b.len() {
        return Err(StatsError::LengthMismatch(a.len(), b.len()));
    }
    a.iter()
        .zip(b)
        .enumerate()
        .map(|(i, (x, y))| {
            if x.is_finite() && y.is_finite() {
                Ok(x - y)
            } else {
                Err(StatsError::NonFinite(i))
            }
        })
        .collect()
}

pub(crate) fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Sample standard deviation (ddof = 1).
pub(crate) fn sample_sd(x: &[f64]) -> f64 {
    let m = mean(x);
    let ss: f64 = x.iter().map(|v| (v - m) * (v - m)).sum();
    (ss / (x.len() as f64 - 1.0)).sqrt()
}
