//! A large run read in two places at once: this worker parses and scores the first part of
//! the file while a helper worker (crates/worker/src/engine/shard.rs) parses and scores the rest,
//! cut at a topic boundary (`ragscope_eval::formats::topic_boundary`). Both score topic by topic as
//! the parser hands them out and keep nothing but the scores ([`PartScorer`]), so the page gets
//! the run's numbers after about half the work, and neither grows its memory for the run
//! first. This worker then parses the whole file itself (the reactor does it right after the
//! report, crates/worker/src/agent.rs), so every other request sees the whole run, exactly as one
//! parse of the file gives it; until then the workspace holds the run's scores and an empty run.
//!
//! Why the first part is not kept as it is read (as it was before 2026-11-24): keeping it
//! made this worker grow and write its memory first and write every result into it, and its
//! half took longer than the helper's. The perf test's flow (`node tests/browser/ab-builds.mjs
//! 11`, alternating, medians): the change event to the row 0.099 s (the first part kept, cut
//! at 45 %) against 0.090 s (scored only, cut at 50 %); the run is whole in the worker 20 ms
//! later than before (163 against 143 ms).
//!
//! Only where nothing but the qrels decides the scores (no utilities, no eRAG outcomes), with
//! the measures of the last evaluation, and only when the two parts share no topic and both
//! parse: anything else (a topic on both sides, a parse error in the later part, a helper
//! that failed) and the file is read again whole, the ordinary way, so what the page shows,
//! errors included, never depends on the cut.
//!
//! Plain Rust, tested natively (crates/worker/src/engine/split_run_tests.rs).

use super::{Loader, Loading, Workspace};
use crate::detect::{detect_kind, Detected};
use ragscope_eval::formats::{Qrels, Run};
use ragscope_eval::{EvalOptions, Measure, Results, ScoredParse};
use ragscope_protocol::{FileId, FileKind, Response};
use std::sync::Arc;

/// Below this a run is read in one place. A choice, not a measured break-even: the helper's
/// start and its messages cost a few milliseconds, and half of an 8 MiB run is about 20 ms of
/// the worker's reading, parsing and scoring at the perf flow's 5 ms a megabyte (97 ms for its
/// 18.8 MB part, `ab-builds.mjs` medians, 2026-11-24).
pub const SPLIT_MIN_BYTES: u64 = 8 << 20;

/// What the helper is asked to score the later part with.
#[derive(Clone, Debug, PartialEq)]
pub struct SplitPlan {
    /// The qrels the helper holds (the workspace's, shared when they were loaded).
    pub qrels: FileId,
    /// The last evaluation's measures, as the registry prints them.
    pub measures: Vec<String>,
}

/// A part's topics and scores: the helper's answer for the later part, and this worker's own
/// for the first.
#[derive(Clone, Debug, PartialEq)]
pub struct PartScores {
    /// Every topic of the part (judged or not), in `strcmp` order.
    pub qids: Vec<String>,
    pub num_results: usize,
    /// The tag of the part's last result line (the run's, for the later part).
    pub run_id: String,
    /// Scored topics, in `strcmp` order, and `values[m][t]`, as `Results` has them.
    pub topics: Vec<String>,
    pub values: Vec<Vec<f64>>,
    pub unjudged: Vec<usize>,
}

impl PartScores {
    /// What the helper sends back for a parsed part and its scores.
    pub fn of(run: &Run, results: Results) -> PartScores {
        PartScores {
            qids: run.topics().iter().map(|t| t.qid().to_string()).collect(),
            num_results: run.num_results(),
            run_id: run.run_id().to_string(),
            topics: results.topics,
            values: results.values,
            unjudged: results.unjudged,
        }
    }

    /// Its scores, as `Results` with `measures` (those it was scored with).
    fn into_results(self, measures: Vec<Measure>) -> Results {
        Results {
            run: self.run_id,
            measures,
            topics: self.topics,
            values: self.values,
            unjudged: self.unjudged,
        }
    }
}

/// A part's work, in the helper and in this worker: parsed and scored topic by topic as the
/// parser hands them out ([`ScoredParse`], as the CLI and the JS package score a run), so it
/// holds a few topics instead of the part, writes no heap ahead, and scores each topic while
/// its results are in the cache. A part whose topics interleave (one comes back after it was
/// scored) must be parsed whole instead ([`PartScores::of`]). It borrows nothing: `qrels` at
/// each call are the ones given to [`new`](Self::new).
pub struct PartScorer {
    scored: ScoredParse,
    /// The handed-out topics' qids, and their results.
    qids: Vec<String>,
    num_results: usize,
    came_back: bool,
}

impl PartScorer {
    pub fn new(name: &str, qrels: &Qrels, measures: &[Measure], opts: &EvalOptions) -> Self {
        PartScorer {
            scored: ScoredParse::new(name, qrels, measures, opts, 1 << 20),
            qids: Vec::new(),
            num_results: 0,
            came_back: false,
        }
    }

    /// The next bytes of the part. False once a topic came back after it was scored: the
    /// part must then be parsed whole, and what comes after is not read.
    pub fn feed(&mut self, qrels: &Qrels, bytes: &[u8]) -> Result<bool, String> {
        if self.came_back {
            return Ok(false);
        }
        let (qids, num_results) = (&mut self.qids, &mut self.num_results);
        let fed = self
            .scored
            .feed(qrels, bytes, |part| {
                qids.extend(part.topics().iter().map(|t| t.qid().to_string()));
                *num_results += part.num_results();
            })
            .map_err(|e| e.to_string())?;
        self.came_back = !fed;
        Ok(fed)
    }

    /// The part's topics and scores, as [`PartScores::of`] gives them for the part parsed whole.
    pub fn finish(self, qrels: &Qrels) -> Result<PartScores, String> {
        if self.came_back {
            return Err("a topic of the part comes back later in it".into());
        }
        let (results, _, rest) = self.scored.finish(qrels).map_err(|e| e.to_string())?;
        let mut qids = self.qids;
        qids.extend(rest.topics().iter().map(|t| t.qid().to_string()));
        qids.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
        Ok(PartScores {
            qids,
            num_results: self.num_results + rest.num_results(),
            run_id: rest.run_id().to_string(),
            topics: results.topics,
            values: results.values,
            unjudged: results.unjudged,
        })
    }
}

/// The run this worker has still to parse whole, having scored it in two parts.
#[derive(Clone, Debug, PartialEq)]
pub struct Tail {
    pub id: FileId,
}

/// The first part of a run read in two places, scored.
#[derive(Debug)]
pub struct FirstPart {
    name: String,
    size: u64,
    part: PartScores,
}

fn plan_measures(plan: &SplitPlan) -> Option<Vec<Measure>> {
    plan.measures.iter().map(|m| m.parse().ok()).collect()
}

/// How a load in two places ended ([`Workspace::join_parts`], or [`Workspace::score_first_part`]
/// when this worker's part cannot be scored).
#[derive(Debug)]
pub enum SplitOutcome {
    /// The run is kept (its first part; the tail to come) with its scores: `Loaded`.
    Kept(Response),
    /// Read the whole file again, the ordinary way (the load was started over).
    Again(String),
}

impl Workspace {
    /// Whether a file of `size` bytes starting with `head` is a run to read in two places,
    /// with the helper holding the qrels `helper_qrels`; the plan to send it.
    pub fn split_plan(
        &self,
        size: u64,
        head: &[u8],
        helper_qrels: Option<FileId>,
    ) -> Option<SplitPlan> {
        let (qrels, _, _) = self.qrels.as_ref()?;
        let last_measures = self.last_measures();
        let ready = size >= SPLIT_MIN_BYTES
            && helper_qrels == Some(*qrels)
            && self.tail.is_none()
            && self.utilities.is_none()
            && self.erag.is_none()
            && !last_measures.is_empty()
            && !last_measures
                .iter()
                .any(|m| m.needs_utilities() || m.needs_erag_outcomes());
        (ready && matches!(detect_kind(head), Detected::Known(FileKind::Run))).then(|| SplitPlan {
            qrels: *qrels,
            measures: last_measures.iter().map(Measure::to_string).collect(),
        })
    }

    /// Run `id`'s load (begun with `LoadStart`) is the first part of a run read in two places:
    /// its topics are scored with `plan`'s measures as they are parsed, so that the scoring
    /// fills the waits for the file's bytes and reads each topic while it is in the cache.
    pub fn score_while_loading(&mut self, id: FileId, plan: &SplitPlan) {
        let opts = self.eval_options();
        if let (Some(loading), Some(measures)) = (self.loading.get_mut(&id), plan_measures(plan)) {
            loading.score_with = Some((measures, opts));
        }
    }

    /// Whether the load of `id` keeps what it parses (every load but a part read to be scored).
    pub fn keeps_what_it_reads(&self, id: FileId) -> bool {
        self.loading
            .get(&id)
            .is_none_or(|loading| loading.score_with.is_none())
    }

    /// The first part of run `id` was fed (from `LoadStart` on, as any file): parses its end
    /// and scores what is not scored yet with `plan`'s measures, while the helper works on the
    /// rest. `None` when the load was cancelled; `Err` (the load started over) when the part
    /// is refused.
    pub fn score_first_part(
        &mut self,
        id: FileId,
        plan: &SplitPlan,
    ) -> Option<Result<FirstPart, SplitOutcome>> {
        let Loading {
            name, size, loader, ..
        } = self.loading.remove(&id)?;
        let qrels = match &self.qrels {
            Some((qrels_id, _, qrels)) if *qrels_id == plan.qrels => Ok(qrels),
            _ => Err("the qrels were removed".to_string()),
        };
        // a first part shorter than the detection's head is still waiting there
        let loader = match loader {
            Loader::Detecting(head) => super::start_loader(&name, size, head),
            other => Ok(other),
        };
        let scored = match loader {
            Ok(Loader::ScoredPart(scorer)) => qrels
                .and_then(|qrels| scorer.finish(qrels))
                .map_err(|e| format!("the first part: {e}")),
            // read as a plain run (its measures were not known when its head came)
            Ok(Loader::Run(parser)) => parser
                .finish()
                .map_err(|e| format!("the first part: {e}"))
                .and_then(|run| {
                    let measures = plan_measures(plan).ok_or("the measures changed")?;
                    let opts = self.eval_options();
                    let results = ragscope_eval::evaluate_with(qrels?, &run, &measures, &opts);
                    Ok(PartScores::of(&run, results))
                }),
            _ => Err("not read as a run".to_string()),
        };
        Some(match scored {
            Ok(part) => Ok(FirstPart { name, size, part }),
            Err(why) => Err(self.start_over(id, name, size, why)),
        })
    }

    /// The load of `id` begun again from its first byte.
    fn start_over(&mut self, id: FileId, name: String, size: u64, why: String) -> SplitOutcome {
        self.handle(ragscope_protocol::Request::LoadStart { id, name, size });
        SplitOutcome::Again(why)
    }

    /// The first part, scored, and the helper's answer for the rest (`later`, or why it
    /// could not): keeps the whole run's scores (for the next evaluation with `plan`'s
    /// measures) and the run to parse whole (the tail), or starts the load over.
    pub fn join_parts(
        &mut self,
        id: FileId,
        plan: &SplitPlan,
        first: FirstPart,
        later: Result<PartScores, String>,
    ) -> SplitOutcome {
        let FirstPart { name, size, part } = first;
        let later = match later {
            Ok(l) => l,
            Err(why) => return self.start_over(id, name, size, format!("the helper: {why}")),
        };
        if shares_a_topic(&part.qids, &later.qids) {
            let why = "a topic on both sides of the cut".to_string();
            return self.start_over(id, name, size, why);
        }
        let measures = plan_measures(plan).unwrap_or_default();
        let key = self
            .score_key(&measures)
            .filter(|k| k.qrels == plan.qrels && k.utilities.is_none() && k.erag.is_none());
        let Some(key) = key else {
            let why = "the qrels changed".to_string();
            return self.start_over(id, name, size, why);
        };
        let summary = format!(
            "{} topics, {} results",
            part.qids.len() + later.qids.len(),
            part.num_results + later.num_results
        );
        let joined = part
            .into_results(measures.clone())
            .join_disjoint(later.into_results(measures));
        let Ok(results) = joined else {
            let why = "the scores do not join".to_string();
            return self.start_over(id, name, size, why);
        };
        self.scores.insert(id, (key, Arc::new(results)));
        let at = self.runs.partition_point(|(r, _, _)| *r < id);
        self.runs.insert(at, (id, name.clone(), Run::empty(&name)));
        self.tail = Some(Tail { id });
        SplitOutcome::Kept(Response::Loaded {
            id,
            name,
            kind: FileKind::Run,
            summary,
        })
    }

    /// The run part this worker has still to parse, if any.
    pub fn tail(&self) -> Option<&Tail> {
        self.tail.as_ref()
    }

    /// Whether `request` can be answered before the tail is parsed: an evaluation whose
    /// every run has scores kept for its measures (the one the page asks for after `Loaded`),
    /// or one that forgets the run.
    pub fn answers_without_tail(&self, request: &ragscope_protocol::Request) -> bool {
        use ragscope_protocol::Request;
        let req = match request {
            Request::Evaluate(req) => req,
            Request::Clear => return true,
            Request::Remove { id } => return self.tail.as_ref().is_some_and(|t| t.id == *id),
            _ => return false,
        };
        let Ok(measures) = req
            .measures
            .iter()
            .map(|m| m.parse::<Measure>())
            .collect::<Result<Vec<_>, _>>()
        else {
            return false;
        };
        let key = self.score_key(&measures);
        key.is_some()
            && self
                .runs
                .iter()
                .all(|(id, _, _)| self.scores.get(id).map(|(k, _)| k) == key.as_ref())
    }

    /// The run parsed whole (or why not): the workspace holds it from now on. A run that can
    /// no longer be read (the file changed since it was scored) is dropped: `LoadFailed`.
    pub fn complete_tail(&mut self, tail: Result<Run, String>) -> Option<Response> {
        let Tail { id } = self.tail.take()?;
        let at = self.runs.iter().position(|(r, _, _)| *r == id)?;
        match tail {
            Ok(run) => {
                self.runs[at].2 = run;
                None
            }
            Err(why) => {
                let (_, name, _) = self.runs.remove(at);
                self.scores.remove(&id);
                Some(Response::LoadFailed {
                    id,
                    error: format!(
                        "{name}: the file changed while it was read ({why}); load it again"
                    ),
                    name,
                })
            }
        }
    }
}

/// Whether two lists of qids (both in `strcmp` order) share one.
fn shares_a_topic(a: &[String], b: &[String]) -> bool {
    let (mut a, mut b) = (a.iter().peekable(), b.iter().peekable());
    while let (Some(x), Some(y)) = (a.peek(), b.peek()) {
        match x.as_bytes().cmp(y.as_bytes()) {
            std::cmp::Ordering::Less => {
                a.next();
            }
            std::cmp::Ordering::Greater => {
                b.next();
            }
            std::cmp::Ordering::Equal => return true,
        }
    }
    false
}
