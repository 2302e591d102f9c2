//! infAP: inferred average precision (trec_eval m_infap.c).
use super::topic::{NOT_POOLED, POOLED_UNJUDGED};
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

/// Smoothing so the estimated precision above the first judged document is defined.
const INFAP_EPSILON: f64 = 0.00001;

pub static FAMILY: Family = Family {
    name: "infAP",
    formula: "(1/R) · Σ_{relevant r at rank k} [1/k + ((k−1)/k) · (|pooled above|/(k−1)) · (rel_above+ε)/(rel_above+nonrel_above+2ε)]",
    source: "trec_eval 10.0, m_infap.c; Yilmaz & Aslam, 'Estimating Average Precision with Incomplete and Imperfect Judgments' (CIKM 2006)",
    explanation: "Average precision estimated from a random sample of the pool (qrels rel −1 = pooled but unjudged).",
    params: ParamKind::None,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    let (mut nonrel, mut rel, mut unjudged) = (0u64, 0u64, 0u64);
    let mut sum = 0.0;
    for (j, &r) in t.rels.iter().enumerate() {
        if r == NOT_POOLED {
            continue;
        }
        if r == POOLED_UNJUDGED {
            unjudged += 1;
            continue;
        }
        if r >= 0 && r < t.level {
            nonrel += 1;
            continue;
        }
        rel += 1;
        if j == 0 {
            sum += 1.0;
        } else {
            let fj = j as f64;
            let above = (rel - 1 + nonrel + unjudged) as f64;
            let judged_above = (rel - 1 + nonrel) as f64;
            sum += 1.0 / (fj + 1.0)
                + (fj / (fj + 1.0))
                    * (above / fj)
                    * (((rel - 1) as f64 + INFAP_EPSILON) / (judged_above + 2.0 * INFAP_EPSILON));
        }
    }
    out[0] = if t.num_rel > 0 {
        sum / t.num_rel as f64
    } else {
        sum
    };
}
