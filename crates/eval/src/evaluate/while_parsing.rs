//! Scoring a run's topics while the rest of the run is still being parsed.
//!
//! In the browser the worker parses a run as the file streams in, and between batches it
//! waits for the stream; the evaluation came after the whole parse. Here a topic is scored as
//! soon as the parser has moved past it, while its results are still in the CPU's cache, and
//! [`finish`](ScoresWhileParsing::finish) scores only what is left: the last topic, topics
//! absent from the run (with `complete`), and any topic that got more results after it was
//! scored (a run whose topics interleave; then nothing more is scored early). The values are
//! [`evaluate_with`](super::evaluate_with)'s bit for bit: the same per-topic function on the
//! same results, in the same order of topics.

use std::collections::HashMap;

use super::{levels_of, ranking_of, score_topic, EvalOptions, Results, TopicContext, TopicScratch};
use crate::formats::{Qrels, Run, RunParser};
use crate::measures::{Measure, RankingOptions};

/// The scores of one run's topics, gathered while the run is parsed.
pub struct ScoresWhileParsing {
    measures: Vec<Measure>,
    opts: EvalOptions,
    ranking: RankingOptions,
    levels: Vec<i32>,
    scratch: TopicScratch,
    /// One value per measure, reused from topic to topic.
    columns: Vec<Vec<f64>>,
    /// By qid: the topic's values as scored early, with how many results it had then.
    early: HashMap<String, Early>,
    /// The first of the parser's topics (in the order they came) not looked at yet.
    next: usize,
    /// A topic already passed got more results: the run's topics interleave.
    interleaved: bool,
}

struct Early {
    results: usize,
    values: Vec<f64>,
    unjudged: Vec<usize>,
}

impl ScoresWhileParsing {
    pub fn new(measures: &[Measure], opts: &EvalOptions) -> Self {
        ScoresWhileParsing {
            measures: measures.to_vec(),
            opts: opts.clone(),
            ranking: ranking_of(opts),
            levels: levels_of(measures),
            scratch: TopicScratch::default(),
            columns: vec![Vec::with_capacity(1); measures.len()],
            early: HashMap::new(),
            next: 0,
            interleaved: false,
        }
    }

    pub fn measures(&self) -> &[Measure] {
        &self.measures
    }

    /// Topics scored early so far (the others are scored by `finish`).
    pub fn scored_early(&self) -> usize {
        self.early.len()
    }

    /// Scores the topics `parser` has moved past since the last call. The same `qrels` must
    /// be given to every call and to `finish`.
    pub fn score_passed(&mut self, qrels: &Qrels, parser: &RunParser) {
        if self.interleaved {
            return;
        }
        let topics = parser.topics_so_far();
        // the topic of the last line may go on in the next chunk; natively, after a chunk
        // parsed on two threads, that is not known: then the last one read may
        let open = parser
            .last_topic()
            .unwrap_or(topics.len().saturating_sub(1));
        if open < self.next {
            self.interleaved = true;
            return;
        }
        let context = TopicContext {
            docnos: parser.docnos(),
            measures: &self.measures,
            opts: &self.opts,
            ranking: &self.ranking,
            levels: &self.levels,
        };
        for run_topic in &topics[self.next..open] {
            let Some(qt) = qrels.topic(run_topic.qid()) else {
                continue;
            };
            for c in &mut self.columns {
                c.clear();
            }
            let mut unjudged = vec![0; self.measures.len()];
            score_topic(
                &context,
                qt,
                Some(run_topic),
                &mut self.scratch,
                &mut self.columns,
                &mut unjudged,
            );
            self.early.insert(
                run_topic.qid().to_string(),
                Early {
                    results: run_topic.docs().len(),
                    values: self.columns.iter().map(|c| c[0]).collect(),
                    unjudged,
                },
            );
        }
        self.next = open;
    }

    /// The results of `run` (the parse `score_passed` saw, finished) against `qrels`, as
    /// [`evaluate_with`](super::evaluate_with) gives them.
    pub fn finish(mut self, qrels: &Qrels, run: &Run) -> Results {
        let context = TopicContext {
            docnos: run.docnos(),
            measures: &self.measures,
            opts: &self.opts,
            ranking: &self.ranking,
            levels: &self.levels,
        };
        let mut topics = Vec::new();
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); self.measures.len()];
        let mut unjudged = vec![0usize; self.measures.len()];
        for qt in qrels.topics() {
            let run_topic = run.topic(qt.qid());
            if run_topic.is_none() && !self.opts.complete {
                continue;
            }
            let early = self.early.get(qt.qid());
            match (run_topic, early) {
                (Some(rt), Some(e)) if e.results == rt.docs().len() => {
                    for (column, v) in values.iter_mut().zip(&e.values) {
                        column.push(*v);
                    }
                    for (sum, n) in unjudged.iter_mut().zip(&e.unjudged) {
                        *sum += n;
                    }
                }
                _ => score_topic(
                    &context,
                    qt,
                    run_topic,
                    &mut self.scratch,
                    &mut values,
                    &mut unjudged,
                ),
            }
            topics.push(qt.qid().to_string());
        }
        Results {
            run: run.run_id().to_string(),
            measures: self.measures,
            topics,
            values,
            unjudged,
        }
    }
}
