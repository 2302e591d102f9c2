//! Messages between the UI thread and the evaluation worker, per domain: the crate both sides
//! depend on, so the web app (the root package) reaches the worker (crates/worker) only
//! through these types. Plain serde types: no yew, no DOM.
//!
//! A picked file (or one kept in IndexedDB) is handed to the worker on a channel (`LoadBlob`) and
//! the worker reads it itself, as a stream (crates/worker/src/engine/blob_load.rs). Other files
//! (pasted text, the demo, and files picked while a local computation runs) travel in slices
//! (`LoadChunk`), parsed as they arrive; the worker acknowledges each slice, so the UI reads the
//! next one only when the previous one is parsed and never holds more than one slice of a file. The
//! UI holds only names, summaries and the (small) evaluation report.

use serde::{Deserialize, Serialize};

// Two domains that both say "answers": `answer_files` is scoring answer files the user loads
// (nugget scores, citations, agent grades: the Answers view); `answer_generation` is a local
// model generating answers for loaded contexts (Compute). The old names, `answers_protocol` and
// `protocol::answering`, told them apart by one suffix.
pub mod answer_files;
pub mod answer_generation;
pub mod compute;
pub mod judge_batch;
pub mod judges;
pub mod litm;
pub mod tournament;

/// Identifies a loaded file for the lifetime of the page.
pub type FileId = u32;

/// Bytes per slice read from a `Blob` and sent to the worker: large enough to keep the number of
/// messages low, small enough that copying one never blocks the UI thread for long.
pub const SLICE_BYTES: u64 = 4 * 1024 * 1024;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum Request {
    /// A file starts arriving; its kind is detected from the first slice.
    LoadStart { id: FileId, name: String, size: u64 },
    /// The next slice of the file, in order. Encoded as one byte string (not a sequence of
    /// numbers), so encoding a slice on the UI thread is a copy, not a loop per byte.
    LoadChunk {
        id: FileId,
        #[serde(with = "serde_bytes")]
        bytes: Vec<u8>,
    },
    /// The last slice was sent: finish parsing and keep the file.
    LoadEnd { id: FileId },
    /// A file the worker reads itself, slice by slice (crates/worker/src/engine/blob_load.rs):
    /// `url` names where the `File`/`Blob` comes from, `channel:NAME` (a BroadcastChannel the page
    /// offers it on, crates/platform/src/blob_channel.rs) or an object URL. No byte crosses the UI
    /// thread. Answered like the slices (`Progress`, then `Loaded` or `LoadFailed`);
    /// `Cancel`/`Remove` stop it.
    LoadBlob {
        id: FileId,
        name: String,
        url: String,
    },
    /// Stop loading a file and drop what was parsed of it.
    Cancel { id: FileId },
    /// Forget a file.
    Remove { id: FileId },
    /// Evaluate every loaded run against the loaded qrels.
    Evaluate(EvalRequest),
    /// The ranked list of one run on one topic, with relevance (and utilities when loaded).
    Topic { run: FileId, qid: String },
    /// Forget every file.
    Clear,
    /// "Compute locally": open a GGUF model, compute utilities, pause/cancel
    /// (crates/worker/src/engine/inference.rs).
    Compute(compute::ComputeRequest),
    /// Estimate, start, pause, resume or cancel an LLM judge job.
    Judge(judges::JudgeRequest),
    /// The lost-in-the-middle experiment (crates/worker/src/engine/inference/litm.rs).
    Litm(litm::LitmRequest),
    /// Sent once by the page: the worker script's URL, from which the worker starts its
    /// helper (crates/worker/src/engine/shard.rs), which reads half of a large run.
    Helper { script_url: String },
    /// Sent once by the page: the channel it posts each picked file on as soon as it is picked
    /// (crates/platform/src/blob_channel.rs), before the worker asks for it.
    Files { channel: String },
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct EvalRequest {
    /// Measure names as the registry prints them (`nDCG@10`).
    pub measures: Vec<String>,
    /// The run the others are compared with; `None`: the first run.
    pub baseline: Option<FileId>,
    pub test: SigTest,
    /// Distinguishes evaluations, so the UI can drop the answer to one it cancelled.
    pub generation: u32,
}

/// The significance test of `run − baseline` per measure (Holm-corrected over the runs).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SigTest {
    #[default]
    PairedT,
    /// Fisher's randomization test with 10,000 sign patterns (seeded).
    Randomization,
}

impl SigTest {
    pub fn label(self) -> &'static str {
        match self {
            SigTest::PairedT => "paired t-test",
            SigTest::Randomization => "randomization test",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum Response {
    /// A slice was parsed; `bytes` read so far.
    Progress {
        id: FileId,
        bytes: u64,
    },
    Loaded {
        id: FileId,
        name: String,
        kind: FileKind,
        summary: String,
    },
    /// The file was not loaded; everything loaded before stays.
    LoadFailed {
        id: FileId,
        name: String,
        error: String,
    },
    /// Queries scored so far in the evaluation `generation`.
    EvalProgress {
        generation: u32,
        done: usize,
        total: usize,
    },
    Report(Box<Report>),
    EvalFailed {
        generation: u32,
        error: String,
    },
    Topic(TopicView),
    TopicFailed {
        error: String,
    },
    Compute(compute::ComputeEvent),
    Litm(litm::LitmEvent),
    /// Estimates, progress and results of LLM judge jobs.
    Judge(judges::JudgeResponse),
    /// Where the worker's time went (loading a file, an evaluation): named phases in
    /// milliseconds, for the performance test; the page keeps them in `window.ragscopeTimings`.
    Timings(Timings),
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Timings {
    /// `load NAME` or `evaluate`.
    pub what: String,
    /// Wall clock (`performance.timeOrigin + now()`, ms) when it started and ended, comparable
    /// with the page's clock.
    pub start_ms: f64,
    pub end_ms: f64,
    /// (phase, ms spent in it), phases summed over slices or runs.
    pub phases: Vec<(String, f64)>,
    /// The worker's wasm linear memory afterwards (it never shrinks: the peak so far).
    pub wasm_memory_bytes: u64,
}

/// Said in a context-set file's summary when it holds eRAG outcomes (`ragscope answer --erag`):
/// the measure picker then offers the eRAG measures.
pub const ERAG_LOADED: &str = "eRAG measures available";

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Qrels,
    Run,
    /// Passage judgments with p(NO-RESPONSE) or utilities (`qid docno relevant p [model]`).
    Utilities,
    /// The UDCG reference JSON (examples with passages and per-model p(NO-RESPONSE)).
    UdcgJson,
    /// Context sets of the correlation study (JSON Lines).
    ContextSets,
    /// Answers, nuggets and their judgments (nuggetizer, TREC RAG, Open RAG Eval).
    Answers(crate::answer_files::AnswerFile),
    /// RAGElo pairwise evaluations (CSV) or answers_eval (JSON Lines): games between agents.
    RageloGames,
    /// RAGElo queries, documents or answers (CSV).
    RageloTable,
    /// Questions, `qid<TAB>question` (what judges and `ragscope utility` read).
    Topics,
    /// Passage texts, `{"docno","text"}` JSON Lines.
    Passages,
}

impl FileKind {
    pub fn label(self) -> &'static str {
        match self {
            FileKind::Qrels => "qrels",
            FileKind::Run => "run",
            FileKind::Utilities => "utilities",
            FileKind::UdcgJson => "udcg-json",
            FileKind::ContextSets => "contexts",
            FileKind::Answers(a) => a.label(),
            FileKind::RageloGames => "ragelo-games",
            FileKind::RageloTable => "ragelo",
            FileKind::Topics => "topics",
            FileKind::Passages => "passages",
        }
    }
}

/// Runs × measures, per query, with significance against a baseline.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Report {
    pub generation: u32,
    pub qrels: String,
    pub measures: Vec<MeasureInfo>,
    pub runs: Vec<RunRow>,
    /// Every topic scored for some run, in `strcmp` order.
    pub topics: Vec<String>,
    /// Index into `runs` of the baseline.
    pub baseline: usize,
    pub test: SigTest,
    /// UDCG vs nDCG per query, when utilities (or a UDCG JSON file) are loaded.
    pub udcg: Vec<UdcgSeries>,
    /// The correlation study over loaded context sets.
    pub study: Option<StudyTable>,
    /// Why a RAG view is empty (e.g. "load a utilities file"), shown instead of a blank chart.
    pub notes: Vec<String>,
    /// Nugget scores of loaded answer files (the Answers view).
    #[serde(default)]
    pub answers: Option<crate::answer_files::AnswersReport>,
    /// Elo and Bradley–Terry leaderboards, one per games file.
    pub tournaments: Vec<tournament::TournamentTable>,
    /// The two most recent qrels compared, when two were loaded.
    pub agreement: Option<tournament::AgreementTable>,
    /// Set when the worker evaluated before it was asked (right after a load, with the last
    /// evaluation's choices): what the report is of. The page takes it only while it waits for
    /// an evaluation of exactly this (src/ui/state.rs).
    #[serde(default)]
    pub ahead_of: Option<ReportOf>,
}

/// The files and choices a report was computed from.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ReportOf {
    /// Every file the worker holds, in id order.
    pub files: Vec<FileId>,
    pub measures: Vec<String>,
    pub baseline: Option<FileId>,
    pub test: SigTest,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct MeasureInfo {
    pub name: String,
    /// The trec_eval name of the same number, when trec_eval has one (`ndcg_cut_10`).
    pub trec_name: Option<String>,
    pub explanation: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RunRow {
    pub id: FileId,
    pub name: String,
    pub num_queries: usize,
    /// One mean per measure, in `Report::measures` order.
    pub means: Vec<f64>,
    /// `per_query[m][t]`: measure `m` on `Report::topics[t]`; NaN where the run was not scored.
    pub per_query: Vec<Vec<f64>>,
    /// Against the baseline, one per measure; `None` for the baseline itself or when untestable.
    pub significance: Vec<Option<Significance>>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq)]
pub struct Significance {
    pub mean_difference: f64,
    pub p_value: f64,
    /// Holm-corrected over the runs compared with the baseline on this measure.
    pub p_holm: f64,
}

/// One point per query: UDCG@k and nDCG@k of the same ranked list.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct UdcgSeries {
    pub name: String,
    pub k: usize,
    pub points: Vec<UdcgPoint>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct UdcgPoint {
    pub qid: String,
    pub udcg: f64,
    pub ndcg: f64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StudyTable {
    pub file: String,
    pub groups: Vec<StudyGroup>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StudyGroup {
    pub dataset: String,
    pub model: String,
    pub k: usize,
    pub questions: usize,
    pub rows: Vec<StudyRow>,
}

/// Mean Spearman ρ over questions with its percentile-bootstrap 95% interval.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct StudyRow {
    pub metric: String,
    pub spearman: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    pub kendall: f64,
    pub pearson: f64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TopicView {
    pub run: String,
    pub qid: String,
    /// Number of relevant documents in the qrels for the topic.
    pub num_rel: u64,
    pub docs: Vec<RankedRow>,
    /// Documents the run retrieved beyond those shown.
    pub more: usize,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RankedRow {
    pub rank: usize,
    pub docno: String,
    pub score: f64,
    /// Relevance in the qrels; `None`: unjudged.
    pub rel: Option<i32>,
    pub utility: Option<f64>,
}
