//! The library entry point: evaluate a run against qrels for a list of measures.

use serde::Serialize;

use crate::formats::{Qrels, Run};
use crate::measures::topic::{ranked_rels, TopicEval};
use crate::measures::{Measure, RankingOptions};

/// Measures the app shows when the user has not picked any.
pub const DEFAULT_MEASURES: &[&str] = &["MAP", "MRR", "nDCG@10", "P@10", "R@100", "bpref", "Rprec"];

/// Which topics are scored.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct EvalOptions {
    /// Score every qrels topic, a topic absent from the run as an empty ranking
    /// (trec_eval `-c`). Otherwise only topics in both qrels and run are scored.
    pub complete: bool,
    /// Keep only this many results per topic after ranking (trec_eval `-M`).
    pub max_docs: usize,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            complete: false,
            max_docs: usize::MAX,
        }
    }
}

/// Per-topic values of each measure, topics in `strcmp` order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Results {
    pub run: String,
    pub measures: Vec<Measure>,
    pub topics: Vec<String>,
    /// `values[m][t]`: measure `m` on topic `t`.
    pub values: Vec<Vec<f64>>,
}

impl Results {
    fn index(&self, measure: &Measure) -> Option<usize> {
        self.measures.iter().position(|m| m == measure)
    }

    /// `(qid, value)` for each scored topic.
    pub fn per_query<'a>(&'a self, measure: &Measure) -> impl Iterator<Item = (&'a str, f64)> + 'a {
        let values: &[f64] = match self.index(measure) {
            Some(i) => &self.values[i],
            None => &[],
        };
        self.topics
            .iter()
            .map(String::as_str)
            .zip(values.iter().copied())
    }

    /// Arithmetic mean over topics (`None` if the measure was not computed or no topic
    /// was scored).
    pub fn mean(&self, measure: &Measure) -> Option<f64> {
        let values = &self.values[self.index(measure)?];
        if values.is_empty() {
            return None;
        }
        Some(values.iter().fold(0.0, |acc, v| acc + v) / values.len() as f64)
    }

    /// The summary trec_eval would print: the sum for counts, the mean otherwise.
    pub fn summary(&self, measure: &Measure) -> Option<f64> {
        if measure.is_count() {
            Some(
                self.values[self.index(measure)?]
                    .iter()
                    .fold(0.0, |acc, v| acc + v),
            )
        } else {
            self.mean(measure)
        }
    }
}

/// Scores `run` against `qrels` on the topics both contain (trec_eval's default).
pub fn evaluate(qrels: &Qrels, run: &Run, measures: &[Measure]) -> Results {
    evaluate_with(qrels, run, measures, &EvalOptions::default())
}

/// Scores `run` against `qrels` with explicit options.
pub fn evaluate_with(
    qrels: &Qrels,
    run: &Run,
    measures: &[Measure],
    opts: &EvalOptions,
) -> Results {
    let ranking = RankingOptions {
        max_docs: opts.max_docs,
        ..RankingOptions::default()
    };
    let mut topics = Vec::new();
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); measures.len()];
    let mut scratch = Vec::new();
    let mut rels = Vec::new();
    let mut levels: Vec<i32> = measures.iter().map(|m| m.level()).collect();
    levels.sort_unstable();
    levels.dedup();
    for qt in qrels.topics() {
        match run.topic(qt.qid()) {
            Some(rt) => ranked_rels(run, rt, qt, &ranking, &mut scratch, &mut rels),
            None if opts.complete => rels.clear(),
            None => continue,
        }
        let base = TopicEval::new(&rels, qt.levels(), 1, false, 0);
        let views: Vec<(i32, TopicEval)> = levels
            .iter()
            .map(|&l| {
                (
                    l,
                    if l == 1 {
                        base.clone()
                    } else {
                        base.with_level(l)
                    },
                )
            })
            .collect();
        for (m, out) in measures.iter().zip(values.iter_mut()) {
            let t = views
                .iter()
                .find(|(l, _)| *l == m.level())
                .map(|(_, t)| t)
                .unwrap_or(&base);
            out.push(m.compute(t));
        }
        topics.push(qt.qid().to_string());
    }
    Results {
        run: run.run_id().to_string(),
        measures: measures.to_vec(),
        topics,
        values,
    }
}
