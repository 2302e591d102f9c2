//! map_cut: average precision over the top k (trec_eval m_map_cut.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "map_cut",
    formula: "AP@k = (1/R) · Σ_{i ≤ k : d_i relevant} P@i",
    source: "trec_eval 10.0, m_map_cut.c",
    explanation:
        "Average precision counting only relevant documents in the top k (still divided by R).",
    params: ParamKind::Cutoffs(&[5, 10, 15, 20, 30, 100, 200, 500, 1000]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    if t.num_rel == 0 {
        return;
    }
    let mut rel_so_far = 0u64;
    let mut sum = 0.0;
    let mut i = 0usize;
    for (j, &k) in p.cutoffs().iter().enumerate() {
        let k = k.max(0) as usize;
        while i < k && i < t.rels.len() {
            if t.is_rel(t.rels[i]) {
                rel_so_far += 1;
                sum += rel_so_far as f64 / (i + 1) as f64;
            }
            i += 1;
        }
        out[j] = sum / t.num_rel as f64;
    }
}
