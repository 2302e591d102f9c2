//! set_F: F-measure of the retrieved set (trec_eval m_set_F.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "set_F",
    formula: "F_x = (x + 1) · P · R / (x · P + R), x = 1 by default",
    source: "trec_eval 10.0, m_set_F.c; van Rijsbergen, Information Retrieval (1979)",
    explanation: "Weighted harmonic mean of set precision and set recall.",
    params: ParamKind::Values(&[1.0]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let Some(&x) = p.fractions().first() else {
        return;
    };
    if t.num_rel_ret > 0 {
        let precision = t.num_rel_ret as f64 / t.num_ret as f64;
        let recall = t.num_rel_ret as f64 / t.num_rel as f64;
        out[0] = (x + 1.0) * precision * recall / (x * precision + recall);
    }
}
