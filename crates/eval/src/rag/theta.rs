//! UDCGθ (paper Eq. 3): `UDCGθ = σ( Σᵢ αᵢ u⁺ᵢ + Σᵢ βᵢ u⁻ᵢ )` with one weight per position for
//! useful (u⁺ᵢ = max(uᵢ, 0)) and distracting (u⁻ᵢ = min(uᵢ, 0)) passages, learned by a linear
//! pairwise ranking SVM over contexts of the same question ordered correct > abstain > wrong.
//! The reference repository has no UDCGθ code; this follows the paper's description.

use serde::{Deserialize, Serialize};

use super::contexts::ContextSet;
use super::svm_rank::{train_pairwise, PairwiseData, SvmOptions};
use super::udcg::sigmoid;
use super::utility::Judgment;

/// Learned weights, saved and loaded as JSON.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ThetaModel {
    /// Always "udcg-theta": lets a loader reject some other JSON early.
    pub kind: String,
    /// Context size the weights were learned for.
    pub k: usize,
    pub alpha: Vec<f64>,
    pub beta: Vec<f64>,
    /// Training settings and outcome, for provenance.
    pub c: f64,
    pub seed: u64,
    pub pairs: usize,
    pub objective: f64,
    pub converged: bool,
}

impl ThetaModel {
    /// Reads a model and checks its shape (2k finite weights).
    pub fn from_json(text: &str) -> Result<Self, String> {
        let model: ThetaModel = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if model.kind != "udcg-theta" {
            return Err(format!(
                "field `kind`: expected \"udcg-theta\", got {:?}",
                model.kind
            ));
        }
        if model.alpha.len() != model.k || model.beta.len() != model.k {
            return Err(format!(
                "field `alpha`/`beta`: expected {} weights each, got {} and {}",
                model.k,
                model.alpha.len(),
                model.beta.len()
            ));
        }
        if model
            .alpha
            .iter()
            .chain(&model.beta)
            .any(|w| !w.is_finite())
        {
            return Err("field `alpha`/`beta`: weights must be finite".into());
        }
        Ok(model)
    }

    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// UDCGθ of a context (judgments in context order; exactly k of them).
    pub fn score(&self, judgments: &[Judgment]) -> f64 {
        let mut x = 0.0;
        for (i, j) in judgments.iter().enumerate().take(self.k) {
            let u = j.utility();
            x += if u > 0.0 {
                self.alpha[i] * u
            } else {
                self.beta[i] * u
            };
        }
        sigmoid(x)
    }
}

/// The 2k features [u⁺₁…u⁺ₖ, u⁻₁…u⁻ₖ] of a context, written into `out` (length 2k).
pub fn features(judgments: &[Judgment], k: usize, out: &mut [f64]) {
    out.fill(0.0);
    for (i, j) in judgments.iter().enumerate().take(k) {
        let u = j.utility();
        if u > 0.0 {
            out[i] = u;
        } else {
            out[k + i] = u;
        }
    }
}

/// Pairwise training data from context sets: for every question, every pair of its k-passage
/// contexts with different outcomes gives the difference of their features (better − worse).
pub fn pairwise_data(sets: &[ContextSet], k: usize) -> PairwiseData {
    let dim = 2 * k;
    let mut data = PairwiseData::new(dim);
    let mut rows: Vec<(f64, Vec<f64>)> = Vec::new();
    let mut buffer = Vec::new();
    for set in sets {
        rows.clear();
        for context in set.contexts.iter().filter(|c| c.passages.len() == k) {
            buffer.clear();
            buffer.extend(
                context
                    .passages
                    .iter()
                    .map(|&i| set.pool[i as usize].info.judgment),
            );
            let mut f = vec![0.0; dim];
            features(&buffer, k, &mut f);
            rows.push((context.outcome.level(), f));
        }
        for (i, (yi, fi)) in rows.iter().enumerate() {
            for (yj, fj) in rows.iter().skip(i + 1) {
                if yi == yj {
                    continue;
                }
                let (better, worse) = if yi > yj { (fi, fj) } else { (fj, fi) };
                data.push(better.iter().zip(worse).map(|(a, b)| a - b));
            }
        }
    }
    data
}

/// Trains UDCGθ for contexts of size k. Deterministic for a given seed.
pub fn train(sets: &[ContextSet], k: usize, options: &SvmOptions) -> Result<ThetaModel, String> {
    let data = pairwise_data(sets, k);
    if data.is_empty() {
        return Err(format!(
            "no training pairs: no question has two {k}-passage contexts with different outcomes"
        ));
    }
    let solution = train_pairwise(&data, options);
    Ok(ThetaModel {
        kind: "udcg-theta".into(),
        k,
        alpha: solution.weights[..k].to_vec(),
        beta: solution.weights[k..].to_vec(),
        c: options.c,
        seed: options.seed,
        pairs: data.len(),
        objective: solution.objective,
        converged: solution.converged,
    })
}
