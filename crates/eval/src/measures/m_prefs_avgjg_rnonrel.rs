//! prefs_avgjg_Rnonrel: a preference measure (trec_eval m_prefs_avgjg_Rnonrel.c, `-R prefs` or `-R qrels_prefs`).
use super::prefs::r_nonrel;
use super::{Family, Input, ParamKind, Params, PrefCounts, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "prefs_avgjg_Rnonrel",
    formula: "prefs_avgjg with each group's non-relevant documents set to R (added or truncated)",
    source: "trec_eval 10.0, m_prefs_avgjg_Rnonrel.c; Carterette et al., 'Here or There: Preference Judgments' (ECIR 2008)",
    explanation: "prefs_avgjg with as many non-relevant documents as relevant ones per group, akin to bpref.",
    params: ParamKind::None,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Prefs,
    prefs_kernel: Some(value),
    compute,
};

fn compute(_: &TopicEval, _: &Params, _: &mut [f64]) {}

fn value(p: &PrefCounts) -> f64 {
    r_nonrel(p, false)
}
