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
}
