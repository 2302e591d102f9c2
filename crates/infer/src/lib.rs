//! ragscope-infer: GGUF reader, tokenizers, chat templates and a CPU reference forward pass used
//! to compute passage utilities u = R·(1 − p(NO-RESPONSE)) for UDCG (prefill) and greedy answers
//! (decoding with a KV cache).
//!
//! The CPU engine is the reference the WebGPU backend (a later issue) is checked against; the
//! engine itself is checked against llama.cpp through fixtures written by `tests/oracle/generate.py`.

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
