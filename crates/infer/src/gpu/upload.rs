//! A model's weights on the device, uploaded once: the checks that the GPU path covers the
//! model, the weights in the GPU layout (layout.rs), quantized, in row chunks that each fit one
//! binding, and Q|K|V and gate|up fused into one matrix each where their types and widths
//! agree. Batches are then sized from the device's real limits: no activation binding exceeds
//! maxStorageBufferBindingSize, and the LM head is split into row chunks (vocabulary slices)
//! that each fit one binding.

use super::buffers::{f32_bytes, Workspace};
use super::decode::DecodeStats;
use super::device::GpuContext;
use super::error::GpuError;
use super::layout::{repack_rows, row_words};
use super::ops::matmul::GpuMatrix;
use super::plan::batch_tokens;
use crate::model::{Matrix, Model, ModelConfig};
use std::sync::Mutex;
use wgpu::util::DeviceExt;

/// Architectures whose forward pass this engine reproduces.
pub const GPU_ARCHS: &[&str] = &["llama", "qwen2", "smollm", "mistral", "gemma3"];
/// Longest head the attention kernels keep in registers (attention.wgsl MAX_HD, 4 dimensions per
/// thread in decode_attention.wgsl).
pub const MAX_HEAD_DIM: usize = 256;
/// Bytes the KV caches of one decoding group may take on the device (K and V of every layer);
/// with the binding limit this bounds how many prompts decode together.
pub const KV_CACHE_BUDGET: u64 = 1 << 30;

/// Projections that read the same input (Q, K, V; gate, up).
pub(super) enum Proj {
    /// One matrix whose rows are the parts' rows one after another: one GEMM, whose output rows
    /// hold the parts side by side (split apart by elementwise.wgsl's `split`/`*_halves`). Few
    /// rows per GEMM fill a large GPU badly: SmolLM2-135M's 192-row K/V products reached
    /// 19-24 % of an H100's f32 peak alone.
    Fused(GpuMatrix),
    /// One matrix per part: their weight types or widths differ (Q4_K_M files give some layers'
    /// V Q6_K), or the fused rows would not fit one binding.
    Parts(Vec<GpuMatrix>),
}

impl Proj {
    /// The matrices one prefill GEMM each, with their names (the native matmul bench).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub(super) fn matrices(
        &self,
        names: &[&'static str],
        fused: &'static str,
    ) -> Vec<(&'static str, &GpuMatrix)> {
        match self {
            Proj::Fused(m) => vec![(fused, m)],
            Proj::Parts(ms) => names.iter().copied().zip(ms).collect(),
        }
    }

    pub(super) fn is_fused(&self) -> bool {
        matches!(self, Proj::Fused(_))
    }
}

pub(super) struct GpuLayer {
    pub(super) attn_norm: wgpu::Buffer,
    /// Q, K, V (rows n_head·head_dim, n_kv·head_dim, n_kv·head_dim).
    pub(super) qkv: Proj,
    pub(super) bq: Option<wgpu::Buffer>,
    pub(super) bk: Option<wgpu::Buffer>,
    pub(super) bv: Option<wgpu::Buffer>,
    pub(super) wo: GpuMatrix,
    pub(super) ffn_norm: wgpu::Buffer,
    /// Gate and up (n_ff rows each).
    pub(super) gate_up: Proj,
    pub(super) w_down: GpuMatrix,
    pub(super) q_norm: Option<wgpu::Buffer>,
    pub(super) k_norm: Option<wgpu::Buffer>,
    pub(super) post_attn_norm: Option<wgpu::Buffer>,
    pub(super) post_ffn_norm: Option<wgpu::Buffer>,
    /// Gemma 3 local layer: sliding-window attention and the local RoPE tables.
    pub(super) local: bool,
}

/// A model's weights on one GPU device, ready for batched prefill.
pub struct GpuModel {
    pub(super) ctx: GpuContext,
    pub(super) cfg: ModelConfig,
    pub(super) layers: Vec<GpuLayer>,
    pub(super) output_norm: wgpu::Buffer,
    pub(super) lm_head: GpuMatrix,
    pub(super) stats: Mutex<DecodeStats>,
    pub(super) work: Mutex<Workspace>,
    /// Tokens and prompts one batch may hold on this device.
    pub(super) max_tok: usize,
    pub(super) max_prompts: usize,
    /// The most tokens whose widest activation row fits one binding (`with_batch_tokens`).
    pub(super) binding_tok: usize,
    /// KV-cache rows (all prompts of a decoding group together) this device holds.
    pub(super) max_cache_rows: usize,
    /// Split-K allowed for the O and down products (`split_k`; off: `with_split_k(false)`).
    pub(super) split_k: bool,
    /// The wide matmul tile allowed where the device has it (off: `with_wide_tile(false)`).
    pub(super) wide_tile: bool,
    pub(super) uploaded_bytes: u64,
}

impl std::fmt::Debug for GpuModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuModel({}, {})", self.cfg.arch, self.ctx.summary)
    }
}

impl GpuModel {
    /// Checks that the GPU path covers the model, then uploads its weights (once).
    pub fn upload(ctx: GpuContext, model: &Model) -> Result<GpuModel, GpuError> {
        Self::upload_with(ctx, model, true)
    }

    /// `upload`; with `fuse` false every projection stays its own GEMM (benchmarks compare).
    pub fn upload_with(ctx: GpuContext, model: &Model, fuse: bool) -> Result<GpuModel, GpuError> {
        let cfg = model.config.clone();
        if !GPU_ARCHS.contains(&cfg.arch.as_str()) {
            return Err(GpuError::Unsupported(format!(
                "architecture '{}' (GPU: {})",
                cfg.arch,
                GPU_ARCHS.join(", ")
            )));
        }
        if cfg.head_dim > MAX_HEAD_DIM || !cfg.head_dim.is_multiple_of(4) {
            return Err(GpuError::Unsupported(format!(
                "head size {} (at most {MAX_HEAD_DIM}, a multiple of 4: attention.wgsl reads vec4s)",
                cfg.head_dim
            )));
        }
        let max_binding = ctx.max_binding() as usize;
        let views = model.layer_views();
        // Fused projections' output rows (Q|K|V, gate|up) are the widest activations.
        let fused_qkv = views
            .iter()
            .any(|l| fuses(&[l.wq, l.wk, l.wv], fuse, max_binding));
        let fused_ff = views
            .iter()
            .any(|l| fuses(&[l.w_gate, l.w_up], fuse, max_binding));
        let widest = [
            cfg.n_embd,
            cfg.n_head * cfg.head_dim,
            cfg.n_ff,
            if fused_qkv {
                (cfg.n_head + 2 * cfg.n_head_kv) * cfg.head_dim
            } else {
                0
            },
            if fused_ff { 2 * cfg.n_ff } else { 0 },
        ]
        .into_iter()
        .max()
        .unwrap_or(1);
        let binding_tok = max_binding / (4 * widest);
        let discrete = ctx.summary.device_type == "DiscreteGpu";
        let max_tok = binding_tok.min(batch_tokens(&cfg, discrete));
        let max_prompts = (max_binding / (4 * cfg.n_vocab)).min(max_tok);
        if max_tok == 0 || max_prompts == 0 {
            return Err(GpuError::TooLarge(format!(
                "one row of activations or logits exceeds the device's {} MiB binding limit",
                max_binding >> 20
            )));
        }
        let mut uploaded = 0u64;
        let mut vector = |v: &[f32]| {
            uploaded += 4 * v.len() as u64;
            ctx.device
                .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: &f32_bytes(v),
                    usage: wgpu::BufferUsages::STORAGE,
                })
        };
        let mut layers = Vec::new();
        let mut mats = Vec::new();
        for l in &views {
            let attn_norm = vector(l.attn_norm);
            let ffn_norm = vector(l.ffn_norm);
            let bq = l.bq.map(&mut vector);
            let bk = l.bk.map(&mut vector);
            let bv = l.bv.map(&mut vector);
            let norms =
                [l.q_norm, l.k_norm, l.post_attn_norm, l.post_ffn_norm].map(|n| n.map(&mut vector));
            mats.push((attn_norm, ffn_norm, bq, bk, bv, norms));
        }
        let output_norm = vector(model.output_norm());
        for (li, (l, (attn_norm, ffn_norm, bq, bk, bv, norms))) in
            views.iter().zip(mats).enumerate()
        {
            let [q_norm, k_norm, post_attn_norm, post_ffn_norm] = norms;
            layers.push(GpuLayer {
                q_norm,
                k_norm,
                post_attn_norm,
                post_ffn_norm,
                local: cfg.gemma.as_ref().is_some_and(|g| g.is_local(li)),
                attn_norm,
                qkv: upload_proj(
                    &ctx,
                    &format!("blk.{li}.attn_qkv"),
                    &[l.wq, l.wk, l.wv],
                    fuse,
                    &mut uploaded,
                )?,
                bq,
                bk,
                bv,
                wo: upload_matrix(&ctx, l.wo, &mut uploaded)?,
                ffn_norm,
                gate_up: upload_proj(
                    &ctx,
                    &format!("blk.{li}.ffn_gate_up"),
                    &[l.w_gate, l.w_up],
                    fuse,
                    &mut uploaded,
                )?,
                w_down: upload_matrix(&ctx, l.w_down, &mut uploaded)?,
            });
        }
        let lm_head = upload_matrix(&ctx, model.output_matrix(), &mut uploaded)?;
        if let Some(e) = ctx.take_failure() {
            return Err(GpuError::TooLarge(format!(
                "uploading {} MiB of weights failed: {e}",
                uploaded >> 20
            )));
        }
        let kv_dim = (cfg.n_head_kv * cfg.head_dim).max(1);
        let max_cache_rows = (max_binding / (4 * kv_dim))
            .min((KV_CACHE_BUDGET / (8 * kv_dim as u64 * cfg.n_layer.max(1) as u64)) as usize);
        Ok(GpuModel {
            ctx,
            cfg,
            layers,
            output_norm,
            lm_head,
            work: Mutex::new(Workspace::default()),
            stats: Mutex::new(DecodeStats::default()),
            max_tok,
            max_prompts,
            binding_tok,
            max_cache_rows,
            split_k: true,
            wide_tile: true,
            uploaded_bytes: uploaded,
        })
    }

    pub fn context(&self) -> &GpuContext {
        &self.ctx
    }

    /// Where the last `greedy` call spent its time (natively).
    pub fn last_decode_stats(&self) -> DecodeStats {
        self.stats.lock().map(|s| *s).unwrap_or_default()
    }

    /// Keeps the decoding groups' KV caches within `rows` rows (tests of the grouping).
    /// Allows or forbids split-K on the O and down products (benchmarks compare both).
    pub fn with_split_k(mut self, on: bool) -> Self {
        self.split_k = on;
        self
    }

    /// Allows or forbids the wide matmul tile (benchmarks compare both).
    pub fn with_wide_tile(mut self, on: bool) -> Self {
        self.wide_tile = on;
        self
    }

    pub fn with_cache_rows(mut self, rows: usize) -> Self {
        self.max_cache_rows = self.max_cache_rows.min(rows);
        self
    }

    /// KV-cache rows one decoding group may use on this device.
    pub fn max_cache_rows(&self) -> usize {
        self.max_cache_rows
    }

    /// Bytes of weights held on the device (quantized).
    pub fn uploaded_bytes(&self) -> u64 {
        self.uploaded_bytes
    }

    /// Per layer: whether Q|K|V and gate|up run as one fused GEMM each (their parts share a
    /// weight type and width, and the fused rows fit one binding).
    pub fn fused_projections(&self) -> Vec<(bool, bool)> {
        self.layers
            .iter()
            .map(|l| (l.qkv.is_fused(), l.gate_up.is_fused()))
            .collect()
    }

    /// How many row chunks (vocabulary slices) the LM head was split into.
    pub fn lm_head_chunks(&self) -> usize {
        self.lm_head.chunks.len()
    }

    /// Prompts one batch holds at most on this device.
    pub fn max_batch_prompts(&self) -> usize {
        self.max_prompts
    }

    /// Batches of up to `n` tokens (within the binding limit) instead of `batch_tokens`' choice
    /// (benchmarks of the batch size).
    pub fn with_batch_tokens(mut self, n: usize) -> Self {
        let vocab_prompts = self.ctx.max_binding() as usize / (4 * self.cfg.n_vocab.max(1));
        self.max_tok = n.clamp(1, self.binding_tok.max(1));
        self.max_prompts = vocab_prompts.clamp(1, self.max_tok);
        self
    }

    /// Tokens one batch holds at most on this device.
    pub fn max_batch_tokens(&self) -> usize {
        self.max_tok
    }
}

/// Whether `parts` are uploaded as one fused matrix: several, of one weight type and width,
/// whose rows fit one binding.
fn fuses(parts: &[&Matrix], fuse: bool, max_binding: usize) -> bool {
    let Some(first) = parts.first() else {
        return false;
    };
    let (ty, cols) = (first.ty(), first.cols());
    let rows: usize = parts.iter().map(|m| m.rows()).sum();
    fuse && parts.len() > 1
        && parts.iter().all(|m| m.ty() == ty && m.cols() == cols)
        && 4 * row_words(ty, cols) * rows <= max_binding
}

/// Uploads projections that read the same input as one fused matrix (their rows concatenated,
/// in one binding) when they share the weight type and width, else one matrix each.
fn upload_proj(
    ctx: &GpuContext,
    name: &str,
    parts: &[&Matrix],
    fuse: bool,
    uploaded: &mut u64,
) -> Result<Proj, GpuError> {
    if let (true, Some(first)) = (
        fuses(parts, fuse, ctx.max_binding() as usize),
        parts.first(),
    ) {
        let (ty, cols) = (first.ty(), first.cols());
        let rows: usize = parts.iter().map(|m| m.rows()).sum();
        let rw = row_words(ty, cols);
        let mut bytes = Vec::with_capacity(4 * rw * rows);
        for m in parts {
            bytes.extend(repack_rows(m, 0, m.rows()));
        }
        *uploaded += bytes.len() as u64;
        let buf = ctx
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(name),
                contents: &bytes,
                usage: wgpu::BufferUsages::STORAGE,
            });
        return Ok(Proj::Fused(GpuMatrix {
            ty,
            rows,
            cols,
            row_words: rw,
            chunks: vec![(buf, 0, rows)],
        }));
    }
    let ms = parts
        .iter()
        .map(|m| upload_matrix(ctx, m, uploaded))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Proj::Parts(ms))
}

/// Uploads a matrix in row chunks that each fit one storage binding.
fn upload_matrix(ctx: &GpuContext, m: &Matrix, uploaded: &mut u64) -> Result<GpuMatrix, GpuError> {
    let rw = row_words(m.ty(), m.cols());
    let row_bytes = 4 * rw;
    let max_rows = ctx.max_binding() as usize / row_bytes.max(1);
    if max_rows == 0 {
        return Err(GpuError::TooLarge(format!(
            "one row of '{}' ({row_bytes} bytes) exceeds the device's binding limit",
            m.name()
        )));
    }
    let mut chunks = Vec::new();
    let mut r0 = 0;
    while r0 < m.rows() {
        let n = max_rows.min(m.rows() - r0);
        let bytes = repack_rows(m, r0, n);
        *uploaded += bytes.len() as u64;
        let buf = ctx
            .device
            .create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(m.name()),
                contents: &bytes,
                usage: wgpu::BufferUsages::STORAGE,
            });
        chunks.push((buf, r0, n));
        r0 += n;
    }
    Ok(GpuMatrix {
        ty: m.ty(),
        rows: m.rows(),
        cols: m.cols(),
        row_words: rw,
        chunks,
    })
}
