//! bpref: binary preference (trec_eval m_bpref.c).
use super::topic::{NOT_POOLED, POOLED_UNJUDGED};
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "bpref",
    formula: "(1/R) · Σ_{relevant retrieved r} (1 − min(N_above(r), R) / min(N, R)), N = judged non-relevant",
    source: "trec_eval 10.0, m_bpref.c; Buckley & Voorhees, 'Retrieval Evaluation with Incomplete Information' (SIGIR 2004)",
    explanation: "Fraction of judged non-relevant documents ranked below each relevant one; ignores unjudged documents.",
    params: ParamKind::None,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    out[0] = bpref(t);
}

pub(crate) fn bpref(t: &TopicEval) -> f64 {
    let num_nonrel: u64 = t
        .levels
        .iter()
        .filter(|(l, _)| *l < t.level)
        .map(|(_, c)| c)
        .sum();
    let mut nonrel_so_far = 0u64;
    let mut sum = 0.0;
    for &r in t.rels {
        if r == NOT_POOLED || r == POOLED_UNJUDGED {
            continue;
        }
        if r >= 0 && r < t.level {
            nonrel_so_far += 1;
        } else if nonrel_so_far > 0 {
            sum += 1.0 - nonrel_so_far.min(t.num_rel) as f64 / num_nonrel.min(t.num_rel) as f64;
        } else {
            sum += 1.0;
        }
    }
    if t.num_rel > 0 {
        sum / t.num_rel as f64
    } else {
        sum
    }
}
