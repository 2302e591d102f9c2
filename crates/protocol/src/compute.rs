//! Messages of "compute locally": a GGUF model the user picked, opened in the worker (never
//! uploaded: the worker reads slices of the file's Blob), and passage utilities computed with it.

use super::FileId;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum ComputeRequest {
    /// Opens the picked GGUF file, which the page offers on a channel (`channel:NAME`,
    /// crates/platform/src/blob_channel.rs; an object URL works too): the worker gets the Blob and
    /// reads only slices. Replaces the model opened before.
    OpenModel {
        url: String,
        name: String,
    },
    /// What WebGPU offers in this worker (adapter, limits, shader-f16).
    ProbeGpu,
    /// p(NO-RESPONSE) for every passage of `source`; the utilities are kept as the loaded
    /// utilities file `result` when done.
    Start {
        source: ComputeSource,
        result: FileId,
        backend: BackendChoice,
        /// When the GPU fails mid-run (after one retry on a new device), continue on the CPU
        /// instead of pausing.
        cpu_fallback: bool,
    },
    Pause,
    Resume,
    /// Stops after the passage being computed; nothing is kept.
    Cancel,
    /// Greedy answers and outcomes for every context of a loaded file (`ragscope answer` in the
    /// worker); Pause, Resume and Cancel apply to it as to utilities.
    Answer(super::answer_generation::AnswerStart),
    /// Destroys the worker's WebGPU device as a driver reset would: the next batch fails and is
    /// retried on a new device (the recovery path's end-to-end test; nothing is lost).
    LoseGpu,
}

/// The passages to score.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum ComputeSource {
    /// Every passage of a loaded UDCG JSON file (question, passages with text and relevance).
    Udcg(FileId),
    /// The top `k` passages per query of a loaded TREC run (ranked like trec_eval), with the
    /// loaded topics (`qid<TAB>question`), passages (`{"docno","text"}` JSON Lines) and qrels
    /// (relevance): the inputs of `ragscope utility`'s run mode.
    Run { run: FileId, k: usize },
    /// Passages sent with the request (the Learn page's current question): scored and returned
    /// as `ComputeEvent::Scored`, never kept as a loaded file.
    Passages {
        name: String,
        passages: Vec<PassageToScore>,
    },
}

/// One passage of a `ComputeSource::Passages` request, as `ragscope utility` reads it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct PassageToScore {
    pub qid: String,
    pub docno: String,
    pub relevant: bool,
    pub question: String,
    /// The text exactly as the prompt's `Document:` line holds it.
    pub text: String,
}

/// The result of a `ComputeSource::Passages` request: p(NO-RESPONSE) of each passage, in order.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ScoredPassages {
    /// The request's name (what asked for it).
    pub name: String,
    /// The model's `general.name` (else its file name).
    pub model: String,
    pub p_no_response: Vec<f64>,
    pub seconds: f64,
    pub backend: String,
}

/// Where forward passes run.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// WebGPU on a hardware adapter the model fits, else the CPU (reason shown). A software
    /// adapter (SwiftShader: a CPU emulation of a GPU) is slower than the CPU engine, so `Auto`
    /// passes it by, as `ragscope utility --backend auto` does.
    #[default]
    Auto,
    /// WebGPU on whatever adapter the worker gets (software ones too), else the CPU (reason shown).
    Gpu,
    Cpu,
}

/// Which backend computes now, and why.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct BackendInfo {
    pub gpu: bool,
    /// "WebGPU: <adapter>" or "CPU (in the worker, single-threaded)".
    pub label: String,
    /// Why this backend (why not the GPU, when on the CPU).
    pub reason: String,
}

/// Memory after a run: the worker's wasm memory (it only grows, so this is its peak) and the
/// GPU buffers the backend allocated (weights + the reused batch workspace).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
pub struct MemoryReport {
    pub wasm_bytes: u64,
    pub gpu_bytes: u64,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum ComputeEvent {
    ModelOpened(ModelInfo),
    ModelFailed(String),
    Gpu(GpuInfo),
    /// Sent when a run starts and whenever the backend changes during it.
    Backend(BackendInfo),
    Progress(ComputeProgress),
    /// Every passage is computed; the utilities follow as `Response::Loaded { id: result }`.
    Done {
        result: FileId,
        name: String,
        /// The utilities TSV (`qid docno relevant no_res_prob model`), for the download.
        tsv: String,
        passages: usize,
        seconds: f64,
        /// The backend(s) that computed, e.g. "WebGPU: SwiftShader" or "CPU".
        backend: String,
        memory: MemoryReport,
    },
    /// The p(NO-RESPONSE) of a `ComputeSource::Passages` request (no file follows).
    Scored(ScoredPassages),
    Failed(String),
    Cancelled {
        done: usize,
    },
    /// Answers of the contexts being computed (super::answer_generation).
    Answers(super::answer_generation::AnswerEvent),
}

/// What the app shows about a picked model file.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct ModelInfo {
    pub file_name: String,
    /// `general.name`, else the file name.
    pub name: String,
    pub architecture: String,
    pub file_bytes: u64,
    pub parameters: u64,
    pub layers: usize,
    pub embedding: usize,
    pub vocabulary: usize,
    pub context_length: usize,
    /// (ggml type, tensors, bytes), most bytes first.
    pub quant_mix: Vec<(String, usize, u64)>,
    pub load_seconds: f64,
}

/// WebGPU as seen from the worker; `available: false` says why in `reason`.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct GpuInfo {
    pub available: bool,
    pub reason: String,
    /// vendor / architecture / device / description, as the adapter reports them.
    pub adapter: String,
    pub shader_f16: bool,
    pub limits: Vec<(String, f64)>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Default)]
pub struct ComputeProgress {
    pub done: usize,
    pub total: usize,
    pub tokens: u64,
    /// Compute time so far (pauses excluded).
    pub seconds: f64,
    pub paused: bool,
}

impl ComputeProgress {
    pub fn tokens_per_s(&self) -> f64 {
        if self.seconds > 0.0 {
            self.tokens as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// Seconds left at the pace so far (per passage).
    pub fn eta_seconds(&self) -> Option<f64> {
        (self.done > 0 && self.done < self.total)
            .then(|| self.seconds / self.done as f64 * (self.total - self.done) as f64)
    }
}
