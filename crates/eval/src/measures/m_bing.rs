//! binG: binary G (trec_eval m_binG.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "binG",
    formula: "(1/R) · Σ_{relevant d} 1 / log2(2 + non-relevant retrieved before d)",
    source: "trec_eval 10.0, m_binG.c (experimental, 2008)",
    explanation:
        "Experimental: each relevant document discounted by the non-relevant ones ranked above it.",
    params: ParamKind::None,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    let mut rel_so_far = 0usize;
    let mut sum = 0.0;
    for (i, &r) in t.rels.iter().enumerate() {
        if t.is_rel(r) {
            rel_so_far += 1;
            sum += 1.0 / ((3 + i - rel_so_far) as f64).log2();
        }
    }
    if rel_so_far > 0 {
        out[0] = sum / t.num_rel as f64;
    }
}
