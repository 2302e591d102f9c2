//! The forward pass on the GPU: the same steps as model/forward.rs (RMSNorm → Q/K/V (+bias) →
//! [Gemma 3: per-head Q/K norms] → RoPE → causal GQA attention (sliding window on Gemma 3's local
//! layers) → O → [post-norm] → residual → RMSNorm → SwiGLU or GeGLU → [post-norm] → residual;
//! final norm and LM head at each prompt's last position). A prefill is one submit per layer.
//!
//! Greedy decoding (`greedy`): the prompts of a group are prefilled together (the utility path's
//! pass) while their keys and values are scattered into a GPU KV cache — one buffer per layer
//! for K and one for V shared by the group, each prompt owning the rows for its prompt and its
//! new tokens. Then each step is one submit for all running prompts: their new tokens go through
//! every matmul as one small GEMM (M = prompts still running), each token attends to its own
//! prompt's cache rows (decode_attention.wgsl), the LM head and the arg-max run on the GPU, and
//! only the token ids are read back. Prompts leave the batch as they stop (EOS, stop string,
//! max_new_tokens, context), with the CPU engine's rules (generate::Decoding).
//!
//! Weights are uploaded once per model (quantized, layout.rs); activation buffers, parameter
//! buffers and the readback buffer are kept and reused across batches, and grown only when a
//! larger batch arrives. Batches are sized from the device's real limits: no activation binding
//! exceeds maxStorageBufferBindingSize, and the LM head is split into row chunks (vocabulary
//! slices) that each fit one binding.

use super::context::{GpuContext, Kernel, Kernels, LazyMatmuls, Shared, Slot};
use super::error::GpuError;
use super::layout::{repack_rows, row_words};
use crate::generate::{Decoding, Generation, GreedyOptions};
use crate::gguf::GgmlType;
use crate::model::{Matrix, Model, ModelConfig, PrefillOutput, RopeLayout};
use crate::tokenizer::Tokenizer;
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
/// Tokens per batch in the browser, and the least natively; bounds one layer's submit (a few
/// hundred ms of GPU time for a 0.5B model on a mid-range GPU) so no submit approaches a
/// driver's watchdog.
pub const MAX_BATCH_TOKENS: usize = 2048;
/// Natively, small models batch more tokens, up to LAYER_FLOP_BUDGET of GEMM work per layer
/// submit (2 FLOP per weight and token) and a workspace budget of activations, and at most this
/// many: on a discrete GPU SmolLM2-135M packs 32,768 tokens (232 GFLOP per layer, a 1.4 GB workspace),
/// Qwen2.5-0.5B 8,585. Measured on an H100 (2026-11-23, Q4_1, gpu_kernels_bench): SmolLM2's
/// O, down and fused Q|K|V products reach 43.8-45.1 % of f32 peak at 32,768 tokens in the
/// wide tile, 33-37 % at the former 9,042; prefill 51,800 tok/s against 45,600. The browser
/// keeps MAX_BATCH_TOKENS (its GPU memory and watchdog are the user's machine's, unmeasured).
pub const MAX_BATCH_TOKENS_NATIVE: usize = 32768;
/// The GEMM work (FLOP) of one layer's submit that `batch_tokens` stays under natively: tens
/// of milliseconds on a GPU of 5-10 TFLOP/s, far from a driver's watchdog.
pub const LAYER_FLOP_BUDGET: f64 = 2.56e11;
/// The activation workspace (bytes) a native batch may take on a discrete GPU (`batch_tokens`).
pub const WORKSPACE_BUDGET: f64 = 1.5 * (1u64 << 30) as f64;
/// The same on other adapters (integrated GPUs share the machine's memory; software ones
/// emulate a GPU in it): SmolLM2-135M gets 12,264 tokens, about the former 9,042's workspace.
pub const WORKSPACE_BUDGET_SHARED: f64 = (512u64 << 20) as f64;

/// Tokens per batch for a model (before the binding limit): MAX_BATCH_TOKENS in the browser;
/// natively as many as keep one layer's GEMMs under LAYER_FLOP_BUDGET and its activations
/// under the adapter's workspace budget (`discrete`: WORKSPACE_BUDGET, else
/// WORKSPACE_BUDGET_SHARED), between MAX_BATCH_TOKENS and MAX_BATCH_TOKENS_NATIVE.
pub fn batch_tokens(cfg: &ModelConfig, discrete: bool) -> usize {
    if cfg!(target_arch = "wasm32") {
        return MAX_BATCH_TOKENS;
    }
    let q = cfg.n_head * cfg.head_dim;
    let kv = cfg.n_head_kv * cfg.head_dim;
    let weights = cfg.n_embd * (2 * q + 2 * kv + 3 * cfg.n_ff);
    let per_token = 2.0 * weights.max(1) as f64;
    // ensure_buffers' floats per token with both projections fused and split-K's two planes.
    let floats = 4 * cfg.n_embd + 3 * q + 2 * kv + 2 * (q + 2 * kv) + 3 * cfg.n_ff;
    let by_flops = LAYER_FLOP_BUDGET / per_token;
    let budget = if discrete {
        WORKSPACE_BUDGET
    } else {
        WORKSPACE_BUDGET_SHARED
    };
    let by_memory = budget / (4 * floats.max(1)) as f64;
    (by_flops.min(by_memory) as usize).clamp(MAX_BATCH_TOKENS, MAX_BATCH_TOKENS_NATIVE)
}

pub(super) struct GpuMatrix {
    pub(super) ty: GgmlType,
    pub(super) rows: usize,
    pub(super) cols: usize,
    pub(super) row_words: usize,
    /// (buffer, first row, rows): row chunks that each fit one binding.
    pub(super) chunks: Vec<(wgpu::Buffer, usize, usize)>,
}

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
    attn_norm: wgpu::Buffer,
    /// Q, K, V (rows n_head·head_dim, n_kv·head_dim, n_kv·head_dim).
    pub(super) qkv: Proj,
    bq: Option<wgpu::Buffer>,
    bk: Option<wgpu::Buffer>,
    bv: Option<wgpu::Buffer>,
    pub(super) wo: GpuMatrix,
    ffn_norm: wgpu::Buffer,
    /// Gate and up (n_ff rows each).
    pub(super) gate_up: Proj,
    pub(super) w_down: GpuMatrix,
    q_norm: Option<wgpu::Buffer>,
    k_norm: Option<wgpu::Buffer>,
    pub(super) post_attn_norm: Option<wgpu::Buffer>,
    pub(super) post_ffn_norm: Option<wgpu::Buffer>,
    /// Gemma 3 local layer: sliding-window attention and the local RoPE tables.
    local: bool,
}

struct Buffers {
    cap_tok: usize,
    /// Output planes `o` and `qkv` hold: 2 where two fit one binding (split-K products).
    planes: usize,
    cap_prompts: usize,
    x: wgpu::Buffer,
    h: wgpu::Buffer,
    q: wgpu::Buffer,
    k: wgpu::Buffer,
    v: wgpu::Buffer,
    /// The fused Q|K|V GEMM's rows (1 float when no layer fuses them).
    qkv: wgpu::Buffer,
    attn: wgpu::Buffer,
    o: wgpu::Buffer,
    gate: wgpu::Buffer,
    /// Up, or the fused gate|up GEMM's rows (twice as wide) when a layer fuses them.
    up: wgpu::Buffer,
    pos: wgpu::Buffer,
    start: wgpu::Buffer,
    last: wgpu::Buffer,
    xl: wgpu::Buffer,
    hl: wgpu::Buffer,
    logits: wgpu::Buffer,
    targets: wgpu::Buffer,
    probs: wgpu::Buffer,
    staging: wgpu::Buffer,
    /// Gemma 3: K before its per-head norm.
    kt: wgpu::Buffer,
    /// Decoding: each row's KV-cache row (scatter), its cache ranges (global and local layers),
    /// the arg-max ids and their readback copy.
    dst: wgpu::Buffer,
    range_g: wgpu::Buffer,
    range_l: wgpu::Buffer,
    ids: wgpu::Buffer,
    ids_staging: wgpu::Buffer,
}

/// RoPE tables for positions `0..cap` (global, and Gemma 3's local ones).
struct Rope {
    cap: usize,
    cos: wgpu::Buffer,
    sin: wgpu::Buffer,
    cos_l: wgpu::Buffer,
    sin_l: wgpu::Buffer,
}

/// The KV cache of a decoding group: per layer, `rows × kv_dim` keys and values.
struct Cache {
    rows: usize,
    k: Vec<wgpu::Buffer>,
    v: Vec<wgpu::Buffer>,
}

#[derive(Default)]
struct Workspace {
    bufs: Option<Buffers>,
    rope: Option<Rope>,
    cache: Option<Cache>,
    params: Vec<wgpu::Buffer>,
    next_param: usize,
}

/// What one layer's attention reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// The batch's own packed prompts; `fill`: their keys and values also go into the KV cache.
    Prefill { fill: bool },
    /// One new token per running prompt against its cache rows.
    Decode,
}

/// Time split of the last `greedy` call (natively; zero in the browser, which has no clock here).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct DecodeStats {
    /// Seconds in the prefills (KV caches filled, first token's arg-max read back).
    pub prefill_seconds: f64,
    /// Seconds in the decoding steps.
    pub decode_seconds: f64,
    /// Decoding steps run (one submit each, all running prompts together).
    pub steps: usize,
    /// Tokens fed through decoding steps (the sum of the running prompts over the steps).
    pub decode_tokens: usize,
    pub prefill_tokens: usize,
}

/// Wall clock natively; nothing in the browser.
#[cfg(not(target_arch = "wasm32"))]
fn clock() -> Option<std::time::Instant> {
    Some(std::time::Instant::now())
}
#[cfg(target_arch = "wasm32")]
fn clock() -> Option<u8> {
    None
}
#[cfg(not(target_arch = "wasm32"))]
fn since(t: Option<std::time::Instant>) -> f64 {
    t.map_or(0.0, |t| t.elapsed().as_secs_f64())
}
#[cfg(target_arch = "wasm32")]
fn since(_: Option<u8>) -> f64 {
    0.0
}

/// A model's weights on one GPU device, ready for batched prefill.
pub struct GpuModel {
    ctx: GpuContext,
    cfg: ModelConfig,
    pub(super) layers: Vec<GpuLayer>,
    output_norm: wgpu::Buffer,
    pub(super) lm_head: GpuMatrix,
    stats: Mutex<DecodeStats>,
    work: Mutex<Workspace>,
    /// Tokens and prompts one batch may hold on this device.
    max_tok: usize,
    max_prompts: usize,
    /// The most tokens whose widest activation row fits one binding (`with_batch_tokens`).
    binding_tok: usize,
    /// KV-cache rows (all prompts of a decoding group together) this device holds.
    max_cache_rows: usize,
    /// Split-K allowed for the O and down products (`split_k`; off: `with_split_k(false)`).
    split_k: bool,
    /// The wide matmul tile allowed where the device has it (off: `with_wide_tile(false)`).
    wide_tile: bool,
    uploaded_bytes: u64,
}

impl std::fmt::Debug for GpuModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GpuModel({}, {})", self.cfg.arch, self.ctx.summary)
    }
}

fn f32_bytes(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Output tile of one matmul workgroup: (weight rows, tokens) (shaders/matmul.wgsl TN, TM).
pub(crate) const MATMUL_TILE: (usize, usize) = (64, 64);
/// The same for shaders/matmul_large.wgsl.
pub(crate) const MATMUL_LARGE_TILE: (usize, usize) = (128, 128);
/// The same for its wide form (context.rs `matmul_wide_source`).
pub(crate) const MATMUL_WIDE_TILE: (usize, usize) = (192, 128);
/// Workgroups the large tile must make before it is used. Below that the 64x64 tile's four
/// times as many workgroups fill a large GPU better (H100, 2048 tokens: the 576x576 product's
/// 80 large tiles still beat its 288 small ones; the 192-row one's 32 did not).
pub(crate) const MATMUL_LARGE_MIN_GROUPS: usize = 64;
/// The large tile is also used only where its tiles are mostly inside the product (rows and
/// tokens each fill at least this share of the tiles they take): 192 rows (0.75) or a few
/// tokens (the LM head's last rows, decoding steps) waste too much of a 128-wide tile
/// (H100, 9,042 tokens: the 192-row product ran at 10.9 TFLOP/s in large tiles).
const MATMUL_LARGE_MIN_FILL: f64 = 0.8;

/// Tokens from which the wide tile replaces the large one. Measured on an H100 (Q4_1,
/// gpu_kernels_bench --force-tile wide|large, % of f32 peak, wide vs large): at 16,384 tokens
/// and more the wide tile wins on every SmolLM2-135M product (O 39.1 vs 37.5, down 42.9 vs
/// 37.3, Q|K|V 43.2 vs 39.5; at 32,768: 43.8 vs 38.3, 45.1 vs 37.9, 43.8 vs 40.0); at 9,042
/// they tie (O 33.2 vs 33.1, Q|K|V 36.6 vs 37.1, down 35.9 vs 34.3); at 2,048 its fewer
/// workgroups lose on the fused Q|K|V (23.6 vs 34.6).
pub(crate) const WIDE_MIN_TOKENS: usize = 16384;

/// Which matmul tile a product uses (`Small` = 64x64, `Large` = 128x128, `Wide` = 192 rows x
/// 128 tokens where the device's limits allow it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatmulTile {
    Small,
    Large,
    Wide,
}

impl MatmulTile {
    /// The tile `matmul_plan` picks for `rows` weight rows and `n_tok` tokens.
    pub fn for_shape(rows: usize, n_tok: usize) -> MatmulTile {
        let (tn, tm) = MATMUL_LARGE_TILE;
        let (gr, gt) = (rows.div_ceil(tn), n_tok.div_ceil(tm));
        let fill = |n: usize, g: usize| n as f64 / (g * 128).max(1) as f64;
        if gr * gt >= MATMUL_LARGE_MIN_GROUPS
            && fill(rows, gr) >= MATMUL_LARGE_MIN_FILL
            && fill(n_tok, gt) >= MATMUL_LARGE_MIN_FILL
        {
            MatmulTile::Large
        } else {
            MatmulTile::Small
        }
    }

    /// `for_shape`, with the large tile widened to 192 rows where `wide` (the device has the
    /// wide kernels and the caller allows them), the rows are a whole number of wide tiles and
    /// the batch has at least WIDE_MIN_TOKENS tokens.
    pub fn pick(rows: usize, n_tok: usize, wide: bool) -> MatmulTile {
        match Self::for_shape(rows, n_tok) {
            MatmulTile::Large
                if wide && rows.is_multiple_of(MATMUL_WIDE_TILE.0) && n_tok >= WIDE_MIN_TOKENS =>
            {
                MatmulTile::Wide
            }
            t => t,
        }
    }

    /// The grid: x over weight-row tiles, y over token tiles.
    pub(crate) fn groups(self, rows: usize, n_tok: usize) -> (u32, u32) {
        let (tn, tm) = match self {
            MatmulTile::Small => MATMUL_TILE,
            MatmulTile::Large => MATMUL_LARGE_TILE,
            MatmulTile::Wide => MATMUL_WIDE_TILE,
        };
        (rows.div_ceil(tn) as u32, n_tok.div_ceil(tm) as u32)
    }

    /// Its kernels, one per weight type; `None` for the wide tile on a device without it.
    fn kernels(self, kernels: &Kernels) -> Option<&Shared<LazyMatmuls>> {
        match self {
            MatmulTile::Small => Some(&kernels.matmul),
            MatmulTile::Large => Some(&kernels.matmul_large),
            MatmulTile::Wide => kernels.matmul_wide.as_ref(),
        }
    }

    /// Its kernel for `ty`; `None` for the wide tile on a device without it (tests, benches).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub(crate) fn kernel(self, kernels: &Kernels, ty: GgmlType) -> Option<&Kernel> {
        Some(self.kernels(kernels)?.get(ty))
    }
}

/// The tile, kernel and grid for y = x · Wᵀ with `rows` rows of type `ty` and `n_tok` tokens
/// (`wide`: the wide tile allowed where the device has it).
pub(crate) fn matmul_plan(
    kernels: &Kernels,
    ty: GgmlType,
    rows: usize,
    n_tok: usize,
    wide: bool,
) -> (MatmulTile, &Kernel, (u32, u32)) {
    let tile = MatmulTile::pick(rows, n_tok, wide && kernels.matmul_wide.is_some());
    // `pick` gives the wide tile only where the device has its kernels; were it ever otherwise,
    // the large tile (kernel and grid together) rather than a panic
    let (tile, set) = match tile.kernels(kernels) {
        Some(set) => (tile, set),
        None => (MatmulTile::Large, &kernels.matmul_large),
    };
    (tile, set.get(ty), tile.groups(rows, n_tok))
}

/// Large-tile products with fewer workgroups than this get their K split in two (`split_k`).
pub(crate) const SPLIT_K_BELOW_GROUPS: usize = 600;

/// K splits for `rows` × `k` weights of `ty` and `n_tok` tokens: 2 where the large tile makes
/// few workgroups and K halves into whole 16-wide steps and weight blocks; else 1. The caller
/// adds the two output planes (residual_split, split). Measured on an H100 (132 SMs; Q4_1,
/// gpu_kernels_bench --split-k 1|2): at 2,146 tokens the split gave +8 % on SmolLM2's
/// 576-row products (85 workgroups), +24 % on its fused 960-row Q|K|V (136), +15 % on
/// Qwen2.5-0.5B's down (119); at 9,042 tokens +7 % on Q|K|V (568), +3 % on down and -1 % on O
/// (355); at 16,384 tokens (640 and more) -4 % to +1 %: no split there.
pub fn split_k(tile: MatmulTile, ty: GgmlType, rows: usize, n_tok: usize, k: usize) -> usize {
    let (gr, gt) = tile.groups(rows, n_tok);
    let half = k / 2;
    if tile != MatmulTile::Small
        && ((gr * gt) as usize) < SPLIT_K_BELOW_GROUPS
        && k.is_multiple_of(2)
        && half.is_multiple_of(16)
        && half.is_multiple_of(ty.block_size())
    {
        2
    } else {
        1
    }
}

/// Splits `n` workgroups into a 2-D grid within the 65,535-per-dimension limit.
fn grid(n: usize) -> (u32, u32) {
    let gx = n.clamp(1, 32768);
    (gx as u32, n.div_ceil(gx).max(1) as u32)
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

    /// Whether the wide tile is allowed (the native matmul bench times what the engine runs).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub(super) fn wide_tile_on(&self) -> bool {
        self.wide_tile
    }

    /// Whether split-K is allowed (the native matmul bench times what the engine runs).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub(super) fn split_k_on(&self) -> bool {
        self.split_k
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

    /// Bytes of every buffer this model holds on the device: the weights plus the batch
    /// workspace (activations, RoPE tables, the decoding KV cache, readback staging), which grows to the largest batch
    /// seen and is then reused. Uniform parameter buffers are left out (a few hundred bytes each).
    pub fn device_bytes(&self) -> u64 {
        let workspace = self.work.try_lock().ok().map(|ws| {
            let mut bufs: Vec<&wgpu::Buffer> = Vec::new();
            if let Some(b) = ws.bufs.as_ref() {
                bufs.extend([
                    &b.x,
                    &b.h,
                    &b.q,
                    &b.k,
                    &b.v,
                    &b.qkv,
                    &b.attn,
                    &b.o,
                    &b.gate,
                    &b.up,
                    &b.pos,
                    &b.start,
                    &b.last,
                    &b.xl,
                    &b.hl,
                    &b.logits,
                    &b.targets,
                    &b.probs,
                    &b.staging,
                    &b.kt,
                    &b.dst,
                    &b.range_g,
                    &b.range_l,
                    &b.ids,
                    &b.ids_staging,
                ]);
            }
            if let Some(r) = ws.rope.as_ref() {
                bufs.extend([&r.cos, &r.sin, &r.cos_l, &r.sin_l]);
            }
            if let Some(c) = ws.cache.as_ref() {
                bufs.extend(c.k.iter().chain(c.v.iter()));
            }
            bufs.iter().map(|buf| buf.size()).sum::<u64>()
        });
        self.uploaded_bytes + workspace.unwrap_or(0)
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

    /// Natively: `prefill` blocking on the GPU.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prefill_blocking(
        &self,
        model: &Model,
        prompts: &[&[u32]],
    ) -> Result<PrefillOutput, GpuError> {
        pollster::block_on(self.prefill(model, prompts))
    }

    /// Natively: `prefill_token_probs` blocking on the GPU.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn prefill_token_probs_blocking(
        &self,
        model: &Model,
        prompts: &[&[u32]],
        targets: &[u32],
    ) -> Result<Vec<f32>, GpuError> {
        pollster::block_on(self.prefill_token_probs(model, prompts, targets))
    }

    /// Each prompt's logits at its last position. The prompts (validated by the caller: non-empty,
    /// ids inside the vocabulary) are split into batches that fit the device; `model` supplies
    /// the token embedding rows (looked up on the host) and the RoPE tables.
    pub async fn prefill(
        &self,
        model: &Model,
        prompts: &[&[u32]],
    ) -> Result<PrefillOutput, GpuError> {
        Ok(PrefillOutput {
            last_logits: self.batches(model, prompts, None).await?,
        })
    }

    /// p(`targets[i]`) at each prompt's last position: the softmax runs on the GPU and only one
    /// float per prompt is read back (`targets.len()` must equal `prompts.len()`).
    pub async fn prefill_token_probs(
        &self,
        model: &Model,
        prompts: &[&[u32]],
        targets: &[u32],
    ) -> Result<Vec<f32>, GpuError> {
        if targets.len() != prompts.len() || targets.iter().any(|&t| t as usize >= self.cfg.n_vocab)
        {
            return Err(GpuError::Device(
                "one target token id inside the vocabulary per prompt is needed".into(),
            ));
        }
        let rows = self.batches(model, prompts, Some(targets)).await?;
        Ok(rows.into_iter().flatten().collect())
    }

    async fn batches(
        &self,
        model: &Model,
        prompts: &[&[u32]],
        targets: Option<&[u32]>,
    ) -> Result<Vec<Vec<f32>>, GpuError> {
        for (i, p) in prompts.iter().enumerate() {
            if p.len() > self.max_tok {
                return Err(GpuError::TooLarge(format!(
                    "prompt {i} has {} tokens; one GPU batch holds at most {} on this device",
                    p.len(),
                    self.max_tok
                )));
            }
        }
        let mut out = Vec::with_capacity(prompts.len());
        let mut i = 0;
        while i < prompts.len() {
            let mut n_tok = 0;
            let mut j = i;
            while j < prompts.len()
                && j - i < self.max_prompts
                && n_tok + prompts[j].len() <= self.max_tok
            {
                n_tok += prompts[j].len();
                j += 1;
            }
            let pick = targets.map(|t| &t[i..j]);
            out.extend(self.run_batch(model, &prompts[i..j], pick).await?);
            i = j;
        }
        Ok(out)
    }

    fn ensure_buffers(&self, ws: &mut Workspace, n_tok: usize, n_prompts: usize) {
        if let Some(b) = &ws.bufs {
            if b.cap_tok >= n_tok && b.cap_prompts >= n_prompts {
                return;
            }
        }
        let cap_tok = n_tok.next_power_of_two().min(self.max_tok).max(n_tok);
        let cap_prompts = n_prompts
            .next_power_of_two()
            .min(self.max_prompts)
            .max(n_prompts);
        let c = &self.cfg;
        let dev = &self.ctx.device;
        let storage = |floats: usize, extra: wgpu::BufferUsages| {
            dev.create_buffer(&wgpu::BufferDescriptor {
                label: None,
                size: (4 * floats.max(1)) as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST | extra,
                mapped_at_creation: false,
            })
        };
        let none = wgpu::BufferUsages::empty();
        let q_dim = c.n_head * c.head_dim;
        let kv_dim = c.n_head_kv * c.head_dim;
        let fused_qkv = self.layers.iter().any(|l| l.qkv.is_fused());
        let fused_ff = self.layers.iter().any(|l| l.gate_up.is_fused());
        let qkv_dim = q_dim + 2 * kv_dim;
        let widest = if fused_qkv { qkv_dim } else { 1 }.max(c.n_embd);
        let planes = if 8 * cap_tok * widest <= self.ctx.max_binding() as usize {
            2
        } else {
            1
        };
        ws.bufs = Some(Buffers {
            cap_tok,
            planes,
            cap_prompts,
            x: storage(cap_tok * c.n_embd, none),
            h: storage(cap_tok * c.n_embd, none),
            q: storage(cap_tok * q_dim, none),
            k: storage(cap_tok * kv_dim, none),
            v: storage(cap_tok * kv_dim, none),
            qkv: storage(
                if fused_qkv {
                    planes * cap_tok * qkv_dim
                } else {
                    1
                },
                none,
            ),
            attn: storage(cap_tok * q_dim, none),
            o: storage(planes * cap_tok * c.n_embd, none),
            gate: storage(cap_tok * c.n_ff, none),
            up: storage(cap_tok * c.n_ff * if fused_ff { 2 } else { 1 }, none),
            pos: storage(cap_tok, none),
            start: storage(cap_tok, none),
            last: storage(cap_prompts, none),
            xl: storage(cap_prompts * c.n_embd, none),
            hl: storage(cap_prompts * c.n_embd, none),
            logits: storage(cap_prompts * c.n_vocab, wgpu::BufferUsages::COPY_SRC),
            targets: storage(cap_prompts, none),
            probs: storage(cap_prompts, wgpu::BufferUsages::COPY_SRC),
            staging: dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("logits readback"),
                size: (4 * cap_prompts * c.n_vocab) as u64,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
            kt: storage(
                if c.gemma.is_some() {
                    cap_tok * kv_dim
                } else {
                    1
                },
                none,
            ),
            dst: storage(cap_tok, none),
            range_g: storage(2 * cap_tok, none),
            range_l: storage(2 * cap_tok, none),
            ids: storage(cap_prompts, wgpu::BufferUsages::COPY_SRC),
            ids_staging: dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("token ids readback"),
                size: (4 * cap_prompts) as u64,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }),
        });
    }

    /// RoPE tables covering positions `0..n_pos` (grown, never shrunk).
    fn ensure_rope(&self, ws: &mut Workspace, n_pos: usize, model: &Model) {
        if ws.rope.as_ref().is_some_and(|r| r.cap >= n_pos) {
            return;
        }
        let cap = n_pos.next_power_of_two().max(n_pos);
        let half = self.cfg.n_rot / 2;
        // Created empty and written through the queue: on a lost device this records an error
        // (reported after the batch) instead of panicking as a mapped-at-creation buffer would.
        let upload = |v: &[f32]| {
            let mut b = f32_bytes(v);
            b.resize(b.len().max(4), 0);
            let buf = self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("rope"),
                size: b.len() as u64,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            self.ctx.queue.write_buffer(&buf, 0, &b);
            buf
        };
        let (cos, sin) = model.rope_tables(cap);
        let (cos_l, sin_l) = model
            .rope_tables_local(cap)
            .unwrap_or_else(|| (vec![0.0; half.min(1)], vec![0.0; half.min(1)]));
        ws.rope = Some(Rope {
            cap,
            cos: upload(&cos),
            sin: upload(&sin),
            cos_l: upload(&cos_l),
            sin_l: upload(&sin_l),
        });
    }

    /// KV-cache buffers of at least `rows` rows per layer (grown, never shrunk).
    fn ensure_cache(&self, ws: &mut Workspace, rows: usize) {
        if ws.cache.as_ref().is_some_and(|c| c.rows >= rows) {
            return;
        }
        ws.cache = None;
        let rows = rows.next_power_of_two().min(self.max_cache_rows).max(rows);
        let kv_dim = self.cfg.n_head_kv * self.cfg.head_dim;
        let make = || {
            (0..self.layers.len())
                .map(|_| {
                    self.ctx.device.create_buffer(&wgpu::BufferDescriptor {
                        label: Some("kv cache"),
                        size: (4 * rows * kv_dim).max(4) as u64,
                        usage: wgpu::BufferUsages::STORAGE,
                        mapped_at_creation: false,
                    })
                })
                .collect::<Vec<_>>()
        };
        ws.cache = Some(Cache {
            rows,
            k: make(),
            v: make(),
        });
    }

    /// The workspace, one batch at a time per model (its buffers are reused). A second concurrent
    /// call (possible only from async code) gets an error instead of a deadlock.
    fn lock(&self) -> Result<std::sync::MutexGuard<'_, Workspace>, GpuError> {
        match self.work.try_lock() {
            Ok(ws) => Ok(ws),
            Err(std::sync::TryLockError::WouldBlock) => Err(GpuError::Device(
                "another batch is running on this model; run batches one after another".into(),
            )),
            Err(std::sync::TryLockError::Poisoned(_)) => {
                Err(GpuError::Device("a previous batch panicked".into()))
            }
        }
    }

    /// Token embedding rows (a host lookup), scaled by √d for Gemma 3 as the CPU engine does.
    fn embed(&self, model: &Model, tokens: impl Iterator<Item = u32>, out: &mut Vec<f32>) {
        let d = self.cfg.n_embd;
        out.clear();
        for id in tokens {
            let at = out.len();
            out.resize(at + d, 0.0);
            model
                .token_embedding()
                .dequantize_rows(id as usize, &mut out[at..at + d]);
        }
        if self.cfg.gemma.is_some() {
            let scale = (d as f32).sqrt();
            for v in out.iter_mut() {
                *v *= scale;
            }
        }
    }

    /// Writes a prefill batch's inputs and submits its layers (one submit each). With `bases`,
    /// prompt i's keys and values also go to KV-cache rows `bases[i]..`.
    fn prefill_layers(
        &self,
        ws: &mut Workspace,
        model: &Model,
        prompts: &[&[u32]],
        bases: Option<&[usize]>,
        rope_pos: usize,
    ) -> Result<(), GpuError> {
        let n_tok: usize = prompts.iter().map(|p| p.len()).sum();
        self.ensure_buffers(ws, n_tok, prompts.len());
        self.ensure_rope(ws, rope_pos, model);
        let mut x = Vec::new();
        self.embed(
            model,
            prompts.iter().flat_map(|p| p.iter().copied()),
            &mut x,
        );
        let (mut pos, mut start, mut last, mut dst) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut t = 0;
        for (s, p) in prompts.iter().enumerate() {
            for i in 0..p.len() {
                pos.push(i as u32);
                start.push(t as u32);
                if let Some(b) = bases {
                    dst.push((b[s] + i) as u32);
                }
            }
            t += p.len();
            last.push((t - 1) as u32);
        }
        {
            let b = ws
                .bufs
                .as_ref()
                .ok_or_else(|| GpuError::Device("no buffers".into()))?;
            let q = &self.ctx.queue;
            q.write_buffer(&b.x, 0, &f32_bytes(&x));
            q.write_buffer(&b.pos, 0, &u32_bytes(&pos));
            q.write_buffer(&b.start, 0, &u32_bytes(&start));
            q.write_buffer(&b.last, 0, &u32_bytes(&last));
            if !dst.is_empty() {
                q.write_buffer(&b.dst, 0, &u32_bytes(&dst));
            }
        }
        let mode = Pass::Prefill {
            fill: bases.is_some(),
        };
        for li in 0..self.layers.len() {
            let mut enc = self.ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                self.encode_layer(ws, &mut pass, li, n_tok, mode);
            }
            self.ctx.queue.submit([enc.finish()]);
        }
        Ok(())
    }

    // The workspace guard is held across the readback on purpose (one batch at a time).
    #[allow(clippy::await_holding_lock)]
    async fn run_batch(
        &self,
        model: &Model,
        prompts: &[&[u32]],
        targets: Option<&[u32]>,
    ) -> Result<Vec<Vec<f32>>, GpuError> {
        let c = &self.cfg;
        let n_p = prompts.len();
        let mut ws = self.lock()?;
        ws.next_param = 0;
        let longest = prompts.iter().map(|p| p.len()).max().unwrap_or(1);
        self.prefill_layers(&mut ws, model, prompts, None, longest)?;
        if let (Some(t), Some(b)) = (targets, ws.bufs.as_ref()) {
            self.ctx.queue.write_buffer(&b.targets, 0, &u32_bytes(t));
        }
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.encode_head(&mut ws, &mut pass, n_p);
            if let (Some(_), Some(b)) = (targets, ws.bufs.as_ref().map(BufRefs::of)) {
                let words = [n_p as u32, c.n_vocab as u32];
                let k = &self.ctx.kernels.softmax;
                let bufs = [&b.logits, &b.targets, &b.probs];
                self.op(&mut ws, &mut pass, k, &words, &bufs, (n_p as u32, 1));
            }
        }
        let b = ws
            .bufs
            .as_ref()
            .ok_or_else(|| GpuError::Device("no buffers".into()))?;
        let (src, width) = match targets {
            Some(_) => (&b.probs, 1),
            None => (&b.logits, c.n_vocab),
        };
        let bytes = (4 * n_p * width) as u64;
        enc.copy_buffer_to_buffer(src, 0, &b.staging, 0, bytes);
        self.ctx.queue.submit([enc.finish()]);
        let flat = super::readback::read_f32(&self.ctx, &b.staging, bytes).await?;
        if let Some(e) = self.ctx.take_failure() {
            return Err(e);
        }
        Ok(flat.chunks_exact(width).map(|r| r.to_vec()).collect())
    }

    /// Natively: `greedy` blocking on the GPU.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn greedy_blocking(
        &self,
        model: &Model,
        tokenizer: &Tokenizer,
        prompts: &[&[u32]],
        options: &GreedyOptions,
    ) -> Result<Vec<Generation>, GpuError> {
        pollster::block_on(self.greedy(model, tokenizer, prompts, options))
    }

    /// Greedy answers, token for token the CPU engine's (generate::greedy_cpu). The prompts
    /// (validated by the caller, as for `prefill`) are split into groups whose tokens fit one
    /// prefill batch and whose KV caches fit the device; each group decodes to the end.
    pub async fn greedy(
        &self,
        model: &Model,
        tokenizer: &Tokenizer,
        prompts: &[&[u32]],
        options: &GreedyOptions,
    ) -> Result<Vec<Generation>, GpuError> {
        let context = self.cfg.context_length;
        let rows = |p: &[u32]| (p.len() + options.max_new_tokens).min(context).max(p.len());
        for (i, p) in prompts.iter().enumerate() {
            if p.len() > self.max_tok || rows(p) > self.max_cache_rows {
                return Err(GpuError::TooLarge(format!(
                    "prompt {i} has {} tokens (+{} new); one GPU batch holds at most {} tokens and {} KV-cache rows on this device",
                    p.len(),
                    options.max_new_tokens,
                    self.max_tok,
                    self.max_cache_rows
                )));
            }
        }
        if let Ok(mut s) = self.stats.lock() {
            *s = DecodeStats::default();
        }
        let mut out = Vec::with_capacity(prompts.len());
        let mut i = 0;
        while i < prompts.len() {
            let (mut n_tok, mut n_rows, mut j) = (0, 0, i);
            while j < prompts.len()
                && j - i < self.max_prompts
                && n_tok + prompts[j].len() <= self.max_tok
                && n_rows + rows(prompts[j]) <= self.max_cache_rows
            {
                n_tok += prompts[j].len();
                n_rows += rows(prompts[j]);
                j += 1;
            }
            out.extend(
                self.greedy_group(model, tokenizer, &prompts[i..j], options)
                    .await?,
            );
            i = j;
        }
        Ok(out)
    }

    // The workspace guard is held across the readbacks on purpose (one batch at a time).
    #[allow(clippy::await_holding_lock)]
    async fn greedy_group(
        &self,
        model: &Model,
        tokenizer: &Tokenizer,
        prompts: &[&[u32]],
        options: &GreedyOptions,
    ) -> Result<Vec<Generation>, GpuError> {
        let c = &self.cfg;
        let context = c.context_length;
        let n_p = prompts.len();
        let mut bases = Vec::with_capacity(n_p);
        let mut total = 0;
        let mut widest = 1;
        for p in prompts {
            let rows = (p.len() + options.max_new_tokens).min(context).max(p.len());
            bases.push(total);
            total += rows;
            widest = widest.max(rows);
        }
        let mut ws = self.lock()?;
        ws.next_param = 0;
        let t0 = clock();
        self.ensure_cache(&mut ws, total);
        self.prefill_layers(&mut ws, model, prompts, Some(&bases), widest)?;
        let mut ids = self.head_argmax(&mut ws, n_p).await?;
        let prefill_seconds = since(t0);
        let t1 = clock();
        let (mut steps, mut fed) = (0, 0);
        let mut dec = Decoding::new(tokenizer, options, context, n_p);
        let mut lens: Vec<usize> = prompts.iter().map(|p| p.len()).collect();
        let mut active: Vec<usize> = (0..n_p).collect();
        let window = c.gemma.as_ref().and_then(|g| g.sliding_window);
        let mut x = Vec::new();
        loop {
            let (still, next) = dec.accept(&active, &ids, |s| lens[s]);
            if still.is_empty() {
                break;
            }
            let n = still.len();
            ws.next_param = 0;
            self.embed(model, next.iter().copied(), &mut x);
            let (mut pos, mut dst, mut rg, mut rl) = (
                Vec::with_capacity(n),
                Vec::with_capacity(n),
                Vec::with_capacity(2 * n),
                Vec::with_capacity(2 * n),
            );
            for &s in &still {
                let (base, p) = (bases[s], lens[s]);
                pos.push(p as u32);
                dst.push((base + p) as u32);
                rg.extend([base as u32, (base + p) as u32]);
                let lo = window.map_or(0, |w| (p + 1).saturating_sub(w));
                rl.extend([(base + lo) as u32, (base + p) as u32]);
            }
            let last: Vec<u32> = (0..n as u32).collect();
            {
                let b = ws
                    .bufs
                    .as_ref()
                    .ok_or_else(|| GpuError::Device("no buffers".into()))?;
                let q = &self.ctx.queue;
                q.write_buffer(&b.x, 0, &f32_bytes(&x));
                q.write_buffer(&b.pos, 0, &u32_bytes(&pos));
                q.write_buffer(&b.dst, 0, &u32_bytes(&dst));
                q.write_buffer(&b.range_g, 0, &u32_bytes(&rg));
                q.write_buffer(&b.range_l, 0, &u32_bytes(&rl));
                q.write_buffer(&b.last, 0, &u32_bytes(&last));
            }
            let mut enc = self.ctx.device.create_command_encoder(&Default::default());
            {
                let mut pass = enc.begin_compute_pass(&Default::default());
                for li in 0..self.layers.len() {
                    self.encode_layer(&mut ws, &mut pass, li, n, Pass::Decode);
                }
            }
            self.ctx.queue.submit([enc.finish()]);
            ids = self.head_argmax(&mut ws, n).await?;
            for &s in &still {
                lens[s] += 1;
            }
            steps += 1;
            fed += n;
            active = still;
        }
        if let Ok(mut s) = self.stats.lock() {
            s.prefill_seconds += prefill_seconds;
            s.decode_seconds += since(t1);
            s.steps += steps;
            s.decode_tokens += fed;
            s.prefill_tokens += prompts.iter().map(|p| p.len()).sum::<usize>();
        }
        Ok(dec.finish())
    }

    /// Final norm, LM head and arg-max of `n_p` rows (the `last` buffer's); reads back the ids.
    async fn head_argmax(&self, ws: &mut Workspace, n_p: usize) -> Result<Vec<u32>, GpuError> {
        let mut enc = self.ctx.device.create_command_encoder(&Default::default());
        {
            let mut pass = enc.begin_compute_pass(&Default::default());
            self.encode_head(ws, &mut pass, n_p);
            if let Some(b) = ws.bufs.as_ref().map(BufRefs::of) {
                let words = [n_p as u32, self.cfg.n_vocab as u32];
                let k = &self.ctx.kernels.argmax;
                self.op(
                    ws,
                    &mut pass,
                    k,
                    &words,
                    &[&b.logits, &b.ids],
                    (n_p as u32, 1),
                );
            }
        }
        let b = ws
            .bufs
            .as_ref()
            .ok_or_else(|| GpuError::Device("no buffers".into()))?;
        let bytes = (4 * n_p) as u64;
        enc.copy_buffer_to_buffer(&b.ids, 0, &b.ids_staging, 0, bytes);
        self.ctx.queue.submit([enc.finish()]);
        let ids = super::readback::read_u32(&self.ctx, &b.ids_staging, bytes).await?;
        if let Some(e) = self.ctx.take_failure() {
            return Err(e);
        }
        if let Some(&bad) = ids.iter().find(|&&t| t as usize >= self.cfg.n_vocab) {
            return Err(GpuError::Device(format!(
                "the GPU arg-max returned token {bad}"
            )));
        }
        Ok(ids)
    }

    /// Records one dispatch: `words` are the kernel's uniform parameters.
    fn op(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        k: &Kernel,
        words: &[u32],
        bufs: &[&wgpu::Buffer],
        groups: (u32, u32),
    ) {
        self.op_z(ws, pass, k, words, bufs, (groups.0, groups.1, 1));
    }

    /// `op` with a 3-D grid.
    fn op_z(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        k: &Kernel,
        words: &[u32],
        bufs: &[&wgpu::Buffer],
        groups: (u32, u32, u32),
    ) {
        let dev = &self.ctx.device;
        if ws.next_param == ws.params.len() {
            ws.params.push(dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("params"),
                size: 32,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        let pb = &ws.params[ws.next_param];
        ws.next_param += 1;
        let mut w = words.to_vec();
        w.resize(8, 0);
        self.ctx.queue.write_buffer(pb, 0, &u32_bytes(&w));
        debug_assert_eq!(k.slots.len(), bufs.len() + 1);
        debug_assert_eq!(k.slots[0], Slot::Uniform);
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: pb.as_entire_binding(),
        }];
        for (i, b) in bufs.iter().enumerate() {
            entries.push(wgpu::BindGroupEntry {
                binding: i as u32 + 1,
                resource: b.as_entire_binding(),
            });
        }
        let bg = dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &k.layout,
            entries: &entries,
        });
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
    }

    /// y = x · Wᵀ for O and down, whose output only feeds the residual add: with K split in
    /// two (`split_k`) y gets two planes and the add sums them (residual_split). Returns the
    /// residual kernel to use.
    fn matmul_residual(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        m: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        n_tok: usize,
    ) -> &Kernel {
        let kn = &self.ctx.kernels;
        if self.matmul_split(ws, pass, m, x, y, n_tok) == 1 {
            &kn.residual
        } else {
            &kn.residual_split
        }
    }

    /// y = x · Wᵀ, with K split in two (`split_k`) where it helps and y has room for two
    /// planes (one row chunk, the workspace's `planes`); returns the planes written.
    fn matmul_split(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        m: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        n_tok: usize,
    ) -> usize {
        let planes = ws.bufs.as_ref().map_or(1, |b| b.planes);
        let kernels = &self.ctx.kernels;
        let splits = match m.chunks.as_slice() {
            [(_, _, n)] if self.split_k && planes == 2 => {
                let (tile, _, _) = matmul_plan(kernels, m.ty, *n, n_tok, self.wide_tile);
                split_k(tile, m.ty, *n, n_tok, m.cols)
            }
            _ => 1,
        };
        if splits == 1 {
            self.matmul(ws, pass, m, x, y, n_tok);
            return 1;
        }
        let (buf, _, n) = &m.chunks[0];
        let (_, k, (gx, gy)) = matmul_plan(kernels, m.ty, *n, n_tok, self.wide_tile);
        let words = [
            n_tok as u32,
            *n as u32,
            m.cols as u32,
            m.row_words as u32,
            m.rows as u32,
            0,
            (m.cols / splits) as u32,
        ];
        self.op_z(ws, pass, k, &words, &[buf, x, y], (gx, gy, splits as u32));
        splits
    }

    fn matmul(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        m: &GpuMatrix,
        x: &wgpu::Buffer,
        y: &wgpu::Buffer,
        n_tok: usize,
    ) {
        for (buf, r0, n) in &m.chunks {
            let (_, k, groups) = matmul_plan(&self.ctx.kernels, m.ty, *n, n_tok, self.wide_tile);
            let words = [
                n_tok as u32,
                *n as u32,
                m.cols as u32,
                m.row_words as u32,
                m.rows as u32,
                *r0 as u32,
            ];
            self.op(ws, pass, k, &words, &[buf, x, y], groups);
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn elementwise(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        k: &Kernel,
        n: usize,
        dim: usize,
        y: &wgpu::Buffer,
        a: &wgpu::Buffer,
        rows: &wgpu::Buffer,
    ) {
        let (gx, gy) = grid(n.div_ceil(64));
        self.op(
            ws,
            pass,
            k,
            &[n as u32, dim as u32, gx],
            &[y, a, rows],
            (gx, gy),
        );
    }

    /// y (n_tok × dim) = columns `col..col + dim` of a's `stride`-wide rows (`cols` = (stride,
    /// col, plane)), plus those of the plane `plane` floats further when `plane` > 0.
    #[allow(clippy::too_many_arguments)]
    fn split(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        y: &wgpu::Buffer,
        a: &wgpu::Buffer,
        n_tok: usize,
        dim: usize,
        cols: (usize, usize, usize),
        unused: &wgpu::Buffer,
    ) {
        let (stride, col, plane) = cols;
        let n = n_tok * dim;
        let (gx, gy) = grid(n.div_ceil(64));
        let words = [
            n as u32,
            dim as u32,
            gx,
            stride as u32,
            col as u32,
            plane as u32,
        ];
        let k = &self.ctx.kernels.split;
        self.op(ws, pass, k, &words, &[y, a, unused], (gx, gy));
    }

    #[allow(clippy::too_many_arguments)]
    fn rms_norm(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        x: &wgpu::Buffer,
        w: &wgpu::Buffer,
        y: &wgpu::Buffer,
        rows: usize,
        dim: usize,
    ) {
        let (gx, gy) = grid(rows);
        let words = [rows as u32, dim as u32, self.cfg.rms_eps.to_bits(), gx];
        self.op(
            ws,
            pass,
            &self.ctx.kernels.rms_norm,
            &words,
            &[x, w, y],
            (gx, gy),
        );
    }

    fn encode_layer(
        &self,
        ws: &mut Workspace,
        pass: &mut wgpu::ComputePass<'_>,
        li: usize,
        n_tok: usize,
        mode: Pass,
    ) {
        let c = &self.cfg;
        let l = &self.layers[li];
        let kn = &self.ctx.kernels;
        // Buffers are cloned handles (cheap refcounts) so `ws` can be borrowed mutably below.
        let (Some(b), Some(rope)) = (ws.bufs.as_ref().map(BufRefs::of), ws.rope.as_ref()) else {
            return;
        };
        let (cos, sin) = if l.local {
            (rope.cos_l.clone(), rope.sin_l.clone())
        } else {
            (rope.cos.clone(), rope.sin.clone())
        };
        let cache = match (mode, ws.cache.as_ref()) {
            (Pass::Prefill { fill: false }, _) => None,
            (_, Some(cache)) => Some((cache.k[li].clone(), cache.v[li].clone())),
            (_, None) => return,
        };
        let (d, hd) = (c.n_embd, c.head_dim);
        let q_dim = c.n_head * hd;
        let kv_dim = c.n_head_kv * hd;
        let gemma = l.q_norm.is_some();
        self.rms_norm(ws, pass, &b.x, &l.attn_norm, &b.h, n_tok, d);
        // Gemma 3 norms Q and K per head after the projections: they land in scratch buffers first.
        let (raw_q, raw_k) = if gemma {
            (&b.attn, &b.kt)
        } else {
            (&b.q, &b.k)
        };
        let outs = [(raw_q, q_dim), (raw_k, kv_dim), (&b.v, kv_dim)];
        match &l.qkv {
            Proj::Fused(m) => {
                let planes = self.matmul_split(ws, pass, m, &b.h, &b.qkv, n_tok);
                // With K split, `split` adds the second plane (n_tok rows further).
                let plane = if planes == 2 { n_tok * m.rows } else { 0 };
                let mut col = 0;
                for (y, dim) in outs {
                    let cols = (m.rows, col, plane);
                    self.split(ws, pass, y, &b.qkv, n_tok, dim, cols, &b.pos);
                    col += dim;
                }
            }
            Proj::Parts(ms) => {
                for (m, (y, _)) in ms.iter().zip(outs) {
                    self.matmul(ws, pass, m, &b.h, y, n_tok);
                }
            }
        }
        for (bias, y, dim) in [
            (&l.bq, raw_q, q_dim),
            (&l.bk, raw_k, kv_dim),
            (&l.bv, &b.v, kv_dim),
        ] {
            if let Some(bias) = bias {
                self.elementwise(ws, pass, &kn.bias, n_tok * dim, dim, y, bias, &b.pos);
            }
        }
        if let (Some(qn), Some(kn_w)) = (&l.q_norm, &l.k_norm) {
            self.rms_norm(ws, pass, &b.attn, qn, &b.q, n_tok * c.n_head, hd);
            self.rms_norm(ws, pass, &b.kt, kn_w, &b.k, n_tok * c.n_head_kv, hd);
        }
        let half = c.n_rot / 2;
        let neox = u32::from(c.rope_layout == RopeLayout::NeoX);
        for (y, heads) in [(&b.q, c.n_head), (&b.k, c.n_head_kv)] {
            let n = n_tok * heads * half;
            if n == 0 {
                continue;
            }
            let (gx, gy) = grid(n.div_ceil(64));
            let words = [
                n_tok as u32,
                heads as u32,
                hd as u32,
                c.n_rot as u32,
                neox,
                gx,
            ];
            self.op(
                ws,
                pass,
                &kn.rope,
                &words,
                &[y, &b.pos, &cos, &sin],
                (gx, gy),
            );
        }
        if let Some((kc, vc)) = &cache {
            for (src, dst) in [(&b.k, kc), (&b.v, vc)] {
                self.elementwise(
                    ws,
                    pass,
                    &kn.scatter,
                    n_tok * kv_dim,
                    kv_dim,
                    dst,
                    src,
                    &b.dst,
                );
            }
        }
        let scale = c
            .gemma
            .as_ref()
            .map_or(1.0 / (hd as f32).sqrt(), |g| g.attn_scale);
        let window = if l.local {
            c.gemma.as_ref().and_then(|g| g.sliding_window).unwrap_or(0)
        } else {
            0
        };
        let geometry = [
            n_tok as u32,
            c.n_head as u32,
            hd as u32,
            q_dim as u32,
            kv_dim as u32,
            (c.n_head / c.n_head_kv) as u32,
            scale.to_bits(),
        ];
        match (mode, &cache) {
            (Pass::Decode, Some((kc, vc))) => {
                let range = if l.local { &b.range_l } else { &b.range_g };
                self.op(
                    ws,
                    pass,
                    &kn.decode_attention,
                    &geometry,
                    &[&b.q, kc, vc, range, &b.attn],
                    (n_tok as u32, c.n_head as u32),
                );
            }
            _ => {
                let mut words = geometry.to_vec();
                words.push(window as u32);
                let groups = (n_tok.div_ceil(64) as u32, c.n_head as u32);
                let k = if hd > 128 {
                    &kn.attention_wide
                } else {
                    &kn.attention
                };
                self.op(
                    ws,
                    pass,
                    k,
                    &words,
                    &[&b.q, &b.k, &b.v, &b.start, &b.attn],
                    groups,
                );
            }
        }
        let mut add = &b.o;
        let mut residual = &kn.residual;
        if let Some(w) = &l.post_attn_norm {
            self.matmul(ws, pass, &l.wo, &b.attn, &b.o, n_tok);
            self.rms_norm(ws, pass, &b.o, w, &b.h, n_tok, d);
            add = &b.h;
        } else {
            residual = self.matmul_residual(ws, pass, &l.wo, &b.attn, &b.o, n_tok);
        }
        self.elementwise(ws, pass, residual, n_tok * d, d, &b.x, add, &b.pos);
        self.rms_norm(ws, pass, &b.x, &l.ffn_norm, &b.h, n_tok, d);
        let ff = c.n_ff;
        let geglu = c.gemma.is_some();
        match &l.gate_up {
            // One GEMM writes gate|up rows into `up`; the activation reads both halves.
            Proj::Fused(m) => {
                self.matmul(ws, pass, m, &b.h, &b.up, n_tok);
                let act = if geglu {
                    &kn.geglu_halves
                } else {
                    &kn.swiglu_halves
                };
                self.elementwise(ws, pass, act, n_tok * ff, ff, &b.gate, &b.up, &b.pos);
            }
            Proj::Parts(ms) => {
                for (m, y) in ms.iter().zip([&b.gate, &b.up]) {
                    self.matmul(ws, pass, m, &b.h, y, n_tok);
                }
                let act = if geglu { &kn.geglu } else { &kn.swiglu };
                self.elementwise(ws, pass, act, n_tok * ff, ff, &b.gate, &b.up, &b.pos);
            }
        }
        let mut add = &b.o;
        let mut residual = &kn.residual;
        if let Some(w) = &l.post_ffn_norm {
            self.matmul(ws, pass, &l.w_down, &b.gate, &b.o, n_tok);
            self.rms_norm(ws, pass, &b.o, w, &b.h, n_tok, d);
            add = &b.h;
        } else {
            residual = self.matmul_residual(ws, pass, &l.w_down, &b.gate, &b.o, n_tok);
        }
        self.elementwise(ws, pass, residual, n_tok * d, d, &b.x, add, &b.pos);
    }

    fn encode_head(&self, ws: &mut Workspace, pass: &mut wgpu::ComputePass<'_>, n_p: usize) {
        let d = self.cfg.n_embd;
        let b = match &ws.bufs {
            Some(b) => BufRefs::of(b),
            None => return,
        };
        let kn = &self.ctx.kernels;
        self.elementwise(ws, pass, &kn.gather, n_p * d, d, &b.xl, &b.x, &b.last);
        self.rms_norm(ws, pass, &b.xl, &self.output_norm, &b.hl, n_p, d);
        self.matmul(ws, pass, &self.lm_head, &b.hl, &b.logits, n_p);
    }
}

/// Handles to the workspace buffers (wgpu buffers are reference-counted handles).
struct BufRefs {
    x: wgpu::Buffer,
    h: wgpu::Buffer,
    q: wgpu::Buffer,
    k: wgpu::Buffer,
    v: wgpu::Buffer,
    qkv: wgpu::Buffer,
    attn: wgpu::Buffer,
    o: wgpu::Buffer,
    gate: wgpu::Buffer,
    up: wgpu::Buffer,
    pos: wgpu::Buffer,
    start: wgpu::Buffer,
    last: wgpu::Buffer,
    xl: wgpu::Buffer,
    hl: wgpu::Buffer,
    logits: wgpu::Buffer,
    targets: wgpu::Buffer,
    probs: wgpu::Buffer,
    kt: wgpu::Buffer,
    dst: wgpu::Buffer,
    range_g: wgpu::Buffer,
    range_l: wgpu::Buffer,
    ids: wgpu::Buffer,
}

impl BufRefs {
    fn of(b: &Buffers) -> BufRefs {
        BufRefs {
            x: b.x.clone(),
            h: b.h.clone(),
            q: b.q.clone(),
            k: b.k.clone(),
            v: b.v.clone(),
            qkv: b.qkv.clone(),
            attn: b.attn.clone(),
            o: b.o.clone(),
            gate: b.gate.clone(),
            up: b.up.clone(),
            pos: b.pos.clone(),
            start: b.start.clone(),
            last: b.last.clone(),
            xl: b.xl.clone(),
            hl: b.hl.clone(),
            logits: b.logits.clone(),
            targets: b.targets.clone(),
            probs: b.probs.clone(),
            kt: b.kt.clone(),
            dst: b.dst.clone(),
            range_g: b.range_g.clone(),
            range_l: b.range_l.clone(),
            ids: b.ids.clone(),
        }
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
