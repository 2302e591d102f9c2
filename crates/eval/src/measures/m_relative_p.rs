//! relative_P: precision relative to the best possible at each cutoff (trec_eval m_rel_P.c).
use super::{rel_counts_at, Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "relative_P",
    formula: "|relevant in top k| / min(k, R)",
    source: "trec_eval 10.0, m_rel_P.c",
    explanation: "Precision at k divided by the best precision possible at k: precision up to R, recall after.",
    params: ParamKind::Cutoffs(&[5, 10, 15, 20, 30, 100, 200, 500, 1000]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    if t.num_rel == 0 {
        return;
    }
    let cutoffs = p.cutoffs();
    for (i, rel) in rel_counts_at(t, cutoffs).into_iter().enumerate() {
        out[i] = rel as f64 / (cutoffs[i] as u64).min(t.num_rel) as f64;
    }
}
