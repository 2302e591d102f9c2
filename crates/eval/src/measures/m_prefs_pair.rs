//! prefs_pair: a preference measure (trec_eval m_prefs_pair.c, `-R prefs` or `-R qrels_prefs`).
use super::prefs::{pair_average, PairScope};
use super::{Family, Input, ParamKind, Params, PrefCounts, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "prefs_pair",
    formula: "mean over judged doc pairs of (prefs for the ranked order) / (prefs for either order)",
    source: "trec_eval 10.0, m_prefs_pair.c; Carterette et al., 'Here or There: Preference Judgments' (ECIR 2008)",
    explanation: "Per document pair, the share of judges agreeing with the ranking, averaged over pairs.",
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
    pair_average(p, PairScope::All)
}
