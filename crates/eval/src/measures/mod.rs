//! The measure registry: one file per measure family, in trec_eval 10.0's table order
//! (measures.c), which is also the order trec_eval prints them in.
//!
//! Each family separates the per-topic kernel (`compute`, over a [`TopicEval`]) from
//! aggregation over topics ([`Summary`]), like ranx does.

pub mod name;
pub mod prefs;
pub mod topic;

mod m_11pt_avg;
mod m_bing;
mod m_bpref;
mod m_g;
mod m_gm_bpref;
mod m_gm_map;
mod m_infap;
mod m_iprec_at_recall;
mod m_map;
mod m_map_avgjg;
mod m_map_cut;
mod m_ndcg;
mod m_ndcg_cut;
mod m_ndcg_rel;
mod m_num_nonrel_judged_ret;
mod m_num_q;
mod m_num_rel;
mod m_num_rel_ret;
mod m_num_ret;
mod m_p;
mod m_p_avgjg;
mod m_prefs_avgjg;
mod m_prefs_avgjg_imp;
mod m_prefs_avgjg_ret;
mod m_prefs_avgjg_rnonrel;
mod m_prefs_avgjg_rnonrel_ret;
mod m_prefs_num_prefs_ful;
mod m_prefs_num_prefs_ful_ret;
mod m_prefs_num_prefs_poss;
mod m_prefs_pair;
mod m_prefs_pair_imp;
mod m_prefs_pair_ret;
mod m_prefs_simp;
mod m_prefs_simp_imp;
mod m_prefs_simp_ret;
mod m_rbp;
mod m_rbp_resid;
mod m_recall;
mod m_recip_rank;
mod m_relative_p;
mod m_relstring;
mod m_rndcg;
mod m_rprec;
mod m_rprec_mult;
mod m_rprec_mult_avgjg;
mod m_runid;
mod m_set_f;
mod m_set_map;
mod m_set_p;
mod m_set_recall;
mod m_set_relative_p;
mod m_success;
mod m_unj;
mod m_utility;

pub use m_relstring::relstring;
pub use name::{Gain, Measure, MeasureKind, MeasureParseError};
pub use prefs::PrefCounts;
pub use topic::{RankingOptions, TopicEval};

use serde::ser::SerializeStruct;

/// What parameters a family takes after a dot on trec_eval's command line.
#[derive(Debug, Clone, Copy)]
pub enum ParamKind {
    /// No parameters.
    None,
    /// Integer cutoffs, sorted ascending, one value each (`P.5,10` gives P_5, P_10).
    Cutoffs(&'static [i64]),
    /// Fractional cutoffs, sorted ascending, one value each, named with `%3.2f`.
    Fractions(&'static [f64]),
    /// An ordered list of numbers feeding one value (`utility.1,-1,0,0`).
    Values(&'static [f64]),
    /// `name=value` pairs feeding one value (`ndcg.1=3,2=9`, `rbp.p=0.95`).
    Pairs,
}

/// Parameters of one family after parsing, or its defaults.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum Params {
    None,
    Cutoffs(Vec<i64>),
    Fractions(Vec<f64>),
    Values(Vec<f64>),
    Pairs(Vec<(String, f64)>),
}

impl Params {
    pub fn cutoffs(&self) -> &[i64] {
        match self {
            Params::Cutoffs(c) => c,
            _ => &[],
        }
    }

    pub fn fractions(&self) -> &[f64] {
        match self {
            Params::Fractions(c) | Params::Values(c) => c,
            _ => &[],
        }
    }

    pub fn pairs(&self) -> &[(String, f64)] {
        match self {
            Params::Pairs(p) => p,
            _ => &[],
        }
    }

    /// How many values a family with these parameters produces per topic.
    pub fn num_values(&self) -> usize {
        match self {
            Params::Cutoffs(c) => c.len(),
            Params::Fractions(c) => c.len(),
            _ => 1,
        }
    }
}

/// The kind of judgments a family reads (trec_eval's `-R` formats).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Input {
    /// Plain qrels (`-R qrels`, the default).
    Qrels,
    /// Several judgment groups per topic (`-R qrels_jg`); computed per group and averaged.
    JudgmentGroups,
    /// Document preferences (`-R prefs` or `-R qrels_prefs`).
    Prefs,
}

/// How per-topic values become the summary line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Summary {
    /// Arithmetic mean over topics.
    Mean,
    /// Sum over topics (counts such as num_ret).
    Sum,
    /// exp of the mean of the per-topic logs (per-topic values are stored as logs).
    GeoMean,
    /// The number of topics.
    NumQ,
    /// The run tag.
    RunId,
    /// Per-topic only (relstring).
    Nothing,
}

/// A measure family: formula, source, explanation and the kernel that computes it.
pub struct Family {
    pub name: &'static str,
    pub formula: &'static str,
    pub source: &'static str,
    pub explanation: &'static str,
    pub params: ParamKind,
    pub summary: Summary,
    /// Whether trec_eval prints it for each topic under `-q`.
    pub per_query: bool,
    /// Printed as an integer (`%ld`) instead of `%6.4f`.
    pub integer: bool,
    /// Which judgments the family reads.
    pub input: Input,
    /// For preference measures: the value from a topic's preference counts.
    pub prefs_kernel: Option<fn(&PrefCounts) -> f64>,
    /// Writes this topic's values (one per cutoff) into `out`, which starts zeroed.
    pub compute: fn(&TopicEval, &Params, &mut [f64]),
}

impl std::fmt::Debug for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Family").field("name", &self.name).finish()
    }
}

impl serde::Serialize for Family {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("Family", 4)?;
        st.serialize_field("name", self.name)?;
        st.serialize_field("formula", self.formula)?;
        st.serialize_field("source", self.source)?;
        st.serialize_field("explanation", self.explanation)?;
        st.end()
    }
}

impl Family {
    pub fn default_params(&self) -> Params {
        match self.params {
            ParamKind::None => Params::None,
            ParamKind::Cutoffs(c) => Params::Cutoffs(c.to_vec()),
            ParamKind::Fractions(c) => Params::Fractions(c.to_vec()),
            ParamKind::Values(c) => Params::Values(c.to_vec()),
            ParamKind::Pairs => Params::Pairs(Vec::new()),
        }
    }

    pub fn compute_values(&self, t: &TopicEval, params: &Params) -> Vec<f64> {
        let mut out = vec![0.0; params.num_values()];
        (self.compute)(t, params, &mut out);
        out
    }
}

static REGISTRY: [&Family; 56] = [
    &m_runid::FAMILY,
    &m_num_q::FAMILY,
    &m_num_ret::FAMILY,
    &m_num_rel::FAMILY,
    &m_num_rel_ret::FAMILY,
    &m_map::FAMILY,
    &m_gm_map::FAMILY,
    &m_rprec::FAMILY,
    &m_bpref::FAMILY,
    &m_recip_rank::FAMILY,
    &m_iprec_at_recall::FAMILY,
    &m_p::FAMILY,
    &m_relstring::FAMILY,
    &m_recall::FAMILY,
    &m_infap::FAMILY,
    &m_gm_bpref::FAMILY,
    &m_rprec_mult::FAMILY,
    &m_utility::FAMILY,
    &m_11pt_avg::FAMILY,
    &m_bing::FAMILY,
    &m_g::FAMILY,
    &m_ndcg::DCG,
    &m_ndcg::IDEAL_DCG,
    &m_ndcg::FAMILY,
    &m_ndcg_rel::FAMILY,
    &m_rndcg::FAMILY,
    &m_ndcg_cut::FAMILY,
    &m_map_cut::FAMILY,
    &m_relative_p::FAMILY,
    &m_success::FAMILY,
    &m_set_p::FAMILY,
    &m_set_relative_p::FAMILY,
    &m_set_recall::FAMILY,
    &m_set_map::FAMILY,
    &m_set_f::FAMILY,
    &m_num_nonrel_judged_ret::FAMILY,
    &m_prefs_num_prefs_poss::FAMILY,
    &m_prefs_num_prefs_ful::FAMILY,
    &m_prefs_num_prefs_ful_ret::FAMILY,
    &m_prefs_simp::FAMILY,
    &m_prefs_pair::FAMILY,
    &m_prefs_avgjg::FAMILY,
    &m_prefs_avgjg_rnonrel::FAMILY,
    &m_prefs_simp_ret::FAMILY,
    &m_prefs_pair_ret::FAMILY,
    &m_prefs_avgjg_ret::FAMILY,
    &m_prefs_avgjg_rnonrel_ret::FAMILY,
    &m_prefs_simp_imp::FAMILY,
    &m_prefs_pair_imp::FAMILY,
    &m_prefs_avgjg_imp::FAMILY,
    &m_map_avgjg::FAMILY,
    &m_p_avgjg::FAMILY,
    &m_rprec_mult_avgjg::FAMILY,
    &m_rbp::FAMILY,
    &m_rbp_resid::FAMILY,
    &m_unj::FAMILY,
];

/// Every measure family, in trec_eval's output order.
pub fn registry() -> &'static [&'static Family] {
    &REGISTRY
}

pub fn family(name: &str) -> Option<&'static Family> {
    REGISTRY.iter().copied().find(|f| f.name == name)
}

/// trec_eval's `-m` nicknames for sets of measures.
pub fn nickname(name: &str) -> Option<&'static [&'static str]> {
    const OFFICIAL: &[&str] = &[
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
    ];
    const ALL_TREC: &[&str] = &[
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "map",
        "gm_map",
        "Rprec",
        "bpref",
        "recip_rank",
        "iprec_at_recall",
        "P",
        "relstring",
        "recall",
        "unj",
        "rbp",
        "rbp_resid",
        "infAP",
        "gm_bpref",
        "utility",
        "11pt_avg",
        "ndcg",
        "relative_P",
        "Rprec_mult",
        "success",
        "map_cut",
        "ndcg_cut",
        "ndcg_rel",
        "Rndcg",
        "binG",
        "G",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
        "num_nonrel_judged_ret",
    ];
    const SET: &[&str] = &[
        "runid",
        "num_q",
        "num_ret",
        "num_rel",
        "num_rel_ret",
        "utility",
        "set_P",
        "set_recall",
        "set_relative_P",
        "set_map",
        "set_F",
    ];
    const QRELS_JG: &[&str] = &["runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"];
    const ALL_PREFS: &[&str] = &[
        "runid",
        "num_q",
        "prefs_num_prefs_poss",
        "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret",
        "prefs_simp",
        "prefs_pair",
        "prefs_avgjg",
        "prefs_avgjg_Rnonrel",
        "prefs_simp_ret",
        "prefs_pair_ret",
        "prefs_avgjg_ret",
        "prefs_avgjg_Rnonrel_ret",
        "prefs_simp_imp",
        "prefs_pair_imp",
        "prefs_avgjg_imp",
    ];
    const PREFS: &[&str] = &[
        "runid",
        "num_q",
        "prefs_num_prefs_poss",
        "prefs_num_prefs_ful",
        "prefs_num_prefs_ful_ret",
        "prefs_simp",
        "prefs_pair",
        "prefs_avgjg",
    ];
    match name {
        "official" => Some(OFFICIAL),
        "all_prefs" => Some(ALL_PREFS),
        "prefs" => Some(PREFS),
        "qrels_jg" => Some(QRELS_JG),
        "all_trec" => Some(ALL_TREC),
        "set" => Some(SET),
        _ => None,
    }
}

/// Counts of relevant documents among the first `k` ranks for each ascending cutoff,
/// filling cutoffs beyond the ranking with the final count (shared by P, recall, ...).
pub(crate) fn rel_counts_at(t: &TopicEval, cutoffs: &[i64]) -> Vec<u64> {
    let mut out = Vec::with_capacity(cutoffs.len());
    let mut rel = 0u64;
    let mut i = 0usize;
    for &k in cutoffs {
        let k = k.max(0) as usize;
        while i < k && i < t.rels.len() {
            if t.is_rel(t.rels[i]) {
                rel += 1;
            }
            i += 1;
        }
        out.push(rel);
    }
    out
}
