//! Messages between the Judges panel and the judge jobs in the worker.
//!
//! The API key travels only in [`JudgeRequest::Start`], inside a [`Secret`] that never prints;
//! nothing the worker sends back contains it.

use super::compute::ComputeSource;
use super::FileId;
use serde::{Deserialize, Serialize};
use std::fmt;

/// The LLM API a judge calls (one wire format each; crates/judge implements them).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ProviderChoice {
    Anthropic,
    Gemini,
    OpenAi,
    /// vLLM, llama.cpp's server, Ollama's `/v1`: OpenAI's wire format at a base URL of choice.
    #[default]
    OpenAiCompatible,
}

impl ProviderChoice {
    pub const ALL: [ProviderChoice; 4] = [
        ProviderChoice::Anthropic,
        ProviderChoice::Gemini,
        ProviderChoice::OpenAi,
        ProviderChoice::OpenAiCompatible,
    ];

    pub fn label(self) -> &'static str {
        match self {
            ProviderChoice::Anthropic => "Anthropic",
            ProviderChoice::Gemini => "Gemini",
            ProviderChoice::OpenAi => "OpenAI",
            ProviderChoice::OpenAiCompatible => "OpenAI-compatible server",
        }
    }

    /// The `--provider` name of the CLI, also the `<select>` value.
    pub fn slug(self) -> &'static str {
        match self {
            ProviderChoice::Anthropic => "anthropic",
            ProviderChoice::Gemini => "gemini",
            ProviderChoice::OpenAi => "openai",
            ProviderChoice::OpenAiCompatible => "openai-compatible",
        }
    }

    pub fn from_slug(s: &str) -> Option<ProviderChoice> {
        Self::ALL.into_iter().find(|p| p.slug() == s)
    }

    /// Where the provider's API lives (OpenAI's base includes `/v1`, as in its SDKs).
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderChoice::Anthropic => "https://api.anthropic.com",
            ProviderChoice::Gemini => "https://generativelanguage.googleapis.com",
            ProviderChoice::OpenAi => "https://api.openai.com/v1",
            ProviderChoice::OpenAiCompatible => "http://127.0.0.1:8000/v1",
        }
    }

    /// A local server may run without a key; the hosted APIs never do.
    pub fn needs_key(self) -> bool {
        !matches!(self, ProviderChoice::OpenAiCompatible)
    }
}

/// What a judge job computes: each task reads the loaded files it names in [`TaskInputs`] and
/// writes its anchor's format (qrels, nuggetizer JSONL, RAGElo CSV).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum JudgeTaskChoice {
    /// UMBRELA relevance 0–3 of each (query, passage) in a run's top k → TREC qrels.
    #[default]
    Umbrela,
    /// AutoNuggetizer: nuggets from each topic's relevant passages (topics + passages + qrels).
    NuggetsCreate,
    /// AutoNuggetizer: vital/okay of each topic's nuggets.
    NuggetsScore,
    /// AutoNuggetizer: support of each answer for its topic's nuggets → assignments JSONL.
    NuggetsAssign,
    /// RAGElo pairwise battles (both orders) → RAGElo pairwise CSV.
    Pairwise,
    /// RAGElo-style pointwise grades 0–2 → CSV.
    Pointwise,
    /// Open RAG Eval citation support of each (sentence, cited passage) → JSONL.
    Citations,
    /// p(NO-RESPONSE | question, passage) from a server's log-probabilities: OpenAI-compatible,
    /// OpenAI or Gemini (`ragscope judge utility`) → `ragscope utility`'s utilities TSV or filled UDCG JSON.
    Utility,
}

impl JudgeTaskChoice {
    pub const ALL: [JudgeTaskChoice; 8] = [
        JudgeTaskChoice::Umbrela,
        JudgeTaskChoice::NuggetsCreate,
        JudgeTaskChoice::NuggetsScore,
        JudgeTaskChoice::NuggetsAssign,
        JudgeTaskChoice::Pairwise,
        JudgeTaskChoice::Pointwise,
        JudgeTaskChoice::Citations,
        JudgeTaskChoice::Utility,
    ];

    pub fn label(self) -> &'static str {
        match self {
            JudgeTaskChoice::Umbrela => "UMBRELA relevance (0–3) → qrels",
            JudgeTaskChoice::NuggetsCreate => "AutoNuggetizer: create nuggets → nuggets JSONL",
            JudgeTaskChoice::NuggetsScore => {
                "AutoNuggetizer: score nuggets vital/okay → nuggets JSONL"
            }
            JudgeTaskChoice::NuggetsAssign => {
                "AutoNuggetizer: assign nuggets to answers → assignments JSONL"
            }
            JudgeTaskChoice::Pairwise => "RAGElo pairwise battles → pairwise CSV",
            JudgeTaskChoice::Pointwise => "Pointwise answer grades (0–2) → CSV",
            JudgeTaskChoice::Citations => "Citation support (full/partial/none) → JSONL",
            JudgeTaskChoice::Utility => "Utilities p(NO-RESPONSE) from a server → utilities",
        }
    }

    /// The `<select>` value (the CLI's subcommand words).
    pub fn slug(self) -> &'static str {
        match self {
            JudgeTaskChoice::Umbrela => "umbrela",
            JudgeTaskChoice::NuggetsCreate => "nuggets-create",
            JudgeTaskChoice::NuggetsScore => "nuggets-score",
            JudgeTaskChoice::NuggetsAssign => "nuggets-assign",
            JudgeTaskChoice::Pairwise => "pairwise",
            JudgeTaskChoice::Pointwise => "pointwise",
            JudgeTaskChoice::Citations => "citations",
            JudgeTaskChoice::Utility => "utility",
        }
    }

    pub fn from_slug(s: &str) -> Option<JudgeTaskChoice> {
        Self::ALL.into_iter().find(|t| t.slug() == s)
    }

    /// What one item is, for the estimate ("12 requests for 6 …").
    pub fn item_noun(self) -> &'static str {
        match self {
            JudgeTaskChoice::Umbrela => "(query, passage) pairs",
            JudgeTaskChoice::NuggetsCreate => "windows of 10 passages (first round)",
            JudgeTaskChoice::NuggetsScore => "batches of 10 nuggets",
            JudgeTaskChoice::NuggetsAssign => "(answer, batch of 10 nuggets) pairs",
            JudgeTaskChoice::Pairwise => "(game, order) pairs",
            JudgeTaskChoice::Pointwise => "answers",
            JudgeTaskChoice::Citations => "(sentence, cited passage) pairs",
            JudgeTaskChoice::Utility => "passages",
        }
    }

    /// Whether the result is loaded as a file that a view shows (qrels: Evaluate; nuggets,
    /// assignments, pointwise grades and citation judgments: Answers; pairwise games:
    /// Tournament). Every task's is now.
    pub fn result_is_loaded(self) -> bool {
        true
    }
}

/// The loaded files a task reads (by id), checked again by the worker when the job starts.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum TaskInputs {
    Umbrela {
        topics: FileId,
        passages: FileId,
        run: FileId,
        /// Passages judged per query (the run's top k).
        k: usize,
    },
    /// A topic's relevant passages: its qrels' documents with grade ≥ `min_grade` that have a
    /// text, in qrels order (nuggetizer's pool, built from the loaded files).
    NuggetsCreate {
        topics: FileId,
        passages: FileId,
        qrels: FileId,
        min_grade: i64,
    },
    NuggetsScore {
        nuggets: FileId,
    },
    NuggetsAssign {
        nuggets: FileId,
        /// TREC RAG answer files (one run each, or several by run_id).
        answers: Vec<FileId>,
    },
    Pairwise {
        queries: FileId,
        answers: FileId,
        documents: Option<FileId>,
    },
    Pointwise {
        queries: FileId,
        answers: FileId,
        documents: Option<FileId>,
    },
    Citations {
        answers: Vec<FileId>,
        passages: FileId,
    },
    /// The passages of a loaded UDCG JSON, or a run's top k (with the loaded topics, passages
    /// and qrels), as "compute locally" takes them; the chat template as [`UtilityTemplate`].
    Utility {
        source: ComputeSource,
        template: UtilityTemplate,
    },
}

/// Where the utility task's chat template comes from (what decides exact or bound scoring).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub enum UtilityTemplate {
    /// None: the chat endpoint's top 20 logprobs (exact when listed, else an upper bound).
    #[default]
    None,
    /// The served model's GGUF, read in the worker by [`JudgeRequest::ReadGguf`] (metadata
    /// only: tokenizer and chat template); exact echo scoring of the first token.
    Gguf { id: u32, name: String },
    /// A Jinja chat template file's text (no tokenizer: the whole word NO-RESPONSE is appended
    /// and its first echoed token scored).
    Text { name: String, text: String },
}

impl TaskInputs {
    pub fn task(&self) -> JudgeTaskChoice {
        match self {
            TaskInputs::Umbrela { .. } => JudgeTaskChoice::Umbrela,
            TaskInputs::NuggetsCreate { .. } => JudgeTaskChoice::NuggetsCreate,
            TaskInputs::NuggetsScore { .. } => JudgeTaskChoice::NuggetsScore,
            TaskInputs::NuggetsAssign { .. } => JudgeTaskChoice::NuggetsAssign,
            TaskInputs::Pairwise { .. } => JudgeTaskChoice::Pairwise,
            TaskInputs::Pointwise { .. } => JudgeTaskChoice::Pointwise,
            TaskInputs::Citations { .. } => JudgeTaskChoice::Citations,
            TaskInputs::Utility { .. } => JudgeTaskChoice::Utility,
        }
    }
}

/// Everything a job needs except the key.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct JudgeSpec {
    pub provider: ProviderChoice,
    pub model: String,
    pub base_url: String,
    pub concurrency: u32,
    /// Stop before the estimated spend would pass this many US dollars.
    pub max_cost: Option<f64>,
    /// Stop before input + output tokens would pass this.
    pub max_tokens: Option<u64>,
    /// The task and the files it reads.
    pub inputs: TaskInputs,
    /// Through the provider's batch API (half price, within 24 h; see `judge_batch`).
    #[serde(default)]
    pub batch: bool,
    /// Keep the replies (and batch ids) in this browser's judge cache, so a reload resumes
    /// without paying twice: the user's consent, off by default. Without it the worker keeps
    /// them in the tab's memory only.
    #[serde(default)]
    pub keep_replies: bool,
}

impl JudgeSpec {
    pub fn task(&self) -> JudgeTaskChoice {
        self.inputs.task()
    }
}

/// An API key: serialised to reach the worker, never printed.
#[derive(Serialize, Deserialize, Clone, PartialEq, Eq)]
pub struct Secret(pub String);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum JudgeRequest {
    /// The batches kept in this browser (from earlier pages), answered with
    /// [`JudgeResponse::KeptBatches`]; sends nothing.
    KeptBatches,
    /// Render the first prompt and count requests, tokens and cost; sends nothing.
    Estimate {
        ticket: u32,
        spec: JudgeSpec,
    },
    /// Run the job (the user confirmed the estimate).
    Start {
        job: u32,
        spec: JudgeSpec,
        key: Option<Secret>,
    },
    Pause {
        job: u32,
    },
    Resume {
        job: u32,
    },
    /// Stop sending; what succeeded so far is kept (and cached).
    Cancel {
        job: u32,
    },
    /// Reads the metadata of a GGUF the user picked (offered on a channel, or an object URL: the
    /// worker reads slices of the Blob, nothing is uploaded) for the utility task's chat template and
    /// tokenizer; kept under `id` until another is read.
    ReadGguf {
        id: u32,
        url: String,
        name: String,
    },
}

/// What a GGUF read for the utility task gave.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct GgufTemplateInfo {
    pub id: u32,
    pub file_name: String,
    /// `general.name` (the model column of the utilities), when the file has one.
    pub model_name: Option<String>,
    /// "chat template of 1,234 characters; first token of NO-RESPONSE: \"NO\"".
    pub summary: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct JudgeEstimate {
    pub ticket: u32,
    /// (query, passage) pairs to judge, and how many requests they take.
    pub items: usize,
    pub requests: usize,
    /// Requests already answered in this browser's cache (not sent again, not paid again).
    pub cached: usize,
    /// Estimated tokens: the rendered prompts' input, and the task's output cap.
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// In US dollars, when the model is in the price table.
    pub cost: Option<f64>,
    /// The same requests through the provider's batch API (its discount from the price
    /// table), when the model is priced and the provider has a batch API.
    #[serde(default)]
    pub batch_cost: Option<f64>,
    /// Where the prices come from (date), or why there is no cost.
    pub price_note: String,
    /// The URL the requests go to.
    pub endpoint: String,
    pub first_prompt: String,
    /// Items the run could not use (a qid without a question, a docno without a text).
    pub skipped: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct JudgeProgress {
    pub job: u32,
    pub total: usize,
    /// Finished items (ok or failed), `cached` of them without a request.
    pub done: usize,
    pub cached: usize,
    pub failed: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cost: Option<f64>,
    /// Seconds left at the current pace, once there is a pace.
    pub eta_s: Option<f64>,
    pub paused: bool,
}

/// An item that failed after its retries: recorded, never given a made-up grade.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct JudgeFailure {
    pub qid: String,
    /// UMBRELA's docno; for the other tasks the item's other key fields (`agent_a=x agent_b=y
    /// order=ab`).
    pub docno: String,
    pub error: String,
    /// The model's reply when there was one (e.g. unparseable).
    pub raw: Option<String>,
    pub attempts: u32,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct JudgeOutcome {
    pub job: u32,
    /// A file name for the result (`umbrela-MODEL.qrels`, `nuggets-assign-MODEL.jsonl`, ...).
    pub name: String,
    /// The task's output file of the items that succeeded (TREC qrels for UMBRELA, the
    /// anchors' JSONL or CSV for the others).
    pub qrels: String,
    /// A line about the result (pairwise: the position-flip rate; nuggets: topics left out).
    pub note: Option<String>,
    pub judged: usize,
    pub failed: usize,
    /// Why the job stopped before the end (cancelled, budget reached), if it did.
    pub stopped: Option<String>,
    /// A file (name, text) to load into the views instead of the download, when the two differ
    /// (utilities: the exact values as a utilities TSV with a model column, for the RAG views;
    /// the download is `ragscope utility`'s format with bounds written as bounds).
    #[serde(default)]
    pub view: Option<(String, String)>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum JudgeResponse {
    Estimate(JudgeEstimate),
    EstimateFailed {
        ticket: u32,
        error: String,
    },
    Progress(JudgeProgress),
    Failure {
        job: u32,
        failure: JudgeFailure,
    },
    Finished(JudgeOutcome),
    /// The state of a batch job's batches (submitted, polled, imported).
    Batch(super::judge_batch::BatchUpdate),
    /// The batches kept in this browser's judge cache that have not been imported yet.
    KeptBatches(Vec<super::judge_batch::KeptRun>),
    /// The job could not start or broke down (nothing made up: what finished is cached).
    Failed {
        job: u32,
        error: String,
    },
    /// The answer to [`JudgeRequest::ReadGguf`].
    GgufRead {
        id: u32,
        result: Result<GgufTemplateInfo, String>,
    },
}
