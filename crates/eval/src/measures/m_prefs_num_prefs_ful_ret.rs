//! prefs_num_prefs_ful_ret: a preference measure (trec_eval m_prefs_num_prefs_ful_ret.c, `-R prefs` or `-R qrels_prefs`).
use super::{Family, Input, ParamKind, Params, PrefCounts, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "prefs_num_prefs_ful_ret",
    formula: "Σ_jg fulfilled among retrieved pairs; summary = sum",
    source: "trec_eval 10.0, m_prefs_num_prefs_ful_ret.c; Carterette et al., 'Here or There: Preference Judgments' (ECIR 2008)",
    explanation: "Number of preferences fulfilled with both documents retrieved (summed over topics).",
    params: ParamKind::None,
    summary: Summary::Sum,
    per_query: true,
    integer: true,
    input: Input::Prefs,
    prefs_kernel: Some(value),
    compute,
};

fn compute(_: &TopicEval, _: &Params, _: &mut [f64]) {}

fn value(p: &PrefCounts) -> f64 {
    p.jgs.iter().map(|j| j.fulfilled_ret).sum::<u64>() as f64
}
