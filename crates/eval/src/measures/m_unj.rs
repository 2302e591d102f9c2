//! unj: fraction of unjudged documents at cutoffs (trec_eval m_unjudged.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "unj",
    formula: "unj@k = |unjudged in top k| / k",
    source: "trec_eval 10.0, m_unjudged.c (Ian Soboroff, 2023)",
    explanation: "Fraction of the top k without a judgment: a red flag for poorly covered runs.",
    params: ParamKind::Cutoffs(&[5, 10, 20]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let mut unj = 0u64;
    let mut i = 0usize;
    for (j, &k) in p.cutoffs().iter().enumerate() {
        let k = k.max(0) as usize;
        while i < k && i < t.rels.len() {
            if t.rels[i] < 0 && t.rels[i] >= super::topic::POOLED_UNJUDGED {
                unj += 1;
            }
            i += 1;
        }
        out[j] = unj as f64 / k as f64;
    }
}
