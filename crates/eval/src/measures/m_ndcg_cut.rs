//! ndcg_cut: nDCG at cutoffs with the raw relevance as gain (trec_eval m_ndcg_cut.c).
use super::topic::discount;
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "ndcg_cut",
    formula: "nDCG@k = Σ_{i≤k} rel_i / log2(i + 1) ÷ the same sum over the ideal top k (linear gain, -l ignored)",
    source: "trec_eval 10.0, m_ndcg_cut.c; Järvelin & Kekäläinen, ACM TOIS 20(4) (2002)",
    explanation: "nDCG of the top k, normalised by the best possible top k; the usual nDCG@10.",
    params: ParamKind::Cutoffs(&[5, 10, 15, 20, 30, 100, 200, 500, 1000]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let cutoffs = p.cutoffs();
    let mut sum = 0.0;
    let mut i = 0usize;
    for (j, &k) in cutoffs.iter().enumerate() {
        let k = k.max(0) as usize;
        while i < k && i < t.rels.len() {
            let gain = t.rels[i];
            if gain > 0 {
                sum += gain as f64 / discount(i);
            }
            i += 1;
        }
        out[j] = sum;
    }
    let mut idcg = 0.0;
    let mut ideal = ideal_linear_gains(t);
    let mut i = 0usize;
    for (j, &k) in cutoffs.iter().enumerate() {
        let k = k.max(0) as usize;
        while i < k {
            match ideal.next() {
                Some(g) => idcg += g / discount(i),
                None => break,
            }
            i += 1;
        }
        if idcg > 0.0 {
            out[j] /= idcg;
        }
    }
}

/// Positive relevance levels of the judged documents in decreasing order, each repeated
/// by its count: the ideal ranking's gains.
pub(crate) fn ideal_linear_gains<'a>(t: &'a TopicEval) -> impl Iterator<Item = f64> + 'a {
    t.levels
        .iter()
        .rev()
        .filter(|(l, _)| *l > 0)
        .flat_map(|&(l, c)| std::iter::repeat_n(l as f64, c as usize))
}
