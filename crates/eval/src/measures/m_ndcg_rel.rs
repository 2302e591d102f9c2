//! ndcg_rel: nDCG averaged over the relevant documents (trec_eval m_ndcg_rel.c).
use super::topic::{discount, Gains};
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "ndcg_rel",
    formula: "(1/R_g) · Σ_{d with gain > 0} nDCG at d's rank (unretrieved: nDCG at the end)",
    source: "trec_eval 10.0, m_ndcg_rel.c (experimental)",
    explanation: "Experimental: nDCG sampled at each relevant document instead of at one cutoff.",
    params: ParamKind::Pairs,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let gains = Gains::new(t, p.pairs());
    let mut ideal = gains.ideal();
    let (mut dcg, mut idcg, mut sum) = (0.0, 0.0, 0.0);
    let (mut num_rel, mut num_rel_ret) = (0u64, 0u64);
    let n = t.rels.len();
    let mut i = 0;
    while i < n && ideal.gain > 0.0 {
        let g = gains.gain(t.rels[i]);
        if g != 0.0 {
            dcg += g / discount(i);
        }
        let ig = ideal.advance();
        if ig > 0.0 {
            num_rel += 1;
            idcg += ig / discount(i);
        }
        if g > 0.0 {
            sum += dcg / idcg;
            num_rel_ret += 1;
        }
        i += 1;
    }
    while i < n {
        let g = gains.gain(t.rels[i]);
        if g != 0.0 {
            dcg += g / discount(i);
        }
        if g > 0.0 {
            sum += dcg / idcg;
            num_rel_ret += 1;
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        let ig = ideal.advance();
        if ig > 0.0 {
            num_rel += 1;
            idcg += ig / discount(i);
        }
        i += 1;
    }
    sum += (num_rel as f64 - num_rel_ret as f64) * dcg / idcg;
    if sum > 0.0 {
        out[0] = sum / num_rel as f64;
    }
}
