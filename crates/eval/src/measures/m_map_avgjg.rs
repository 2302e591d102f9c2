//! map_avgjg: a measure averaged over judgment groups (trec_eval m_map_avgjg.c, `-R qrels_jg`).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "map_avgjg",
    formula: "mean over groups g of AP_g",
    source: "trec_eval 10.0, m_map_avgjg.c",
    explanation: "Mean average precision over judgment groups: AP per assessor's judgments, averaged over the assessors.",
    params: ParamKind::None,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::JudgmentGroups,
    prefs_kernel: None,
    compute,
};

/// One judgment group's value; the driver sums over groups and divides by their number.
fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    (super::m_map::FAMILY.compute)(t, p, out)
}
