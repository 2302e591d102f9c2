//! rbp: rank-biased precision (trec_eval m_rbp.c).
use super::topic::Gains;
use super::{Family, Input, ParamKind, Params, Summary, TopicEval};

pub static FAMILY: Family = Family {
    name: "rbp",
    formula:
        "RBP = (1 − p) · Σ_i gain(d_i) · p^(i−1), p = 0.9; gains rescaled to [0,1] when outside",
    source:
        "trec_eval 10.0, m_rbp.c; Moffat & Zobel, 'Rank-Biased Precision', ACM TOIS 27(1) (2008)",
    explanation: "Expected utility for a user who goes on to the next document with probability p.",
    params: ParamKind::Pairs,
    summary: Summary::Mean,
    per_query: true,
    integer: false,
    input: Input::Qrels,
    prefs_kernel: None,
    compute,
};

/// The persistence `p=` pair, 0.9 by default.
pub(crate) fn persistence(p: &Params) -> f64 {
    p.pairs()
        .iter()
        .filter(|(name, _)| name == "p")
        .map(|(_, v)| *v)
        .next_back()
        .unwrap_or(0.9)
}

fn compute(t: &TopicEval, p: &Params, out: &mut [f64]) {
    let persist = persistence(p);
    let mut gains = Gains::new(t, p.pairs());
    // Like trec_eval, the range includes the identity gains of every level from 0 to the
    // highest judged level, even levels no document has.
    let top = t.num_rel_levels();
    let overridden = |level: i64| {
        p.pairs()
            .iter()
            .any(|(name, _)| name.parse::<i64>().ok() == Some(level))
    };
    let implicit = (0..top)
        .find(|&l| !overridden(l))
        .into_iter()
        .chain((0..top).rev().find(|&l| !overridden(l)));
    let all = gains
        .levels
        .iter()
        .map(|(_, g, _)| *g)
        .chain(implicit.map(|l| l as f64));
    let (min, max) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), g| {
        (lo.min(g), hi.max(g))
    });
    if min < 0.0 || max > 1.0 {
        for level in &mut gains.levels {
            level.1 = (level.1 - min) / (max - min);
        }
    }
    let mut sum = 0.0;
    let mut weight = 1.0;
    for &r in t.rels {
        let g = gains.gain(r);
        if g != 0.0 {
            sum += g * weight;
        }
        weight *= persist;
    }
    out[0] = (1.0 - persist) * sum;
}
