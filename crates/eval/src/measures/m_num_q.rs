//! num_q: number of topics averaged over (trec_eval m_num_q.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "num_q",
    formula: "|topics evaluated| (qrels topics with -c, else qrels ∩ run)",
    source: "trec_eval 10.0, m_num_q.c",
    explanation: "How many topics the averages are taken over.",
    params: ParamKind::None,
    summary: Summary::NumQ,
    per_query: false,
    integer: true,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(_: &TopicEval, _: &Params, out: &mut [f64]) {
    out[0] = 1.0;
}
