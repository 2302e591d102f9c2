//! Measures as values with the names people write (`nDCG@10`, `P(rel=2)@5`, `MAP`, `MRR`,
//! `R@100`, `UDCG(gamma=0)@5`, ...), in the spirit of ir_measures. `Display` prints a name that
//! `FromStr` reads back to the same measure.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use super::m_ndcg_cut::ideal_linear_gains;
use super::topic::discount;
use super::{Family, TopicEval};
use crate::rag::answer_match::DownstreamMetric;
use crate::rag::UdcgVariant;

/// The measure family a [`Measure`] computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MeasureKind {
    /// Average precision (`MAP`, `MAP@k`; alias `AP`).
    AP,
    /// Reciprocal rank (`MRR`, `RR@k`).
    RR,
    /// Normalized DCG (`nDCG`, `nDCG@k`).
    NDCG,
    /// Precision at k (`P@k`).
    P,
    /// Recall at k (`R@k`).
    R,
    /// A relevant document in the top k (`Success@k`).
    Success,
    /// Precision at R (`Rprec`).
    Rprec,
    /// Binary preference (`bpref`).
    Bpref,
    /// Inferred AP (`infAP`).
    InfAP,
    /// Fraction of the top k that is judged (`Judged@k`).
    Judged,
    /// Documents retrieved (`NumRet`).
    NumRet,
    /// Relevant documents in the qrels (`NumRel`).
    NumRel,
    /// Relevant documents retrieved (`NumRelRet`).
    NumRelRet,
    /// Set precision (`SetP`).
    SetP,
    /// Set recall (`SetR`).
    SetR,
    /// Set F1 (`SetF`).
    SetF,
    /// Utility and Distraction-aware Cumulative Gain (`UDCG`, `UDCG@k`,
    /// `UDCG(gamma=G,gain=binary,compat=udcg-ref)@k`): Trappolini et al. 2025, Eq. 4; see
    /// [`crate::rag::measure`]. Reads utilities ([`crate::EvalOptions::utilities`]), not qrels
    /// levels.
    UDCG(UdcgVariant),
    /// eRAG precision (`eRAG-P@k`, `eRAG-P(metric=em|rouge_l)@k`; default metric: the
    /// normalised substring match): Salemi & Zamani 2024; see [`crate::rag::erag`]. Reads the
    /// per-passage answers of [`crate::EvalOptions::erag`], not qrels levels.
    EragP(DownstreamMetric),
    /// eRAG success (`eRAG-success@k`, `eRAG-success(metric=...)@k`): the best per-passage
    /// downstream score in the top k.
    EragSuccess(DownstreamMetric),
}

/// How graded relevance becomes gain in nDCG.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum Gain {
    /// gain = rel, as trec_eval.
    #[default]
    Linear,
    /// gain = 2^rel − 1 (Burges et al., 2005).
    Exp,
}

/// A measure with its cutoff, relevance threshold and gain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Measure {
    pub kind: MeasureKind,
    pub cutoff: Option<u32>,
    /// Minimum relevance counted as relevant (trec_eval's `-l`); `None` means 1.
    pub rel: Option<i32>,
    pub gain: Gain,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error, Serialize)]
#[error("invalid measure '{text}': {reason}")]
pub struct MeasureParseError {
    pub text: String,
    pub reason: String,
}

struct Spec {
    kind: MeasureKind,
    names: &'static [&'static str],
    cutoff: CutoffRule,
    takes_rel: bool,
    takes_gain: bool,
}

#[derive(PartialEq)]
enum CutoffRule {
    Required,
    Optional,
    Forbidden,
}

const SPECS: &[Spec] = &[
    spec(
        MeasureKind::AP,
        &["MAP", "AP"],
        CutoffRule::Optional,
        true,
        false,
    ),
    spec(
        MeasureKind::RR,
        &["MRR", "RR"],
        CutoffRule::Optional,
        true,
        false,
    ),
    spec(
        MeasureKind::NDCG,
        &["nDCG", "NDCG"],
        CutoffRule::Optional,
        false,
        true,
    ),
    spec(
        MeasureKind::P,
        &["P", "Precision"],
        CutoffRule::Required,
        true,
        false,
    ),
    spec(
        MeasureKind::R,
        &["R", "Recall"],
        CutoffRule::Required,
        true,
        false,
    ),
    spec(
        MeasureKind::Success,
        &["Success"],
        CutoffRule::Required,
        true,
        false,
    ),
    spec(
        MeasureKind::Rprec,
        &["Rprec", "R-Prec"],
        CutoffRule::Forbidden,
        true,
        false,
    ),
    spec(
        MeasureKind::Bpref,
        &["bpref", "Bpref"],
        CutoffRule::Forbidden,
        true,
        false,
    ),
    spec(
        MeasureKind::InfAP,
        &["infAP"],
        CutoffRule::Forbidden,
        true,
        false,
    ),
    spec(
        MeasureKind::Judged,
        &["Judged"],
        CutoffRule::Required,
        false,
        false,
    ),
    spec(
        MeasureKind::NumRet,
        &["NumRet"],
        CutoffRule::Forbidden,
        false,
        false,
    ),
    spec(
        MeasureKind::NumRel,
        &["NumRel"],
        CutoffRule::Forbidden,
        true,
        false,
    ),
    spec(
        MeasureKind::NumRelRet,
        &["NumRelRet"],
        CutoffRule::Forbidden,
        true,
        false,
    ),
    spec(
        MeasureKind::SetP,
        &["SetP"],
        CutoffRule::Forbidden,
        true,
        false,
    ),
    spec(
        MeasureKind::SetR,
        &["SetR"],
        CutoffRule::Forbidden,
        true,
        false,
    ),
    spec(
        MeasureKind::SetF,
        &["SetF"],
        CutoffRule::Forbidden,
        true,
        false,
    ),
    spec(
        MeasureKind::UDCG(UdcgVariant {
            gamma: crate::rag::Gamma::PAPER,
            gain: crate::rag::Gain::Utility,
            convention: crate::rag::Convention::Paper,
        }),
        &["UDCG"],
        CutoffRule::Optional,
        false,
        false,
    ),
    spec(
        MeasureKind::EragP(DownstreamMetric::Substring),
        &["eRAG-P"],
        CutoffRule::Required,
        false,
        false,
    ),
    spec(
        MeasureKind::EragSuccess(DownstreamMetric::Substring),
        &["eRAG-success"],
        CutoffRule::Required,
        false,
        false,
    ),
];

const fn spec(
    kind: MeasureKind,
    names: &'static [&'static str],
    cutoff: CutoffRule,
    takes_rel: bool,
    takes_gain: bool,
) -> Spec {
    Spec {
        kind,
        names,
        cutoff,
        takes_rel,
        takes_gain,
    }
}

fn spec_of(kind: MeasureKind) -> &'static Spec {
    SPECS
        .iter()
        .find(|s| std::mem::discriminant(&s.kind) == std::mem::discriminant(&kind))
        .unwrap_or(&SPECS[0])
}

impl Measure {
    pub fn new(kind: MeasureKind) -> Self {
        Measure {
            kind,
            cutoff: None,
            rel: None,
            gain: Gain::Linear,
        }
    }

    pub fn at(mut self, k: u32) -> Self {
        self.cutoff = Some(k);
        self
    }

    /// The relevance threshold in effect.
    pub fn level(&self) -> i32 {
        self.rel.unwrap_or(1)
    }

    /// Whether the summary over topics is a sum (counts) rather than a mean.
    pub fn is_count(&self) -> bool {
        matches!(
            self.kind,
            MeasureKind::NumRet | MeasureKind::NumRel | MeasureKind::NumRelRet
        )
    }

    /// The UDCG parameters, when this is a UDCG measure.
    pub fn udcg(&self) -> Option<UdcgVariant> {
        match self.kind {
            MeasureKind::UDCG(v) => Some(v),
            _ => None,
        }
    }

    /// Whether evaluating this measure needs [`crate::EvalOptions::utilities`].
    pub fn needs_utilities(&self) -> bool {
        self.udcg().is_some()
    }

    /// The downstream metric, when this is an eRAG measure.
    pub fn erag_metric(&self) -> Option<DownstreamMetric> {
        match self.kind {
            MeasureKind::EragP(m) | MeasureKind::EragSuccess(m) => Some(m),
            _ => None,
        }
    }

    /// Whether evaluating this measure needs [`crate::EvalOptions::erag`] (an eRAG outcomes
    /// file).
    pub fn needs_erag_outcomes(&self) -> bool {
        self.erag_metric().is_some()
    }

    /// The registry entry documenting this measure (formula, source, explanation): UDCG's
    /// from [`crate::rag::registry`], the others' from trec_eval's [`super::registry`] through
    /// [`Measure::trec_eval_equivalent`] (longest family name that prefixes it, so `ndcg_cut_10`
    /// finds `ndcg_cut`, not `ndcg`).
    pub fn family(&self) -> Option<&'static Family> {
        if self.udcg().is_some() {
            return Some(&crate::rag::measure::UDCG_FAMILY);
        }
        match self.kind {
            MeasureKind::EragP(_) => return Some(&crate::rag::erag::ERAG_P_FAMILY),
            MeasureKind::EragSuccess(_) => return Some(&crate::rag::erag::ERAG_SUCCESS_FAMILY),
            _ => {}
        }
        let (name, _) = self.trec_eval_equivalent()?;
        super::registry()
            .iter()
            .copied()
            .filter(|f| name == f.name || name.starts_with(&format!("{}_", f.name)))
            .max_by_key(|f| f.name.len())
    }

    /// One line explaining the measure (the app's tooltip): its family's, or for the measures
    /// trec_eval has no name for, their own.
    pub fn explanation(&self) -> &'static str {
        if let Some(family) = self.family() {
            return family.explanation;
        }
        match self.kind {
            MeasureKind::Judged => {
                "Fraction of the top k that has a judgment in the qrels; low values warn that \
                 unjudged documents are being scored as non-relevant."
            }
            MeasureKind::RR => {
                "Reciprocal rank of the first relevant document within the top k (0 when none)."
            }
            MeasureKind::NDCG if self.gain == Gain::Exp => {
                "nDCG with exponential gain 2^rel − 1 (Burges et al., 2005) instead of \
                 trec_eval's linear gain."
            }
            MeasureKind::NDCG => {
                "Normalized discounted cumulative gain (Järvelin & Kekäläinen, 2002)."
            }
            MeasureKind::AP => "Mean average precision, cut at k.",
            _ => "",
        }
    }

    /// The trec_eval measure (as printed) and `-l` level that compute the same value,
    /// where trec_eval has one.
    pub fn trec_eval_equivalent(&self) -> Option<(String, i32)> {
        let k = self.cutoff;
        let name = match (self.kind, k) {
            (MeasureKind::AP, None) => "map".to_string(),
            (MeasureKind::AP, Some(k)) => format!("map_cut_{k}"),
            (MeasureKind::RR, None) => "recip_rank".to_string(),
            (MeasureKind::NDCG, _) if self.gain == Gain::Exp => return None,
            (MeasureKind::NDCG, None) => "ndcg".to_string(),
            (MeasureKind::NDCG, Some(k)) => format!("ndcg_cut_{k}"),
            (MeasureKind::P, Some(k)) => format!("P_{k}"),
            (MeasureKind::R, Some(k)) => format!("recall_{k}"),
            (MeasureKind::Success, Some(k)) => format!("success_{k}"),
            (MeasureKind::Rprec, _) => "Rprec".to_string(),
            (MeasureKind::Bpref, _) => "bpref".to_string(),
            (MeasureKind::InfAP, _) => "infAP".to_string(),
            (MeasureKind::NumRet, _) => "num_ret".to_string(),
            (MeasureKind::NumRel, _) => "num_rel".to_string(),
            (MeasureKind::NumRelRet, _) => "num_rel_ret".to_string(),
            (MeasureKind::SetP, _) => "set_P".to_string(),
            (MeasureKind::SetR, _) => "set_recall".to_string(),
            (MeasureKind::SetF, _) => "set_F".to_string(),
            _ => return None,
        };
        Some((name, self.level()))
    }

    /// This measure's value for one topic (`t` must be judged at `self.level()`). UDCG cannot
    /// be computed from relevance levels and gives NaN here; [`crate::evaluate_with`] scores it.
    pub fn compute(&self, t: &TopicEval) -> f64 {
        let depth = self.cutoff.map(|k| k as usize).unwrap_or(usize::MAX);
        let k = self.cutoff.unwrap_or(0) as f64;
        let rel_in_top = || t.rels.iter().take(depth).filter(|&&r| t.is_rel(r)).count() as f64;
        match self.kind {
            MeasureKind::AP => super::m_map::average_precision(t, depth),
            MeasureKind::RR => super::m_recip_rank::reciprocal_rank(t, depth),
            MeasureKind::NDCG => ndcg(t, depth, self.gain),
            MeasureKind::P => {
                if k > 0.0 {
                    rel_in_top() / k
                } else {
                    0.0
                }
            }
            MeasureKind::R => {
                if t.num_rel > 0 {
                    rel_in_top() / t.num_rel as f64
                } else {
                    0.0
                }
            }
            MeasureKind::Success => {
                if rel_in_top() > 0.0 {
                    1.0
                } else {
                    0.0
                }
            }
            MeasureKind::Judged => {
                let judged = t.rels.iter().take(depth).filter(|&&r| r >= 0).count() as f64;
                if k > 0.0 {
                    judged / k
                } else {
                    0.0
                }
            }
            MeasureKind::NumRet => t.num_ret as f64,
            MeasureKind::NumRel => t.num_rel as f64,
            MeasureKind::NumRelRet => t.num_rel_ret as f64,
            MeasureKind::Rprec => one(&super::m_rprec::FAMILY, t),
            MeasureKind::Bpref => super::m_bpref::bpref(t),
            MeasureKind::InfAP => one(&super::m_infap::FAMILY, t),
            MeasureKind::SetP => one(&super::m_set_p::FAMILY, t),
            MeasureKind::SetR => one(&super::m_set_recall::FAMILY, t),
            MeasureKind::SetF => one(&super::m_set_f::FAMILY, t),
            MeasureKind::UDCG(_) | MeasureKind::EragP(_) | MeasureKind::EragSuccess(_) => f64::NAN,
        }
    }
}

fn one(family: &super::Family, t: &TopicEval) -> f64 {
    family.compute_values(t, &family.default_params())[0]
}

/// nDCG over the top `depth` with trec_eval's ideal (all judged documents by level).
fn ndcg(t: &TopicEval, depth: usize, gain: Gain) -> f64 {
    let g = |rel: f64| match gain {
        Gain::Linear => rel,
        Gain::Exp => rel.exp2() - 1.0,
    };
    // fold from +0.0: f64's `sum` starts at -0.0, which would print as "-0.0000"
    let dcg: f64 = t
        .rels
        .iter()
        .take(depth)
        .enumerate()
        .filter(|(_, &r)| r > 0)
        .map(|(i, &r)| g(r as f64) / discount(i))
        .fold(0.0, |acc, x| acc + x);
    let idcg: f64 = ideal_linear_gains(t)
        .take(depth)
        .enumerate()
        .map(|(i, r)| g(r) / discount(i))
        .fold(0.0, |acc, x| acc + x);
    if idcg > 0.0 {
        dcg / idcg
    } else {
        0.0
    }
}

impl fmt::Display for Measure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let spec = spec_of(self.kind);
        let name = match (self.kind, self.cutoff) {
            (MeasureKind::RR, Some(_)) => "RR",
            _ => spec.names[0],
        };
        f.write_str(name)?;
        let mut params = Vec::new();
        if let Some(rel) = self.rel {
            params.push(format!("rel={rel}"));
        }
        if self.gain == Gain::Exp {
            params.push("gain=exp".to_string());
        }
        if let Some(v) = self.udcg() {
            params.extend(v.name_params());
        }
        match self.erag_metric() {
            Some(DownstreamMetric::Substring) | None => {}
            Some(m) => params.push(format!("metric={}", m.name())),
        }
        if !params.is_empty() {
            write!(f, "({})", params.join(","))?;
        }
        if let Some(k) = self.cutoff {
            write!(f, "@{k}")?;
        }
        Ok(())
    }
}

impl FromStr for Measure {
    type Err = MeasureParseError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let err = |reason: &str| MeasureParseError {
            text: text.to_string(),
            reason: reason.to_string(),
        };
        let s = text.trim();
        let (head, cutoff) = match s.rsplit_once('@') {
            Some((h, k)) => {
                let k: u32 = k
                    .trim()
                    .parse()
                    .map_err(|_| err("the cutoff after '@' must be a positive integer"))?;
                if k == 0 {
                    return Err(err("the cutoff after '@' must be a positive integer"));
                }
                (h, Some(k))
            }
            None => (s, None),
        };
        let (name, params) = match head.split_once('(') {
            Some((n, rest)) => {
                let inner = rest
                    .strip_suffix(')')
                    .ok_or_else(|| err("missing ')' after the parameters"))?;
                (n.trim(), Some(inner))
            }
            None => (head.trim(), None),
        };
        let spec = SPECS
            .iter()
            .find(|sp| sp.names.iter().any(|n| n.eq_ignore_ascii_case(name)))
            .ok_or_else(|| {
                err("unknown measure; try MAP, MRR, nDCG, P@k, R@k, Success@k, RR@k, Rprec, bpref, infAP, Judged@k, NumRet, NumRel, NumRelRet, SetP, SetR, SetF, UDCG@k, eRAG-P@k, eRAG-success@k")
            })?;
        match (&spec.cutoff, cutoff) {
            (CutoffRule::Required, None) => {
                return Err(err("this measure needs a cutoff, e.g. @10"))
            }
            (CutoffRule::Forbidden, Some(_)) => return Err(err("this measure takes no cutoff")),
            _ => {}
        }
        let mut m = Measure {
            kind: spec.kind,
            cutoff,
            rel: None,
            gain: Gain::Linear,
        };
        if let MeasureKind::UDCG(_) = spec.kind {
            let mut pairs = Vec::new();
            for param in params.into_iter().flat_map(|p| p.split(',')) {
                let (key, value) = param
                    .split_once('=')
                    .ok_or_else(|| err("parameters are key=value"))?;
                pairs.push((key.trim(), value.trim()));
            }
            m.kind = MeasureKind::UDCG(UdcgVariant::from_pairs(pairs).map_err(|r| err(&r))?);
            return Ok(m);
        }
        if m.erag_metric().is_some() {
            let mut metric = DownstreamMetric::Substring;
            for param in params.into_iter().flat_map(|p| p.split(',')) {
                match param.split_once('=').map(|(k, v)| (k.trim(), v.trim())) {
                    Some(("metric", v)) => {
                        metric = DownstreamMetric::parse(v).ok_or_else(|| {
                            err("unsupported eRAG metric (metric=substring|em|rouge_l)")
                        })?
                    }
                    _ => {
                        return Err(err(
                            "unsupported parameter for eRAG (metric=substring|em|rouge_l)",
                        ))
                    }
                }
            }
            m.kind = match spec.kind {
                MeasureKind::EragP(_) => MeasureKind::EragP(metric),
                _ => MeasureKind::EragSuccess(metric),
            };
            return Ok(m);
        }
        for param in params.into_iter().flat_map(|p| p.split(',')) {
            let (key, value) = param
                .split_once('=')
                .ok_or_else(|| err("parameters are key=value"))?;
            match (key.trim(), value.trim()) {
                ("rel", v) if spec.takes_rel => {
                    m.rel = Some(v.parse().map_err(|_| err("rel must be an integer"))?)
                }
                ("gain", "exp") if spec.takes_gain => m.gain = Gain::Exp,
                ("gain", "linear") if spec.takes_gain => m.gain = Gain::Linear,
                _ => return Err(err("unsupported parameter for this measure")),
            }
        }
        Ok(m)
    }
}
