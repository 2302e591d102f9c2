//! CDFs used by the tests, from `statrs` (checked against scipy in tests/stats_*.rs: the
//! regularised incomplete beta behind Student's t agrees with scipy to far better than 1e-6).

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

/// Standard normal CDF Φ(z).
pub fn normal_cdf(z: f64) -> f64 {
    Normal::standard().cdf(z)
}

/// Standard normal survival function 1 − Φ(z), computed without cancellation.
pub fn normal_sf(z: f64) -> f64 {
    Normal::standard().sf(z)
}

/// Standard normal quantile Φ⁻¹(p).
pub fn normal_quantile(p: f64) -> f64 {
    Normal::standard().inverse_cdf(p)
}

/// Student's t CDF with `df` degrees of freedom (NaN for df ≤ 0).
pub fn t_cdf(t: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| d.cdf(t))
}

/// Student's t survival function (NaN for df ≤ 0).
pub fn t_sf(t: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| d.sf(t))
}

/// Student's t quantile (NaN for df ≤ 0).
pub fn t_quantile(p: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df).map_or(f64::NAN, |d| d.inverse_cdf(p))
}
