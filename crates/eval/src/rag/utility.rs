//! Passage utility from the paper's annotation schema (§4).

/// What is known about one passage for one question and one reader LLM.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Judgment {
    /// Human or LLM-judge relevance label (the passage contains the answer).
    pub relevant: bool,
    /// p_LLM(NO-RESPONSE | q, p): probability that the reader abstains given only this passage.
    pub p_no_response: f64,
}

impl Judgment {
    /// Utility u(q,p) = R(q,p) · (1 − p_LLM(NO-RESPONSE | q,p)), R = +1 if relevant else −1
    /// (Trappolini et al. 2025, §4). Positive for useful passages, negative for distracting ones.
    pub fn utility(&self) -> f64 {
        utility(self.relevant, self.p_no_response)
    }

    /// The binary ablation of the paper (Table 3 "binary"): utility ±1, ignoring the LLM signal.
    pub fn binary_utility(&self) -> f64 {
        if self.relevant {
            1.0
        } else {
            -1.0
        }
    }
}

/// u = R · (1 − p), R = +1 relevant, −1 otherwise (paper §4).
pub fn utility(relevant: bool, p_no_response: f64) -> f64 {
    let magnitude = 1.0 - p_no_response;
    if relevant {
        magnitude
    } else {
        -magnitude
    }
}

/// A probability must be a finite number in [0, 1]; anything else would silently bend the
/// metric, so every parser rejects it with this message.
pub fn check_probability(p: f64) -> Result<f64, String> {
    if p.is_finite() && (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!(
            "probability must be a finite number in [0, 1], got {p}"
        ))
    }
}
