//! Hyper-parameters of a Llama-family or Gemma 3 model from GGUF metadata (`{arch}.*` keys).

use crate::error::{InferError, Result};
use crate::gguf::GgufFile;

/// How RoPE pairs dimensions: adjacent pairs (Llama, as llama.cpp stores permuted Q/K) or the
/// two halves of each head (NeoX; Qwen2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RopeLayout {
    Normal,
    NeoX,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ModelConfig {
    pub arch: String,
    pub n_vocab: usize,
    pub n_embd: usize,
    pub n_layer: usize,
    pub n_ff: usize,
    pub n_head: usize,
    pub n_head_kv: usize,
    pub head_dim: usize,
    pub n_rot: usize,
    pub rms_eps: f32,
    pub rope_base: f32,
    /// 1/factor for linear RoPE scaling, else 1.
    pub rope_freq_scale: f32,
    pub rope_layout: RopeLayout,
    pub context_length: usize,
    /// Gemma 3 specifics (None for the Llama family).
    pub gemma: Option<GemmaConfig>,
}

/// What Gemma 3 adds to the Llama layout (llama.cpp `llm_build_gemma3_iswa`): embeddings scaled
/// by √d, RMS-normed Q and K per head, norms after attention and FFN too, GeGLU, and local
/// sliding-window layers (their own RoPE base) interleaved with global ones.
#[derive(Debug, Clone, PartialEq)]
pub struct GemmaConfig {
    /// Keys a local layer's query sees: positions p with q − p < window.
    pub sliding_window: Option<usize>,
    /// Every `swa_pattern`-th layer is global, the others local (llama.cpp `set_swa_pattern(6)`).
    pub swa_pattern: usize,
    /// RoPE base of the local layers (llama.cpp's `rope_freq_base_train_swa`).
    pub rope_base_local: f32,
    /// Scale of Q·K (1/√key_length).
    pub attn_scale: f32,
}

impl GemmaConfig {
    /// Whether layer `il` attends through the sliding window.
    pub fn is_local(&self, il: usize) -> bool {
        self.sliding_window.is_some() && il % self.swa_pattern < self.swa_pattern - 1
    }
}

pub const SUPPORTED_ARCHS: &[&str] = &["llama", "qwen2", "smollm", "mistral", "gemma3"];

impl ModelConfig {
    pub fn from_gguf(g: &GgufFile) -> Result<Self> {
        let arch = g
            .get_str("general.architecture")?
            .ok_or_else(|| InferError::metadata(&g.file, "general.architecture", "missing"))?
            .to_string();
        if !SUPPORTED_ARCHS.contains(&arch.as_str()) {
            return Err(InferError::UnsupportedArchitecture {
                file: g.file.clone(),
                arch,
            });
        }
        let key = |k: &str| format!("{arch}.{k}");
        let positive = |k: &str| -> Result<usize> {
            let v = g.require_u64(&key(k))?;
            if v == 0 || v > (1 << 24) {
                return Err(InferError::metadata(
                    &g.file,
                    &key(k),
                    format!("implausible value {v}"),
                ));
            }
            Ok(v as usize)
        };
        let n_embd = positive("embedding_length")?;
        let n_layer = positive("block_count")?;
        let n_ff = positive("feed_forward_length")?;
        let n_head = positive("attention.head_count")?;
        let n_head_kv = match g.get_u64(&key("attention.head_count_kv"))? {
            Some(v) if v > 0 => v as usize,
            Some(_) => {
                return Err(InferError::metadata(
                    &g.file,
                    &key("attention.head_count_kv"),
                    "must be positive",
                ))
            }
            None => n_head,
        };
        if n_head % n_head_kv != 0 {
            return Err(InferError::metadata(
                &g.file,
                &key("attention.head_count_kv"),
                format!("{n_head} heads are not a multiple of {n_head_kv} KV heads"),
            ));
        }
        let head_dim = match g.get_u64(&key("attention.key_length"))? {
            Some(v) => v as usize,
            None => {
                if n_embd % n_head != 0 {
                    return Err(InferError::metadata(
                        &g.file,
                        &key("attention.head_count"),
                        format!("does not divide embedding length {n_embd}"),
                    ));
                }
                n_embd / n_head
            }
        };
        if head_dim == 0 || head_dim > n_embd * 4 {
            return Err(InferError::metadata(
                &g.file,
                &key("attention.key_length"),
                format!("implausible head size {head_dim}"),
            ));
        }
        if let Some(v) = g.get_u64(&key("attention.value_length"))? {
            if v as usize != head_dim {
                return Err(InferError::metadata(
                    &g.file,
                    &key("attention.value_length"),
                    "differs from the key length (unsupported)",
                ));
            }
        }
        let n_rot = g
            .get_u64(&key("rope.dimension_count"))?
            .map(|v| v as usize)
            .unwrap_or(head_dim);
        if n_rot > head_dim || n_rot % 2 != 0 {
            return Err(InferError::metadata(
                &g.file,
                &key("rope.dimension_count"),
                format!("{n_rot} for head size {head_dim}"),
            ));
        }
        let rms_eps = g
            .get_f64(&key("attention.layer_norm_rms_epsilon"))?
            .unwrap_or(1e-5) as f32;
        let rope_base = g.get_f64(&key("rope.freq_base"))?.unwrap_or(10000.0) as f32;
        let scaling_type = g.get_str(&key("rope.scaling.type"))?.unwrap_or("none");
        let rope_freq_scale = match scaling_type {
            "none" => 1.0,
            "linear" => {
                let factor = g
                    .get_f64(&key("rope.scaling.factor"))?
                    .or(g.get_f64(&key("rope.scale_linear"))?)
                    .unwrap_or(1.0);
                if factor <= 0.0 {
                    return Err(InferError::metadata(
                        &g.file,
                        &key("rope.scaling.factor"),
                        "must be positive",
                    ));
                }
                (1.0 / factor) as f32
            }
            other => {
                return Err(InferError::metadata(
                    &g.file,
                    &key("rope.scaling.type"),
                    format!("'{other}' is not supported (none, linear)"),
                ))
            }
        };
        let context_length = g.get_u64(&key("context_length"))?.unwrap_or(2048) as usize;
        let gemma = if arch == "gemma3" {
            let window = g
                .get_u64(&key("attention.sliding_window"))?
                .map(|v| v as usize)
                .filter(|&v| v > 0);
            Some(GemmaConfig {
                sliding_window: window,
                swa_pattern: 6,
                rope_base_local: g.get_f64(&key("rope.freq_base_swa"))?.unwrap_or(10000.0) as f32,
                attn_scale: 1.0 / (head_dim as f32).sqrt(),
            })
        } else {
            None
        };
        let rope_layout = if arch == "qwen2" || arch == "gemma3" {
            RopeLayout::NeoX
        } else {
            RopeLayout::Normal
        };
        let n_vocab = match g.tensor("token_embd.weight") {
            Some(t) if t.dims.len() == 2 => t.dims[1] as usize,
            Some(t) => {
                return Err(InferError::tensor(
                    &g.file,
                    "token_embd.weight",
                    format!("has shape {:?}, expected 2 dimensions", t.dims),
                ))
            }
            None => return Err(InferError::tensor(&g.file, "token_embd.weight", "missing")),
        };
        Ok(ModelConfig {
            arch,
            n_vocab,
            n_embd,
            n_layer,
            n_ff,
            n_head,
            n_head_kv,
            head_dim,
            n_rot,
            rms_eps,
            rope_base,
            rope_freq_scale,
            rope_layout,
            context_length,
            gemma,
        })
    }
}
