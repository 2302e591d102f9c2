//! success: a relevant document in the top k (trec_eval m_success.c).
use super::{rel_counts_at, Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "success",
    formula: "Success@k = 1 if any of the top k is relevant, else 0",
    source: "trec_eval 10.0, m_success.c (Stephen Tomlinson)",
    explanation: "Whether at least one relevant document appears in the top k.",
    params: ParamKind::Cutoffs(&[1, 5, 10]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    for (i, rel) in rel_counts_at(t, p.cutoffs()).into_iter().enumerate() {
        out[i] = if rel > 0 { 1.0 } else { 0.0 };
    }
}
