//! map: (mean) average precision (trec_eval m_map.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "map",
    formula: "AP = (1/R) · Σ_{k : d_k relevant} P@k",
    source: "trec_eval 10.0, m_map.c; Buckley & Voorhees, 'Retrieval System Evaluation' (2005)",
    explanation: "Average of the precision at each relevant document; unretrieved relevant documents count 0.",
    params: ParamKind::None,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    out[0] = average_precision(t, t.rels.len());
}

/// AP over the first `depth` ranks, normalised by all relevant documents.
pub(crate) fn average_precision(t: &TopicEval, depth: usize) -> f64 {
    let mut rel_so_far = 0u64;
    let mut sum = 0.0;
    for (i, &r) in t.rels.iter().take(depth).enumerate() {
        if t.is_rel(r) {
            rel_so_far += 1;
            sum += rel_so_far as f64 / (i + 1) as f64;
        }
    }
    if rel_so_far > 0 {
        sum / t.num_rel as f64
    } else {
        0.0
    }
}
