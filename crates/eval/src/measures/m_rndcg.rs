//! Rndcg: nDCG averaged at the R-level boundaries (trec_eval m_Rndcg.c).
use super::topic::{discount, Gains};
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "Rndcg",
    formula: "mean of nDCG@k over the ranks k where the ideal gain level changes (and at num_ret)",
    source: "trec_eval 10.0, m_Rndcg.c (experimental)",
    explanation:
        "Experimental: nDCG averaged at the points where each gain level of the ideal ranking ends.",
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
    if t.num_rel == 0 {
        return;
    }
    let mut ideal = gains.ideal();
    let mut old_gain = ideal.gain;
    let (mut dcg, mut idcg, mut sum) = (0.0, 0.0, 0.0);
    let mut changes = 0u64;
    let n = t.rels.len();
    let mut i = 0;
    while i < n && ideal.gain > 0.0 {
        let g = gains.gain(t.rels[i]);
        let ig = ideal.advance();
        if old_gain != ig {
            if idcg > 0.0 {
                sum += dcg / idcg;
                changes += 1;
            }
            old_gain = ig;
        }
        if g != 0.0 {
            dcg += g / discount(i);
        }
        if ig > 0.0 {
            idcg += ig / discount(i);
        }
        i += 1;
    }
    if i < n {
        while i < n {
            let g = gains.gain(t.rels[i]);
            if g != 0.0 {
                dcg += g / discount(i);
            }
            i += 1;
        }
        if idcg > 0.0 {
            sum += dcg / idcg;
            changes += 1;
        }
    }
    while ideal.gain > 0.0 {
        let ig = ideal.advance();
        if old_gain != ig {
            if idcg > 0.0 {
                sum += dcg / idcg;
                changes += 1;
            }
            old_gain = ig;
        }
        if ig > 0.0 {
            idcg += ig / discount(i);
        }
        i += 1;
    }
    out[0] = sum / changes as f64;
}
