//! Prediction-powered estimates: a mean over many units scored by an LLM judge, corrected with
//! human labels on a random sample of them, with a confidence interval that stays valid however
//! good or bad the judge is.
//!
//! - [`mean`]: the classical, PPI (λ = 1) and PPI++ (tuned λ) mean estimators and their normal
//!   intervals, exactly as ppi-python 0.2.3 computes them (optional inverse-inclusion weights).
//! - [`planner`]: how many more human labels bring the PPI++ interval to a chosen width.
//! - [`units`]: the units of `ragscope calibrate`: (topic, document) items of a run's top k, or
//!   topics whose top k is fully labelled.
//! - [`agreement_ci`]: percentile-bootstrap intervals for judge–human agreement (κ, weighted
//!   κ, Krippendorff's α, per-class precision and recall) and for Kendall τ between run
//!   rankings.
//!
//! Sources: Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, "Prediction-powered inference",
//! Science 382:669–674 (2023); Angelopoulos, Duchi, Zrnic, "PPI++: Efficient Prediction-Powered
//! Inference", arXiv:2311.01453 (2023); Saad-Falcon et al., "ARES", NAACL 2024. Checked against
//! ppi-python 0.2.3 (tests/oracle/calibration/generate.py). The intervals assume the labelled
//! units are a uniform random sample of the units (or a stratified one, given its weights);
//! see docs/calibration.md.

pub mod agreement_ci;
pub mod mean;
pub mod planner;
pub mod units;

pub use mean::{classical, ppi, ppi_lambda, Estimate, Sample};

/// Why an estimate cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CalibrationError {
    #[error("{what}: {got} values where {expected} were expected")]
    LengthMismatch {
        what: &'static str,
        got: usize,
        expected: usize,
    },
    #[error("need at least {needed} {what}, got {got}")]
    TooFew {
        what: &'static str,
        needed: usize,
        got: usize,
    },
    #[error("{what} {index} is not a finite number")]
    NonFinite { what: &'static str, index: usize },
    #[error("weight {index} is {value}: weights must be positive and finite")]
    BadWeight { index: usize, value: f64 },
    #[error("alpha {0} is outside (0, 1)")]
    BadAlpha(f64),
}
