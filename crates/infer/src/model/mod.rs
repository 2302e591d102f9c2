//! Llama-family models (`llama`, `qwen2`, `smollm`, `mistral`) and their prefill-only forward pass.

mod config;
mod export;
mod forward;
mod matmul;
mod parallel;
mod weights;

pub use config::{ModelConfig, RopeLayout, SUPPORTED_ARCHS};
pub use export::{LayerView, PrefillBackend};
pub use weights::Matrix;

use crate::error::{InferError, Result};
use crate::gguf::{ByteSource, GgufFile};
use weights::Loader;

#[derive(Debug)]
pub(crate) struct Layer {
    attn_norm: Vec<f32>,
    wq: Matrix,
    wk: Matrix,
    wv: Matrix,
    bq: Option<Vec<f32>>,
    bk: Option<Vec<f32>>,
    bv: Option<Vec<f32>>,
    wo: Matrix,
    ffn_norm: Vec<f32>,
    w_gate: Matrix,
    w_up: Matrix,
    w_down: Matrix,
}

/// A loaded model: configuration plus weights (still in their GGUF encodings).
#[derive(Debug)]
pub struct Model {
    pub config: ModelConfig,
    token_embd: Matrix,
    layers: Vec<Layer>,
    output_norm: Vec<f32>,
    /// `None`: the output projection is tied to the token embedding.
    output: Option<Matrix>,
    /// Per-pair RoPE frequency divisors (Llama-3 rope scaling, `rope_freqs.weight`).
    rope_freqs: Option<Vec<f32>>,
    /// Where `prefill` runs: `None` is the CPU engine (see `set_backend`).
    backend: Option<Box<dyn PrefillBackend>>,
}

/// Result of a prefill: each prompt's logits at its last position.
#[derive(Debug, Clone)]
pub struct PrefillOutput {
    pub last_logits: Vec<Vec<f32>>,
}

impl Model {
    /// Loads the weights of a parsed GGUF file; every tensor's shape is checked against the
    /// metadata, and errors name the file and tensor.
    pub fn load(g: &GgufFile, src: &dyn ByteSource) -> Result<Model> {
        let c = ModelConfig::from_gguf(g)?;
        let l = Loader { g, src };
        let (d, ff) = (c.n_embd, c.n_ff);
        let q_dim = c.n_head * c.head_dim;
        let kv_dim = c.n_head_kv * c.head_dim;
        let token_embd = l.matrix("token_embd.weight", d, c.n_vocab)?;
        let mut layers = Vec::with_capacity(c.n_layer);
        for i in 0..c.n_layer {
            let p = |s: &str| format!("blk.{i}.{s}");
            layers.push(Layer {
                attn_norm: l.vector(&p("attn_norm.weight"), d)?,
                wq: l.matrix(&p("attn_q.weight"), d, q_dim)?,
                wk: l.matrix(&p("attn_k.weight"), d, kv_dim)?,
                wv: l.matrix(&p("attn_v.weight"), d, kv_dim)?,
                bq: l.optional_vector(&p("attn_q.bias"), q_dim)?,
                bk: l.optional_vector(&p("attn_k.bias"), kv_dim)?,
                bv: l.optional_vector(&p("attn_v.bias"), kv_dim)?,
                wo: l.matrix(&p("attn_output.weight"), q_dim, d)?,
                ffn_norm: l.vector(&p("ffn_norm.weight"), d)?,
                w_gate: l.matrix(&p("ffn_gate.weight"), d, ff)?,
                w_up: l.matrix(&p("ffn_up.weight"), d, ff)?,
                w_down: l.matrix(&p("ffn_down.weight"), ff, d)?,
            });
        }
        let output_norm = l.vector("output_norm.weight", d)?;
        let output = if l.has("output.weight") {
            Some(l.matrix("output.weight", d, c.n_vocab)?)
        } else {
            None
        };
        let rope_freqs = l.optional_vector("rope_freqs.weight", c.n_rot / 2)?;
        Ok(Model {
            config: c,
            token_embd,
            layers,
            output_norm,
            output,
            rope_freqs,
            backend: None,
        })
    }

    /// Opens a GGUF file natively (memory-mapped) and loads model and tokenizer.
    #[cfg(feature = "native")]
    pub fn open(path: &std::path::Path) -> Result<(Model, crate::Tokenizer, GgufFile)> {
        let (g, src) = GgufFile::open(path)?;
        let model = Model::load(&g, &src)?;
        let tok = crate::Tokenizer::from_gguf(&g)?;
        if tok.n_vocab() != model.config.n_vocab {
            return Err(InferError::tensor(
                &g.file,
                "token_embd.weight",
                format!(
                    "has {} rows but the tokenizer has {} tokens",
                    model.config.n_vocab,
                    tok.n_vocab()
                ),
            ));
        }
        Ok((model, tok, g))
    }

    pub fn n_vocab(&self) -> usize {
        self.config.n_vocab
    }

    /// Runs the prompts (each a non-empty token list, any lengths) through the model and
    /// returns each one's logits at its last position (on the backend set, else the CPU).
    pub fn prefill(&self, prompts: &[&[u32]]) -> Result<PrefillOutput> {
        self.prefill_on(prompts, self.backend.as_deref())
    }

    /// The CPU engine's prefill, whatever backend is set (fallbacks and comparisons).
    pub fn prefill_cpu(&self, prompts: &[&[u32]]) -> Result<PrefillOutput> {
        self.prefill_on(prompts, None)
    }

    /// Runs `prefill` on `backend` from now on (`None`: the CPU engine).
    pub fn set_backend(&mut self, backend: Option<Box<dyn PrefillBackend>>) {
        self.backend = backend;
    }

    /// The backend's description, `None` for the CPU engine.
    pub fn backend_name(&self) -> Option<String> {
        self.backend.as_ref().map(|b| b.name())
    }

    fn prefill_on(
        &self,
        prompts: &[&[u32]],
        backend: Option<&dyn PrefillBackend>,
    ) -> Result<PrefillOutput> {
        for (i, p) in prompts.iter().enumerate() {
            if p.is_empty() {
                return Err(InferError::Forward(format!("prompt {i} is empty")));
            }
            if let Some(&bad) = p.iter().find(|&&t| t as usize >= self.config.n_vocab) {
                return Err(InferError::Forward(format!(
                    "prompt {i} has token id {bad}, vocabulary size is {}",
                    self.config.n_vocab
                )));
            }
        }
        if prompts.is_empty() {
            return Ok(PrefillOutput {
                last_logits: Vec::new(),
            });
        }
        match backend {
            Some(b) => b.prefill(self, prompts),
            None => Ok(forward::prefill(self, prompts)),
        }
    }
}
