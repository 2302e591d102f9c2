//! P_avgjg: a measure averaged over judgment groups (trec_eval m_P_avgjg.c, `-R qrels_jg`).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "P_avgjg",
    formula: "mean over groups g of P@k_g",
    source: "trec_eval 10.0, m_P_avgjg.c",
    explanation: "Precision at k averaged over judgment groups (assessors).",
    params: ParamKind::Cutoffs(&[5, 10, 15, 20, 30, 100, 200, 500, 1000]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::JudgmentGroups,
    prefs_kernel: None,
    compute,
};

/// One judgment group's value; the driver sums over groups and divides by their number.
fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    (super::m_p::FAMILY.compute)(t, p, out)
}
