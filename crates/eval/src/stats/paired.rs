//! Paired tests on per-query scores: Student's t, Fisher's randomization test, and the paired
//! bootstrap. Differences are always `a − b`, as `scipy.stats.ttest_rel(a, b)`.

use super::distributions::{t_cdf, t_sf};
use super::rng::SeededRng;
use super::{differences, mean, sample_sd, StatsError};

/// Direction of the alternative hypothesis about the mean (or median) of `a − b`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Alternative {
    #[default]
    TwoSided,
    /// a − b tends to be greater than 0.
    Greater,
    /// a − b tends to be less than 0.
    Less,
}

/// A test statistic with its p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tested {
    pub statistic: f64,
    pub p_value: f64,
}

/// Paired Student's t-test (`scipy.stats.ttest_rel`): t = d̄ / (s_d/√n), df = n − 1.
pub fn paired_t(a: &[f64], b: &[f64], alternative: Alternative) -> Result<Tested, StatsError> {
    let d = differences(a, b)?;
    if d.len() < 2 {
        return Err(StatsError::TooFew {
            needed: 2,
            got: d.len(),
        });
    }
    let n = d.len() as f64;
    let sd = sample_sd(&d);
    if sd == 0.0 {
        return Err(StatsError::Degenerate("all paired differences are equal"));
    }
    let t = mean(&d) / (sd / n.sqrt());
    let df = n - 1.0;
    let p = match alternative {
        Alternative::TwoSided => 2.0 * t_sf(t.abs(), df),
        Alternative::Greater => t_sf(t, df),
        Alternative::Less => t_cdf(t, df),
    };
    Ok(Tested {
        statistic: t,
        p_value: p.min(1.0),
    })
}

/// Fisher's randomization (sign-flip permutation) test on the mean of `a − b`, as
/// `scipy.stats.permutation_test((d,), np.mean, permutation_type="samples")`: exact over all
/// 2ⁿ sign patterns when 2ⁿ ≤ `resamples`, otherwise `resamples` random patterns with the
/// (count + 1)/(B + 1) correction. Two-sided p = 2·min(p_less, p_greater), clipped to 1.
pub fn randomization(
    a: &[f64],
    b: &[f64],
    alternative: Alternative,
    resamples: usize,
    seed: u64,
) -> Result<Tested, StatsError> {
    let d = differences(a, b)?;
    if d.is_empty() {
        return Err(StatsError::TooFew { needed: 1, got: 0 });
    }
    let n = d.len();
    let observed = mean(&d);
    // scipy's tolerance for "numerically distinct but theoretically equal" null values.
    let gamma = (observed * f64::EPSILON * 100.0).abs();
    let (mut less, mut greater) = (0u64, 0u64);
    let mut tally = |s: f64| {
        less += u64::from(s <= observed + gamma);
        greater += u64::from(s >= observed - gamma);
    };
    let exact = n < 63 && (1u64 << n) <= resamples as u64;
    let (total, adjustment) = if exact {
        for pattern in 0..(1u64 << n) {
            let sum: f64 = d
                .iter()
                .enumerate()
                .map(|(i, v)| if pattern >> i & 1 == 1 { -v } else { *v })
                .sum();
            tally(sum / n as f64);
        }
        ((1u64 << n) as f64, 0.0)
    } else {
        let mut rng = SeededRng::new(seed);
        for _ in 0..resamples {
            let sum: f64 = d.iter().map(|v| if rng.coin() { -v } else { *v }).sum();
            tally(sum / n as f64);
        }
        (resamples as f64, 1.0)
    };
    let p_less = (less as f64 + adjustment) / (total + adjustment);
    let p_greater = (greater as f64 + adjustment) / (total + adjustment);
    let p = match alternative {
        Alternative::TwoSided => 2.0 * p_less.min(p_greater),
        Alternative::Greater => p_greater,
        Alternative::Less => p_less,
    };
    Ok(Tested {
        statistic: observed,
        p_value: p.clamp(0.0, 1.0),
    })
}

/// Paired bootstrap test (Sakai 2006, "Evaluating evaluation metrics based on the bootstrap"):
/// resample the differences shifted to mean 0 and count how often the resampled mean is at
/// least as extreme as the observed one: two-sided |m*| ≥ |m|, greater m* ≥ m, less m* ≤ m.
pub fn bootstrap_test(
    a: &[f64],
    b: &[f64],
    alternative: Alternative,
    resamples: usize,
    seed: u64,
) -> Result<Tested, StatsError> {
    let d = differences(a, b)?;
    if d.is_empty() || resamples == 0 {
        return Err(StatsError::TooFew { needed: 1, got: 0 });
    }
    let observed = mean(&d);
    let shifted: Vec<f64> = d.iter().map(|v| v - observed).collect();
    let mut rng = SeededRng::new(seed);
    let mut extreme = 0u64;
    for _ in 0..resamples {
        let m = resample_mean(&shifted, &mut rng);
        extreme += u64::from(match alternative {
            Alternative::TwoSided => m.abs() >= observed.abs(),
            Alternative::Greater => m >= observed,
            Alternative::Less => m <= observed,
        });
    }
    Ok(Tested {
        statistic: observed,
        p_value: extreme as f64 / resamples as f64,
    })
}

/// Percentile bootstrap confidence interval of the mean (as `scipy.stats.bootstrap(...,
/// method="percentile")`): the (1−level)/2 and (1+level)/2 quantiles of B resampled means,
/// quantiles by linear interpolation (numpy's default).
pub fn bootstrap_mean_ci(
    x: &[f64],
    level: f64,
    resamples: usize,
    seed: u64,
) -> Result<(f64, f64), StatsError> {
    if x.is_empty() || resamples == 0 {
        return Err(StatsError::TooFew { needed: 1, got: 0 });
    }
    if let Some(i) = x.iter().position(|v| !v.is_finite()) {
        return Err(StatsError::NonFinite(i));
    }
    let mut rng = SeededRng::new(seed);
    let mut means: Vec<f64> = (0..resamples).map(|_| resample_mean(x, &mut rng)).collect();
    means.sort_by(f64::total_cmp);
    let alpha = (1.0 - level) / 2.0;
    Ok((
        quantile_sorted(&means, alpha),
        quantile_sorted(&means, 1.0 - alpha),
    ))
}

/// Mean of one bootstrap resample (n draws with replacement).
pub(crate) fn resample_mean(x: &[f64], rng: &mut SeededRng) -> f64 {
    let n = x.len() as u64;
    let mut sum = 0.0;
    for _ in 0..n {
        sum += x[rng.below(n) as usize];
    }
    sum / n as f64
}

/// Quantile with linear interpolation between order statistics (numpy "linear").
pub fn quantile_sorted(sorted: &[f64], q: f64) -> f64 {
    let position = q * (sorted.len() - 1) as f64;
    let lower = position.floor() as usize;
    let upper = position.ceil() as usize;
    let fraction = position - lower as f64;
    sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
}

/// Bootstrap means of several paired series at once: each of the `resamples` draws one set of
/// n indices with replacement and averages every series over it. `rows` is row-major
/// (n rows × `series` columns). Sharing the draws makes the resampled means of different
/// series paired (as a paired bootstrap test needs) and costs one index stream instead of one
/// per series. Each resample first counts how often every row was drawn (a small, cache-
/// resident array), then streams through the rows once: sequential reads instead of n random
/// row fetches, which matters when the rows outgrow the cache (100k questions × 33 series).
/// Returns `means[s][b]`.
pub fn joint_resample_means(
    rows: &[f64],
    series: usize,
    resamples: usize,
    seed: u64,
) -> Vec<Vec<f64>> {
    let n = rows.len().checked_div(series).unwrap_or(0);
    // Capacity as the data arrives beyond a first block: `resamples` is the user's number.
    let mut means = vec![Vec::with_capacity(resamples.min(1 << 16)); series];
    if n == 0 {
        return means;
    }
    let mut rng = SeededRng::new(seed);
    let mut sums = vec![0.0; series];
    let mut counts = vec![0u32; n];
    for _ in 0..resamples {
        counts.fill(0);
        for _ in 0..n {
            counts[rng.below(n as u64) as usize] += 1;
        }
        sums.fill(0.0);
        for (row, &count) in rows.chunks_exact(series).zip(&counts) {
            if count == 0 {
                continue;
            }
            let weight = f64::from(count);
            for (acc, v) in sums.iter_mut().zip(row) {
                *acc += weight * v;
            }
        }
        for (m, s) in means.iter_mut().zip(&sums) {
            m.push(s / n as f64);
        }
    }
    means
}
