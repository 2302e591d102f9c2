//! Messages between the Judges panel and the judge jobs in the worker.
//!
//! The API key travels only in [`JudgeRequest::Start`], inside a [`Secret`] that never prints;
//! nothing the worker sends back contains it.

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

/// What a judge job computes. Part 2 adds nuggets, pairwise battles, ...
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum JudgeTaskChoice {
    /// UMBRELA relevance 0–3 of each (query, passage) in a run's top k → TREC qrels.
    #[default]
    Umbrela,
}

impl JudgeTaskChoice {
    pub fn label(self) -> &'static str {
        match self {
            JudgeTaskChoice::Umbrela => "UMBRELA relevance (0–3) → qrels",
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
    pub task: JudgeTaskChoice,
    pub topics: FileId,
    pub passages: FileId,
    pub run: FileId,
    /// Passages judged per query (the run's top k).
    pub k: usize,
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
    pub docno: String,
    pub error: String,
    /// The model's reply when there was one (e.g. unparseable).
    pub raw: Option<String>,
    pub attempts: u32,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct JudgeOutcome {
    pub job: u32,
    /// A file name for the result (`umbrela-MODEL.qrels`).
    pub name: String,
    /// TREC qrels of the items that succeeded (`qid 0 docno grade`).
    pub qrels: String,
    pub judged: usize,
    pub failed: usize,
    /// Why the job stopped before the end (cancelled, budget reached), if it did.
    pub stopped: Option<String>,
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
    /// The job could not start or broke down (nothing made up: what finished is cached).
    Failed {
        job: u32,
        error: String,
    },
}
