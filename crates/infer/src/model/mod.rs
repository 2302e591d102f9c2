//! Llama-family models (`llama`, `qwen2`, `smollm`, `mistral`): prefill (for utilities) and
//! decoding steps over a per-sequence KV cache (for greedy answers).

mod cache;
mod config;
mod export;
mod forward;
mod matmul;
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
mod matmul_wasm;
mod parallel;
mod weights;

pub use cache::KvCache;
pub use config::{GemmaConfig, ModelConfig, RopeLayout, SUPPORTED_ARCHS};
pub use export::{LayerView, PrefillBackend};
pub(crate) use matmul::dispatched_kernel_mismatch;
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
    /// Gemma 3: per-head RMSNorm of Q and K (head_dim weights).
    q_norm: Option<Vec<f32>>,
    k_norm: Option<Vec<f32>>,
    /// Gemma 3: RMSNorm of the attention and FFN outputs before their residual adds.
    post_attn_norm: Option<Vec<f32>>,
    post_ffn_norm: Option<Vec<f32>>,
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
        // Tensors only Gemma 3 has: required there, not read otherwise.
        let is_gemma = c.gemma.is_some();
        let gemma = |v: Result<Vec<f32>>| -> Result<Option<Vec<f32>>> {
            if is_gemma {
                v.map(Some)
            } else {
                Ok(None)
            }
        };
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
                q_norm: gemma(l.vector(&p("attn_q_norm.weight"), c.head_dim))?,
                k_norm: gemma(l.vector(&p("attn_k_norm.weight"), c.head_dim))?,
                post_attn_norm: gemma(l.vector(&p("post_attention_norm.weight"), d))?,
                post_ffn_norm: gemma(l.vector(&p("post_ffw_norm.weight"), d))?,
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

    /// Runs `prefill` on `backend` from now on (`None`: the CPU engine).
    pub fn set_backend(&mut self, backend: Option<Box<dyn PrefillBackend>>) {
        self.backend = backend;
    }

    pub(crate) fn backend(&self) -> Option<&dyn PrefillBackend> {
        self.backend.as_deref()
    }

    /// The backend's description, `None` for the CPU engine.
    pub fn backend_name(&self) -> Option<String> {
        self.backend.as_ref().map(|b| b.name())
    }

    /// Checks that every prompt is non-empty, its ids are in the vocabulary, and it fits in the
    /// context window after `past[i]` cached positions.
    pub(crate) fn check_prompts(&self, prompts: &[&[u32]], past: &[usize]) -> Result<()> {
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
            let total = past.get(i).copied().unwrap_or(0) + p.len();
            if total > self.config.context_length {
                return Err(InferError::ContextOverflow {
                    prompt: i,
                    tokens: total,
                    context_length: self.config.context_length,
                });
            }
        }
        Ok(())
    }

    /// Runs the prompts (each a non-empty token list, any lengths, at most the context length)
    /// through the model and returns each one's logits at its last position (on the backend
    /// set, else the CPU engine).
    pub fn prefill(&self, prompts: &[&[u32]]) -> Result<PrefillOutput> {
        self.prefill_on(prompts, self.backend.as_deref())
    }

    /// The CPU engine's prefill, whatever backend is set (fallbacks and comparisons).
    pub fn prefill_cpu(&self, prompts: &[&[u32]]) -> Result<PrefillOutput> {
        self.prefill_on(prompts, None)
    }

    fn prefill_on(
        &self,
        prompts: &[&[u32]],
        backend: Option<&dyn PrefillBackend>,
    ) -> Result<PrefillOutput> {
        // Checked here for every backend: a prompt past the context window is refused, never
        // scored (attention's cost and the RoPE tables are sized by it).
        self.check_prompts(prompts, &[])?;
        if prompts.is_empty() {
            return Ok(PrefillOutput {
                last_logits: Vec::new(),
            });
        }
        if let Some(b) = backend {
            return b.prefill(self, prompts);
        }
        let mut caches: Vec<KvCache> = prompts.iter().map(|_| KvCache::scratch()).collect();
        let mut seqs: Vec<forward::Seq> = prompts
            .iter()
            .zip(caches.iter_mut())
            .map(|(tokens, cache)| forward::Seq { tokens, cache })
            .collect();
        Ok(PrefillOutput {
            last_logits: forward::forward(self, &mut seqs),
        })
    }

    /// Like [`Model::prefill`], and returns each prompt's KV cache for decoding.
    pub fn prefill_cached(&self, prompts: &[&[u32]]) -> Result<(PrefillOutput, Vec<KvCache>)> {
        self.check_prompts(prompts, &[])?;
        let mut caches: Vec<KvCache> = prompts.iter().map(|_| KvCache::new(self)).collect();
        if prompts.is_empty() {
            return Ok((
                PrefillOutput {
                    last_logits: Vec::new(),
                },
                caches,
            ));
        }
        let mut seqs: Vec<forward::Seq> = prompts
            .iter()
            .zip(caches.iter_mut())
            .map(|(tokens, cache)| forward::Seq { tokens, cache })
            .collect();
        let last_logits = forward::forward(self, &mut seqs);
        Ok((PrefillOutput { last_logits }, caches))
    }

    /// One decoding step: appends `tokens[i]` to sequence `i` (whose cache came from
    /// [`Model::prefill_cached`]) and returns each sequence's logits for the next token.
    pub fn decode_step(
        &self,
        caches: &mut [&mut KvCache],
        tokens: &[u32],
    ) -> Result<Vec<Vec<f32>>> {
        if caches.len() != tokens.len() {
            return Err(InferError::Forward(format!(
                "{} caches for {} tokens",
                caches.len(),
                tokens.len()
            )));
        }
        if caches.iter().any(|c| !c.keeps()) {
            return Err(InferError::Forward(
                "decoding needs a cache from prefill_cached".into(),
            ));
        }
        let singles: Vec<[u32; 1]> = tokens.iter().map(|&t| [t]).collect();
        let prompts: Vec<&[u32]> = singles.iter().map(|t| t.as_slice()).collect();
        let past: Vec<usize> = caches.iter().map(|c| c.len()).collect();
        self.check_prompts(&prompts, &past)?;
        if tokens.is_empty() {
            return Ok(Vec::new());
        }
        let mut seqs: Vec<forward::Seq> = prompts
            .iter()
            .zip(caches.iter_mut())
            .map(|(tokens, cache)| forward::Seq { tokens, cache })
            .collect();
        Ok(forward::forward(self, &mut seqs))
    }
}
