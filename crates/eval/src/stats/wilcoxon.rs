//! Wilcoxon signed-rank test with every mode of `scipy.stats.wilcoxon` (scipy 1.17):
//! zero handling `wilcox | pratt | zsplit`, continuity correction, and the methods `exact`
//! (null distribution of R⁺ by recursion), `asymptotic` (normal approximation with tie
//! correction Σ(t³−t)/48) and `auto` (asymptotic above 50 pairs; exact without ties or zeros;
//! with them, the exact sign-flip permutation distribution up to 13 pairs, else asymptotic).

use super::distributions::{normal_cdf, normal_sf};
use super::paired::{Alternative, Tested};
use super::rank::average_ranks;
use super::{differences, StatsError};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ZeroMethod {
    /// Drop zero differences (Wilcoxon's original treatment; scipy's default).
    #[default]
    Wilcox,
    /// Rank zeros with the rest, then drop them (Pratt 1959).
    Pratt,
    /// Rank zeros and split their ranks between R⁺ and R⁻.
    Zsplit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Method {
    #[default]
    Auto,
    Exact,
    Asymptotic,
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct WilcoxonOptions {
    pub zero_method: ZeroMethod,
    /// Continuity correction of the normal approximation (scipy default: false).
    pub correction: bool,
    pub alternative: Alternative,
    pub method: Method,
}

/// Result: scipy's statistic (min(R⁺, R⁻) two-sided, else R⁺), the p-value, the z-score when
/// the normal approximation was used, and the method actually used.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct WilcoxonResult {
    pub statistic: f64,
    pub p_value: f64,
    pub z: Option<f64>,
    pub method_used: Method,
}

struct RankSums {
    r_plus: f64,
    r_minus: f64,
    count: f64,
    se: f64,
    mean: f64,
    has_ties: bool,
}

fn rank_sums(d: &[f64], zero_method: ZeroMethod) -> RankSums {
    let kept: Vec<f64> = match zero_method {
        ZeroMethod::Wilcox => d.iter().copied().filter(|v| *v != 0.0).collect(),
        _ => d.to_vec(),
    };
    let magnitudes: Vec<f64> = kept.iter().map(|v| v.abs()).collect();
    let ranks = average_ranks(&magnitudes);
    let (mut r_plus, mut r_minus, mut r_zero) = (0.0, 0.0, 0.0);
    for (v, r) in kept.iter().zip(&ranks) {
        if *v > 0.0 {
            r_plus += r;
        } else if *v < 0.0 {
            r_minus += r;
        } else {
            r_zero += r;
        }
    }
    if zero_method == ZeroMethod::Zsplit {
        r_plus += r_zero / 2.0;
        r_minus += r_zero / 2.0;
    }
    let count = kept.len() as f64;
    let mut mean = count * (count + 1.0) * 0.25;
    let mut se2 = count * (count + 1.0) * (2.0 * count + 1.0);
    // Tie groups of |d|, in sorted order; the zero group (if any) comes first.
    let mut sorted = magnitudes.clone();
    sorted.sort_by(f64::total_cmp);
    let mut groups = Vec::new();
    let mut start = 0;
    while start < sorted.len() {
        let mut end = start + 1;
        while end < sorted.len() && sorted[end] == sorted[start] {
            end += 1;
        }
        groups.push((sorted[start], (end - start) as f64));
        start = end;
    }
    let has_ties = groups.iter().any(|(_, t)| *t > 1.0);
    if zero_method == ZeroMethod::Pratt {
        let zeros = kept.iter().filter(|v| **v == 0.0).count() as f64;
        mean -= zeros * (zeros + 1.0) * 0.25;
        se2 -= zeros * (zeros + 1.0) * (2.0 * zeros + 1.0);
        // Zeros do not enter the tie correction (Cureton 1967).
        if zeros > 0.0 {
            groups.retain(|(value, _)| *value != 0.0);
        }
    }
    let tie_correction: f64 = groups.iter().map(|(_, t)| t * t * t - t).sum();
    let se = ((se2 - tie_correction / 2.0) / 24.0).sqrt();
    RankSums {
        r_plus,
        r_minus,
        count,
        se,
        mean,
        has_ties,
    }
}

/// Wilcoxon signed-rank test of `a − b` (see the module documentation for the modes).
pub fn wilcoxon(
    a: &[f64],
    b: &[f64],
    options: WilcoxonOptions,
) -> Result<WilcoxonResult, StatsError> {
    let d = differences(a, b)?;
    if d.is_empty() {
        return Err(StatsError::TooFew { needed: 1, got: 0 });
    }
    let zeros = d.iter().filter(|v| **v == 0.0).count();
    let sums = rank_sums(&d, options.zero_method);
    if sums.count == 0.0 || sums.se == 0.0 && options.method != Method::Exact {
        return Err(StatsError::Degenerate("all paired differences are zero"));
    }
    let mut method = options.method;
    let mut permutation = false;
    if method == Method::Auto {
        method = if d.len() > 50 {
            Method::Asymptotic
        } else if !(sums.has_ties || zeros > 0) {
            Method::Exact
        } else if d.len() <= 13 {
            permutation = true;
            Method::Exact
        } else {
            Method::Asymptotic
        };
    }
    let statistic = match options.alternative {
        Alternative::TwoSided => sums.r_plus.min(sums.r_minus),
        _ => sums.r_plus,
    };
    let (p, z) = if method == Method::Asymptotic {
        let mut z = (sums.r_plus - sums.mean) / sums.se;
        if options.correction {
            let sign = match options.alternative {
                Alternative::Greater => 1.0,
                Alternative::Less => -1.0,
                Alternative::TwoSided => z.signum() * f64::from(u8::from(z != 0.0)),
            };
            z -= sign * 0.5 / sums.se;
        }
        let p = match options.alternative {
            Alternative::TwoSided => 2.0 * normal_cdf(z).min(normal_sf(z)),
            Alternative::Greater => normal_sf(z),
            Alternative::Less => normal_cdf(z),
        };
        let reported = match options.alternative {
            Alternative::TwoSided => -z.abs(),
            _ => z,
        };
        (p.min(1.0), Some(reported))
    } else if permutation {
        (sign_flip_p_value(&d, options, sums.r_plus), None)
    } else {
        (
            exact_p_value(sums.count as usize, sums.r_plus, options.alternative),
            None,
        )
    };
    Ok(WilcoxonResult {
        statistic,
        p_value: p,
        z,
        method_used: if permutation { Method::Exact } else { method },
    })
}

/// P(R⁺ = r) for r = 0..=n(n+1)/2 under H0 (each sign equally likely), by the recursion
/// c_k(r) = ½ c_{k−1}(r) + ½ c_{k−1}(r − k).
fn signed_rank_pmf(n: usize) -> Vec<f64> {
    let mut pmf = vec![1.0];
    for k in 1..=n {
        let mut next = vec![0.0; k * (k + 1) / 2 + 1];
        for (r, p) in pmf.iter().enumerate() {
            next[r] += p * 0.5;
            next[r + k] += p * 0.5;
        }
        pmf = next;
    }
    pmf
}

/// Exact p-value; a non-integral R⁺ (ties or zeros forced into `exact`) is rounded
/// conservatively like scipy: up for the CDF, down for the survival function.
fn exact_p_value(n: usize, r_plus: f64, alternative: Alternative) -> f64 {
    let pmf = signed_rank_pmf(n);
    let mean = (n * (n + 1)) as f64 / 4.0;
    let cdf_sum = |k: i64| -> f64 {
        if k < 0 {
            0.0
        } else {
            pmf[..=(k as usize).min(pmf.len() - 1)].iter().sum()
        }
    };
    let sf_sum = |k: i64| -> f64 {
        if k <= 0 {
            1.0
        } else if k as usize >= pmf.len() {
            0.0
        } else {
            pmf[k as usize..].iter().sum()
        }
    };
    // scipy sums whichever tail is shorter to limit rounding.
    let cdf = |k: i64| {
        if (k as f64) <= mean {
            cdf_sum(k)
        } else {
            1.0 - sf_sum(k + 1)
        }
    };
    let sf = |k: i64| {
        if (k as f64) <= mean {
            sf_sum(k)
        } else {
            1.0 - cdf_sum(k - 1)
        }
    };
    let up = r_plus.ceil() as i64;
    let down = r_plus.floor() as i64;
    match alternative {
        Alternative::Less => cdf(up),
        Alternative::Greater => sf(down),
        Alternative::TwoSided => (2.0 * sf(down).min(cdf(up))).clamp(0.0, 1.0),
    }
}

/// scipy's `auto` fallback with ties or zeros and n ≤ 13: the exact permutation distribution of
/// R⁺ over all 2ⁿ sign flips of d (zeros stay zeros), p-values as `permutation_test`.
fn sign_flip_p_value(d: &[f64], options: WilcoxonOptions, observed: f64) -> f64 {
    let n = d.len();
    let gamma = (observed * f64::EPSILON * 100.0).abs();
    let (mut less, mut greater) = (0u64, 0u64);
    let mut flipped = vec![0.0; n];
    for pattern in 0..(1u64 << n) {
        for (i, v) in d.iter().enumerate() {
            flipped[i] = if pattern >> i & 1 == 1 { -v } else { *v };
        }
        let r = rank_sums(&flipped, options.zero_method).r_plus;
        less += u64::from(r <= observed + gamma);
        greater += u64::from(r >= observed - gamma);
    }
    let total = (1u64 << n) as f64;
    let (p_less, p_greater) = (less as f64 / total, greater as f64 / total);
    let p = match options.alternative {
        Alternative::TwoSided => 2.0 * p_less.min(p_greater),
        Alternative::Greater => p_greater,
        Alternative::Less => p_less,
    };
    p.clamp(0.0, 1.0)
}

/// Convenience: scipy's defaults (`wilcox`, no correction, two-sided, auto) as a [`Tested`].
pub fn wilcoxon_default(a: &[f64], b: &[f64]) -> Result<Tested, StatsError> {
    wilcoxon(a, b, WilcoxonOptions::default()).map(|r| Tested {
        statistic: r.statistic,
        p_value: r.p_value,
    })
}
