//! runid: the run tag of the results file (trec_eval m_runid.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "runid",
    formula: "tag field of the last result line",
    source: "trec_eval 10.0, m_runid.c",
    explanation: "The run's name, taken from the 6th column of the results file.",
    params: ParamKind::None,
    summary: Summary::RunId,
    per_query: false,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(_: &TopicEval, _: &Params, _: &mut [f64]) {}
