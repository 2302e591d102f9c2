//! Messages of "answer the contexts" (compute locally): greedy answers of the picked GGUF model
//! for every context of a loaded context-set file or UDCG JSON, with their outcomes, as
//! `ragscope answer` writes them (the shared bookkeeping is crates/eval's `rag::answer_jobs`).

use super::compute::{BackendChoice, BackendInfo};
use super::FileId;
use serde::{Deserialize, Serialize};

/// The contexts to answer.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerSource {
    /// A loaded context-set file (JSON Lines with question, answers, passage texts).
    Contexts(FileId),
    /// A loaded UDCG JSON: each example is one context of all its passages.
    Udcg(FileId),
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct AnswerStart {
    pub source: AnswerSource,
    /// The id the answered file gets when it is kept as the loaded context sets.
    pub result: FileId,
    pub backend: BackendChoice,
    /// Also answer every passage alone and store its eRAG score (`ragscope answer --erag`).
    pub erag: bool,
    /// Maximum new tokens per answer (`ragscope answer --max-new-tokens`, default 64).
    pub max_new_tokens: usize,
}

/// Counts of the contexts' outcomes so far.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct OutcomeCounts {
    pub correct: usize,
    pub abstain: usize,
    pub wrong: usize,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
pub struct AnswerProgress {
    /// Prompts answered (contexts, and passages alone with eRAG).
    pub done: usize,
    pub total: usize,
    pub questions_done: usize,
    pub questions: usize,
    /// Tokens generated so far.
    pub new_tokens: u64,
    /// Compute time so far (pauses excluded).
    pub seconds: f64,
    pub paused: bool,
    pub outcomes: OutcomeCounts,
}

impl AnswerProgress {
    /// Generated tokens per second of compute (prefill time included).
    pub fn tokens_per_s(&self) -> f64 {
        if self.seconds > 0.0 {
            self.new_tokens as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// Seconds left at the pace so far (per prompt).
    pub fn eta_seconds(&self) -> Option<f64> {
        (self.done > 0 && self.done < self.total)
            .then(|| self.seconds / self.done as f64 * (self.total - self.done) as f64)
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct AnswersDone {
    pub result: FileId,
    /// The answered file's name (`answers-<model>-<source>.jsonl`).
    pub name: String,
    /// `ragscope answer`'s output for the same model and input, byte for byte.
    pub jsonl: String,
    pub progress: AnswerProgress,
    /// The backend(s) that decoded, e.g. "WebGPU: …" or "CPU (…)".
    pub backend: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum AnswerEvent {
    /// Sent when a run starts and whenever the backend changes during it.
    Backend(BackendInfo),
    Progress(AnswerProgress),
    /// Every context is answered; the file follows as `Response::Loaded { id: result }`.
    Done(AnswersDone),
    Failed(String),
    /// Stopped by the user: nothing is kept.
    Cancelled {
        done: usize,
    },
}
