//! A read-only view of a loaded model's tensors for other backends (the wgpu backend uploads
//! them once), and the hook through which `Model::prefill` runs on such a backend.

use super::{forward, Matrix, Model, PrefillOutput};
use crate::error::Result;

/// A prefill engine other than the CPU one; `Model::prefill` calls it after validating the
/// prompts (non-empty, token ids inside the vocabulary, at least one prompt).
pub trait PrefillBackend: std::fmt::Debug + Send + Sync {
    /// What runs the prefill, e.g. the GPU adapter's name and API.
    fn name(&self) -> String;
    fn prefill(&self, model: &Model, prompts: &[&[u32]]) -> Result<PrefillOutput>;
    /// Greedy decoding on this backend (prompts validated by the caller); `None` when the
    /// backend does not decode (the CPU engine then does).
    fn greedy(
        &self,
        _model: &Model,
        _tokenizer: &crate::Tokenizer,
        _prompts: &[&[u32]],
        _options: &crate::generate::GreedyOptions,
    ) -> Option<Result<Vec<crate::generate::Generation>>> {
        None
    }
}

/// One transformer block's tensors.
pub struct LayerView<'a> {
    pub attn_norm: &'a [f32],
    pub wq: &'a Matrix,
    pub wk: &'a Matrix,
    pub wv: &'a Matrix,
    pub bq: Option<&'a [f32]>,
    pub bk: Option<&'a [f32]>,
    pub bv: Option<&'a [f32]>,
    pub wo: &'a Matrix,
    pub ffn_norm: &'a [f32],
    pub w_gate: &'a Matrix,
    pub w_up: &'a Matrix,
    pub w_down: &'a Matrix,
    /// Gemma 3 only: per-head Q/K norms and the norms after attention and after the FFN.
    pub q_norm: Option<&'a [f32]>,
    pub k_norm: Option<&'a [f32]>,
    pub post_attn_norm: Option<&'a [f32]>,
    pub post_ffn_norm: Option<&'a [f32]>,
}

impl Model {
    pub fn layer_views(&self) -> Vec<LayerView<'_>> {
        self.layers
            .iter()
            .map(|l| LayerView {
                attn_norm: &l.attn_norm,
                wq: &l.wq,
                wk: &l.wk,
                wv: &l.wv,
                bq: l.bq.as_deref(),
                bk: l.bk.as_deref(),
                bv: l.bv.as_deref(),
                wo: &l.wo,
                ffn_norm: &l.ffn_norm,
                w_gate: &l.w_gate,
                w_up: &l.w_up,
                w_down: &l.w_down,
                q_norm: l.q_norm.as_deref(),
                k_norm: l.k_norm.as_deref(),
                post_attn_norm: l.post_attn_norm.as_deref(),
                post_ffn_norm: l.post_ffn_norm.as_deref(),
            })
            .collect()
    }

    pub fn token_embedding(&self) -> &Matrix {
        &self.token_embd
    }

    /// The LM head (the token embedding when they are tied).
    pub fn output_matrix(&self) -> &Matrix {
        self.output.as_ref().unwrap_or(&self.token_embd)
    }

    pub fn output_norm(&self) -> &[f32] {
        &self.output_norm
    }

    /// RoPE cos/sin tables for positions `0..max_pos` (`max_pos × n_rot/2` each), exactly the
    /// CPU engine's (frequency factors and linear scaling included).
    pub fn rope_tables(&self, max_pos: usize) -> (Vec<f32>, Vec<f32>) {
        forward::rope_tables(self, max_pos)
    }

    /// Gemma 3's tables for its local (sliding-window) layers, with their own base; `None` when
    /// every layer uses the global tables.
    pub fn rope_tables_local(&self, max_pos: usize) -> Option<(Vec<f32>, Vec<f32>)> {
        forward::rope_tables_local(self, max_pos)
    }
}
