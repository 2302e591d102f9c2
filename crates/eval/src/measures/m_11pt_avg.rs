//! 11pt_avg: interpolated precision averaged over recall levels (trec_eval m_11pt_avg.c).
use super::m_iprec_at_recall::{interpolated_precision, recall_count};
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "11pt_avg",
    formula: "(1/|L|) · Σ_{r ∈ L} iP(r), L = {0.0, 0.1, …, 1.0} by default",
    source: "trec_eval 10.0, m_11pt_avg.c; Salton & McGill (1983)",
    explanation:
        "Average interpolated precision over the 11 standard recall levels (obsolete; use MAP).",
    params: ParamKind::Values(&[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let fractions = p.fractions();
    if fractions.is_empty() {
        return;
    }
    let counts: Vec<i64> = fractions
        .iter()
        .map(|&f| recall_count(f, t.num_rel))
        .collect();
    let mut sum = 0.0;
    interpolated_precision(t, &counts, |_, v| sum += v);
    out[0] = sum / fractions.len() as f64;
}
