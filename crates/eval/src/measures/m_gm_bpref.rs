//! gm_bpref: geometric mean of bpref over topics (trec_eval m_gm_bpref.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "gm_bpref",
    formula: "exp( mean_q log(max(bpref_q, 1e-5)) )",
    source: "trec_eval 10.0, m_gm_bpref.c",
    explanation: "Geometric mean of bpref over topics (summary only).",
    params: ParamKind::None,
    summary: Summary::GeoMean,
    per_query: false,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    out[0] = super::m_bpref::bpref(t)
        .max(super::m_gm_map::MIN_GEO_MEAN)
        .ln();
}
