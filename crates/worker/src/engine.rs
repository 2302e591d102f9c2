//! What the worker does with requests: detect, parse (streaming) and keep files; evaluate runs.
//!
//! Plain Rust over crates/eval, with no browser types, so it is tested natively too.

mod tournament;

use crate::detect::{detect_kind, Detected, DETECT_BYTES};
use ragscope_eval::formats::{Qrels, QrelsParser, Run, RunParser};
use ragscope_eval::rag::contexts::{self, ContextSet};
use ragscope_eval::rag::correlation::{study, StudyConfig};
use ragscope_eval::rag::reference_json::{self, UdcgDataset};
use ragscope_eval::rag::utilities_tsv::{self, Utilities};
use ragscope_eval::rag::{classic, Convention, UdcgParams};
use ragscope_eval::stats::paired::{paired_t, randomization};
use ragscope_eval::stats::{holm, Alternative};
use ragscope_eval::{EvalOptions, Measure, Results};
use ragscope_protocol::{
    EvalRequest, FileId, FileKind, MeasureInfo, RankedRow, Report, ReportOf, Request, Response,
    RunRow, SigTest, Significance, StudyGroup, StudyRow, StudyTable, TopicView, UdcgPoint,
    UdcgSeries,
};
use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

mod answers;
#[cfg(target_arch = "wasm32")]
pub mod blob_load;
#[cfg(test)]
mod erag_tests;
pub mod inference;
#[cfg(test)]
mod judged_answers_tests;
pub mod judges;
pub mod litm_prompts;
pub mod litm_remote;
#[cfg(test)]
mod litm_remote_p_tests;
#[cfg(test)]
mod litm_remote_server_tests;
#[cfg(test)]
mod litm_remote_tests;
#[cfg(target_arch = "wasm32")]
pub mod shard;
pub mod split_run;
#[cfg(test)]
mod split_run_tests;
pub mod warm_up;

/// Text formats are parsed whole (their parsers take `&str`); this caps what one may hold.
const MAX_TEXT_BYTES: usize = 512 * 1024 * 1024;
/// Rows of a ranked list sent to the UI for the topic drill-down.
const TOPIC_ROWS: usize = 100;
/// Context size of the UDCG-vs-nDCG view of a run (the paper's k).
pub const UDCG_K: usize = 10;
/// Sign patterns of the randomization test; seeded, so the table is reproducible.
const RANDOMIZATION_RESAMPLES: usize = 10_000;

/// What a run's scores depend on besides the run: the qrels, the measures, and the options
/// `eval_options` fills in from other files. Files are never changed in place (a file loaded
/// again gets a new id), so equal keys mean equal scores.
#[derive(Clone, PartialEq, Debug)]
struct ScoreKey {
    qrels: FileId,
    measures: Vec<String>,
    utilities: Option<FileId>,
    utility_model: String,
    erag: Option<FileId>,
}

enum Loader {
    /// Waiting for enough bytes to tell the format.
    Detecting(Vec<u8>),
    Run(RunParser),
    /// The first part of a run read in two places, scored as it is parsed and not kept
    /// (split_run.rs).
    ScoredPart(Box<split_run::PartScorer>),
    Qrels(QrelsParser),
    Text(FileKind, Vec<u8>),
}

struct Loading {
    name: String,
    bytes: u64,
    /// The file's size as the page gave it (sizes the parser's docno arena).
    size: u64,
    loader: Loader,
    /// Score a run as it is parsed, with these measures and options (split_run.rs).
    score_with: Option<(Vec<Measure>, EvalOptions)>,
}

#[derive(Default)]
pub struct Workspace {
    qrels: Option<(FileId, String, Qrels)>,
    runs: Vec<(FileId, String, Run)>,
    utilities: Option<(FileId, String, Arc<Utilities>)>,
    /// The reader model whose utilities UDCG uses: rows without a model, else the first named.
    utility_model: String,
    udcg_json: Vec<(FileId, String, UdcgDataset)>,
    contexts: Option<(FileId, String, Vec<ContextSet>)>,
    /// Per-passage answers of a context-set file written by `ragscope answer --erag`, which the
    /// eRAG measures read.
    erag: Option<(FileId, Arc<ragscope_eval::rag::erag_outcomes::EragOutcomes>)>,
    answers: answers::AnswerFiles,
    tournament: tournament::TournamentFiles,
    /// Topics and passages, the inputs of LLM judges.
    judge_files: judges::JudgeFiles,
    loading: HashMap<FileId, Loading>,
    /// Each run's scores from the last evaluation, with what they depended on: the page
    /// evaluates again after every file it loads, and then only runs new since are scored.
    scores: HashMap<FileId, (ScoreKey, Arc<Results>)>,
    /// The text of each loaded UDCG JSON file (questions and passages to compute utilities for).
    udcg_sources: HashMap<FileId, (String, String)>,
    /// The model opened for "compute locally", and the utilities being computed with it.
    local: Option<inference::LocalModel>,
    job: Option<inference::UtilityJob>,
    /// Context-set texts and the answers being computed for them ("answer the contexts").
    answering: inference::answering::Answering,
    /// The lost-in-the-middle experiment being computed with `local`.
    litm: Option<inference::litm::LitmJob>,
    /// The part of a run read in two places that this worker has still to parse.
    tail: Option<split_run::Tail>,
    /// The last evaluation asked for: what an evaluation ahead of the request repeats, and
    /// the measures a run read in two places is scored with
    /// (crates/worker/src/engine/split_run.rs).
    last_request: Option<EvalRequest>,
}

impl Workspace {
    /// Answers a request; `Evaluate` runs to completion here (the reactor steps it instead).
    pub fn handle(&mut self, request: Request) -> Vec<Response> {
        match request {
            Request::LoadStart { id, name, size } => {
                self.loading.insert(
                    id,
                    Loading {
                        name,
                        bytes: 0,
                        size,
                        loader: Loader::Detecting(Vec::new()),
                        score_with: None,
                    },
                );
                vec![]
            }
            Request::LoadChunk { id, bytes } => self.feed(id, &bytes).into_iter().collect(),
            Request::LoadEnd { id } => self.finish(id).into_iter().collect(),
            // Read by the worker's main loop (blob_load.rs); here only when something else runs.
            Request::LoadBlob { id, name, .. } => vec![Response::LoadFailed {
                id,
                error: format!(
                    "{name}: the worker reads files only when no local computation runs; \
                     load it again when it ends"
                ),
                name,
            }],
            Request::Cancel { id } => {
                self.loading.remove(&id);
                vec![]
            }
            Request::Remove { id } => {
                self.remove(id);
                vec![]
            }
            Request::Clear => {
                *self = Workspace::default();
                vec![]
            }
            Request::Evaluate(req) => {
                let generation = req.generation;
                let mut out = Vec::new();
                let result = self.start_evaluation(req).map(|mut ev| {
                    while let Some((done, total)) = ev.step(self) {
                        out.push(Response::EvalProgress {
                            generation,
                            done,
                            total,
                        });
                    }
                    ev.finish(self)
                });
                out.push(match result {
                    Ok(report) => Response::Report(Box::new(report)),
                    Err(error) => Response::EvalFailed { generation, error },
                });
                out
            }
            Request::Compute(c) => self.handle_compute(c),
            Request::Judge(request) => self.judge_now(request),
            Request::Litm(request) => self.handle_litm(request),
            // Started by the worker's main loop (crates/worker/src/agent.rs); nothing to keep here.
            Request::Helper { .. } | Request::Files { .. } => vec![],
            Request::Topic { run, qid } => vec![match self.topic(run, &qid) {
                Ok(view) => Response::Topic(view),
                Err(error) => Response::TopicFailed { error },
            }],
        }
    }

    /// A whole file held in memory, loaded in one slice (as `LoadStart`, `LoadChunk`,
    /// `LoadEnd`): the answers to its end.
    pub fn load_whole(&mut self, id: FileId, name: &str, bytes: &[u8]) -> Vec<Response> {
        self.handle(Request::LoadStart {
            id,
            name: name.into(),
            size: bytes.len() as u64,
        });
        self.handle(Request::LoadChunk {
            id,
            bytes: bytes.to_vec(),
        });
        self.handle(Request::LoadEnd { id })
    }

    fn remove(&mut self, id: FileId) {
        self.loading.remove(&id);
        if self.tail.as_ref().is_some_and(|t| t.id == id) {
            self.tail = None;
        }
        self.scores.remove(&id);
        self.answering.forget(id);
        if self.qrels.as_ref().is_some_and(|(q, _, _)| *q == id) {
            self.qrels = self.tournament.previous_qrels.take();
        }
        if self.utilities.as_ref().is_some_and(|(q, _, _)| *q == id) {
            self.utilities = None;
        }
        if self.contexts.as_ref().is_some_and(|(q, _, _)| *q == id) {
            self.contexts = None;
        }
        if self.erag.as_ref().is_some_and(|(q, _)| *q == id) {
            self.erag = None;
        }
        self.runs.retain(|(r, _, _)| *r != id);
        self.tournament.remove(id);
        self.udcg_json.retain(|(r, _, _)| *r != id);
        self.answers.remove(id);
        self.udcg_sources.remove(&id);
        self.judge_files.remove(id);
    }

    /// Parses the next slice of a file; an error drops the file (and only it).
    fn feed(&mut self, id: FileId, chunk: &[u8]) -> Option<Response> {
        let loading = self.loading.get_mut(&id)?;
        loading.bytes += chunk.len() as u64;
        let result = match &mut loading.loader {
            Loader::Detecting(head) => {
                head.extend_from_slice(chunk);
                if head.len() >= DETECT_BYTES {
                    let head = std::mem::take(head);
                    let score = loading.score_with.as_ref().zip(self.qrels.as_ref());
                    match score {
                        Some(((measures, opts), (_, _, qrels)))
                            if matches!(detect_kind(&head), Detected::Known(FileKind::Run)) =>
                        {
                            let mut scorer =
                                split_run::PartScorer::new(&loading.name, qrels, measures, opts);
                            // a topic that came back is seen when the part is finished
                            let fed = scorer.feed(qrels, &head).map(drop);
                            loading.loader = Loader::ScoredPart(Box::new(scorer));
                            fed
                        }
                        _ => start_loader(&loading.name, loading.size, head)
                            .map(|l| loading.loader = l),
                    }
                } else {
                    Ok(())
                }
            }
            Loader::Run(p) => p.feed(chunk).map_err(|e| e.to_string()),
            // a topic that came back is seen when the part is finished (split_run.rs)
            Loader::ScoredPart(p) => match &self.qrels {
                Some((_, _, qrels)) => p.feed(qrels, chunk).map(drop),
                None => Err(format!("{}: the qrels were removed", loading.name)),
            },
            Loader::Qrels(p) => p.feed(chunk).map_err(|e| e.to_string()),
            Loader::Text(_, buf) => {
                if buf.len() + chunk.len() > MAX_TEXT_BYTES {
                    Err(format!(
                        "{}: larger than {} MiB; this format is read whole and would not fit",
                        loading.name,
                        MAX_TEXT_BYTES >> 20
                    ))
                } else {
                    buf.extend_from_slice(chunk);
                    Ok(())
                }
            }
        };
        Some(match result {
            Ok(()) => Response::Progress {
                id,
                bytes: loading.bytes,
            },
            Err(error) => {
                let name = loading.name.clone();
                self.loading.remove(&id);
                Response::LoadFailed { id, name, error }
            }
        })
    }

    fn finish(&mut self, id: FileId) -> Option<Response> {
        let Loading {
            name, size, loader, ..
        } = self.loading.remove(&id)?;
        let loader = match loader {
            Loader::Detecting(head) => match start_loader(&name, size, head) {
                Ok(l) => l,
                Err(error) => return Some(Response::LoadFailed { id, name, error }),
            },
            other => other,
        };
        Some(match self.keep(id, &name, loader) {
            Ok((kind, summary)) => Response::Loaded {
                id,
                name,
                kind,
                summary,
            },
            Err(error) => Response::LoadFailed { id, name, error },
        })
    }

    fn keep_run(&mut self, id: FileId, name: &str, run: Run) -> (FileKind, String) {
        let summary = format!(
            "{} topics, {} results",
            run.topics().len(),
            run.num_results()
        );
        // Kept in the order files were added (ids), which is the order the UI lists them.
        let at = self.runs.partition_point(|(r, _, _)| *r < id);
        self.runs.insert(at, (id, name.to_string(), run));
        (FileKind::Run, summary)
    }

    fn keep(
        &mut self,
        id: FileId,
        name: &str,
        loader: Loader,
    ) -> Result<(FileKind, String), String> {
        let text = |bytes: &[u8]| {
            std::str::from_utf8(bytes)
                .map(str::to_string)
                .map_err(|e| format!("{name}: not UTF-8 text (byte {})", e.valid_up_to()))
        };
        match loader {
            Loader::Detecting(_) => Err(format!("{name}: internal: format not detected")),
            // the split load finishes it itself (split_run.rs); nothing else ends it
            Loader::ScoredPart(_) => Err(format!(
                "{name}: internal: a part read to be scored was ended as a whole file"
            )),
            Loader::Qrels(p) => {
                let qrels = p.finish().map_err(|e| e.to_string())?;
                let summary = format!(
                    "{} topics, {} judgments",
                    qrels.topics().len(),
                    qrels
                        .topics()
                        .iter()
                        .map(|t| t.num_judgments())
                        .sum::<usize>()
                );
                // The replaced qrels stays as the second judgment of the Agreement view.
                self.tournament.previous_qrels = self.qrels.replace((id, name.to_string(), qrels));
                Ok((FileKind::Qrels, summary))
            }
            Loader::Run(p) => {
                let run = p.finish().map_err(|e| e.to_string())?;
                Ok(self.keep_run(id, name, run))
            }
            Loader::Text(FileKind::Utilities, bytes) => {
                let u = utilities_tsv::parse(name, &text(&bytes)?).map_err(|e| e.to_string())?;
                let questions: BTreeSet<&str> = u.entries.keys().map(|(_, q)| q.as_str()).collect();
                let passages: usize = u.entries.values().map(|m| m.len()).sum();
                let summary = format!("{} questions, {passages} judged passages", questions.len());
                self.utility_model = if u.entries.keys().any(|(m, _)| m.is_empty()) {
                    String::new()
                } else {
                    u.entries
                        .keys()
                        .map(|(m, _)| m.clone())
                        .min()
                        .unwrap_or_default()
                };
                self.utilities = Some((id, name.to_string(), Arc::new(u)));
                Ok((FileKind::Utilities, summary))
            }
            Loader::Text(FileKind::UdcgJson, bytes) => {
                let source = text(&bytes)?;
                let d = reference_json::parse(name, &source, Convention::Reference)
                    .map_err(|e| e.to_string())?;
                self.udcg_sources.insert(id, (name.to_string(), source));
                let summary = format!(
                    "{} examples, models: {}",
                    d.examples.len(),
                    d.models.join(", ")
                );
                self.udcg_json.push((id, name.to_string(), d));
                Ok((FileKind::UdcgJson, summary))
            }
            Loader::Text(FileKind::ContextSets, bytes) => {
                let utilities = self.utilities.as_ref().map(|(_, _, u)| &**u);
                let source = text(&bytes)?;
                let sets = match contexts::parse(name, &source, utilities) {
                    Ok(sets) => sets,
                    // An input of "answer the contexts" without outcomes yet.
                    Err(e) => {
                        let summary =
                            self.answering
                                .keep_unanswered(id, name, source, e.to_string())?;
                        // It replaces the context sets before it, as in the file list.
                        self.contexts = None;
                        return Ok((FileKind::ContextSets, summary));
                    }
                };
                let n: usize = sets.iter().map(|s| s.contexts.len()).sum();
                let mut summary = format!("{} questions, {n} contexts", sets.len());
                // `ragscope answer --erag` output: the same lines also feed the eRAG measures.
                let erag = ragscope_eval::rag::erag_outcomes::parse(name, &source)
                    .ok()
                    .filter(|o| o.questions.values().any(|q| !q.passages.is_empty()));
                if let Some(o) = erag {
                    let scored: usize = o.questions.values().map(|q| q.passages.len()).sum();
                    summary.push_str(&format!(
                        ", {scored} passages answered alone ({})",
                        ragscope_protocol::ERAG_LOADED
                    ));
                    self.erag = Some((id, Arc::new(o)));
                }
                self.contexts = Some((id, name.to_string(), sets));
                self.answering.keep_source(id, name, source);
                Ok((FileKind::ContextSets, summary))
            }
            Loader::Text(FileKind::Answers(kind), bytes) => {
                let summary = self.answers.keep(id, name, kind, &bytes)?;
                self.judge_files
                    .keep_source(id, name, FileKind::Answers(kind), &bytes);
                Ok((FileKind::Answers(kind), summary))
            }
            Loader::Text(FileKind::RageloGames | FileKind::RageloTable, bytes) => {
                let (kind, summary) = self.tournament.keep(id, name, &text(&bytes)?)?;
                self.judge_files.keep_source(id, name, kind, &bytes);
                Ok((kind, summary))
            }
            Loader::Text(kind @ (FileKind::Topics | FileKind::Passages), bytes) => {
                self.judge_files.keep(id, name, kind, &text(&bytes)?)
            }
            Loader::Text(kind, _) => Err(format!(
                "{name}: internal: {} is not read as text",
                kind.label()
            )),
        }
    }

    /// Validates the request and prepares to score the runs one at a time.
    pub fn start_evaluation(&mut self, req: EvalRequest) -> Result<Evaluation, String> {
        let measures = req
            .measures
            .iter()
            .map(|m| {
                m.parse::<Measure>()
                    .map_err(|e| format!("measure `{m}`: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        if self.utilities.is_none() {
            if let Some(m) = measures.iter().find(|m| m.needs_utilities()) {
                return Err(ragscope_eval::EvalError::MissingUtilities(m.to_string()).to_string());
            }
        }
        if self.erag.is_none() {
            if let Some(m) = measures.iter().find(|m| m.needs_erag_outcomes()) {
                return Err(format!(
                    "{}: load the answers of `ragscope answer --erag` (JSON Lines)",
                    ragscope_eval::EvalError::MissingEragOutcomes(m.to_string())
                ));
            }
        }
        let total = match &self.qrels {
            Some((_, _, q)) => q.topics().len() * self.runs.len(),
            None => 0,
        };
        let key = self.score_key(&measures);
        self.last_request = Some(req.clone());
        Ok(Evaluation {
            req,
            measures,
            key,
            results: Vec::new(),
            reused: 0,
            total,
        })
    }

    /// The evaluation the page asks for after a load, started before it asks: the last one's
    /// choices again (the next generation) on the files held now, and what its report is of.
    /// Only while nothing loads and the workspace holds qrels and runs and nothing else, so
    /// that the files in [`ReportOf`] are all the report depends on (utilities, UDCG files,
    /// context sets, answers, games, a second qrels or judge inputs would be more).
    pub fn evaluation_ahead(&mut self) -> Option<(Evaluation, ReportOf)> {
        let last = self.last_request.clone()?;
        let only_qrels_and_runs = self.loading.is_empty()
            && self.utilities.is_none()
            && self.udcg_json.is_empty()
            && self.udcg_sources.is_empty()
            && self.contexts.is_none()
            && self.erag.is_none()
            && self.answers.is_empty()
            && self.tournament.is_empty()
            && self.judge_files.is_empty();
        let (qrels, _, _) = self.qrels.as_ref().filter(|_| only_qrels_and_runs)?;
        let mut files: Vec<FileId> = std::iter::once(*qrels)
            .chain(self.runs.iter().map(|(id, _, _)| *id))
            .collect();
        files.sort_unstable();
        let of = ReportOf {
            files,
            measures: last.measures.clone(),
            baseline: last.baseline,
            test: last.test,
        };
        let next = EvalRequest {
            generation: last.generation.wrapping_add(1),
            ..last
        };
        Some((self.start_evaluation(next).ok()?, of))
    }

    /// The measures of the last evaluation asked for (each parsed when it was asked for).
    fn last_measures(&self) -> Vec<Measure> {
        self.last_request
            .iter()
            .flat_map(|r| &r.measures)
            .filter_map(|m| m.parse().ok())
            .collect()
    }

    /// What scores with `measures` depend on now; `None` without qrels.
    fn score_key(&self, measures: &[Measure]) -> Option<ScoreKey> {
        Some(ScoreKey {
            qrels: self.qrels.as_ref()?.0,
            measures: measures.iter().map(Measure::to_string).collect(),
            utilities: self.utilities.as_ref().map(|(id, _, _)| *id),
            utility_model: self.utility_model.clone(),
            erag: self.erag.as_ref().map(|(id, _)| *id),
        })
    }

    /// Options carrying the loaded utilities, which UDCG measures read.
    fn eval_options(&self) -> EvalOptions {
        EvalOptions {
            utilities: self.utilities.as_ref().map(|(_, _, u)| u.clone()),
            utility_model: self.utility_model.clone(),
            erag: self.erag.as_ref().map(|(_, o)| o.clone()),
            ..EvalOptions::default()
        }
    }

    pub fn topic(&self, run: FileId, qid: &str) -> Result<TopicView, String> {
        let (_, name, run) = self
            .runs
            .iter()
            .find(|(id, _, _)| *id == run)
            .ok_or("that run is no longer loaded")?;
        let topic = run
            .topic(qid)
            .ok_or_else(|| format!("{name} retrieved nothing for topic {qid}"))?;
        let qrels_topic = self.qrels.as_ref().and_then(|(_, _, q)| q.topic(qid));
        let judged = self
            .utilities
            .as_ref()
            .and_then(|(_, _, u)| question_of(u, qid));
        let ranked = ranked_docnos(run, topic);
        let docs = ranked
            .iter()
            .take(TOPIC_ROWS)
            .enumerate()
            .map(|(i, (docno, score))| RankedRow {
                rank: i + 1,
                docno: String::from_utf8_lossy(docno).into_owned(),
                score: *score,
                rel: qrels_topic.and_then(|t| t.rel(docno)),
                utility: judged.and_then(|j| {
                    j.get(std::str::from_utf8(docno).ok()?)
                        .map(|p| p.judgment.utility())
                }),
            })
            .collect();
        Ok(TopicView {
            run: name.clone(),
            qid: qid.to_string(),
            num_rel: qrels_topic.map_or(0, |t| t.num_rel(1)),
            docs,
            more: ranked.len().saturating_sub(TOPIC_ROWS),
        })
    }
}

/// An evaluation in progress: one run per step, so the worker can report progress (and read
/// its messages) between runs.
pub struct Evaluation {
    req: EvalRequest,
    measures: Vec<Measure>,
    /// What the scores depend on: a run's kept scores with this key are taken as they are.
    key: Option<ScoreKey>,
    results: Vec<Arc<Results>>,
    /// Runs whose scores were taken from the last evaluation.
    reused: usize,
    total: usize,
}

impl Evaluation {
    /// Scores the next run; `Some((queries done, total))`, or `None` when every run is scored.
    pub fn step(&mut self, ws: &Workspace) -> Option<(usize, usize)> {
        let (_, _, qrels) = ws.qrels.as_ref()?;
        let (id, _, run) = ws.runs.get(self.results.len())?;
        let kept = ws
            .scores
            .get(id)
            .filter(|(key, _)| Some(key) == self.key.as_ref());
        self.results.push(match kept {
            Some((_, results)) => {
                self.reused += 1;
                results.clone()
            }
            None => Arc::new(ragscope_eval::evaluate_with(
                qrels,
                run,
                &self.measures,
                &ws.eval_options(),
            )),
        });
        Some((qrels.topics().len() * self.results.len(), self.total))
    }

    /// The generation of the request it answers.
    pub fn generation(&self) -> u32 {
        self.req.generation
    }

    /// Runs whose scores were kept from the last evaluation, not computed again.
    pub fn reused(&self) -> usize {
        self.reused
    }

    /// The report; the runs' scores are kept in `ws` for the next evaluation.
    pub fn finish(mut self, ws: &mut Workspace) -> Report {
        while self.step(ws).is_some() {}
        ws.scores = match &self.key {
            Some(key) => (ws.runs.iter().zip(&self.results))
                .map(|((id, _, _), r)| (*id, (key.clone(), r.clone())))
                .collect(),
            None => HashMap::new(),
        };
        let ws = &*ws;
        let mut notes = Vec::new();
        if ws.qrels.is_none() && !ws.runs.is_empty() {
            notes.push("Load a qrels file to score the runs.".to_string());
        }
        let topics: Vec<String> = self
            .results
            .iter()
            .flat_map(|r| r.topics.iter().cloned())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let topic_index: HashMap<&str, usize> = topics
            .iter()
            .enumerate()
            .map(|(i, t)| (t.as_str(), i))
            .collect();
        let mut runs: Vec<RunRow> = self
            .results
            .iter()
            .zip(&ws.runs)
            .map(|(results, (id, name, _))| {
                let per_query = self
                    .measures
                    .iter()
                    .map(|m| {
                        let mut row = vec![f64::NAN; topics.len()];
                        for (qid, v) in results.per_query(m) {
                            row[topic_index[qid]] = v;
                        }
                        row
                    })
                    .collect();
                RunRow {
                    id: *id,
                    name: name.clone(),
                    num_queries: results.topics.len(),
                    means: self
                        .measures
                        .iter()
                        .map(|m| results.mean(m).unwrap_or(f64::NAN))
                        .collect(),
                    per_query,
                    significance: vec![None; self.measures.len()],
                }
            })
            .collect();
        let baseline = self
            .req
            .baseline
            .and_then(|b| runs.iter().position(|r| r.id == b))
            .unwrap_or(0);
        add_significance(&mut runs, baseline, self.req.test);
        let mut udcg = Vec::new();
        udcg_of_runs(ws, &mut udcg, &mut notes);
        udcg_of_json(ws, &mut udcg);
        let study = study_table(ws, &mut notes);
        Report {
            generation: self.req.generation,
            qrels: ws
                .qrels
                .as_ref()
                .map(|(_, n, _)| n.clone())
                .unwrap_or_default(),
            measures: self
                .measures
                .iter()
                .map(|m| MeasureInfo {
                    name: m.to_string(),
                    trec_name: m.trec_eval_equivalent().map(|(name, _level)| name),
                    explanation: m.explanation().to_string(),
                })
                .collect(),
            runs,
            topics,
            baseline,
            test: self.req.test,
            udcg,
            study,
            notes,
            answers: ws.answers.report(self.req.baseline, self.req.test),
            tournaments: ws.tournament.tables(),
            agreement: ws.tournament.agreement(ws.qrels.as_ref()),
            ahead_of: None,
        }
    }
}

/// Tests every run against the baseline per measure on the topics both scored, then
/// Holm-corrects each measure's p-values over the runs (one family per measure).
fn add_significance(runs: &mut [RunRow], baseline: usize, test: SigTest) {
    let Some(base) = runs.get(baseline).cloned() else {
        return;
    };
    for m in 0..base.means.len() {
        let mut tested: Vec<(usize, f64, f64)> = Vec::new();
        for (r, run) in runs.iter().enumerate() {
            if r == baseline {
                continue;
            }
            let (a, b): (Vec<f64>, Vec<f64>) = run.per_query[m]
                .iter()
                .zip(&base.per_query[m])
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .map(|(x, y)| (*x, *y))
                .unzip();
            let outcome = match test {
                SigTest::PairedT => paired_t(&a, &b, Alternative::TwoSided),
                SigTest::Randomization => {
                    randomization(&a, &b, Alternative::TwoSided, RANDOMIZATION_RESAMPLES, 0)
                }
            };
            if let Ok(t) = outcome {
                let diff = a.iter().zip(&b).map(|(x, y)| x - y).sum::<f64>() / a.len() as f64;
                tested.push((r, diff, t.p_value));
            }
        }
        let corrected = holm(&tested.iter().map(|t| t.2).collect::<Vec<_>>());
        for ((r, diff, p), p_holm) in tested.into_iter().zip(corrected) {
            runs[r].significance[m] = Some(Significance {
                mean_difference: diff,
                p_value: p,
                p_holm,
            });
        }
    }
}

/// UDCG@k (the registry's measure: paper convention, γ = 1/3) of each run's top k against the
/// loaded utilities, next to trec_eval's nDCG@k of the same list.
fn udcg_of_runs(ws: &Workspace, out: &mut Vec<UdcgSeries>, notes: &mut Vec<String>) {
    if ws.utilities.is_none() {
        if !ws.runs.is_empty() && ws.udcg_json.is_empty() {
            notes.push(
                "Load a utilities file (qid docno relevant p_no_response) to see UDCG per query."
                    .into(),
            );
        }
        return;
    }
    let Some((_, _, qrels)) = &ws.qrels else {
        notes.push("Load qrels to compare UDCG with nDCG.".into());
        return;
    };
    let (Ok(ndcg), Ok(udcg)) = (
        format!("nDCG@{UDCG_K}").parse::<Measure>(),
        format!("UDCG@{UDCG_K}").parse::<Measure>(),
    ) else {
        return;
    };
    let measures = [ndcg, udcg];
    for (_, name, run) in &ws.runs {
        let results = ragscope_eval::evaluate_with(qrels, run, &measures, &ws.eval_options());
        let points: Vec<UdcgPoint> = results
            .per_query(&measures[0])
            .zip(results.per_query(&measures[1]))
            .filter(|(_, (_, u))| u.is_finite())
            .map(|((qid, ndcg), (_, udcg))| UdcgPoint {
                qid: qid.to_string(),
                udcg,
                ndcg,
            })
            .collect();
        if let Some(unjudged) = results.unjudged(&measures[1]).filter(|n| *n > 0) {
            notes.push(format!(
                "{name}: {unjudged} passages in the top {UDCG_K} have no utility and count as 0."
            ));
        }
        out.push(UdcgSeries {
            name: name.clone(),
            k: UDCG_K,
            points,
        });
    }
}

/// Each example of a UDCG reference file: its UDCG (reference convention, first model) and the
/// binary nDCG of the same passage list.
fn udcg_of_json(ws: &Workspace, out: &mut Vec<UdcgSeries>) {
    let params = UdcgParams::reference();
    for (_, name, data) in &ws.udcg_json {
        let Some(model) = data.models.first() else {
            continue;
        };
        let scores = data.scores(&params);
        let points = data
            .examples
            .iter()
            .zip(scores)
            .enumerate()
            .filter_map(|(i, (ex, s))| {
                let relevant: Vec<bool> = ex
                    .passages
                    .iter()
                    .map(|p| p.is_relevant.unwrap_or(false))
                    .collect();
                let judged = relevant.iter().filter(|r| **r).count();
                Some(UdcgPoint {
                    qid: ex.example_id.clone().unwrap_or_else(|| i.to_string()),
                    udcg: *s.get(model)?,
                    ndcg: classic::ndcg(&relevant, judged),
                })
            })
            .collect();
        out.push(UdcgSeries {
            name: format!("{name} ({model})"),
            k: 0,
            points,
        });
    }
}

fn study_table(ws: &Workspace, notes: &mut Vec<String>) -> Option<StudyTable> {
    let (_, name, sets) = ws.contexts.as_ref()?;
    match study(sets, &StudyConfig::default()) {
        Ok(result) => Some(StudyTable {
            file: name.clone(),
            groups: result
                .groups
                .iter()
                .map(|g| StudyGroup {
                    dataset: g.dataset.clone(),
                    model: g.model.clone(),
                    k: g.k,
                    questions: g.questions,
                    rows: g
                        .metrics
                        .iter()
                        .map(|m| StudyRow {
                            metric: m.metric.name().to_string(),
                            spearman: m.spearman.mean,
                            ci_low: m.spearman.ci_low,
                            ci_high: m.spearman.ci_high,
                            kendall: m.kendall_tau_b.mean,
                            pearson: m.pearson.mean,
                        })
                        .collect(),
                })
                .collect(),
        }),
        Err(e) => {
            notes.push(format!("{name}: {e}"));
            None
        }
    }
}

/// The judgments of a question: model-less rows first, else the first model's (sorted by name).
fn question_of<'a>(
    u: &'a Utilities,
    qid: &str,
) -> Option<&'a indexmap::IndexMap<String, utilities_tsv::PassageInfo>> {
    u.question("", qid).or_else(|| {
        u.entries
            .iter()
            .filter(|((_, q), _)| q == qid)
            .min_by(|a, b| a.0 .0.cmp(&b.0 .0))
            .map(|(_, v)| v)
    })
}

/// A topic's documents in trec_eval's order: score descending, ties by docno descending.
fn ranked_docnos<'a>(
    run: &'a Run,
    topic: &ragscope_eval::formats::RunTopic,
) -> Vec<(&'a [u8], f64)> {
    let mut docs: Vec<(&[u8], f64)> = topic
        .docs()
        .iter()
        .map(|d| (run.docno(d), d.score))
        .collect();
    docs.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| b.0.cmp(a.0)));
    docs
}

fn start_loader(name: &str, size: u64, head: Vec<u8>) -> Result<Loader, String> {
    let mut loader = match detect_kind(&head) {
        Detected::Known(FileKind::Run) => {
            let mut parser = RunParser::new(name);
            // the docno arena in one allocation, as natively (no doubling copies in wasm)
            parser.expect_bytes(usize::try_from(size).unwrap_or(usize::MAX));
            Loader::Run(parser)
        }
        Detected::Known(FileKind::Qrels) => Loader::Qrels(QrelsParser::new(name)),
        Detected::Known(kind) => return Ok(Loader::Text(kind, head)),
        Detected::Unsupported(what) => {
            return Err(format!(
                "{name}: looks like {what}, which the app does not support yet"
            ))
        }
        Detected::Unknown => {
            return Err(format!(
                "{name}: not a format the app knows (TREC run, qrels, utilities TSV, UDCG JSON, \
                 context-set JSONL, nuggetizer JSONL, TREC RAG answers, Open RAG Eval CSV,
                 topics TSV, passages JSONL)"
            ))
        }
    };
    match &mut loader {
        Loader::Run(p) => p.feed(&head).map_err(|e| e.to_string())?,
        Loader::Qrels(p) => p.feed(&head).map_err(|e| e.to_string())?,
        _ => {}
    }
    Ok(loader)
}
