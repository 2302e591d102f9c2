//! ragscope-infer: GGUF reader, tokenizers, chat templates and a CPU reference forward pass
//! (prefill only) used to compute passage utilities u = R·(1 − p(NO-RESPONSE)) for UDCG.
//!
//! The CPU engine is the reference the WebGPU backend (a later issue) is checked against; the
//! engine itself is checked against llama.cpp through fixtures written by `tests/oracle/generate.py`.

pub mod error;
pub mod gguf;
pub mod model;
pub mod tokenizer;
pub mod utility;

pub use error::{InferError, Result};
pub use gguf::{ByteSource, GgmlType, GgufFile, MetadataValue, TensorInfo};
pub use model::{Model, ModelConfig, PrefillOutput};
pub use tokenizer::{chat::ChatMessage, chat::ChatTemplate, Tokenizer};
pub use utility::{NoResponseScorer, PromptTemplate};
