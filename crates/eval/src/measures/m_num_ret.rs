//! num_ret: number of documents retrieved (trec_eval m_num_ret.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "num_ret",
    formula: "|ranking| after -M truncation; summary = sum over topics",
    source: "trec_eval 10.0, m_num_ret.c",
    explanation: "Documents retrieved for the topic (summed over topics in the summary).",
    params: ParamKind::None,
    summary: Summary::Sum,
    per_query: true,
    integer: true,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    out[0] = t.num_ret as f64;
}
