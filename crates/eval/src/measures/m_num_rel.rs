//! num_rel: number of relevant documents in the qrels (trec_eval m_num_rel.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "num_rel",
    formula: "R = |{d in qrels : rel(d) >= level}|; summary = sum over topics",
    source: "trec_eval 10.0, m_num_rel.c",
    explanation: "Relevant documents judged for the topic (summed over topics in the summary).",
    params: ParamKind::None,
    summary: Summary::Sum,
    per_query: true,
    integer: true,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    out[0] = t.num_rel as f64;
}
