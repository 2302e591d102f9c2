//! G: normalized gain with a cost-based discount (trec_eval m_G.c).
use super::topic::Gains;
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "G",
    formula: "Σ_i gain(d_i) / log2(2 + ideal_cost(i) − gain_so_far(i)), normalised by the ideal total gain",
    source: "trec_eval 10.0, m_G.c (experimental, 2008)",
    explanation: "Experimental gain measure between MAP and nDCG; gains per level settable as rel=gain.",
    params: ParamKind::Pairs,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let gains = Gains::new(t, p.pairs());
    let mut ideal = gains.ideal();
    let min_cost = 1.0;
    let (mut results_g, mut sum_results, mut sum_ideal, mut sum_cost) = (0.0, 0.0, 0.0, 0.0);
    let n = t.rels.len();
    let mut i = 0;
    while i < n && ideal.gain > 0.0 {
        let gain = gains.gain(t.rels[i]);
        sum_results += gain;
        let ig = ideal.advance();
        if ig > 0.0 {
            sum_ideal += ig;
        }
        sum_cost += if ig >= min_cost { ig } else { min_cost };
        if gain != 0.0 {
            results_g += gain / (2.0 + sum_cost - sum_results).log2();
        }
        i += 1;
    }
    while i < n {
        let gain = gains.gain(t.rels[i]);
        sum_results += gain;
        sum_cost += min_cost;
        if gain != 0.0 {
            results_g += gain / (2.0 + sum_cost - sum_results).log2();
        }
        i += 1;
    }
    while ideal.gain > 0.0 {
        let ig = ideal.advance();
        if ig > 0.0 {
            sum_ideal += ig;
        }
    }
    if sum_ideal > 0.0 {
        out[0] = results_g / sum_ideal;
    }
}
