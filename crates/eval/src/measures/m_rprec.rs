//! Rprec: precision after R documents (trec_eval m_Rprec.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "Rprec",
    formula: "R-prec = |relevant in top R| / R, R = num_rel",
    source: "trec_eval 10.0, m_Rprec.c; Buckley & Voorhees (2005)",
    explanation:
        "Precision at rank R, the number of relevant documents (where precision equals recall).",
    params: ParamKind::None,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    let depth = (t.num_ret.min(t.num_rel)) as usize;
    if depth == 0 {
        return;
    }
    let rel = t.rels[..depth].iter().filter(|&&r| t.is_rel(r)).count();
    out[0] = rel as f64 / t.num_rel as f64;
}
