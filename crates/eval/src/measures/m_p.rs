//! P: precision at cutoffs (trec_eval m_P.c).
use super::{rel_counts_at, Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "P",
    formula: "P@k = |relevant in top k| / k (k stays the denominator when fewer are retrieved)",
    source: "trec_eval 10.0, m_P.c",
    explanation: "Fraction of the top k documents that are relevant.",
    params: ParamKind::Cutoffs(&[5, 10, 15, 20, 30, 100, 200, 500, 1000]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let cutoffs = p.cutoffs();
    for (i, rel) in rel_counts_at(t, cutoffs).into_iter().enumerate() {
        out[i] = rel as f64 / cutoffs[i] as f64;
    }
}
