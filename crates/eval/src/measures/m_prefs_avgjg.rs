//! prefs_avgjg: a preference measure (trec_eval m_prefs_avgjg.c, `-R prefs` or `-R qrels_prefs`).
use super::prefs::average_over_groups;
use super::{Family, Input, ParamKind, Params, PrefCounts, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "prefs_avgjg",
    formula: "mean over judgment groups of fulfilled / possible",
    source: "trec_eval 10.0, m_prefs_avgjg.c; Carterette et al., 'Here or There: Preference Judgments' (ECIR 2008)",
    explanation: "prefs_simp computed per judgment group (user), then averaged over groups.",
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
    average_over_groups(p, |j| {
        (
            j.fulfilled_ret + j.fulfilled_imp,
            j.possible_ret + j.possible_imp + j.possible_notoccur,
        )
    })
}
