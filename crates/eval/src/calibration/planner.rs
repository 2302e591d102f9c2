//! How many more human labels bring the PPI++ interval to a chosen width.
//!
//! The PPI++ interval is θ̂ ± z·se with se² = A/N + B/n, where (see [`super::mean`])
//! A = var₀(wu·λ·Ŷu) comes from the judge's scores of all N units and B = var₀(w·(Y − λŶ))
//! from the n labelled ones. With λ, A and B held at the values measured so far and N fixed
//! (the judge already scored every unit), labelling n + n' units gives the width
//! W(n + n') = 2z·√(A/N + B/(n + n')). Solving W = `width` for the total:
//!
//! n + n' = B / ((width / 2z)² − A/N),   n' = max(0, ⌈n + n'⌉ − n).
//!
//! When (width/2z)² ≤ A/N no number of labels reaches the width: the judge's own spread over
//! the N units already costs more (a smaller λ or more units would). This is a plan, not a
//! promise: B is itself estimated from n labels, and λ is re-tuned as labels arrive.

use super::mean::{self, Sample};
use super::CalibrationError;
use crate::stats::distributions::normal_quantile;

/// What the plan says.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Plan {
    /// This many more labelled units (0: the interval is narrow enough already).
    More(u64),
    /// The width cannot be reached by labelling alone.
    Unreachable,
}

/// More labels needed for a two-sided (1 − α) PPI++ interval of total width `width`.
pub fn more_labels_needed(
    sample: &Sample,
    alpha: f64,
    width: f64,
) -> Result<Plan, CalibrationError> {
    mean::check_alpha(alpha)?;
    let lambda = mean::ppi_lambda(sample)?;
    let w = mean::weights(sample.w, sample.y.len())?;
    let wu = mean::weights(sample.w_unlabelled, sample.yhat_unlabelled.len())?;
    let imputed: Vec<f64> = (sample.yhat_unlabelled.iter().zip(&wu))
        .map(|(v, w)| w * lambda * v)
        .collect();
    let rectifier: Vec<f64> = (sample.y.iter().zip(sample.yhat).zip(&w))
        .map(|((y, yh), w)| w * (y - lambda * yh))
        .collect();
    let a = mean::var0(&imputed);
    let b = mean::var0(&rectifier);
    Ok(plan(
        a,
        b,
        sample.y.len(),
        sample.yhat_unlabelled.len(),
        normal_quantile(1.0 - alpha / 2.0),
        width,
    ))
}

/// The formula of the module doc, on measured variances.
pub fn plan(a: f64, b: f64, n: usize, big_n: usize, z: f64, width: f64) -> Plan {
    if width.is_nan() || width <= 0.0 {
        return Plan::Unreachable;
    }
    let room = (width / (2.0 * z)).powi(2) - a / big_n as f64;
    if room <= 0.0 {
        return Plan::Unreachable;
    }
    let total = (b / room).ceil();
    if !total.is_finite() || total >= u64::MAX as f64 {
        return Plan::Unreachable;
    }
    Plan::More((total as u64).saturating_sub(n as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The planned total, put back into the width formula, reaches the width, and one label
    /// fewer does not.
    #[test]
    fn planned_total_is_the_smallest_that_reaches_the_width() {
        let (a, b, n, big_n, z, width) = (0.04, 0.09, 50usize, 2000usize, 1.959963984540054, 0.05);
        let Plan::More(more) = plan(a, b, n, big_n, z, width) else {
            panic!("reachable");
        };
        let w = |total: f64| 2.0 * z * (a / big_n as f64 + b / total).sqrt();
        let total = (n as u64 + more) as f64;
        assert!(w(total) <= width, "{} > {width}", w(total));
        assert!(w(total - 1.0) > width);
        assert_eq!(plan(a, b, n, big_n, z, 0.001), Plan::Unreachable);
        assert_eq!(plan(a, b, 100_000, big_n, z, width), Plan::More(0));
    }
}
