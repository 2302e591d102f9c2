//! ragscope-infer: GGUF reader, tokenizers, chat templates and two forward passes used to compute
//! passage utilities u = R·(1 − p(NO-RESPONSE)) for UDCG (prefill) and greedy answers (decoding
//! with a KV cache): the CPU engine (`model`, `generate`) and, with the crate feature `gpu`, the
//! wgpu backend (`gpu`: WGSL compute shaders on Vulkan/Metal/DX12 natively and WebGPU in the
//! browser).
//!
//! The CPU engine is checked against llama.cpp through fixtures written by
//! `tests/oracle/generate.py`; the GPU backend is checked against the CPU engine, kernel by
//! kernel (each WGSL kernel against its CPU twin, `gpu/ops/<op>/`) and end to end
//! (`tests/gpu_oracle.rs`).

pub mod answer;
pub mod error;
pub mod generate;
pub mod gguf;
#[cfg(feature = "gpu")]
pub mod gpu;
pub mod model;
#[doc(hidden)]
pub mod test_support;
pub mod tokenizer;
pub mod utility;

pub use error::{InferError, Result};
pub use generate::{greedy, Generation, GreedyOptions, StopReason};
pub use gguf::{ByteSource, GgmlType, GgufFile, MetadataValue, TensorInfo};
pub use model::{KvCache, Model, ModelConfig, PrefillOutput};
pub use tokenizer::{chat::ChatMessage, chat::ChatTemplate, Tokenizer};
pub use utility::{NoResponseScorer, PromptTemplate};

/// Sets the number of threads the CPU engine uses (natively; call once, before any inference).
#[cfg(feature = "native")]
pub fn init_threads(n: usize) -> std::result::Result<(), String> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .map_err(|e| e.to_string())
}
