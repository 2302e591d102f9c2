//! Summaries of a measure's distribution over queries, for box and violin plots.

/// Tukey's box plot: quartiles by linear interpolation between order statistics (numpy's
/// default `percentile` method, type 7 of Hyndman & Fan 1996), whiskers at the most extreme
/// values within 1.5 IQR of the box, and the values beyond them as outliers.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxStats {
    pub n: usize,
    pub min: f64,
    pub q1: f64,
    pub median: f64,
    pub q3: f64,
    pub max: f64,
    pub mean: f64,
    pub whisker_low: f64,
    pub whisker_high: f64,
    pub outliers: Vec<f64>,
}

impl BoxStats {
    /// `None` when no value is finite.
    pub fn of(values: &[f64]) -> Option<BoxStats> {
        let mut v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return None;
        }
        v.sort_by(f64::total_cmp);
        let q = |p: f64| quantile_sorted(&v, p);
        let (q1, q3) = (q(0.25), q(0.75));
        let iqr = q3 - q1;
        let (lo_fence, hi_fence) = (q1 - 1.5 * iqr, q3 + 1.5 * iqr);
        let inside = v
            .iter()
            .copied()
            .filter(|x| *x >= lo_fence && *x <= hi_fence);
        let whisker_low = inside.clone().fold(f64::INFINITY, f64::min);
        let whisker_high = inside.fold(f64::NEG_INFINITY, f64::max);
        Some(BoxStats {
            n: v.len(),
            min: v[0],
            q1,
            median: q(0.5),
            q3,
            max: v[v.len() - 1],
            mean: v.iter().sum::<f64>() / v.len() as f64,
            whisker_low,
            whisker_high,
            outliers: v
                .iter()
                .copied()
                .filter(|x| *x < lo_fence || *x > hi_fence)
                .collect(),
        })
    }
}

/// Type-7 quantile of sorted values.
fn quantile_sorted(v: &[f64], p: f64) -> f64 {
    let h = (v.len() - 1) as f64 * p;
    let (lo, hi) = (h.floor() as usize, h.ceil() as usize);
    v[lo] + (h - lo as f64) * (v[hi] - v[lo])
}

/// Gaussian kernel density at each of `at`, bandwidth by Silverman's rule of thumb
/// (0.9 · min(σ, IQR/1.34) · n^(−1/5)); a constant sample gets a narrow fixed bandwidth.
pub fn density(values: &[f64], at: &[f64]) -> Vec<f64> {
    let v: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    if v.is_empty() {
        return vec![0.0; at.len()];
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let sd = if v.len() > 1 {
        (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)).sqrt()
    } else {
        0.0
    };
    let iqr = BoxStats::of(&v).map_or(0.0, |b| b.q3 - b.q1);
    let spread = if iqr > 0.0 { sd.min(iqr / 1.34) } else { sd };
    let h = if spread > 0.0 {
        0.9 * spread * n.powf(-0.2)
    } else {
        0.01
    };
    let norm = 1.0 / (n * h * (2.0 * std::f64::consts::PI).sqrt());
    at.iter()
        .map(|x| {
            norm * v
                .iter()
                .map(|xi| (-0.5 * ((x - xi) / h).powi(2)).exp())
                .sum::<f64>()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Expected values: numpy.percentile(x, [25, 50, 75]) (linear method) for
    // x = [0.1, 0.9, 0.2, 0.4, 0.3, 2.5]: 0.2250, 0.35, 0.7750.
    #[test]
    fn quartiles_match_numpy_linear() {
        let b = BoxStats::of(&[0.1, 0.9, 0.2, 0.4, 0.3, 2.5, f64::NAN]).unwrap();
        assert_eq!(b.n, 6);
        assert!((b.q1 - 0.225).abs() < 1e-12);
        assert!((b.median - 0.35).abs() < 1e-12);
        assert!((b.q3 - 0.775).abs() < 1e-12);
        // IQR 0.55 → upper fence 1.6: 2.5 is an outlier, the whisker stops at 0.9.
        assert_eq!(b.outliers, vec![2.5]);
        assert_eq!(b.whisker_high, 0.9);
        assert_eq!(b.whisker_low, 0.1);
        assert!(BoxStats::of(&[f64::NAN]).is_none());
    }

    // scipy.stats.gaussian_kde uses Scott's factor, so compare with a hand-checkable case
    // instead: one point, density at the point is 1/(h·√(2π)) with h = 0.01.
    #[test]
    fn density_integrates_to_one_and_peaks_at_the_data() {
        let d = density(&[0.5], &[0.5]);
        assert!((d[0] - 1.0 / (0.01 * (2.0 * std::f64::consts::PI).sqrt())).abs() < 1e-9);
        let xs: Vec<f64> = (0..2001).map(|i| -1.0 + i as f64 * 0.0015).collect();
        let sample = [0.1, 0.2, 0.25, 0.5, 0.55, 0.9];
        let ys = density(&sample, &xs);
        let area: f64 = ys.iter().sum::<f64>() * 0.0015;
        assert!((area - 1.0).abs() < 1e-3, "{area}");
    }
}
