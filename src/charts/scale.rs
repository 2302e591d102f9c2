//! Linear scales and "nice" tick values (1, 2, 5 × 10ⁿ steps, after Heckbert, "Nice numbers
//! for graph labels", Graphics Gems, 1990).

/// Maps a data interval onto a pixel interval (either may be reversed, e.g. an SVG y axis).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinearScale {
    pub domain: (f64, f64),
    pub range: (f64, f64),
}

impl LinearScale {
    pub fn new(domain: (f64, f64), range: (f64, f64)) -> Self {
        Self { domain, range }
    }

    /// A domain that covers `values` and starts and ends on nice ticks (`[0, 1]` when empty).
    pub fn nice_domain(values: impl IntoIterator<Item = f64>, ticks: usize) -> (f64, f64) {
        let (lo, hi) = values
            .into_iter()
            .filter(|v| v.is_finite())
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
                (lo.min(v), hi.max(v))
            });
        if !lo.is_finite() {
            return (0.0, 1.0);
        }
        let t = nice_ticks(lo, hi, ticks);
        match (t.first(), t.last()) {
            (Some(a), Some(b)) => (a.min(lo), b.max(hi)),
            _ => (lo, hi),
        }
    }

    pub fn map(&self, v: f64) -> f64 {
        let (d0, d1) = self.domain;
        let (r0, r1) = self.range;
        if d1 == d0 {
            return (r0 + r1) / 2.0;
        }
        r0 + (v - d0) / (d1 - d0) * (r1 - r0)
    }
}

/// About `count` evenly spaced round values covering `[lo, hi]` (outermost ticks at or beyond
/// the ends). A degenerate interval is widened around its value.
pub fn nice_ticks(lo: f64, hi: f64, count: usize) -> Vec<f64> {
    if !lo.is_finite() || !hi.is_finite() || count == 0 {
        return Vec::new();
    }
    let (lo, hi) = if lo > hi { (hi, lo) } else { (lo, hi) };
    let (lo, hi) = if hi - lo < 1e-12 {
        let pad = if lo == 0.0 { 1.0 } else { lo.abs() * 0.1 };
        (lo - pad, hi + pad)
    } else {
        (lo, hi)
    };
    let step = nice_number((hi - lo) / count.max(1) as f64, true);
    let start = (lo / step).floor() * step;
    let end = (hi / step).ceil() * step;
    let n = ((end - start) / step).round() as usize;
    (0..=n)
        .map(|i| {
            let v = start + i as f64 * step;
            // Snap to the step's precision so 0.30000000000000004 prints as 0.3.
            let digits = (-step.log10().floor()).max(0.0) as i32;
            let p = 10f64.powi(digits);
            (v * p).round() / p
        })
        .collect()
}

/// The nice number (1, 2, 5 or 10 × 10ⁿ) nearest `x` (`round`) or at least `x`.
fn nice_number(x: f64, round: bool) -> f64 {
    let exp = x.log10().floor();
    let f = x / 10f64.powf(exp);
    let nice = if round {
        match f {
            f if f < 1.5 => 1.0,
            f if f < 3.0 => 2.0,
            f if f < 7.0 => 5.0,
            _ => 10.0,
        }
    } else {
        match f {
            f if f <= 1.0 => 1.0,
            f if f <= 2.0 => 2.0,
            f if f <= 5.0 => 5.0,
            _ => 10.0,
        }
    };
    nice * 10f64.powf(exp)
}

/// A tick label with as many decimals as the tick step needs.
pub fn format_tick(v: f64, ticks: &[f64]) -> String {
    let step = ticks
        .windows(2)
        .map(|w| (w[1] - w[0]).abs())
        .fold(f64::INFINITY, f64::min);
    let decimals = if step.is_finite() && step > 0.0 {
        (-step.log10().floor()).max(0.0) as usize
    } else {
        2
    };
    let s = format!("{v:.decimals$}");
    if s.starts_with('-') && s.trim_start_matches(['-', '0', '.']).is_empty() {
        s[1..].to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round_and_cover_the_data() {
        assert_eq!(nice_ticks(0.0, 1.0, 5), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(
            nice_ticks(0.13, 0.87, 4),
            vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]
        );
        assert_eq!(
            nice_ticks(-0.31, 0.42, 4),
            vec![-0.4, -0.2, 0.0, 0.2, 0.4, 0.6]
        );
        assert_eq!(
            nice_ticks(3.0, 97.0, 5),
            vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]
        );
        // 0.1 + 0.2 style float noise is snapped away.
        assert!(nice_ticks(0.0, 0.7, 7).contains(&0.3));
    }

    #[test]
    fn degenerate_and_invalid_intervals() {
        assert_eq!(
            nice_ticks(0.5, 0.5, 4),
            vec![0.44, 0.46, 0.48, 0.5, 0.52, 0.54, 0.56]
        );
        assert_eq!(nice_ticks(0.0, 0.0, 2), vec![-1.0, 0.0, 1.0]);
        assert!(nice_ticks(f64::NAN, 1.0, 5).is_empty());
        assert_eq!(nice_ticks(1.0, 0.0, 5), nice_ticks(0.0, 1.0, 5));
    }

    #[test]
    fn scales_map_and_reverse() {
        let y = LinearScale::new((0.0, 1.0), (200.0, 0.0));
        assert_eq!(y.map(0.0), 200.0);
        assert_eq!(y.map(0.25), 150.0);
        assert_eq!(y.map(1.0), 0.0);
        let flat = LinearScale::new((2.0, 2.0), (0.0, 10.0));
        assert_eq!(flat.map(2.0), 5.0);
        assert_eq!(
            LinearScale::nice_domain([0.13, f64::NAN, 0.87], 4),
            (0.0, 1.0)
        );
        assert_eq!(LinearScale::nice_domain([], 4), (0.0, 1.0));
    }

    #[test]
    fn labels_use_the_step_precision() {
        let t = nice_ticks(0.0, 1.0, 5);
        assert_eq!(format_tick(0.4, &t), "0.4");
        assert_eq!(format_tick(-0.0, &t), "0.0");
        let t = nice_ticks(0.0, 100.0, 5);
        assert_eq!(format_tick(40.0, &t), "40");
        let t = nice_ticks(0.0, 0.05, 5);
        assert_eq!(format_tick(0.01, &t), "0.01");
    }
}
