//! num_nonrel_judged_ret: judged non-relevant documents retrieved
//! (trec_eval m_num_nonrel_judged_ret.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "num_nonrel_judged_ret",
    formula: "ret − not pooled − pooled unjudged − relret; summary = sum",
    source: "trec_eval 10.0, m_num_nonrel_judged_ret.c",
    explanation: "Retrieved documents judged non-relevant (summed over topics in the summary).",
    params: ParamKind::None,
    summary: Summary::Sum,
    per_query: true,
    integer: true,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    out[0] = t.num_ret as f64
        - t.num_nonpool as f64
        - t.num_unjudged_in_pool as f64
        - t.num_rel_ret as f64;
}
