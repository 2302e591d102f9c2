//! utility: linear set utility (trec_eval m_utility.c).
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "utility",
    formula: "p1·relret + p2·nonrelret + p3·relnotret + p4·nonrelnotret (default 1,−1,0,0)",
    source: "trec_eval 10.0, m_utility.c; TREC filtering track",
    explanation:
        "Weighted sum of the retrieved/relevant contingency table; p4 needs -N (collection size).",
    params: ParamKind::Values(&[1.0, -1.0, 0.0, 0.0]),
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let c = p.fractions();
    if c.len() != 4 {
        return;
    }
    let (ret, rel, relret) = (t.num_ret as f64, t.num_rel as f64, t.num_rel_ret as f64);
    out[0] = c[0] * relret
        + c[1] * (ret - relret)
        + c[2] * (rel - relret)
        + c[3] * (t.num_docs_in_coll as f64 + relret - ret - rel);
}
