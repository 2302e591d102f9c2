//! set_recall: a set (unranked) measure (trec_eval m_set_recall.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "set_recall",
    formula: "R_set = relret / R",
    source: "trec_eval 10.0, m_set_recall.c",
    explanation: "Recall of the whole retrieved set.",
    params: ParamKind::None,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    if t.num_rel > 0 {
        out[0] = t.num_rel_ret as f64 / t.num_rel as f64;
    }
}
