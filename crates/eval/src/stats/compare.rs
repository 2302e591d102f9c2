//! One entry point for comparing two systems' paired per-query scores, for `ragscope compare`
//! and the web app.

use super::effect::{cohens_d_paired, mean_difference};
use super::paired::{bootstrap_mean_ci, bootstrap_test, paired_t, randomization, Alternative};
use super::wilcoxon::{wilcoxon, WilcoxonOptions};
use super::{differences, StatsError};

/// Which significance test to run on `other − baseline`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Test {
    PairedT,
    Wilcoxon(WilcoxonOptions),
    /// Fisher's randomization test with this many random sign patterns (exact when 2ⁿ ≤ it).
    Randomization {
        resamples: usize,
    },
    /// Paired bootstrap test (Sakai 2006) with this many resamples.
    Bootstrap {
        resamples: usize,
    },
}

/// Everything a comparison table needs about one pair of systems.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TestResult {
    pub n: usize,
    /// Mean of `other − baseline`.
    pub mean_difference: f64,
    /// 95% Student-t interval of the mean difference.
    pub ci_low: f64,
    pub ci_high: f64,
    /// 95% percentile-bootstrap interval of the mean difference (seeded).
    pub bootstrap_ci_low: f64,
    pub bootstrap_ci_high: f64,
    /// Cohen's d_z; NaN when every difference is equal.
    pub cohens_d: f64,
    pub statistic: f64,
    pub p_value: f64,
}

/// Compares `other` against `baseline` (paired by position), two-sided.
/// Deterministic for a given `seed`.
pub fn compare(
    baseline: &[f64],
    other: &[f64],
    test: Test,
    seed: u64,
) -> Result<TestResult, StatsError> {
    let d = differences(other, baseline)?;
    let tested = match test {
        Test::PairedT => paired_t(other, baseline, Alternative::TwoSided)?,
        Test::Wilcoxon(options) => {
            let r = wilcoxon(other, baseline, options)?;
            super::paired::Tested {
                statistic: r.statistic,
                p_value: r.p_value,
            }
        }
        Test::Randomization { resamples } => {
            randomization(other, baseline, Alternative::TwoSided, resamples, seed)?
        }
        Test::Bootstrap { resamples } => {
            bootstrap_test(other, baseline, Alternative::TwoSided, resamples, seed)?
        }
    };
    let interval = mean_difference(other, baseline, 0.95)?;
    let (bootstrap_ci_low, bootstrap_ci_high) = bootstrap_mean_ci(&d, 0.95, 10_000, seed)?;
    Ok(TestResult {
        n: d.len(),
        mean_difference: interval.mean,
        ci_low: interval.ci_low,
        ci_high: interval.ci_high,
        bootstrap_ci_low,
        bootstrap_ci_high,
        cohens_d: cohens_d_paired(other, baseline).unwrap_or(f64::NAN),
        statistic: tested.statistic,
        p_value: tested.p_value,
    })
}
