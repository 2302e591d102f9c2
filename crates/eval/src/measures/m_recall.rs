//! recall: recall at cutoffs (trec_eval m_recall.c).
use super::{rel_counts_at, Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "recall",
    formula: "R@k = |relevant in top k| / R",
    source: "trec_eval 10.0, m_recall.c",
    explanation: "Fraction of all relevant documents found in the top k.",
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
    for (i, rel) in rel_counts_at(t, p.cutoffs()).into_iter().enumerate() {
        out[i] = rel as f64 / t.num_rel as f64;
    }
}
