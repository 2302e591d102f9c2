//! ndcg, dcg, ideal_dcg: (normalized) discounted cumulative gain over the whole ranking
//! (trec_eval m_ndcg.c).
use super::topic::{discount, Gains};
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "ndcg",
    formula: "nDCG = DCG / IDCG, DCG = Σ_i gain(d_i) / log2(i + 1), gain = rel (linear) unless rel=gain given",
    source: "trec_eval 10.0, m_ndcg.c; Järvelin & Kekäläinen, ACM TOIS 20(4) (2002)",
    explanation: "Graded-relevance quality of the whole ranking, normalised by the ideal ordering of all judged documents.",
    params: ParamKind::Pairs,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute: compute_ndcg,
};

pub static DCG: Family = Family {
    name: "dcg",
    formula: "DCG = Σ_i gain(d_i) / log2(i + 1)",
    source: "trec_eval 10.0, m_ndcg.c; Järvelin & Kekäläinen (2002)",
    explanation: "Unnormalised discounted cumulative gain (not in all_trec).",
    params: ParamKind::Pairs,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute: compute_dcg,
};

pub static IDEAL_DCG: Family = Family {
    name: "ideal_dcg",
    formula: "IDCG = DCG of the judged documents sorted by decreasing gain",
    source: "trec_eval 10.0, m_ndcg.c; Järvelin & Kekäläinen (2002)",
    explanation: "The best DCG any ranking could reach for this topic (not in all_trec).",
    params: ParamKind::Pairs,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute: compute_ideal_dcg,
};

fn compute_ndcg(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let (dcg, ideal) = dcg_and_ideal(t, p.pairs());
    if ideal > 0.0 {
        out[0] = dcg / ideal;
    }
}

fn compute_dcg(t: &TopicEval, p: &Params, out: &mut [f64]) {
    out[0] = dcg_and_ideal(t, p.pairs()).0;
}

fn compute_ideal_dcg(t: &TopicEval, p: &Params, out: &mut [f64]) {
    out[0] = dcg_and_ideal(t, p.pairs()).1;
}

fn dcg_and_ideal(t: &TopicEval, pairs: &[(String, f64)]) -> (f64, f64) {
    let gains = Gains::new(t, pairs);
    let mut dcg = 0.0;
    for (i, &r) in t.rels.iter().enumerate() {
        let g = gains.gain(r);
        if g != 0.0 {
            dcg += g / discount(i);
        }
    }
    let mut ideal = gains.ideal();
    let mut idcg = 0.0;
    let mut i = 0;
    while ideal.gain > 0.0 {
        let g = ideal.advance();
        if g > 0.0 {
            idcg += g / discount(i);
        }
        i += 1;
    }
    (dcg, idcg)
}
