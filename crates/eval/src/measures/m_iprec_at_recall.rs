//! iprec_at_recall: interpolated precision at recall levels (trec_eval m_iprec_at_recall.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "iprec_at_recall",
    formula: "iP(r) = max_{k : recall@k >= r} P@k, recall level r → ⌊r·R⌉ relevant documents",
    source: "trec_eval 10.0, m_iprec_at_recall.c; van Rijsbergen, Information Retrieval (1979)",
    explanation: "Interpolated precision at each recall level: the points of the standard recall-precision graph.",
    params: ParamKind::Fractions(&[0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let counts: Vec<i64> = p
        .fractions()
        .iter()
        .map(|&f| recall_count(f, t.num_rel))
        .collect();
    interpolated_precision(t, &counts, |i, v| out[i] = v);
}

/// A recall fraction as a number of relevant documents, rounded half away from zero.
pub(crate) fn recall_count(fraction: f64, num_rel: u64) -> i64 {
    (fraction * num_rel as f64).round() as i64
}

/// Calls `emit(index, iP)` for each cutoff (a number of relevant documents, in the order
/// given), walking the ranking bottom-up so precision can be interpolated as a running max.
pub(crate) fn interpolated_precision(
    t: &TopicEval,
    counts: &[i64],
    mut emit: impl FnMut(usize, f64),
) {
    let num_rel_ret = t.num_rel_ret as i64;
    let mut cut = counts.len() as isize - 1;
    while cut >= 0 && counts[cut as usize] > num_rel_ret {
        cut -= 1;
    }
    let mut int_precis = t.num_rel_ret as f64 / t.num_ret as f64;
    let mut rel_so_far = num_rel_ret;
    let mut i = t.rels.len();
    while i > 0 && rel_so_far > 0 {
        let precis = rel_so_far as f64 / i as f64;
        if int_precis < precis {
            int_precis = precis;
        }
        if t.is_rel(t.rels[i - 1]) {
            while cut >= 0 && rel_so_far == counts[cut as usize] {
                emit(cut as usize, int_precis);
                cut -= 1;
            }
            rel_so_far -= 1;
        }
        i -= 1;
    }
    while cut >= 0 {
        emit(cut as usize, int_precis);
        cut -= 1;
    }
}
