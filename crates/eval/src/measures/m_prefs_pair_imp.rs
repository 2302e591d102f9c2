//! prefs_pair_imp: a preference measure (trec_eval m_prefs_pair_imp.c, `-R prefs` or `-R qrels_prefs`).
use super::prefs::{pair_average, PairScope};
use super::{Family, Input, ParamKind, Params, PrefCounts, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "prefs_pair_imp",
    formula: "prefs_pair over pairs with at least one document retrieved",
    source: "trec_eval 10.0, m_prefs_pair_imp.c; Carterette et al., 'Here or There: Preference Judgments' (ECIR 2008)",
    explanation: "prefs_pair ignoring pairs where neither document was retrieved.",
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
    pair_average(p, PairScope::Implied)
}
