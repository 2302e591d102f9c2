//! UDCG, the Utility and Distraction-aware Cumulative Gain (Trappolini et al. 2025, Eq. 4), its
//! ablations, and the conventions of the authors' reference code (GiovanniTRA/UDCG).

use super::utility::Judgment;

/// The paper's default weight of distracting passages, γ = 1/3 (§5).
pub const PAPER_GAMMA: f64 = 1.0 / 3.0;

/// The weight the reference pipeline actually runs with (`example_pipeline.sh`:
/// `--irrelevant_weight -0.333`); the stored values in its data only reproduce with it.
pub const REFERENCE_GAMMA: f64 = 0.333;

/// Which utility a passage contributes.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Gain {
    /// u = R·(1 − p(NO-RESPONSE)), the paper's utility.
    #[default]
    Utility,
    /// u = R = ±1: the paper's binary ablation (relevance labels only).
    Binary,
}

/// How the score is normalised and how edge cases behave.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Convention {
    /// Paper Eq. 4: divide by the cutoff k; an empty context scores σ(0) = 0.5; every passage
    /// of the context must be judged (the callers enforce it).
    #[default]
    Paper,
    /// The reference code (`compute_udcg_score`): divide by the number of passages listed,
    /// including passages skipped for a missing probability; an empty list scores 0.0.
    Reference,
}

/// Parameters of one UDCG variant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct UdcgParams {
    /// Weight γ ∈ [0, 1] of distracting passages; γ = 0 is the relevance-only ablation.
    pub gamma: f64,
    pub gain: Gain,
    pub convention: Convention,
}

impl Default for UdcgParams {
    fn default() -> Self {
        Self {
            gamma: PAPER_GAMMA,
            gain: Gain::Utility,
            convention: Convention::Paper,
        }
    }
}

impl UdcgParams {
    /// The reference code's defaults as run by its pipeline (γ = 0.333).
    pub fn reference() -> Self {
        Self {
            gamma: REFERENCE_GAMMA,
            gain: Gain::Utility,
            convention: Convention::Reference,
        }
    }

    /// The signed utility one judged passage contributes under these parameters.
    #[inline]
    pub fn passage_utility(&self, judgment: &Judgment) -> f64 {
        match self.gain {
            Gain::Utility => judgment.utility(),
            Gain::Binary => judgment.binary_utility(),
        }
    }
}

/// Logistic function σ(x) = 1 / (1 + e^(−x)), as in the paper and the reference code.
#[inline]
pub fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// UDCG@k on signed utilities in context order (paper Eq. 4):
/// `UDCG = σ( (1/k) Σ_{u_i>0} u_i + (γ/k) Σ_{u_i<0} u_i )` over the first k passages.
///
/// No position discount: LLMs read the whole context (paper §5). A context shorter than k is
/// padded with utility-0 passages (the denominator stays k, as P@k does in trec_eval); k = 0
/// scores σ(0) = 0.5, the score of a context that neither helps nor distracts.
#[inline]
pub fn udcg_at_k(utilities: &[f64], k: usize, gamma: f64) -> f64 {
    udcg_of_utilities(utilities.iter().copied(), k, gamma)
}

/// [`udcg_at_k`] over any sequence of utilities in context order (no buffer needed).
#[inline]
pub fn udcg_of_utilities(utilities: impl IntoIterator<Item = f64>, k: usize, gamma: f64) -> f64 {
    if k == 0 {
        return sigmoid(0.0);
    }
    let (mut positive, mut negative) = (0.0, 0.0);
    for u in utilities.into_iter().take(k) {
        if u > 0.0 {
            positive += u;
        } else {
            negative += u;
        }
    }
    sigmoid((positive + gamma * negative) / k as f64)
}

/// UDCG as the reference code computes it (`compute_udcg_score`, GiovanniTRA/UDCG):
/// `σ( Σ_i w_i (1 − p_i) / n )`, w = +1 relevant, −γ irrelevant, n = number of passages listed
/// (a `None` passage is skipped in the sum but still counted in n); n = 0 gives 0.0.
/// The sum runs in list order like the Python loop so stored values reproduce to the last bits.
pub fn udcg_reference(passages: &[Option<Judgment>], gamma: f64, gain: Gain) -> f64 {
    if passages.is_empty() {
        return 0.0;
    }
    let mut score = 0.0;
    for judgment in passages.iter().flatten() {
        let magnitude = match gain {
            Gain::Utility => 1.0 - judgment.p_no_response,
            Gain::Binary => 1.0,
        };
        let weight = if judgment.relevant { 1.0 } else { -gamma };
        score += magnitude * weight;
    }
    sigmoid(score / passages.len() as f64)
}

/// UDCG of one context given its judgments in order; `None` marks a passage without a judgment
/// (it contributes utility 0 in the paper convention and is skipped in the reference one).
/// `k = None` means "the whole context".
pub fn udcg_of_context(
    passages: &[Option<Judgment>],
    k: Option<usize>,
    params: &UdcgParams,
) -> f64 {
    let cut = k.unwrap_or(passages.len());
    let window = &passages[..cut.min(passages.len())];
    match params.convention {
        Convention::Reference => udcg_reference(window, params.gamma, params.gain),
        Convention::Paper => udcg_of_utilities(
            window
                .iter()
                .map(|j| j.as_ref().map_or(0.0, |j| params.passage_utility(j))),
            cut,
            params.gamma,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paper_formula_by_hand() {
        // Two passages, one useful (p=0.1), one distracting (p=0.4): (0.9 − 0.6/3)/2 = 0.35.
        let u = [0.9, -0.6];
        let expected = 1.0 / (1.0 + (-0.35f64).exp());
        assert!((udcg_at_k(&u, 2, PAPER_GAMMA) - expected).abs() < 1e-15);
        // Relevance-only ablation ignores the distractor.
        let rel_only = 1.0 / (1.0 + (-0.45f64).exp());
        assert!((udcg_at_k(&u, 2, 0.0) - rel_only).abs() < 1e-15);
        // Cutoff 1 sees only the first passage.
        assert!((udcg_at_k(&u, 1, PAPER_GAMMA) - sigmoid(0.9)).abs() < 1e-15);
    }

    #[test]
    fn empty_context_conventions_differ() {
        assert_eq!(udcg_at_k(&[], 0, PAPER_GAMMA), 0.5);
        assert_eq!(udcg_reference(&[], REFERENCE_GAMMA, Gain::Utility), 0.0);
    }

    #[test]
    fn reference_counts_skipped_passages_in_denominator() {
        let j = Judgment {
            relevant: true,
            p_no_response: 0.0,
        };
        let v = udcg_reference(&[Some(j), None], REFERENCE_GAMMA, Gain::Utility);
        assert!((v - sigmoid(0.5)).abs() < 1e-15);
    }
}
