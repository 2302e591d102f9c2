//! Effect sizes for paired per-query scores.

use super::distributions::t_quantile;
use super::{differences, mean, sample_sd, StatsError};

/// Mean of `a − b` with its Student-t confidence interval d̄ ± t_{(1+level)/2, n−1}·s_d/√n.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeanDifference {
    pub mean: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub level: f64,
}

pub fn mean_difference(a: &[f64], b: &[f64], level: f64) -> Result<MeanDifference, StatsError> {
    let d = differences(a, b)?;
    if d.len() < 2 {
        return Err(StatsError::TooFew {
            needed: 2,
            got: d.len(),
        });
    }
    let m = mean(&d);
    let half = t_quantile((1.0 + level) / 2.0, d.len() as f64 - 1.0) * sample_sd(&d)
        / (d.len() as f64).sqrt();
    Ok(MeanDifference {
        mean: m,
        ci_low: m - half,
        ci_high: m + half,
        level,
    })
}

/// Cohen's d for paired samples in its d_z form: d̄ / s_d (Cohen 1988; Lakens 2013, Eq. 6),
/// the standardiser matching the paired t-test (t = d_z·√n).
pub fn cohens_d_paired(a: &[f64], b: &[f64]) -> Result<f64, StatsError> {
    let d = differences(a, b)?;
    if d.len() < 2 {
        return Err(StatsError::TooFew {
            needed: 2,
            got: d.len(),
        });
    }
    let sd = sample_sd(&d);
    if sd == 0.0 {
        return Err(StatsError::Degenerate("all paired differences are equal"));
    }
    Ok(mean(&d) / sd)
}
