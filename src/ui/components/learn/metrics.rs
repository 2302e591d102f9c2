//! The builder's numbers, computed by crates/eval exactly as `ragscope eval` / `ragscope udcg`
//! compute them: the context is written as a one-topic qrels, run and utilities TSV, parsed by
//! the same parsers and scored by the same `evaluate_with` (no metric is re-implemented here).

use ragscope_eval::rag::udcg::PAPER_GAMMA;
use ragscope_eval::rag::utilities_tsv;
use ragscope_eval::{evaluate_with, parse_qrels, parse_run, EvalOptions, Measure};
use std::sync::Arc;

/// One passage of a context: relevance label and p(NO-RESPONSE | q, p), so that the utility
/// u = R·(1 − p) is computed by crates/eval, never here.
#[derive(Clone, Debug, PartialEq)]
pub struct Passage {
    /// Stable id (docno `d{id}`), kept across reorders for keys and drag and drop.
    pub id: u32,
    pub relevant: bool,
    pub p_no_response: f64,
    /// Title shown on the card (a real passage's title, or a made-up label).
    pub title: String,
    /// Text shown on the card (empty for made-up passages).
    pub text: String,
    /// The model whose p(NO-RESPONSE) replaced the passage's ("recompute with your model").
    pub u_from: Option<String>,
}

impl Passage {
    /// |u| = 1 − p: the utility of a relevant passage, the distracting effect of an irrelevant one.
    pub fn magnitude(&self) -> f64 {
        1.0 - self.p_no_response
    }

    /// u = R·(1 − p), the value crates/eval uses (`Judgment::utility`).
    pub fn utility(&self) -> f64 {
        ragscope_eval::rag::utility::utility(self.relevant, self.p_no_response)
    }

    pub fn docno(&self) -> String {
        format!("d{}", self.id)
    }
}

/// nDCG@k, MAP, MRR, P@k and UDCG@k (γ = 1/3) of one context.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Metrics {
    pub ndcg: f64,
    pub map: f64,
    pub mrr: f64,
    pub precision: f64,
    pub udcg: f64,
}

impl Metrics {
    /// (short name, value) in display order.
    pub fn named(&self) -> [(&'static str, f64); 5] {
        [
            ("nDCG", self.ndcg),
            ("MAP", self.map),
            ("MRR", self.mrr),
            ("P", self.precision),
            ("UDCG", self.udcg),
        ]
    }
}

/// The measure names given to crates/eval (the same strings `ragscope eval --measures` takes).
pub fn measure_names(k: usize) -> [String; 5] {
    [
        format!("nDCG@{k}"),
        "MAP".into(),
        "MRR".into(),
        format!("P@{k}"),
        format!("UDCG@{k}"),
    ]
}

/// The topic id of the one-question files.
pub const QID: &str = "q1";

/// The context as TREC qrels (every passage judged: 1 relevant, 0 not).
pub fn qrels_text(passages: &[Passage]) -> String {
    passages
        .iter()
        .map(|p| format!("{QID} 0 {} {}\n", p.docno(), u8::from(p.relevant)))
        .collect()
}

/// The context as a TREC run, in context order (descending scores, so trec_eval's ranking is
/// the context's order).
pub fn run_text(passages: &[Passage]) -> String {
    let n = passages.len();
    passages
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{QID} Q0 {} {} {} learn\n", p.docno(), i + 1, n - i))
        .collect()
}

/// The context as a utilities TSV (`qid docno relevant no_res_prob`), p written in Rust's
/// shortest round-trip form so the CLI reads back the very same f64.
pub fn utilities_text(passages: &[Passage]) -> String {
    passages
        .iter()
        .map(|p| {
            format!(
                "{QID}\t{}\t{}\t{}\n",
                p.docno(),
                u8::from(p.relevant),
                p.p_no_response
            )
        })
        .collect()
}

/// Scores the context at cutoff k with crates/eval. A context shorter than k counts its empty
/// slots as missing passages (P@k and UDCG@k still divide by k, as trec_eval and the paper do).
pub fn evaluate(passages: &[Passage], k: usize) -> Result<Metrics, String> {
    if passages.is_empty() {
        return Err("the context is empty".into());
    }
    let qrels =
        parse_qrels("context.qrels", qrels_text(passages).as_bytes()).map_err(|e| e.to_string())?;
    let run = parse_run("context.run", run_text(passages).as_bytes()).map_err(|e| e.to_string())?;
    let utilities = utilities_tsv::parse("context.tsv", &utilities_text(passages))
        .map_err(|e| e.to_string())?;
    let measures = measure_names(k)
        .iter()
        .map(|m| m.parse::<Measure>().map_err(|e| format!("{m}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let opts = EvalOptions {
        utilities: Some(Arc::new(utilities)),
        ..EvalOptions::default()
    };
    let results = evaluate_with(&qrels, &run, &measures, &opts);
    let value = |i: usize| {
        results
            .per_query(&measures[i])
            .next()
            .map(|(_, v)| v)
            .ok_or_else(|| format!("{} was not computed", measures[i]))
    };
    Ok(Metrics {
        ndcg: value(0)?,
        map: value(1)?,
        mrr: value(2)?,
        precision: value(3)?,
        udcg: value(4)?,
    })
}

/// The two sums inside UDCG's sigmoid, to show the formula with the numbers substituted:
/// (Σ u⁺ over the first k, Σ u⁻ over the first k).
pub fn udcg_sums(passages: &[Passage], k: usize) -> (f64, f64) {
    let (mut pos, mut neg) = (0.0, 0.0);
    for u in passages.iter().take(k).map(Passage::utility) {
        if u > 0.0 {
            pos += u;
        } else {
            neg += u;
        }
    }
    (pos, neg)
}

pub const GAMMA: f64 = PAPER_GAMMA;

#[cfg(test)]
mod tests {
    use super::*;

    fn p(id: u32, relevant: bool, p_no_response: f64) -> Passage {
        Passage {
            id,
            relevant,
            p_no_response,
            title: String::new(),
            text: String::new(),
            u_from: None,
        }
    }

    #[test]
    fn one_relevant_passage_at_rank_two_of_five() {
        // By hand: nDCG@5 = (1/log2 3)/1, AP = 1/2, RR = 1/2, P@5 = 1/5;
        // UDCG@5 = σ((0.9 − (0.2 + 0.1 + 0.1 + 0.1)/3)/5).
        let ctx = [
            p(1, false, 0.8),
            p(2, true, 0.1),
            p(3, false, 0.9),
            p(4, false, 0.9),
            p(5, false, 0.9),
        ];
        let m = evaluate(&ctx, 5).unwrap();
        assert!((m.ndcg - 1.0 / 3f64.log2()).abs() < 1e-12);
        assert!((m.map - 0.5).abs() < 1e-12);
        assert!((m.mrr - 0.5).abs() < 1e-12);
        assert!((m.precision - 0.2).abs() < 1e-12);
        let x: f64 = (0.9 - (0.2 + 0.1 + 0.1 + 0.1) / 3.0) / 5.0;
        assert!((m.udcg - 1.0 / (1.0 + (-x).exp())).abs() < 1e-12);
    }

    #[test]
    fn a_missing_passage_pads_with_zero() {
        let ctx = [p(1, true, 0.0), p(2, false, 0.5)];
        let m = evaluate(&ctx, 4).unwrap();
        assert!((m.precision - 0.25).abs() < 1e-12);
        let x: f64 = (1.0 - 0.5 / 3.0) / 4.0;
        assert!((m.udcg - 1.0 / (1.0 + (-x).exp())).abs() < 1e-12);
        assert!(evaluate(&[], 4).is_err());
    }
}
