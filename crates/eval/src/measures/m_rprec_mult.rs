//! Rprec_mult: precision at multiples of R (trec_eval m_Rprec_mult.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "Rprec_mult",
    formula: "P@⌊m·R + 0.9⌋ for each multiple m",
    source: "trec_eval 10.0, m_Rprec_mult.c",
    explanation: "Precision at multiples of R: precision-oriented vs recall-oriented behaviour.",
    params: ParamKind::Fractions(&[0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    // trec_eval keeps its historical +0.9 rounding here (unlike iprec_at_recall)
    let cutoffs: Vec<i64> = p
        .fractions()
        .iter()
        .map(|&m| (m * t.num_rel as f64 + 0.9) as i64)
        .collect();
    let num_ret = t.num_ret as i64;
    let mut cut = cutoffs.len() as isize - 1;
    while cut >= 0 && cutoffs[cut as usize] > num_ret {
        out[cut as usize] = t.num_rel_ret as f64 / cutoffs[cut as usize] as f64;
        cut -= 1;
    }
    let mut rel_so_far = t.num_rel_ret as i64;
    let mut i = t.rels.len();
    while i > 0 && rel_so_far > 0 {
        let precis = rel_so_far as f64 / i as f64;
        while cut >= 0 && i as i64 == cutoffs[cut as usize] {
            out[cut as usize] = precis;
            cut -= 1;
        }
        if t.is_rel(t.rels[i - 1]) {
            rel_so_far -= 1;
        }
        i -= 1;
    }
}
