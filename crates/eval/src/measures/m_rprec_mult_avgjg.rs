//! Rprec_mult_avgjg: a measure averaged over judgment groups (trec_eval m_Rprec_mult_avgjg.c, `-R qrels_jg`).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "Rprec_mult_avgjg",
    formula: "mean over groups g of P@⌊m·R_g + 0.9⌋",
    source: "trec_eval 10.0, m_Rprec_mult_avgjg.c",
    explanation: "Precision at multiples of R averaged over judgment groups (assessors).",
    params: ParamKind::Fractions(&[0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::JudgmentGroups,
    prefs_kernel: None,
    compute,
};

/// One judgment group's value; the driver sums over groups and divides by their number.
fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    (super::m_rprec_mult::FAMILY.compute)(t, p, out)
}
