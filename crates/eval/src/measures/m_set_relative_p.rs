//! set_relative_P: a set (unranked) measure (trec_eval m_set_relative_P.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "set_relative_P",
    formula: "relret / min(ret, R)",
    source: "trec_eval 10.0, m_set_relative_P.c",
    explanation: "Set precision relative to the best possible for a set of this size.",
    params: ParamKind::None,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    if t.num_ret > 0 && t.num_rel > 0 {
        out[0] = t.num_rel_ret as f64 / t.num_ret.min(t.num_rel) as f64;
    }
}
