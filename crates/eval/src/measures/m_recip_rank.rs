//! recip_rank: reciprocal rank of the first relevant document (trec_eval m_recip_rank.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "recip_rank",
    formula: "RR = 1 / rank of the first relevant document (0 if none)",
    source: "trec_eval 10.0, m_recip_rank.c; Voorhees, TREC-8 QA track (1999)",
    explanation: "One over the rank of the first relevant document; mean over topics is MRR.",
    params: ParamKind::None,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    out[0] = reciprocal_rank(t, t.rels.len());
}

pub(crate) fn reciprocal_rank(t: &TopicEval, depth: usize) -> f64 {
    t.rels
        .iter()
        .take(depth)
        .position(|&r| t.is_rel(r))
        .map(|i| 1.0 / (i + 1) as f64)
        .unwrap_or(0.0)
}
