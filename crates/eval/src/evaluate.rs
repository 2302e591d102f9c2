//! The library entry point: evaluate a run against qrels for a list of measures.

use std::sync::Arc;

use serde::Serialize;

use crate::formats::{ParseError, Qrels, QrelsTopic, Run, RunParser};
use crate::measures::topic::{ranked_rels, TopicEval};
use crate::measures::{Measure, RankingOptions};
use crate::rag::erag_outcomes::EragOutcomes;
use crate::rag::utilities_tsv::Utilities;

/// Measures the app shows when the user has not picked any.
pub const DEFAULT_MEASURES: &[&str] = &["MAP", "MRR", "nDCG@10", "P@10", "R@100", "bpref", "Rprec"];

/// Which topics are scored, and the extra judgments RAG measures read.
#[derive(Debug, Clone, Serialize)]
pub struct EvalOptions {
    /// Score every qrels topic, a topic absent from the run as an empty ranking
    /// (trec_eval `-c`). Otherwise only topics in both qrels and run are scored.
    pub complete: bool,
    /// Keep only this many results per topic after ranking (trec_eval `-M`).
    pub max_docs: usize,
    /// Passage utilities (relevance label and p(NO-RESPONSE)) for UDCG measures. UDCG takes
    /// each passage's relevance from here, not from the qrels; the qrels still decide which
    /// topics are scored, as for every other measure. Shared, so options stay cheap to clone.
    #[serde(skip)]
    pub utilities: Option<Arc<Utilities>>,
    /// Which reader LLM's p(NO-RESPONSE) to use when the utilities name models (`""`: rows
    /// without a model column; a topic with no row for the model falls back to those).
    pub utility_model: String,
    /// Per-passage answers (`ragscope answer --erag`) for eRAG measures, by qid and docno.
    #[serde(skip)]
    pub erag: Option<Arc<EragOutcomes>>,
}

impl Default for EvalOptions {
    fn default() -> Self {
        EvalOptions {
            complete: false,
            max_docs: usize::MAX,
            utilities: None,
            utility_model: String::new(),
            erag: None,
        }
    }
}

/// Why [`try_evaluate`] refused to score.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    #[error(
        "{0} needs passage utilities (a utilities TSV: qid docno relevant no_res_prob [model])"
    )]
    MissingUtilities(String),
    #[error("{0} needs eRAG outcomes (the per-passage answers of `ragscope answer --erag`)")]
    MissingEragOutcomes(String),
}

/// Per-topic values of each measure, topics in `strcmp` order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Results {
    pub run: String,
    pub measures: Vec<Measure>,
    pub topics: Vec<String>,
    /// `values[m][t]`: measure `m` on topic `t`.
    pub values: Vec<Vec<f64>>,
    /// `unjudged[m]`: for UDCG measures, retrieved passages within the cutoff that had no
    /// utility (for eRAG measures: no per-passage outcome), summed over topics (they score utility 0; callers should report them). Always
    /// 0 for the other measures, which treat unjudged documents as trec_eval does.
    pub unjudged: Vec<usize>,
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

    /// Passages without a utility that `measure` met (see [`Results::unjudged`]).
    pub fn unjudged(&self, measure: &Measure) -> Option<usize> {
        Some(self.unjudged[self.index(measure)?])
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

    /// The results of one run scored in two parts with no topic in common (cut at
    /// [`topic_boundary`](crate::formats::topic_boundary)): topics merged in `strcmp` order, the run id of the later
    /// part (the tag of the file's last line). Per-topic values depend on nothing but the
    /// topic, so this equals scoring the joined run. `Err(later)` when the measures differ or
    /// a topic is in both.
    pub fn join_disjoint(self, later: Results) -> Result<Results, Results> {
        if self.measures != later.measures || self.values.len() != later.values.len() {
            return Err(later);
        }
        let mut order = Vec::with_capacity(self.topics.len() + later.topics.len());
        let (mut i, mut j) = (0, 0);
        while i < self.topics.len() || j < later.topics.len() {
            let first = match (self.topics.get(i), later.topics.get(j)) {
                (Some(a), Some(b)) if a == b => return Err(later),
                (Some(a), Some(b)) => a.as_bytes() < b.as_bytes(),
                (Some(_), None) => true,
                (None, _) => false,
            };
            order.push(first);
            if first {
                i += 1;
            } else {
                j += 1;
            }
        }
        let pick = |mine: &[f64], theirs: &[f64]| {
            let (mut a, mut b) = (mine.iter(), theirs.iter());
            order
                .iter()
                .filter_map(|&first| if first { a.next() } else { b.next() })
                .copied()
                .collect::<Vec<f64>>()
        };
        let values = self
            .values
            .iter()
            .zip(&later.values)
            .map(|(a, b)| pick(a, b))
            .collect();
        let mut topics = Vec::with_capacity(order.len());
        let (mut a, mut b) = (self.topics.into_iter(), later.topics.into_iter());
        topics.extend(
            order
                .iter()
                .filter_map(|&first| if first { a.next() } else { b.next() }),
        );
        Ok(Results {
            run: later.run,
            measures: self.measures,
            topics,
            values,
            unjudged: (self.unjudged.iter().zip(&later.unjudged))
                .map(|(a, b)| a + b)
                .collect(),
        })
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

/// [`evaluate_with`], refusing UDCG measures when `opts` carries no utilities (where
/// [`evaluate_with`] would give NaN).
pub fn try_evaluate(
    qrels: &Qrels,
    run: &Run,
    measures: &[Measure],
    opts: &EvalOptions,
) -> Result<Results, EvalError> {
    if opts.utilities.is_none() {
        if let Some(m) = measures.iter().find(|m| m.needs_utilities()) {
            return Err(EvalError::MissingUtilities(m.to_string()));
        }
    }
    if opts.erag.is_none() {
        if let Some(m) = measures.iter().find(|m| m.needs_erag_outcomes()) {
            return Err(EvalError::MissingEragOutcomes(m.to_string()));
        }
    }
    Ok(evaluate_with(qrels, run, measures, opts))
}

/// Scores `run` against `qrels` with explicit options. UDCG measures score NaN on every topic
/// when `opts.utilities` is `None`; use [`try_evaluate`] to get an error instead.
pub fn evaluate_with(
    qrels: &Qrels,
    run: &Run,
    measures: &[Measure],
    opts: &EvalOptions,
) -> Results {
    let all = qrels.topics();
    // Natively, many topics are scored on two threads (each topic is independent) and the
    // halves concatenated, so the order and every value are the serial ones.
    #[cfg(not(target_arch = "wasm32"))]
    let scored = if all.len() >= 64 && crate::formats::parallel::threads() > 1 {
        let (first, second) = all.split_at(all.len() / 2);
        std::thread::scope(|scope| {
            let worker = scope.spawn(|| score_topics(second, run, measures, opts));
            let mut a = score_topics(first, run, measures, opts);
            let b = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            a.append(b);
            a
        })
    } else {
        score_topics(all, run, measures, opts)
    };
    #[cfg(target_arch = "wasm32")]
    let scored = score_topics(all, run, measures, opts);
    let Scored {
        topics,
        values,
        unjudged,
    } = scored;
    Results {
        run: run.run_id().to_string(),
        measures: measures.to_vec(),
        topics,
        values,
        unjudged,
    }
}

/// The scores of a contiguous range of qrels topics.
struct Scored {
    topics: Vec<String>,
    values: Vec<Vec<f64>>,
    unjudged: Vec<usize>,
}

impl Scored {
    #[cfg(not(target_arch = "wasm32"))]
    fn append(&mut self, other: Scored) {
        self.topics.extend(other.topics);
        for (mine, theirs) in self.values.iter_mut().zip(other.values) {
            mine.extend(theirs);
        }
        for (mine, theirs) in self.unjudged.iter_mut().zip(other.unjudged) {
            *mine += theirs;
        }
    }
}

fn score_topics(
    qrels_topics: &[QrelsTopic],
    run: &Run,
    measures: &[Measure],
    opts: &EvalOptions,
) -> Scored {
    let ranking = RankingOptions {
        max_docs: opts.max_docs,
        ..RankingOptions::default()
    };
    let mut topics = Vec::new();
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); measures.len()];
    let mut scratch = TopicScratch::default();
    let mut unjudged = vec![0usize; measures.len()];
    let mut levels: Vec<i32> = measures.iter().map(|m| m.level()).collect();
    levels.sort_unstable();
    levels.dedup();
    let context = TopicContext {
        run,
        measures,
        opts,
        ranking: &ranking,
        levels: &levels,
    };
    for qt in qrels_topics {
        let run_topic = run.topic(qt.qid());
        if run_topic.is_none() && !opts.complete {
            continue;
        }
        score_topic(
            &context,
            qt,
            run_topic,
            &mut scratch,
            &mut values,
            &mut unjudged,
        );
        topics.push(qt.qid().to_string());
    }
    Scored {
        topics,
        values,
        unjudged,
    }
}

/// What every topic of one `score_topics` call is scored with.
struct TopicContext<'a> {
    run: &'a Run,
    measures: &'a [Measure],
    opts: &'a EvalOptions,
    ranking: &'a RankingOptions,
    levels: &'a [i32],
}

/// Buffers reused from topic to topic.
#[derive(Default)]
struct TopicScratch {
    ranking: Vec<(u64, u32)>,
    rels: Vec<i32>,
    judgments: Vec<Option<crate::rag::Judgment>>,
}

/// One topic's value of every measure, appended to `values`. Never inlined into the loop over
/// topics: in wasm, V8 switches a function to its optimised code only at its next call, so
/// the loop over a run's topics (called once per run) runs in the baseline tier on a first
/// `evaluate()`; as a function called once per topic this is optimised after a few topics,
/// and the loop around it is small (with the body inlined, its optimised compile alone took
/// 24-75 ms of a cold call's CPU under Node).
#[inline(never)]
fn score_topic(
    context: &TopicContext,
    qt: &QrelsTopic,
    run_topic: Option<&crate::formats::RunTopic>,
    buffers: &mut TopicScratch,
    values: &mut [Vec<f64>],
    unjudged: &mut [usize],
) {
    let TopicContext {
        run,
        measures,
        opts,
        ranking,
        levels,
    } = *context;
    let TopicScratch {
        ranking: scratch,
        rels,
        judgments: judgments_scratch,
    } = buffers;
    match run_topic {
        Some(rt) => ranked_rels(run, rt, qt, ranking, scratch, rels),
        None => {
            rels.clear();
            scratch.clear();
        }
    }
    let base = TopicEval::new(rels, qt.levels(), 1, false, 0);
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
    // `ranked_rels` leaves the ranking (after -M) in `scratch` as doc indices.
    let docs = run_topic.map_or(&[][..], |rt| rt.docs());
    let ranked_docnos = || scratch.iter().map(|&(_, d)| run.docno(&docs[d as usize]));
    for (i, (m, out)) in measures.iter().zip(values.iter_mut()).enumerate() {
        if let Some(metric) = m.erag_metric() {
            let Some(erag) = &opts.erag else {
                out.push(f64::NAN);
                continue;
            };
            let docnos = ranked_docnos();
            let k = m.cutoff.map_or(usize::MAX, |k| k as usize);
            let q = crate::rag::erag::score_docnos(k, docnos, erag.questions.get(qt.qid()), metric);
            unjudged[i] += q.unscored;
            out.push(match m.kind {
                crate::measures::MeasureKind::EragP(_) => q.precision,
                _ => q.success,
            });
            continue;
        }
        if let Some(variant) = m.udcg() {
            let Some(utilities) = &opts.utilities else {
                out.push(f64::NAN);
                continue;
            };
            let docnos = ranked_docnos();
            let judgments = utilities.question(&opts.utility_model, qt.qid());
            let q = variant.score_docnos(
                m.cutoff.map(|k| k as usize),
                docnos,
                judgments,
                judgments_scratch,
            );
            unjudged[i] += q.unjudged;
            out.push(q.value);
            continue;
        }
        let t = views
            .iter()
            .find(|(l, _)| *l == m.level())
            .map(|(_, t)| t)
            .unwrap_or(&base);
        out.push(m.compute(t));
    }
}

/// [`evaluate_with`] on a run scored in parts: the batches of topics its parser hands out while
/// it reads ([`crate::formats::parse_handing_out`]), then what is left. The [`Results`] are
/// [`evaluate_with`]'s on the whole run, value for value: each topic is scored by the same
/// function, and the topics are put in qrels order at the end.
pub struct EvaluationInParts {
    /// Owned (a few bytes each) so that a parse kept across calls can hold it.
    measures: Vec<Measure>,
    opts: EvalOptions,
    ranking: RankingOptions,
    levels: Vec<i32>,
    scratch: TopicScratch,
    /// Per qrels topic, its place in `values` once scored.
    at: Vec<Option<usize>>,
    scored: usize,
    values: Vec<Vec<f64>>,
    unjudged: Vec<usize>,
}

impl EvaluationInParts {
    pub fn new(qrels: &Qrels, measures: &[Measure], opts: &EvalOptions) -> Self {
        let mut levels: Vec<i32> = measures.iter().map(|m| m.level()).collect();
        levels.sort_unstable();
        levels.dedup();
        EvaluationInParts {
            measures: measures.to_vec(),
            opts: opts.clone(),
            ranking: RankingOptions {
                max_docs: opts.max_docs,
                ..RankingOptions::default()
            },
            levels,
            scratch: TopicScratch::default(),
            at: vec![None; qrels.topics().len()],
            scored: 0,
            values: vec![Vec::new(); measures.len()],
            unjudged: vec![0; measures.len()],
        }
    }

    /// Scores the topics of `part` that the qrels have (the others are never scored).
    pub fn score(&mut self, qrels: &Qrels, part: &Run) {
        self.score_topics(qrels, part, part.topics());
    }

    /// Scores `topics` of `run` that the qrels have (the others are never scored).
    pub fn score_topics(&mut self, qrels: &Qrels, run: &Run, topics: &[crate::formats::RunTopic]) {
        let context = TopicContext {
            run,
            measures: &self.measures,
            opts: &self.opts,
            ranking: &self.ranking,
            levels: &self.levels,
        };
        for rt in topics {
            let qid = rt.qid().as_bytes();
            let Ok(index) = qrels
                .topics()
                .binary_search_by(|t| t.qid().as_bytes().cmp(qid))
            else {
                continue;
            };
            let qt = &qrels.topics()[index];
            score_topic(
                &context,
                qt,
                Some(rt),
                &mut self.scratch,
                &mut self.values,
                &mut self.unjudged,
            );
            self.at[index] = Some(self.scored);
            self.scored += 1;
        }
    }

    /// Scores the topics of `rest` (the run's last part) and every topic still missing under
    /// `complete`; returns the results and how many qrels topics the run has no results for.
    pub fn finish(mut self, qrels: &Qrels, rest: &Run) -> (Results, usize) {
        let context = TopicContext {
            run: rest,
            measures: &self.measures,
            opts: &self.opts,
            ranking: &self.ranking,
            levels: &self.levels,
        };
        let mut topics = Vec::new();
        let mut values: Vec<Vec<f64>> = vec![Vec::new(); self.measures.len()];
        let mut missing = 0;
        for (index, qt) in qrels.topics().iter().enumerate() {
            if let Some(k) = self.at[index] {
                for (out, part) in values.iter_mut().zip(&self.values) {
                    out.push(part[k]);
                }
                topics.push(qt.qid().to_string());
                continue;
            }
            let run_topic = rest.topic(qt.qid());
            if run_topic.is_none() {
                missing += 1;
                if !self.opts.complete {
                    continue;
                }
            }
            score_topic(
                &context,
                qt,
                run_topic,
                &mut self.scratch,
                &mut values,
                &mut self.unjudged,
            );
            topics.push(qt.qid().to_string());
        }
        let results = Results {
            run: rest.run_id().to_string(),
            measures: self.measures,
            topics,
            values,
            unjudged: self.unjudged,
        };
        (results, missing)
    }
}

/// A run parsed and scored on this thread at once: each batch of topics the parser hands out
/// ([`RunParser::feed_and_score`]) is scored ([`EvaluationInParts`]) and its memory reused, so
/// a run written topic by topic is never held whole. What the JS package's `evaluate()` and the
/// app's workers do; natively `read_and_evaluate` does it on one or two threads. It borrows
/// nothing, so it can be kept beside the qrels: `qrels` at each call are the ones given to
/// [`new`](Self::new).
pub struct ScoredParse {
    parts: EvaluationInParts,
    parser: RunParser,
}

impl ScoredParse {
    /// `expect_bytes`: about how much is fed at a time (sizes the parser's first storage).
    pub fn new(
        name: &str,
        qrels: &Qrels,
        measures: &[Measure],
        opts: &EvalOptions,
        expect_bytes: usize,
    ) -> Self {
        let mut parser = RunParser::new(name);
        parser.expect_bytes(expect_bytes);
        ScoredParse {
            parts: EvaluationInParts::new(qrels, measures, opts),
            parser,
        }
    }

    /// The next bytes of the run; `seen` is shown each batch before it is scored. `Ok(false)`
    /// once a handed-out topic came back (the run's topics interleave): nothing more is
    /// scored, and the run must be parsed again and scored whole (not [`finish`](Self::finish)ed).
    pub fn feed(
        &mut self,
        qrels: &Qrels,
        bytes: &[u8],
        mut seen: impl FnMut(&Run),
    ) -> Result<bool, ParseError> {
        let parts = &mut self.parts;
        self.parser.feed_and_score(bytes, |part| {
            seen(part);
            parts.score(qrels, part);
        })?;
        Ok(!self.parser.came_back())
    }

    /// The results, how many qrels topics the run has no results for, and the topics never
    /// handed out (normally the last one; with the tag of the run's last line).
    pub fn finish(self, qrels: &Qrels) -> Result<(Results, usize, Run), ParseError> {
        let rest = self.parser.finish()?;
        let (results, missing) = self.parts.finish(qrels, &rest);
        Ok((results, missing, rest))
    }
}

/// How many qrels topics `run` has no results for.
pub fn missing_topics(qrels: &Qrels, run: &Run) -> usize {
    qrels
        .topics()
        .iter()
        .filter(|t| run.topic(t.qid()).is_none())
        .count()
}

/// Natively: [`evaluate_with`] on a run held whole (`bytes`, named `name`), scored while it is
/// parsed, on a second thread that first gets the qrels (`qrels`: parsed there while the run's
/// parse starts, or handed over), and gives them back. A run whose topics interleave is parsed
/// again and scored whole. Returns the qrels, and the results with how many qrels topics the
/// run lacks, or the run's parse error; `Ok(None)` whenever the qrels failed (report theirs).
#[cfg(not(target_arch = "wasm32"))]
#[allow(clippy::type_complexity)]
pub fn read_and_evaluate<E: Send>(
    name: &str,
    bytes: crate::formats::SharedBytes,
    qrels: impl FnOnce() -> Result<Qrels, E> + Send,
    measures: &[Measure],
    opts: &EvalOptions,
) -> (
    Result<Qrels, E>,
    Result<Option<(Results, usize)>, crate::formats::ReadError>,
) {
    use crate::formats::{parse_handing_out, read_run_input, Input, Parsed, ReadError};
    let prepare = || {
        let qrels = qrels();
        let parts = qrels
            .as_ref()
            .ok()
            .map(|q| EvaluationInParts::new(q, measures, opts));
        (qrels, parts)
    };
    let score =
        |(qrels, parts): &mut (Result<Qrels, E>, Option<EvaluationInParts>), part: &Run| match (
            qrels, parts,
        ) {
            (Ok(q), Some(parts)) => {
                parts.score(q, part);
                true
            }
            _ => false,
        };
    let ((qrels, parts), parsed) = parse_handing_out(name, &bytes, prepare, score);
    let results = match (&qrels, parsed, parts) {
        // the qrels' error comes first; the run is not read again for its own
        (Err(_), _, _) => Ok(None),
        (_, Parsed::Failed(e), _) => Err(ReadError::Parse(e)),
        (Ok(q), Parsed::Rest(rest), Some(parts)) => Ok(Some(parts.finish(q, &rest))),
        (Ok(q), _, _) => read_run_input(name, Input::Whole(bytes)).map(|run| {
            Some((
                evaluate_with(q, &run, measures, opts),
                missing_topics(q, &run),
            ))
        }),
    };
    (qrels, results)
}

#[cfg(all(test, not(target_arch = "wasm32")))]
#[path = "evaluate_in_parts_tests.rs"]
mod in_parts_tests;
