//! Mean estimators with normal confidence intervals, as ppi-python 0.2.3 computes them
//! (`ppi_py/ppi.py`: `ppi_mean_pointestimate`, `ppi_mean_ci`, `_calc_lam_glm`;
//! `ppi_py/baselines.py`: `classical_mean_ci`), for the two-sided intervals of
//! statsmodels' `_zconfint_generic`.
//!
//! Notation: Y (n human labels), Ŷ (the judge on the same n units), Ŷu (the judge on N units),
//! w and wu optional weights, each rescaled to w·n/Σw (wu·N/Σwu), so weights only say how the
//! units count relative to each other. `var₀` is the variance with ddof = 0, z = Φ⁻¹(1 − α/2).
//!
//! - Classical: θ̂ = mean(w·Y), se = sd₀(w·Y)/√n.
//! - PPI with λ (Angelopoulos et al., Science 2023, for λ = 1; PPI++, arXiv:2311.01453, for
//!   any λ): θ̂(λ) = mean(wu·λ·Ŷu) + mean(w·(Y − λŶ)),
//!   se² = var₀(wu·λ·Ŷu)/N + var₀(w·(Y − λŶ))/n.
//! - PPI++'s λ (d = 1): with θ̃ = θ̂(1), g = w(Y − θ̃), ĝ = w(Ŷ − θ̃), ĝu = wu(Ŷu − θ̃):
//!   λ = cov₀(g, ĝ) / ((1 + n/N)·var₁(ĝ ∪ ĝu)), the variance pooled over the n + N values
//!   with ddof = 1, then clipped to [0, 1].
//! - Interval: θ̂ ± z·se.

use super::CalibrationError;
use crate::stats::distributions::normal_quantile;

/// The labelled units (human `y` and judge `yhat`) and the judge's scores of the unlabelled
/// set, with optional weights (inverse inclusion probabilities for a stratified sample).
#[derive(Debug, Clone, Copy)]
pub struct Sample<'a> {
    pub y: &'a [f64],
    pub yhat: &'a [f64],
    pub yhat_unlabelled: &'a [f64],
    pub w: Option<&'a [f64]>,
    pub w_unlabelled: Option<&'a [f64]>,
}

/// A point estimate with its two-sided (1 − α) interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub estimate: f64,
    pub low: f64,
    pub high: f64,
    /// The λ used (0 for the classical estimate, 1 for PPI).
    pub lambda: f64,
    /// Standard error of the estimate.
    pub se: f64,
}

/// Classical interval from the labelled units alone (ppi-python `classical_mean_ci`).
pub fn classical(y: &[f64], w: Option<&[f64]>, alpha: f64) -> Result<Estimate, CalibrationError> {
    check_alpha(alpha)?;
    check("label", y, 1)?;
    let w = weights(w, y.len())?;
    let wy: Vec<f64> = y.iter().zip(&w).map(|(y, w)| w * y).collect();
    let estimate = mean(&wy);
    let se = var0(&wy).sqrt() / (y.len() as f64).sqrt();
    Ok(interval(estimate, se, 0.0, alpha))
}

/// PPI with a fixed `lambda` (1: PPI; 0: classical), or PPI++ with `lambda = None` (λ tuned
/// from the data by [`ppi_lambda`]).
pub fn ppi(sample: &Sample, lambda: Option<f64>, alpha: f64) -> Result<Estimate, CalibrationError> {
    check_alpha(alpha)?;
    let (w, wu) = validated(sample)?;
    let lambda = match lambda {
        Some(l) => l,
        None => lambda_from(sample, &w, &wu),
    };
    let imputed: Vec<f64> = sample
        .yhat_unlabelled
        .iter()
        .zip(&wu)
        .map(|(yh, wu)| wu * lambda * yh)
        .collect();
    let rectifier: Vec<f64> = sample
        .y
        .iter()
        .zip(sample.yhat)
        .zip(&w)
        .map(|((y, yh), w)| w * (y - lambda * yh))
        .collect();
    let (n, big_n) = (rectifier.len() as f64, imputed.len() as f64);
    let estimate = mean(&imputed) + mean(&rectifier);
    let se = (var0(&imputed) / big_n + var0(&rectifier) / n).sqrt();
    Ok(interval(estimate, se, lambda, alpha))
}

/// PPI++'s power-tuning λ for a mean, clipped to [0, 1].
pub fn ppi_lambda(sample: &Sample) -> Result<f64, CalibrationError> {
    let (w, wu) = validated(sample)?;
    Ok(lambda_from(sample, &w, &wu))
}

fn lambda_from(sample: &Sample, w: &[f64], wu: &[f64]) -> f64 {
    let y = sample.y;
    let yh = sample.yhat;
    let yu = sample.yhat_unlabelled;
    let (n, big_n) = (y.len() as f64, yu.len() as f64);
    // θ̃ = θ̂(1)
    let theta = mean(&zip_map(yu, wu, |v, w| w * v))
        + mean(
            &y.iter()
                .zip(yh)
                .zip(w)
                .map(|((y, yh), w)| w * (y - yh))
                .collect::<Vec<_>>(),
        );
    let g: Vec<f64> = zip_map(y, w, |v, w| w * (v - theta));
    let g_hat: Vec<f64> = zip_map(yh, w, |v, w| w * (v - theta));
    let g_hat_u: Vec<f64> = zip_map(yu, wu, |v, w| w * (v - theta));
    let (mg, mh) = (mean(&g), mean(&g_hat));
    let cov = g
        .iter()
        .zip(&g_hat)
        .map(|(a, b)| (a - mg) * (b - mh))
        .sum::<f64>()
        / n;
    let pooled: Vec<f64> = g_hat.iter().chain(&g_hat_u).copied().collect();
    let m = mean(&pooled);
    let var1 = pooled.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / (pooled.len() as f64 - 1.0);
    let lambda = cov / ((1.0 + n / big_n) * var1);
    // A judge with constant scores leaves 0/0: numpy gives NaN and np.clip keeps it; λ = 0
    // (ignore the judge) is what the estimate then needs.
    if lambda.is_nan() {
        0.0
    } else {
        lambda.clamp(0.0, 1.0)
    }
}

fn zip_map(v: &[f64], w: &[f64], f: impl Fn(f64, f64) -> f64) -> Vec<f64> {
    v.iter().zip(w).map(|(&v, &w)| f(v, w)).collect()
}

fn interval(estimate: f64, se: f64, lambda: f64, alpha: f64) -> Estimate {
    let z = normal_quantile(1.0 - alpha / 2.0);
    Estimate {
        estimate,
        low: estimate - z * se,
        high: estimate + z * se,
        lambda,
        se,
    }
}

pub(crate) fn check_alpha(alpha: f64) -> Result<(), CalibrationError> {
    if alpha > 0.0 && alpha < 1.0 {
        Ok(())
    } else {
        Err(CalibrationError::BadAlpha(alpha))
    }
}

fn check(what: &'static str, v: &[f64], needed: usize) -> Result<(), CalibrationError> {
    if v.len() < needed {
        return Err(CalibrationError::TooFew {
            what,
            needed,
            got: v.len(),
        });
    }
    match v.iter().position(|x| !x.is_finite()) {
        Some(index) => Err(CalibrationError::NonFinite { what, index }),
        None => Ok(()),
    }
}

/// Checks the sample and returns its rescaled weights (labelled, unlabelled).
fn validated(s: &Sample) -> Result<(Vec<f64>, Vec<f64>), CalibrationError> {
    check("labelled unit", s.y, 2)?;
    check("judge score", s.yhat, 0)?;
    check("unlabelled unit", s.yhat_unlabelled, 1)?;
    if s.yhat.len() != s.y.len() {
        return Err(CalibrationError::LengthMismatch {
            what: "judge scores of the labelled units",
            got: s.yhat.len(),
            expected: s.y.len(),
        });
    }
    Ok((
        weights(s.w, s.y.len())?,
        weights(s.w_unlabelled, s.yhat_unlabelled.len())?,
    ))
}

/// ppi-python's `construct_weight_vector`: ones, or w·n/Σw.
pub(crate) fn weights(w: Option<&[f64]>, n: usize) -> Result<Vec<f64>, CalibrationError> {
    let Some(w) = w else {
        return Ok(vec![1.0; n]);
    };
    if w.len() != n {
        return Err(CalibrationError::LengthMismatch {
            what: "weights",
            got: w.len(),
            expected: n,
        });
    }
    if let Some(index) = w.iter().position(|v| !(v.is_finite() && *v > 0.0)) {
        return Err(CalibrationError::BadWeight {
            index,
            value: w[index],
        });
    }
    let total: f64 = w.iter().sum();
    Ok(w.iter().map(|v| v / total * n as f64).collect())
}

pub(crate) fn mean(x: &[f64]) -> f64 {
    x.iter().sum::<f64>() / x.len() as f64
}

/// Variance with ddof = 0 (numpy's default `std`).
pub(crate) fn var0(x: &[f64]) -> f64 {
    let m = mean(x);
    x.iter().map(|v| (v - m) * (v - m)).sum::<f64>() / x.len() as f64
}
