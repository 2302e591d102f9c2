//! num_rel_ret: number of relevant documents retrieved (trec_eval m_num_rel_ret.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "num_rel_ret",
    formula: "|{retrieved d : rel(d) >= level}|; summary = sum over topics",
    source: "trec_eval 10.0, m_num_rel_ret.c",
    explanation: "Relevant documents retrieved (summed over topics in the summary).",
    params: ParamKind::None,
    summary: Summary::Sum,
    per_query: true,
    integer: true,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    out[0] = t.num_rel_ret as f64;
}
