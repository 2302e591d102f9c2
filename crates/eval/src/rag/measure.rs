//! UDCG as a registered [`Measure`](crate::Measure): the variant a measure name carries, its
//! registry entry, and the per-topic kernel [`crate::evaluate`] calls with the run's ranking.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};

use super::gamma::Gamma;
use super::spec::QueryUdcg;
use super::udcg::{udcg_of_context, Convention, Gain, UdcgParams};
use super::utilities_tsv::PassageInfo;
use crate::measures::{Family, Input, ParamKind, Params, Summary, TopicEval};

/// The parameters of a UDCG measure name (`UDCG(gamma=0,gain=binary,compat=udcg-ref)@5`),
/// hashable so that it can live inside [`crate::measures::MeasureKind`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct UdcgVariant {
    pub gamma: Gamma,
    pub gain: Gain,
    pub convention: Convention,
}

impl Default for UdcgVariant {
    fn default() -> Self {
        UdcgVariant {
            gamma: Gamma::PAPER,
            gain: Gain::Utility,
            convention: Convention::Paper,
        }
    }
}

impl UdcgVariant {
    /// γ when the name does not give one: 1/3 in the paper, 0.333 in the reference code.
    pub fn default_gamma(convention: Convention) -> Gamma {
        match convention {
            Convention::Paper => Gamma::PAPER,
            Convention::Reference => Gamma::REFERENCE,
        }
    }

    pub fn params(&self) -> UdcgParams {
        UdcgParams {
            gamma: self.gamma.value(),
            gain: self.gain,
            convention: self.convention,
        }
    }

    /// Reads `key=value` parameters of a UDCG name; `None` for an unknown key or value.
    /// γ is resolved after all keys are read, since `compat` changes its default.
    pub fn from_pairs<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<UdcgVariant, String> {
        let mut v = UdcgVariant::default();
        let mut gamma = None;
        for (key, value) in pairs {
            match (key, value) {
                ("gamma", g) => gamma = Some(g.parse::<Gamma>().map_err(|e| e.to_string())?),
                ("gain", "utility") => v.gain = Gain::Utility,
                ("gain", "binary") => v.gain = Gain::Binary,
                ("compat", "paper") => v.convention = Convention::Paper,
                ("compat", "udcg-ref") => v.convention = Convention::Reference,
                (k, val) => {
                    return Err(format!(
                        "unsupported UDCG parameter {k}={val} (gamma=G, gain=utility|binary, \
                         compat=paper|udcg-ref)"
                    ))
                }
            }
        }
        v.gamma = gamma.unwrap_or(UdcgVariant::default_gamma(v.convention));
        Ok(v)
    }

    /// The parameters a name must spell out: the ones that differ from the defaults.
    pub fn name_params(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.gamma != UdcgVariant::default_gamma(self.convention) {
            out.push(format!("gamma={}", self.gamma));
        }
        if self.gain == Gain::Binary {
            out.push("gain=binary".to_string());
        }
        if self.convention == Convention::Reference {
            out.push("compat=udcg-ref".to_string());
        }
        out
    }

    /// UDCG of one ranked list of docnos (rank order, already cut by `-M`) against one topic's
    /// utilities; `k = None` scores the whole list. A docno without a utility contributes 0
    /// (paper) or is skipped but counted in the denominator (reference code), and is counted in
    /// [`QueryUdcg::unjudged`] either way. Same arithmetic as [`super::UdcgSpec::score_ranking`].
    pub fn score_docnos<'a>(
        &self,
        k: Option<usize>,
        ranked_docnos: impl IntoIterator<Item = &'a [u8]>,
        judgments: Option<&IndexMap<String, PassageInfo>>,
        scratch: &mut Vec<Option<super::Judgment>>,
    ) -> QueryUdcg {
        scratch.clear();
        let mut unjudged = 0;
        for docno in ranked_docnos.into_iter().take(k.unwrap_or(usize::MAX)) {
            let j = std::str::from_utf8(docno)
                .ok()
                .and_then(|d| judgments?.get(d))
                .map(|info| info.judgment);
            unjudged += usize::from(j.is_none());
            scratch.push(j);
        }
        let cut = k.unwrap_or(scratch.len());
        QueryUdcg {
            value: udcg_of_context(scratch, Some(cut), &self.params()),
            unjudged,
        }
    }
}

/// UDCG's registry entry. trec_eval never selects it (it is not in [`crate::measures::registry`],
/// which is trec_eval's table); [`crate::evaluate_with`] computes it from the ranking's docnos
/// and [`crate::EvalOptions::utilities`], so `compute` is never called on it.
pub static UDCG_FAMILY: Family = Family {
    name: "UDCG",
    formula: "UDCG@k = σ( (1/k)·Σ_{i≤k, u_i>0} u_i + (γ/k)·Σ_{i≤k, u_i<0} u_i ), \
              u(q,p) = R(q,p)·(1 − p_LLM(NO-RESPONSE | q,p)), R = +1 relevant, −1 otherwise, \
              σ(x) = 1/(1+e^(−x)), γ = 1/3",
    source: "Trappolini et al., \"Redefining Retrieval Evaluation in the Era of LLMs\" \
             (arXiv 2510.21440), Eq. 4; compat=udcg-ref follows GiovanniTRA/UDCG \
             compute_udcg_score (γ = 0.333, divides by the passages listed)",
    explanation: "How much the top-k passages help an LLM answer: useful passages (relevant and \
                  making the reader answer) raise the score, distracting ones (irrelevant but \
                  making it answer) lower it by γ; no position discount, since the LLM reads the \
                  whole context. 0.5 is neutral. Needs a utilities file (relevance + \
                  p(NO-RESPONSE) per passage).",
    params: ParamKind::None,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    // No trec_eval judgment format fits; this entry is never handed to trec_eval.
    input: Input::Qrels,
    prefs_kernel: None,
    compute: never_from_relevance_levels,
};

fn never_from_relevance_levels(_: &TopicEval, _: &Params, out: &mut [f64]) {
    out.fill(f64::NAN);
}

static REGISTRY: [&Family; 3] = [
    &UDCG_FAMILY,
    &super::erag::ERAG_P_FAMILY,
    &super::erag::ERAG_SUCCESS_FAMILY,
];

/// The RAG measure families [`crate::Measure`] names can select, beside trec_eval's
/// [`crate::measures::registry`].
pub fn registry() -> &'static [&'static Family] {
    &REGISTRY
}
