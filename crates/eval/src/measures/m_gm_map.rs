//! gm_map: geometric mean of AP over topics (trec_eval m_gm_map.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

/// AP values below this are clamped so one zero does not zero the whole geometric mean.
pub(crate) const MIN_GEO_MEAN: f64 = 0.00001;

pub static FAMILY: Family = Family {
    name: "gm_map",
    formula: "exp( mean_q log(max(AP_q, 1e-5)) )",
    source: "trec_eval 10.0, m_gm_map.c; Robertson, 'On GMAP' (CIKM 2006)",
    explanation:
        "Geometric mean of average precision: rewards consistency across topics (summary only).",
    params: ParamKind::None,
    summary: Summary::GeoMean,
    per_query: false,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, _: &Params, out: &mut [f64]) {
    out[0] = super::m_map::average_precision(t, t.rels.len())
        .max(MIN_GEO_MEAN)
        .ln();
}
