//! One error type for the crate: every failure names the file (when known) and what was wrong.

use std::fmt;

/// Everything that can go wrong while reading a model, tokenizing or running it.
#[derive(Debug, thiserror::Error)]
pub enum InferError {
    #[error("{file}: I/O error: {source}")]
    Io {
        file: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{file}: not a GGUF file (magic bytes {found:02x?}, expected \"GGUF\")")]
    BadMagic { file: String, found: [u8; 4] },
    #[error("{file}: unsupported GGUF version {version} (supported: 2, 3)")]
    UnsupportedVersion { file: String, version: u32 },
    #[error(
        "{file}: truncated at byte {offset}: needed {needed} more bytes for {what}, file has {len}"
    )]
    Truncated {
        file: String,
        what: String,
        offset: u64,
        needed: u64,
        len: u64,
    },
    #[error("{file}: malformed GGUF at byte {offset}: {message}")]
    Malformed {
        file: String,
        offset: u64,
        message: String,
    },
    #[error("{file}: tensor '{tensor}' has unsupported ggml type {type_id} ({type_name})")]
    UnsupportedType {
        file: String,
        tensor: String,
        type_id: u32,
        type_name: String,
    },
    #[error(
        "{file}: unsupported architecture '{arch}' (supported: llama, qwen2, smollm, mistral, gemma3)"
    )]
    UnsupportedArchitecture { file: String, arch: String },
    #[error("{file}: metadata key '{key}': {message}")]
    Metadata {
        file: String,
        key: String,
        message: String,
    },
    #[error("{file}: tensor '{tensor}': {message}")]
    Tensor {
        file: String,
        tensor: String,
        message: String,
    },
    #[error("tokenizer: {0}")]
    Tokenizer(String),
    #[error("chat template: {0}")]
    ChatTemplate(String),
    #[error("forward pass: {0}")]
    Forward(String),
    /// A prompt (index in its batch) does not fit in the model's context window.
    #[error("prompt {prompt} has {tokens} tokens, more than the model's context length of {context_length}")]
    ContextOverflow {
        prompt: usize,
        tokens: usize,
        context_length: usize,
    },
}

impl InferError {
    pub(crate) fn metadata(file: &str, key: &str, message: impl fmt::Display) -> Self {
        InferError::Metadata {
            file: file.to_string(),
            key: key.to_string(),
            message: message.to_string(),
        }
    }

    pub(crate) fn tensor(file: &str, tensor: &str, message: impl fmt::Display) -> Self {
        InferError::Tensor {
            file: file.to_string(),
            tensor: tensor.to_string(),
            message: message.to_string(),
        }
    }
}

pub type Result<T> = std::result::Result<T, InferError>;
