//! The Judges panel's state as a reducer: the form, the estimate the user confirms, and the job
//! in flight. Pure (no browser), so every transition is tested natively.

use crate::ui::state::{FileStatus, LoadedFile};
use ragscope_protocol::answer_files::AnswerFile;
use ragscope_protocol::compute::ComputeSource;
use ragscope_protocol::judge_batch::{offered, BatchUpdate, KeptRun};
use ragscope_protocol::judges::{
    GgufTemplateInfo, JudgeEstimate, JudgeFailure, JudgeOutcome, JudgeProgress, JudgeResponse,
    JudgeSpec, JudgeTaskChoice, ProviderChoice, TaskInputs, UtilityTemplate,
};
use ragscope_protocol::{FileId, FileKind};
use std::rc::Rc;
use yew::Reducible;

/// What the user typed; numbers stay text until [`JudgeForm::spec`] checks them, so a field
/// being edited never jumps.
#[derive(Clone, Debug, PartialEq)]
pub struct JudgeForm {
    pub provider: ProviderChoice,
    pub model: String,
    pub base_url: String,
    /// Memory only, unless `remember_key` (then IndexedDB on this device).
    pub key: String,
    pub remember_key: bool,
    pub concurrency: String,
    pub max_cost: String,
    pub max_tokens: String,
    pub task: JudgeTaskChoice,
    /// The run whose top k is judged; `None`: the first run loaded.
    pub run: Option<FileId>,
    pub k: String,
    /// Nugget creation: qrels grades below this are not relevant passages.
    pub min_grade: String,
    /// The file picked for each role of the other tasks; `None`: the loaded file that fits
    /// (see [`JudgeInputs`]).
    pub nuggets: Option<FileId>,
    pub queries: Option<FileId>,
    pub ragelo_answers: Option<FileId>,
    /// `None`: the loaded RAGElo documents file if any; `Some(None)`: no documents.
    pub documents: Option<Option<FileId>>,
    /// The utility task's passages: `udcg:<id>` or `run:<id>` (the compute panel's values);
    /// `None`: the first loaded UDCG JSON, else the first run.
    pub utility_source: Option<String>,
    pub utility: UtilityForm,
    /// Through the provider's batch API, where it is offered (see [`JudgeState::batch_offered`]).
    pub batch: bool,
    /// "Keep replies in this browser": the user's consent to the worker keeping replies and
    /// batch ids in IndexedDB (off by default; the page keeps the choice in localStorage).
    pub keep_replies: bool,
}

/// Where the utility task's chat template comes from, as the user chose.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum TemplateChoice {
    /// The chat endpoint's top 20 logprobs: exact when listed, else an upper bound.
    #[default]
    None,
    Gguf,
    Text,
}

impl TemplateChoice {
    pub const ALL: [TemplateChoice; 3] = [
        TemplateChoice::Gguf,
        TemplateChoice::Text,
        TemplateChoice::None,
    ];

    pub fn slug(self) -> &'static str {
        match self {
            TemplateChoice::None => "none",
            TemplateChoice::Gguf => "gguf",
            TemplateChoice::Text => "text",
        }
    }

    pub fn from_slug(s: &str) -> Option<TemplateChoice> {
        Self::ALL.into_iter().find(|t| t.slug() == s)
    }

    pub fn label(self) -> &'static str {
        match self {
            TemplateChoice::Gguf => "The model's GGUF (exact)",
            TemplateChoice::Text => "A template file (exact)",
            TemplateChoice::None => "None: top 20 logprobs (or a bound)",
        }
    }
}

/// The utility task's chat template: the choice, the GGUF read in the worker, a template text.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct UtilityForm {
    pub template: TemplateChoice,
    /// The GGUF picked last (id, file name) while the worker reads it.
    pub gguf_reading: Option<(u32, String)>,
    pub gguf: Option<GgufTemplateInfo>,
    pub gguf_error: Option<String>,
    /// A template file loaded or pasted (name, text).
    pub text: Option<(String, String)>,
}

impl Default for JudgeForm {
    fn default() -> Self {
        let provider = ProviderChoice::default();
        Self {
            provider,
            model: String::new(),
            base_url: provider.default_base_url().into(),
            key: String::new(),
            remember_key: false,
            concurrency: "4".into(),
            max_cost: String::new(),
            max_tokens: String::new(),
            task: JudgeTaskChoice::Umbrela,
            run: None,
            k: "10".into(),
            min_grade: "1".into(),
            nuggets: None,
            queries: None,
            ragelo_answers: None,
            documents: None,
            utility_source: None,
            utility: UtilityForm::default(),
            batch: false,
            keep_replies: false,
        }
    }
}

/// What a RAGElo CSV holds (its summary line says, see engine/tournament.rs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RageloRole {
    Queries,
    Answers,
    Documents,
}

impl RageloRole {
    fn of_summary(summary: &str) -> Option<RageloRole> {
        [
            ("RAGElo queries", RageloRole::Queries),
            ("RAGElo answers", RageloRole::Answers),
            ("RAGElo documents", RageloRole::Documents),
        ]
        .into_iter()
        .find(|(p, _)| summary.starts_with(p))
        .map(|(_, r)| r)
    }
}

/// The loaded files a job can use: topics, passages and qrels (the current one of each), runs,
/// nuggets and TREC RAG answer files, RAGElo tables, in load order.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct JudgeInputs {
    pub topics: Option<(FileId, String)>,
    pub passages: Option<(FileId, String)>,
    pub qrels: Option<(FileId, String)>,
    pub runs: Vec<(FileId, String)>,
    pub nuggets: Vec<(FileId, String)>,
    pub rag_answers: Vec<(FileId, String)>,
    pub ragelo: Vec<(FileId, String, Option<RageloRole>)>,
    /// UDCG reference JSON files (the utility task's passages).
    pub udcg: Vec<(FileId, String)>,
}

impl JudgeInputs {
    pub fn of(files: &[LoadedFile]) -> Self {
        let mut inputs = JudgeInputs::default();
        for f in files {
            if let FileStatus::Loaded { kind, summary } = &f.status {
                let entry = (f.id, f.name.clone());
                match kind {
                    FileKind::Topics => inputs.topics = Some(entry),
                    FileKind::Passages => inputs.passages = Some(entry),
                    FileKind::Qrels => inputs.qrels = Some(entry),
                    FileKind::Run => inputs.runs.push(entry),
                    FileKind::Answers(AnswerFile::Nuggets) => inputs.nuggets.push(entry),
                    FileKind::Answers(AnswerFile::RagAnswers) => inputs.rag_answers.push(entry),
                    FileKind::UdcgJson => inputs.udcg.push(entry),
                    FileKind::RageloTable => {
                        inputs
                            .ragelo
                            .push((f.id, f.name.clone(), RageloRole::of_summary(summary)))
                    }
                    _ => {}
                }
            }
        }
        inputs
    }

    /// The picked file if still loaded, else the last loaded one (the newest: a result just
    /// loaded from a job is the next task's input).
    pub fn pick(list: &[(FileId, String)], picked: Option<FileId>) -> Option<FileId> {
        picked
            .filter(|p| list.iter().any(|(id, _)| id == p))
            .or_else(|| list.last().map(|(id, _)| *id))
    }

    /// RAGElo tables: the picked one if still loaded, else the newest with `role`.
    pub fn pick_ragelo(&self, picked: Option<FileId>, role: RageloRole) -> Option<FileId> {
        picked
            .filter(|p| self.ragelo.iter().any(|(id, _, _)| id == p))
            .or_else(|| {
                self.ragelo
                    .iter()
                    .rev()
                    .find(|(_, _, r)| *r == Some(role))
                    .map(|(id, _, _)| *id)
            })
    }

    pub fn documents(&self, picked: Option<Option<FileId>>) -> Option<FileId> {
        match picked {
            Some(None) => None,
            Some(p) => self.pick_ragelo(p, RageloRole::Documents),
            None => self.pick_ragelo(None, RageloRole::Documents),
        }
    }
}

const LOAD_TOPICS: &str = "Load a topics file (qid<TAB>question per line).";
const LOAD_PASSAGES: &str = "Load a passages file ({\"docno\",\"text\"} JSON Lines).";
const LOAD_NUGGETS: &str =
    "Load a nuggetizer nuggets file (JSON Lines: {\"query\", \"qid\", \"nuggets\"}).";
const LOAD_RAG_ANSWERS: &str =
    "Load a TREC RAG answer file (JSON Lines: {\"run_id\", \"topic_id\", \"answer\"}).";
const LOAD_QUERIES: &str = "Load RAGElo's queries.csv (qid, query).";
const LOAD_ANSWERS: &str = "Load RAGElo's answers.csv (qid, agent, answer).";

impl JudgeForm {
    /// The job to estimate or run, or what is missing or wrong, in the user's words.
    pub fn spec(&self, inputs: &JudgeInputs) -> Result<JudgeSpec, String> {
        let model = self.model.trim();
        if model.is_empty() {
            return Err(
                "Name the model (e.g. gpt-4o-mini, claude-haiku-4-5, gemini-2.5-flash).".into(),
            );
        }
        let base_url = self.base_url.trim().trim_end_matches('/');
        if !(base_url.starts_with("https://") || base_url.starts_with("http://")) {
            return Err("The base URL must start with https:// or http://.".into());
        }
        let concurrency = match self.concurrency.trim().parse::<u32>() {
            Ok(n) if (1..=64).contains(&n) => n,
            _ => return Err("Concurrency must be a whole number from 1 to 64.".into()),
        };
        let max_cost = match self.max_cost.trim() {
            "" => None,
            s => match s.trim_start_matches('$').parse::<f64>() {
                Ok(c) if c.is_finite() && c >= 0.0 => Some(c),
                _ => {
                    return Err(
                        "The maximum cost must be a number of US dollars (or empty).".into(),
                    )
                }
            },
        };
        let max_tokens = match self.max_tokens.trim() {
            "" => None,
            s => Some(
                s.replace(['_', ','], "")
                    .parse::<u64>()
                    .map_err(|_| "The maximum tokens must be a whole number (or empty).")?,
            ),
        };
        let inputs = self.task_inputs(inputs)?;
        Ok(JudgeSpec {
            provider: self.provider,
            model: model.to_string(),
            base_url: base_url.to_string(),
            concurrency,
            max_cost,
            max_tokens,
            inputs,
            batch: self.batch,
            keep_replies: self.keep_replies,
        })
    }

    /// The files the chosen task reads, or what is missing.
    pub fn task_inputs(&self, inputs: &JudgeInputs) -> Result<TaskInputs, String> {
        let topics = || inputs.topics.as_ref().map(|t| t.0).ok_or(LOAD_TOPICS);
        let passages = || inputs.passages.as_ref().map(|t| t.0).ok_or(LOAD_PASSAGES);
        let nuggets = || JudgeInputs::pick(&inputs.nuggets, self.nuggets).ok_or(LOAD_NUGGETS);
        let rag_answers = || {
            let all: Vec<FileId> = inputs.rag_answers.iter().map(|(id, _)| *id).collect();
            if all.is_empty() {
                Err(LOAD_RAG_ANSWERS)
            } else {
                Ok(all)
            }
        };
        let ragelo = || -> Result<(FileId, FileId, Option<FileId>), String> {
            let q = inputs
                .pick_ragelo(self.queries, RageloRole::Queries)
                .ok_or(LOAD_QUERIES)?;
            let a = inputs
                .pick_ragelo(self.ragelo_answers, RageloRole::Answers)
                .ok_or(LOAD_ANSWERS)?;
            Ok((q, a, inputs.documents(self.documents)))
        };
        Ok(match self.task {
            JudgeTaskChoice::Umbrela => {
                let k = match self.k.trim().parse::<usize>() {
                    Ok(k) if k >= 1 => k,
                    _ => return Err("k (passages per query) must be a whole number ≥ 1.".into()),
                };
                let run = self
                    .run
                    .filter(|r| inputs.runs.iter().any(|(id, _)| id == r))
                    .or_else(|| inputs.runs.first().map(|(id, _)| *id));
                TaskInputs::Umbrela {
                    topics: topics()?,
                    passages: passages()?,
                    run: run.ok_or("Load a run: its top k passages per query are judged.")?,
                    k,
                }
            }
            JudgeTaskChoice::NuggetsCreate => {
                let min_grade = self.min_grade.trim().parse::<i64>().map_err(|_| {
                    "The minimum grade of a relevant passage must be a whole number."
                })?;
                TaskInputs::NuggetsCreate {
                    topics: topics()?,
                    passages: passages()?,
                    qrels: inputs.qrels.as_ref().map(|q| q.0).ok_or(
                        "Load qrels: each topic's relevant passages are what nuggets are made from.",
                    )?,
                    min_grade,
                }
            }
            JudgeTaskChoice::NuggetsScore => TaskInputs::NuggetsScore {
                nuggets: nuggets()?,
            },
            JudgeTaskChoice::NuggetsAssign => TaskInputs::NuggetsAssign {
                nuggets: nuggets()?,
                answers: rag_answers()?,
            },
            JudgeTaskChoice::Pairwise => {
                let (queries, answers, documents) = ragelo()?;
                TaskInputs::Pairwise {
                    queries,
                    answers,
                    documents,
                }
            }
            JudgeTaskChoice::Pointwise => {
                let (queries, answers, documents) = ragelo()?;
                TaskInputs::Pointwise {
                    queries,
                    answers,
                    documents,
                }
            }
            JudgeTaskChoice::Citations => TaskInputs::Citations {
                answers: rag_answers()?,
                passages: passages()?,
            },
            JudgeTaskChoice::Utility => self.utility_inputs(inputs)?,
        })
    }

    /// The utility task's source value: the picked one if its file is still loaded, else the
    /// first UDCG JSON, else the first run.
    pub fn utility_source_value(&self, inputs: &JudgeInputs) -> Option<String> {
        let loaded = |v: &str| {
            let (kind, id) = v.split_once(':')?;
            let id: FileId = id.parse().ok()?;
            let list = match kind {
                "udcg" => &inputs.udcg,
                "run" => &inputs.runs,
                _ => return None,
            };
            list.iter().any(|(f, _)| *f == id).then_some(())
        };
        self.utility_source
            .clone()
            .filter(|v| loaded(v).is_some())
            .or_else(|| inputs.udcg.first().map(|(id, _)| format!("udcg:{id}")))
            .or_else(|| inputs.runs.first().map(|(id, _)| format!("run:{id}")))
    }

    fn utility_inputs(&self, inputs: &JudgeInputs) -> Result<TaskInputs, String> {
        if !utility_provider(self.provider) {
            return Err(
                "Utilities need log-probabilities, which Anthropic's API does not give: choose an \
                 OpenAI-compatible server (vLLM, llama.cpp's server), OpenAI, or Gemini (its top \
                 20 logprobs) as the API."
                    .into(),
            );
        }
        let value = self.utility_source_value(inputs).ok_or(
            "Load a UDCG JSON file, or a run with its topics, passages and qrels: their \
             passages get utilities.",
        )?;
        let source = match value.split_once(':') {
            Some(("udcg", id)) => ComputeSource::Udcg(id.parse().map_err(|_| "bad source")?),
            Some(("run", id)) => {
                let k = match self.k.trim().parse::<usize>() {
                    Ok(k) if k >= 1 => k,
                    _ => return Err("k (passages per query) must be a whole number ≥ 1.".into()),
                };
                if inputs.topics.is_none() {
                    return Err(LOAD_TOPICS.into());
                }
                if inputs.passages.is_none() {
                    return Err(LOAD_PASSAGES.into());
                }
                if inputs.qrels.is_none() {
                    return Err(
                        "Load qrels: a utility needs each passage's relevance (qid iter docno rel)."
                            .into(),
                    );
                }
                ComputeSource::Run {
                    run: id.parse().map_err(|_| "bad source")?,
                    k,
                }
            }
            _ => return Err("Pick the passages to score.".into()),
        };
        let u = &self.utility;
        // Gemini has no /completions to echo a rendered prompt: its top 20 logprobs only (the
        // page offers no template for it).
        let choice = match self.provider {
            ProviderChoice::Gemini => TemplateChoice::None,
            _ => u.template,
        };
        let template =
            match choice {
                TemplateChoice::None => UtilityTemplate::None,
                TemplateChoice::Gguf => match (&u.gguf, &u.gguf_reading) {
                    (_, Some((_, name))) => return Err(format!("Reading {name}…")),
                    (Some(g), None) => UtilityTemplate::Gguf {
                        id: g.id,
                        name: g.file_name.clone(),
                    },
                    (None, None) => return Err(
                        "Pick the served model's GGUF: its chat template and tokenizer are read \
                         in this browser (the file is never uploaded)."
                            .into(),
                    ),
                },
                TemplateChoice::Text => match &u.text {
                    Some((name, text)) if !text.trim().is_empty() => UtilityTemplate::Text {
                        name: name.clone(),
                        text: text.clone(),
                    },
                    _ => return Err("Load or paste the model's chat template (Jinja).".into()),
                },
            };
        Ok(TaskInputs::Utility { source, template })
    }
}

/// Whether the utility task can read p(NO-RESPONSE) from this API's log-probabilities:
/// OpenAI-compatible servers and OpenAI (top 20, or echo), Gemini (top 20 through
/// `responseLogprobs`); Anthropic gives none.
pub fn utility_provider(p: ProviderChoice) -> bool {
    !matches!(p, ProviderChoice::Anthropic)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobPhase {
    Running,
    /// No new request starts; those in flight finish.
    Paused,
    /// Cancel was pressed; waiting for the requests in flight.
    Cancelling,
    Done,
}

#[derive(Clone, Debug, PartialEq)]
pub struct JobView {
    pub id: u32,
    pub spec: JudgeSpec,
    pub phase: JobPhase,
    pub progress: JudgeProgress,
    pub failures: Vec<JudgeFailure>,
    pub outcome: Option<Rc<JudgeOutcome>>,
    pub error: Option<String>,
    /// A batch job's batches as the worker last reported them.
    pub batch: Option<BatchUpdate>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct JudgeState {
    pub form: JudgeForm,
    /// The estimate of `estimated_spec`: the user confirms it before anything is sent.
    pub estimate: Option<(JudgeSpec, JudgeEstimate)>,
    /// The estimate asked for and not yet answered (ticket, spec).
    pub estimating: Option<(u32, JudgeSpec)>,
    pub estimate_error: Option<String>,
    pub job: Option<JobView>,
    /// Batches an earlier page left in this browser, not collected yet (listed at start).
    pub kept: Vec<KeptRun>,
    /// Requests from which the batch API is offered (`?batch-at=N`, else 200).
    pub batch_threshold: usize,
    /// How many times "Forget everything" was pressed: other pages that keep a consent of
    /// their own (the lost-in-the-middle page) drop it when this changes.
    pub forgotten: u32,
}

impl Default for JudgeState {
    fn default() -> Self {
        JudgeState {
            form: JudgeForm::default(),
            estimate: None,
            estimating: None,
            estimate_error: None,
            job: None,
            kept: Vec::new(),
            batch_threshold: ragscope_protocol::judge_batch::OFFER_AT_REQUESTS,
            forgotten: 0,
        }
    }
}

impl JudgeState {
    pub fn running(&self) -> bool {
        self.job.as_ref().is_some_and(|j| j.phase != JobPhase::Done)
    }

    /// The estimate, if it is still the estimate of what the form says now (the batch and
    /// keep choices aside: made after the estimate, they do not change what it counts).
    pub fn current_estimate(&self, inputs: &JudgeInputs) -> Option<&JudgeEstimate> {
        let spec = self.form.spec(inputs).ok()?;
        self.estimate
            .as_ref()
            .filter(|(s, _)| {
                JudgeSpec {
                    batch: spec.batch,
                    keep_replies: spec.keep_replies,
                    ..s.clone()
                } == spec
            })
            .map(|(_, e)| e)
    }

    /// Whether the batch API is offered for the current estimate (a provider with a batch API,
    /// enough requests left to send).
    pub fn batch_offered(&self, inputs: &JudgeInputs) -> bool {
        self.current_estimate(inputs)
            .is_some_and(|e| offered(self.form.provider, e.requests, self.batch_threshold))
    }

    /// The job Start sends: the form's, through the batch API only where it is offered and
    /// chosen.
    pub fn start_spec(&self, inputs: &JudgeInputs) -> Result<JudgeSpec, String> {
        let mut spec = self.form.spec(inputs)?;
        spec.batch = self.form.batch && self.batch_offered(inputs);
        Ok(spec)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum JudgeAction {
    SetProvider(ProviderChoice),
    SetModel(String),
    SetBaseUrl(String),
    SetKey(String),
    SetRememberKey(bool),
    SetConcurrency(String),
    SetMaxCost(String),
    SetMaxTokens(String),
    SetTask(JudgeTaskChoice),
    SetRun(Option<FileId>),
    SetK(String),
    SetMinGrade(String),
    SetNuggets(Option<FileId>),
    SetQueries(Option<FileId>),
    SetRageloAnswers(Option<FileId>),
    SetDocuments(Option<Option<FileId>>),
    SetUtilitySource(Option<String>),
    SetTemplateChoice(TemplateChoice),
    /// A GGUF was picked and sent to the worker to read (its id and file name).
    GgufPicked {
        id: u32,
        name: String,
    },
    /// A chat template file was loaded or pasted (name, text).
    TemplateText {
        name: String,
        text: String,
    },
    /// The batch API checkbox.
    SetBatch(bool),
    /// The page's `?batch-at=N` (read once at start).
    SetBatchThreshold(usize),
    /// The "Keep replies in this browser" checkbox (also read back from localStorage at start).
    SetKeepReplies(bool),
    /// A key kept on this device (opt-in) was read back at start.
    KeyRestored(String),
    EstimateRequested {
        ticket: u32,
        spec: JudgeSpec,
    },
    /// The user confirmed the estimate and pressed Start.
    Started {
        job: u32,
        spec: JudgeSpec,
    },
    Pause,
    Resume,
    Cancel,
    /// "Forget everything": the key and the form's key choice go too.
    Forget,
    Worker(JudgeResponse),
}

impl Reducible for JudgeState {
    type Action = JudgeAction;

    fn reduce(self: Rc<Self>, action: JudgeAction) -> Rc<Self> {
        let mut s = (*self).clone();
        let f = &mut s.form;
        match action {
            JudgeAction::SetProvider(p) => {
                // Keep a base URL the user typed; replace the previous provider's default.
                let b = f.base_url.trim().trim_end_matches('/');
                if b.is_empty() || b == f.provider.default_base_url() {
                    f.base_url = p.default_base_url().into();
                }
                f.provider = p;
            }
            JudgeAction::SetModel(v) => f.model = v,
            JudgeAction::SetBaseUrl(v) => f.base_url = v,
            JudgeAction::SetKey(v) => f.key = v,
            JudgeAction::SetRememberKey(on) => f.remember_key = on,
            JudgeAction::SetConcurrency(v) => f.concurrency = v,
            JudgeAction::SetMaxCost(v) => f.max_cost = v,
            JudgeAction::SetMaxTokens(v) => f.max_tokens = v,
            JudgeAction::SetTask(t) => {
                // Utilities are read from logprobs, which Anthropic does not give.
                if t == JudgeTaskChoice::Utility && !utility_provider(f.provider) {
                    let b = f.base_url.trim().trim_end_matches('/');
                    if b.is_empty() || b == f.provider.default_base_url() {
                        f.base_url = ProviderChoice::OpenAiCompatible.default_base_url().into();
                    }
                    f.provider = ProviderChoice::OpenAiCompatible;
                }
                f.task = t
            }
            JudgeAction::SetRun(r) => f.run = r,
            JudgeAction::SetK(v) => f.k = v,
            JudgeAction::SetMinGrade(v) => f.min_grade = v,
            JudgeAction::SetNuggets(v) => f.nuggets = v,
            JudgeAction::SetQueries(v) => f.queries = v,
            JudgeAction::SetRageloAnswers(v) => f.ragelo_answers = v,
            JudgeAction::SetDocuments(v) => f.documents = v,
            JudgeAction::SetUtilitySource(v) => f.utility_source = v,
            JudgeAction::SetTemplateChoice(t) => f.utility.template = t,
            JudgeAction::GgufPicked { id, name } => {
                f.utility.template = TemplateChoice::Gguf;
                f.utility.gguf_reading = Some((id, name));
                f.utility.gguf_error = None;
            }
            JudgeAction::TemplateText { name, text } => {
                f.utility.template = TemplateChoice::Text;
                f.utility.text = Some((name, text));
            }
            JudgeAction::SetBatch(on) => f.batch = on,
            JudgeAction::SetBatchThreshold(n) => s.batch_threshold = n.max(1),
            JudgeAction::SetKeepReplies(on) => f.keep_replies = on,
            JudgeAction::KeyRestored(key) => {
                if f.key.is_empty() {
                    f.key = key;
                    f.remember_key = true;
                }
            }
            JudgeAction::EstimateRequested { ticket, spec } => {
                s.estimating = Some((ticket, spec));
                s.estimate_error = None;
            }
            JudgeAction::Started { job, spec } => {
                if !s.running() {
                    s.job = Some(JobView {
                        id: job,
                        spec,
                        phase: JobPhase::Running,
                        progress: JudgeProgress {
                            job,
                            ..JudgeProgress::default()
                        },
                        failures: Vec::new(),
                        outcome: None,
                        error: None,
                        batch: None,
                    });
                }
            }
            JudgeAction::Pause => s.set_phase(JobPhase::Running, JobPhase::Paused),
            JudgeAction::Resume => s.set_phase(JobPhase::Paused, JobPhase::Running),
            JudgeAction::Cancel => {
                if let Some(j) = s.job.as_mut().filter(|j| j.phase != JobPhase::Done) {
                    j.phase = JobPhase::Cancelling;
                }
            }
            JudgeAction::Forget => {
                s.form.key.clear();
                s.form.remember_key = false;
                // The worker forgets the GGUF it read too.
                s.form.utility.gguf = None;
                s.form.utility.gguf_reading = None;
                // The cache that kept their ids is deleted with everything else, and with it
                // the consent to keep replies.
                s.kept.clear();
                s.form.keep_replies = false;
                s.forgotten += 1;
            }
            JudgeAction::Worker(response) => s.apply(response),
        }
        Rc::new(s)
    }
}

impl JudgeState {
    fn set_phase(&mut self, from: JobPhase, to: JobPhase) {
        if let Some(j) = self.job.as_mut().filter(|j| j.phase == from) {
            j.phase = to;
        }
    }

    fn job_mut(&mut self, id: u32) -> Option<&mut JobView> {
        self.job.as_mut().filter(|j| j.id == id)
    }

    fn apply(&mut self, response: JudgeResponse) {
        match response {
            JudgeResponse::Estimate(e) => {
                if let Some((_, spec)) = self.estimating.take_if(|(t, _)| *t == e.ticket) {
                    self.estimate = Some((spec, e));
                }
            }
            JudgeResponse::EstimateFailed { ticket, error } => {
                if self.estimating.take_if(|(t, _)| *t == ticket).is_some() {
                    self.estimate = None;
                    self.estimate_error = Some(error);
                }
            }
            JudgeResponse::Progress(p) => {
                if let Some(j) = self.job_mut(p.job) {
                    // The worker's word on pausing wins once it has acted on it.
                    if j.phase != JobPhase::Cancelling && j.phase != JobPhase::Done {
                        j.phase = if p.paused {
                            JobPhase::Paused
                        } else {
                            JobPhase::Running
                        };
                    }
                    j.progress = p;
                }
            }
            JudgeResponse::Failure { job, failure } => {
                if let Some(j) = self.job_mut(job) {
                    j.failures.push(failure);
                }
            }
            JudgeResponse::Finished(outcome) => {
                // The cache changed: a new run needs a new estimate (probably fewer requests).
                if self.job.as_ref().is_some_and(|j| j.id == outcome.job) {
                    self.estimate = None;
                }
                if let Some(j) = self.job_mut(outcome.job) {
                    j.phase = JobPhase::Done;
                    j.progress.eta_s = None;
                    j.outcome = Some(Rc::new(outcome));
                }
            }
            JudgeResponse::Batch(update) => {
                if let Some(j) = self.job_mut(update.job) {
                    j.batch = Some(update);
                }
            }
            JudgeResponse::KeptBatches(runs) => self.kept = runs,
            JudgeResponse::Failed { job, error } => {
                if let Some(j) = self.job_mut(job) {
                    j.phase = JobPhase::Done;
                    j.error = Some(error);
                }
            }
            JudgeResponse::GgufRead { id, result } => {
                let u = &mut self.form.utility;
                // Only the GGUF picked last counts (an earlier read may answer late).
                if u.gguf_reading.as_ref().is_some_and(|(r, _)| *r == id) {
                    u.gguf_reading = None;
                    match result {
                        Ok(info) => {
                            u.gguf = Some(info);
                            u.gguf_error = None;
                        }
                        Err(e) => {
                            u.gguf = None;
                            u.gguf_error = Some(e);
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reduce(s: JudgeState, a: JudgeAction) -> JudgeState {
        (*Rc::new(s).reduce(a)).clone()
    }

    fn inputs() -> JudgeInputs {
        JudgeInputs {
            topics: Some((1, "topics.tsv".into())),
            passages: Some((2, "passages.jsonl".into())),
            runs: vec![(3, "a.run".into()), (4, "b.run".into())],
            ..JudgeInputs::default()
        }
    }

    fn umbrela(spec: &JudgeSpec) -> (FileId, FileId, FileId, usize) {
        match spec.inputs {
            TaskInputs::Umbrela {
                topics,
                passages,
                run,
                k,
            } => (topics, passages, run, k),
            ref other => panic!("{other:?}"),
        }
    }

    fn filled() -> JudgeState {
        let mut s = JudgeState::default();
        s = reduce(s, JudgeAction::SetModel("m".into()));
        s
    }

    fn estimate(ticket: u32) -> JudgeEstimate {
        JudgeEstimate {
            ticket,
            items: 6,
            requests: 6,
            cached: 0,
            input_tokens: 600,
            output_tokens: 600,
            cost: None,
            batch_cost: None,
            price_note: String::new(),
            endpoint: "http://127.0.0.1:8000/v1/chat/completions".into(),
            first_prompt: "…".into(),
            skipped: vec![],
        }
    }

    #[test]
    fn the_form_checks_every_field_and_picks_the_loaded_inputs() {
        let mut s = JudgeState::default();
        assert!(s.form.spec(&inputs()).unwrap_err().contains("model"));
        s = reduce(s, JudgeAction::SetModel(" llama ".into()));
        let spec = s.form.spec(&inputs()).unwrap();
        assert_eq!(spec.model, "llama");
        assert_eq!(umbrela(&spec), (1, 2, 3, 10));
        assert_eq!(spec.base_url, "http://127.0.0.1:8000/v1");
        s = reduce(s, JudgeAction::SetRun(Some(4)));
        assert_eq!(umbrela(&s.form.spec(&inputs()).unwrap()).2, 4);
        // A run that was removed falls back to the first one loaded.
        s = reduce(s, JudgeAction::SetRun(Some(9)));
        assert_eq!(umbrela(&s.form.spec(&inputs()).unwrap()).2, 3);
        for (action, needle) in [
            (JudgeAction::SetConcurrency("0".into()), "Concurrency"),
            (JudgeAction::SetMaxCost("a lot".into()), "cost"),
            (JudgeAction::SetMaxTokens("1e9".into()), "tokens"),
            (JudgeAction::SetK("0".into()), "k (passages"),
            (JudgeAction::SetBaseUrl("ftp://x".into()), "base URL"),
        ] {
            let bad = reduce(s.clone(), action);
            let e = bad.form.spec(&inputs()).unwrap_err();
            assert!(e.contains(needle), "{e}");
        }
        s = reduce(s, JudgeAction::SetMaxCost("$0.50".into()));
        s = reduce(s, JudgeAction::SetMaxTokens("1,000".into()));
        let spec = s.form.spec(&inputs()).unwrap();
        assert_eq!((spec.max_cost, spec.max_tokens), (Some(0.5), Some(1000)));
        let no_topics = JudgeInputs {
            topics: None,
            ..inputs()
        };
        assert!(s.form.spec(&no_topics).unwrap_err().contains("topics"));
    }

    #[test]
    fn each_task_picks_its_loaded_files_and_says_what_is_missing() {
        let files = JudgeInputs {
            nuggets: vec![
                (5, "nuggets.jsonl".into()),
                (9, "nuggets-scored.jsonl".into()),
            ],
            rag_answers: vec![(6, "run-a.jsonl".into()), (7, "run-b.jsonl".into())],
            ragelo: vec![
                (10, "answers.csv".into(), Some(RageloRole::Answers)),
                (11, "queries.csv".into(), Some(RageloRole::Queries)),
                (12, "documents.csv".into(), Some(RageloRole::Documents)),
            ],
            qrels: Some((13, "q.qrels".into())),
            ..inputs()
        };
        let mut s = filled();
        let with = |s: &JudgeState, t: JudgeTaskChoice, i: &JudgeInputs| {
            reduce(s.clone(), JudgeAction::SetTask(t)).form.spec(i)
        };
        // The newest nuggets file (a result just loaded), every answer file.
        assert_eq!(
            with(&s, JudgeTaskChoice::NuggetsAssign, &files)
                .unwrap()
                .inputs,
            TaskInputs::NuggetsAssign {
                nuggets: 9,
                answers: vec![6, 7]
            }
        );
        // RAGElo tables by what their summary says, documents unless turned off.
        assert_eq!(
            with(&s, JudgeTaskChoice::Pairwise, &files).unwrap().inputs,
            TaskInputs::Pairwise {
                queries: 11,
                answers: 10,
                documents: Some(12)
            }
        );
        s = reduce(s, JudgeAction::SetDocuments(Some(None)));
        s = reduce(s, JudgeAction::SetNuggets(Some(5)));
        assert_eq!(
            with(&s, JudgeTaskChoice::Pointwise, &files).unwrap().inputs,
            TaskInputs::Pointwise {
                queries: 11,
                answers: 10,
                documents: None
            }
        );
        assert_eq!(
            with(&s, JudgeTaskChoice::NuggetsScore, &files)
                .unwrap()
                .inputs,
            TaskInputs::NuggetsScore { nuggets: 5 }
        );
        assert_eq!(
            with(&s, JudgeTaskChoice::NuggetsCreate, &files)
                .unwrap()
                .inputs,
            TaskInputs::NuggetsCreate {
                topics: 1,
                passages: 2,
                qrels: 13,
                min_grade: 1
            }
        );
        assert_eq!(
            with(&s, JudgeTaskChoice::Citations, &files).unwrap().inputs,
            TaskInputs::Citations {
                answers: vec![6, 7],
                passages: 2
            }
        );
        // With only topics, passages and runs loaded, each task names what to load.
        for (task, needle) in [
            (JudgeTaskChoice::NuggetsCreate, "Load qrels"),
            (JudgeTaskChoice::NuggetsScore, "nuggets file"),
            (JudgeTaskChoice::NuggetsAssign, "nuggets file"),
            (JudgeTaskChoice::Pairwise, "queries.csv"),
            (JudgeTaskChoice::Pointwise, "queries.csv"),
            (JudgeTaskChoice::Citations, "TREC RAG answer file"),
        ] {
            let e = with(&s, task, &inputs()).unwrap_err();
            assert!(e.contains(needle), "{task:?}: {e}");
        }
        let no_answers = JudgeInputs {
            ragelo: vec![(11, "queries.csv".into(), Some(RageloRole::Queries))],
            ..files.clone()
        };
        let e = with(&s, JudgeTaskChoice::Pairwise, &no_answers).unwrap_err();
        assert!(e.contains("answers.csv"), "{e}");
        s = reduce(s, JudgeAction::SetMinGrade("two".into()));
        assert!(with(&s, JudgeTaskChoice::NuggetsCreate, &files).is_err());
        // Every task has its slug and comes back from it (the <select> values).
        for t in JudgeTaskChoice::ALL {
            assert_eq!(JudgeTaskChoice::from_slug(t.slug()), Some(t));
        }
    }

    #[test]
    fn switching_provider_replaces_only_a_default_base_url() {
        let mut s = JudgeState::default();
        s = reduce(s, JudgeAction::SetProvider(ProviderChoice::Anthropic));
        assert_eq!(s.form.base_url, "https://api.anthropic.com");
        s = reduce(s, JudgeAction::SetProvider(ProviderChoice::OpenAi));
        assert_eq!(s.form.base_url, "https://api.openai.com/v1");
        s = reduce(
            s,
            JudgeAction::SetBaseUrl("https://proxy.example/v1".into()),
        );
        s = reduce(
            s,
            JudgeAction::SetProvider(ProviderChoice::OpenAiCompatible),
        );
        assert_eq!(s.form.base_url, "https://proxy.example/v1");
    }

    #[test]
    fn an_estimate_holds_only_for_the_form_it_was_made_for() {
        let mut s = filled();
        let spec = s.form.spec(&inputs()).unwrap();
        s = reduce(
            s,
            JudgeAction::EstimateRequested {
                ticket: 1,
                spec: spec.clone(),
            },
        );
        // A stale answer (older ticket) is dropped.
        s = reduce(s, JudgeAction::Worker(JudgeResponse::Estimate(estimate(0))));
        assert!(s.current_estimate(&inputs()).is_none());
        s = reduce(s, JudgeAction::Worker(JudgeResponse::Estimate(estimate(1))));
        assert_eq!(s.current_estimate(&inputs()).unwrap().requests, 6);
        // The key is not part of what was estimated; the model is.
        s = reduce(s, JudgeAction::SetKey("sk-x".into()));
        assert!(s.current_estimate(&inputs()).is_some());
        s = reduce(s, JudgeAction::SetModel("other".into()));
        assert!(s.current_estimate(&inputs()).is_none());
        s = reduce(s, JudgeAction::EstimateRequested { ticket: 2, spec });
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::EstimateFailed {
                ticket: 2,
                error: "qid 7 has no question".into(),
            }),
        );
        assert_eq!(s.estimate_error.as_deref(), Some("qid 7 has no question"));
        assert!(s.estimate.is_none());
    }

    #[test]
    fn a_job_runs_pauses_records_failures_and_ends_once() {
        let mut s = filled();
        let spec = s.form.spec(&inputs()).unwrap();
        s = reduce(
            s,
            JudgeAction::EstimateRequested {
                ticket: 6,
                spec: spec.clone(),
            },
        );
        s = reduce(s, JudgeAction::Worker(JudgeResponse::Estimate(estimate(6))));
        assert!(s.current_estimate(&inputs()).is_some());
        s = reduce(
            s,
            JudgeAction::Started {
                job: 7,
                spec: spec.clone(),
            },
        );
        assert!(s.running());
        // A second Start while one runs is ignored.
        s = reduce(s, JudgeAction::Started { job: 8, spec });
        assert_eq!(s.job.as_ref().unwrap().id, 7);
        s = reduce(s, JudgeAction::Pause);
        assert_eq!(s.job.as_ref().unwrap().phase, JobPhase::Paused);
        s = reduce(s, JudgeAction::Resume);
        assert_eq!(s.job.as_ref().unwrap().phase, JobPhase::Running);
        let progress = JudgeProgress {
            job: 7,
            total: 6,
            done: 3,
            cached: 1,
            failed: 1,
            input_tokens: 300,
            output_tokens: 20,
            cost: Some(0.001),
            eta_s: Some(2.0),
            paused: false,
        };
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::Progress(progress.clone())),
        );
        // Progress of another job is not ours.
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::Progress(JudgeProgress {
                job: 6,
                done: 99,
                ..progress.clone()
            })),
        );
        assert_eq!(s.job.as_ref().unwrap().progress, progress);
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::Failure {
                job: 7,
                failure: JudgeFailure {
                    qid: "q1".into(),
                    docno: "d2".into(),
                    error: "no final score".into(),
                    raw: Some("I think 2".into()),
                    attempts: 1,
                },
            }),
        );
        s = reduce(s, JudgeAction::Cancel);
        assert_eq!(s.job.as_ref().unwrap().phase, JobPhase::Cancelling);
        // Progress sent before the worker saw Cancel does not undo it.
        s = reduce(s, JudgeAction::Worker(JudgeResponse::Progress(progress)));
        assert_eq!(s.job.as_ref().unwrap().phase, JobPhase::Cancelling);
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::Finished(JudgeOutcome {
                job: 7,
                name: "umbrela-m.qrels".into(),
                qrels: "q1 0 d1 3\n".into(),
                note: None,
                judged: 1,
                failed: 1,
                stopped: Some("cancelled".into()),
                view: None,
            })),
        );
        let job = s.job.as_ref().unwrap();
        assert_eq!(job.phase, JobPhase::Done);
        assert!(s.estimate.is_none(), "a rerun is estimated again");
        assert_eq!(job.failures.len(), 1);
        assert_eq!(job.outcome.as_ref().unwrap().judged, 1);
        assert!(!s.running());
        // Pause after the end does nothing.
        s = reduce(s, JudgeAction::Pause);
        assert_eq!(s.job.as_ref().unwrap().phase, JobPhase::Done);
    }

    #[test]
    fn replies_are_kept_only_when_ticked_and_the_tick_keeps_the_estimate() {
        let mut s = filled();
        assert!(!s.form.keep_replies, "off by default");
        let spec = s.form.spec(&inputs()).unwrap();
        assert!(!spec.keep_replies);
        s = reduce(s, JudgeAction::EstimateRequested { ticket: 1, spec });
        s = reduce(s, JudgeAction::Worker(JudgeResponse::Estimate(estimate(1))));
        s = reduce(s, JudgeAction::SetKeepReplies(true));
        assert!(
            s.current_estimate(&inputs()).is_some(),
            "what is kept does not change what the estimate counts"
        );
        assert!(s.start_spec(&inputs()).unwrap().keep_replies);
        s = reduce(s, JudgeAction::SetKeepReplies(false));
        assert!(!s.start_spec(&inputs()).unwrap().keep_replies);
        // "Forget everything" withdraws the consent with the cache.
        s = reduce(s, JudgeAction::SetKeepReplies(true));
        s = reduce(s, JudgeAction::Forget);
        assert!(!s.form.keep_replies);
        assert!(!s.start_spec(&inputs()).unwrap().keep_replies);
        assert_eq!(s.forgotten, 1, "other pages learn of it");
    }

    #[test]
    fn the_batch_api_is_offered_above_the_threshold_and_its_state_follows_the_job() {
        use ragscope_protocol::judge_batch::{BatchRow, KeptBatch};
        let mut s = filled();
        s = reduce(s, JudgeAction::SetProvider(ProviderChoice::Anthropic));
        let spec = s.form.spec(&inputs()).unwrap();
        assert!(!spec.batch);
        s = reduce(
            s,
            JudgeAction::EstimateRequested {
                ticket: 1,
                spec: spec.clone(),
            },
        );
        s = reduce(s, JudgeAction::Worker(JudgeResponse::Estimate(estimate(1))));
        // 6 requests: below the default threshold (200), nothing is offered and a ticked box
        // does not turn a job into a batch.
        s = reduce(s, JudgeAction::SetBatch(true));
        assert!(
            s.current_estimate(&inputs()).is_some(),
            "the choice keeps the estimate"
        );
        assert!(!s.batch_offered(&inputs()));
        assert!(!s.start_spec(&inputs()).unwrap().batch);
        // `?batch-at=6`: offered, and Start sends a batch job.
        s = reduce(s, JudgeAction::SetBatchThreshold(6));
        assert!(s.batch_offered(&inputs()));
        assert!(s.start_spec(&inputs()).unwrap().batch);
        s = reduce(s, JudgeAction::SetBatch(false));
        assert!(!s.start_spec(&inputs()).unwrap().batch);
        // OpenAI-compatible servers have no batch API.
        s = reduce(s, JudgeAction::SetBatch(true));
        s = reduce(
            s,
            JudgeAction::SetProvider(ProviderChoice::OpenAiCompatible),
        );
        assert!(!s.batch_offered(&inputs()));
        s = reduce(s, JudgeAction::SetProvider(ProviderChoice::Anthropic));
        let start = s.start_spec(&inputs()).unwrap();
        s = reduce(
            s,
            JudgeAction::Started {
                job: 4,
                spec: start,
            },
        );
        let update = |job: u32, state: &str, imported: bool| BatchUpdate {
            job,
            rows: vec![BatchRow {
                id: "msgbatch_1".into(),
                state: state.into(),
                requests: Some(6),
                imported,
                answered: imported.then_some((5, 1)),
            }],
            note: None,
            polled_ms: Some(1),
        };
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::Batch(update(4, "in_progress", false))),
        );
        // Another job's batches are not ours.
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::Batch(update(3, "ended", true))),
        );
        assert_eq!(
            s.job.as_ref().unwrap().batch,
            Some(update(4, "in_progress", false))
        );
        assert!(s.running());
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::Batch(update(4, "ended", true))),
        );
        assert_eq!(
            s.job.as_ref().unwrap().batch,
            Some(update(4, "ended", true))
        );
        // A batch that cannot be waited for ends the job with its reason (the ids are kept).
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::Failed {
                job: 4,
                error: "cancelled while waiting for the batches".into(),
            }),
        );
        assert!(!s.running());
        // Batches an earlier page left: listed, and replaced by each new list.
        let kept = vec![KeptRun {
            provider: "anthropic".into(),
            model: "m".into(),
            task: "umbrela".into(),
            batches: vec![KeptBatch {
                id: "msgbatch_1".into(),
                state: "in_progress".into(),
                requests: 6,
                submitted_ms: 1,
            }],
        }];
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::KeptBatches(kept.clone())),
        );
        assert_eq!(s.kept, kept);
        s = reduce(s, JudgeAction::Worker(JudgeResponse::KeptBatches(vec![])));
        assert!(s.kept.is_empty());
        s = reduce(s, JudgeAction::Worker(JudgeResponse::KeptBatches(kept)));
        s = reduce(s, JudgeAction::Forget);
        assert!(s.kept.is_empty(), "forgotten with the cache");
        s = reduce(s, JudgeAction::SetBatchThreshold(0));
        assert_eq!(s.batch_threshold, 1);
    }

    #[test]
    fn a_kept_key_fills_an_empty_field_and_forget_clears_it() {
        let mut s = JudgeState::default();
        s = reduce(s, JudgeAction::KeyRestored("sk-kept".into()));
        assert_eq!(
            (s.form.key.as_str(), s.form.remember_key),
            ("sk-kept", true)
        );
        s = reduce(s, JudgeAction::SetKey("typed".into()));
        s = reduce(s, JudgeAction::KeyRestored("sk-kept".into()));
        assert_eq!(s.form.key, "typed");
        s = reduce(s, JudgeAction::Forget);
        assert_eq!((s.form.key.as_str(), s.form.remember_key), ("", false));
    }

    #[test]
    fn the_key_never_prints() {
        let r = ragscope_protocol::judges::JudgeRequest::Start {
            job: 1,
            spec: filled().form.spec(&inputs()).unwrap(),
            key: Some(ragscope_protocol::judges::Secret("sk-secret-123".into())),
        };
        assert!(!format!("{r:?}").contains("sk-secret-123"));
    }

    fn utility_spec(
        s: &JudgeState,
        inputs: &JudgeInputs,
    ) -> Result<(ComputeSource, UtilityTemplate), String> {
        match s.form.spec(inputs)?.inputs {
            TaskInputs::Utility { source, template } => Ok((source, template)),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_utility_task_picks_an_openai_compatible_server_and_its_passages() {
        let mut s = filled();
        s = reduce(s, JudgeAction::SetProvider(ProviderChoice::Anthropic));
        s = reduce(s, JudgeAction::SetTask(JudgeTaskChoice::Utility));
        assert_eq!(s.form.provider, ProviderChoice::OpenAiCompatible);
        assert_eq!(
            s.form.base_url,
            ProviderChoice::OpenAiCompatible.default_base_url()
        );
        // Back to Anthropic, which gives no log-probabilities: refused in the user's words.
        s = reduce(s, JudgeAction::SetProvider(ProviderChoice::Anthropic));
        let e = s.form.spec(&inputs()).unwrap_err();
        assert!(e.contains("OpenAI-compatible server"), "{e}");
        assert!(e.contains("Anthropic"), "{e}");
        // Gemini gives its top 20 logprobs: kept, and always without a template (no echo),
        // whatever template was chosen for another server.
        s = reduce(s, JudgeAction::SetProvider(ProviderChoice::Gemini));
        s = reduce(s, JudgeAction::SetTask(JudgeTaskChoice::Umbrela));
        s = reduce(s, JudgeAction::SetTask(JudgeTaskChoice::Utility));
        assert_eq!(s.form.provider, ProviderChoice::Gemini);
        s = reduce(s, JudgeAction::SetTemplateChoice(TemplateChoice::Gguf));
        let mut udcg_loaded = inputs();
        udcg_loaded.udcg = vec![(6, "d.json".into())];
        assert_eq!(
            utility_spec(&s, &udcg_loaded).unwrap(),
            (ComputeSource::Udcg(6), UtilityTemplate::None)
        );
        s = reduce(s, JudgeAction::SetTemplateChoice(TemplateChoice::None));
        s = reduce(
            s,
            JudgeAction::SetProvider(ProviderChoice::OpenAiCompatible),
        );
        // A run needs qrels for the relevance; a UDCG JSON is preferred when loaded.
        let e = s.form.spec(&inputs()).unwrap_err();
        assert!(e.contains("qrels"), "{e}");
        let mut with_qrels = inputs();
        with_qrels.qrels = Some((5, "q.txt".into()));
        assert_eq!(
            utility_spec(&s, &with_qrels).unwrap(),
            (ComputeSource::Run { run: 3, k: 10 }, UtilityTemplate::None)
        );
        with_qrels.udcg = vec![(6, "d.json".into())];
        assert_eq!(
            utility_spec(&s, &with_qrels).unwrap().0,
            ComputeSource::Udcg(6)
        );
        s = reduce(s, JudgeAction::SetUtilitySource(Some("run:4".into())));
        s = reduce(s, JudgeAction::SetK("2".into()));
        assert_eq!(
            utility_spec(&s, &with_qrels).unwrap().0,
            ComputeSource::Run { run: 4, k: 2 }
        );
        // A picked file no longer loaded falls back to the first choice.
        with_qrels.runs.pop();
        assert_eq!(
            utility_spec(&s, &with_qrels).unwrap().0,
            ComputeSource::Udcg(6)
        );
    }

    #[test]
    fn the_utility_template_comes_from_the_gguf_read_last_or_a_template_text() {
        let mut inputs = inputs();
        inputs.udcg = vec![(6, "d.json".into())];
        let mut s = filled();
        s = reduce(s, JudgeAction::SetTask(JudgeTaskChoice::Utility));
        s = reduce(s, JudgeAction::SetTemplateChoice(TemplateChoice::Gguf));
        let e = s.form.spec(&inputs).unwrap_err();
        assert!(e.contains("Pick the served model's GGUF"), "{e}");
        s = reduce(
            s,
            JudgeAction::GgufPicked {
                id: 1,
                name: "a.gguf".into(),
            },
        );
        s = reduce(
            s,
            JudgeAction::GgufPicked {
                id: 2,
                name: "b.gguf".into(),
            },
        );
        assert_eq!(s.form.spec(&inputs).unwrap_err(), "Reading b.gguf…");
        let info = |id: u32, name: &str| GgufTemplateInfo {
            id,
            file_name: name.into(),
            model_name: Some("M".into()),
            summary: String::new(),
        };
        // The first pick answers late: ignored.
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::GgufRead {
                id: 1,
                result: Ok(info(1, "a.gguf")),
            }),
        );
        assert!(s.form.utility.gguf.is_none());
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::GgufRead {
                id: 2,
                result: Ok(info(2, "b.gguf")),
            }),
        );
        assert_eq!(
            utility_spec(&s, &inputs).unwrap().1,
            UtilityTemplate::Gguf {
                id: 2,
                name: "b.gguf".into()
            }
        );
        // A failed read says why and leaves no GGUF to use.
        s = reduce(
            s,
            JudgeAction::GgufPicked {
                id: 3,
                name: "c.gguf".into(),
            },
        );
        s = reduce(
            s,
            JudgeAction::Worker(JudgeResponse::GgufRead {
                id: 3,
                result: Err("c.gguf: not a GGUF file".into()),
            }),
        );
        assert_eq!(
            s.form.utility.gguf_error.as_deref(),
            Some("c.gguf: not a GGUF file")
        );
        assert!(s.form.spec(&inputs).is_err());
        // A template file switches to it.
        s = reduce(s, JudgeAction::SetTemplateChoice(TemplateChoice::Text));
        assert!(s.form.spec(&inputs).unwrap_err().contains("chat template"));
        s = reduce(
            s,
            JudgeAction::TemplateText {
                name: "t.jinja".into(),
                text: "{{ x }}".into(),
            },
        );
        assert_eq!(
            utility_spec(&s, &inputs).unwrap().1,
            UtilityTemplate::Text {
                name: "t.jinja".into(),
                text: "{{ x }}".into()
            }
        );
    }
}
