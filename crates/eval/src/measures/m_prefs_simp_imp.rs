//! prefs_simp_imp: a preference measure (trec_eval m_prefs_simp_imp.c, `-R prefs` or `-R qrels_prefs`).
use super::prefs::ratio;
use super::{Family, Input, ParamKind, Params, PrefCounts, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "prefs_simp_imp",
    formula: "Σ fulfilled / Σ possible, implied prefs included, pairs with neither retrieved ignored",
    source: "trec_eval 10.0, m_prefs_simp_imp.c; Carterette et al., 'Here or There: Preference Judgments' (ECIR 2008)",
    explanation: "Fraction of preferences fulfilled where at least one document was retrieved.",
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
    ratio(p.jgs.iter().map(|j| {
        (
            j.fulfilled_ret + j.fulfilled_imp,
            j.possible_ret + j.possible_imp,
        )
    }))
}
