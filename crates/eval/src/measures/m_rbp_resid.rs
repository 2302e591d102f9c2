//! rbp_resid: the RBP residual from unjudged documents (trec_eval m_rbp_resid.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "rbp_resid",
    formula: "p^n + (1 − p) · Σ_{unjudged d_i} p^(i−1) (0 if every retrieved document is judged)",
    source: "trec_eval 10.0, m_rbp_resid.c; Moffat & Zobel, ACM TOIS 27(1) (2008)",
    explanation: "How much RBP could still rise if every unjudged document (and the unseen tail) were relevant.",
    params: ParamKind::Pairs,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let persist = super::m_rbp::persistence(p);
    let mut unjudged = 0u64;
    let mut sum = 0.0;
    let mut weight = 1.0;
    for &r in t.rels {
        if r < 0 {
            unjudged += 1;
            sum += weight;
        }
        weight *= persist;
    }
    if unjudged > 0 {
        out[0] = weight + (1.0 - persist) * sum;
    }
}
