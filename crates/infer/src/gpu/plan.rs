//! How work is cut to fit the device: tokens per batch (from the FLOP and workspace budgets),
//! the matmul tile per product (`MatmulTile`, `matmul_plan`) and where K splits in two
//! (`split_k`). Pure functions of shapes and limits, tested without a GPU.

use super::ops::{Kernel, Kernels};
use crate::gguf::GgmlType;
use crate::model::ModelConfig;

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
    // buffers.rs ensure_buffers' floats per token with both projections fused and split-K's two planes.
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

/// Output tile of one matmul workgroup: (weight rows, tokens) (ops/matmul/matmul.wgsl TN, TM).
pub(crate) const MATMUL_TILE: (usize, usize) = (64, 64);
/// The same for ops/matmul/matmul_large.wgsl.
pub(crate) const MATMUL_LARGE_TILE: (usize, usize) = (128, 128);
/// The same for its wide form (ops/matmul `matmul_wide_source`).
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
    pub fn groups(self, rows: usize, n_tok: usize) -> (u32, u32) {
        let (tn, tm) = match self {
            MatmulTile::Small => MATMUL_TILE,
            MatmulTile::Large => MATMUL_LARGE_TILE,
            MatmulTile::Wide => MATMUL_WIDE_TILE,
        };
        (rows.div_ceil(tn) as u32, n_tok.div_ceil(tm) as u32)
    }

    /// Its kernel for `ty`; `None` for the wide tile on a device without it (tests, benches).
    #[cfg_attr(target_arch = "wasm32", allow(dead_code))]
    pub(crate) fn kernel(self, kernels: &Kernels, ty: GgmlType) -> Option<&Kernel> {
        Some(kernels.matmul.tile(self)?.get(ty))
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
    let tile = MatmulTile::pick(rows, n_tok, wide && kernels.matmul.wide.is_some());
    // `pick` gives the wide tile only where the device has its kernels; were it ever otherwise,
    // the large tile (kernel and grid together) rather than a panic
    let (tile, set) = match kernels.matmul.tile(tile) {
        Some(set) => (tile, set),
        None => (MatmulTile::Large, &kernels.matmul.large),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_k_only_where_the_large_tile_makes_few_workgroups() {
        let split_k = |ty, rows, n_tok, k| {
            super::split_k(MatmulTile::for_shape(rows, n_tok), ty, rows, n_tok, k)
        };
        // SmolLM2-135M at 9,042 tokens: O and down (576 rows: 5 x 71 large tiles) and the fused
        // Q|K|V (960 rows: 8 x 71) split, the fused gate|up (3072 rows: 24 x 71) not, nor O and
        // down at 16,384 tokens (5 x 128); K-quant blocks of 256 do not halve 576.
        assert_eq!(split_k(GgmlType::Q4_1, 576, 9042, 1536), 2);
        assert_eq!(split_k(GgmlType::Q4_1, 576, 9042, 576), 2);
        assert_eq!(split_k(GgmlType::Q4_1, 960, 9042, 576), 2);
        assert_eq!(split_k(GgmlType::Q4_1, 576, 16384, 576), 1);
        assert_eq!(split_k(GgmlType::Q4_1, 3072, 9042, 576), 1);
        assert_eq!(split_k(GgmlType::Q4K, 576, 9042, 576), 1);
        // The small tile (192 rows, a decoding step's few tokens) never splits.
        assert_eq!(split_k(GgmlType::Q4_1, 192, 9042, 576), 1);
        assert_eq!(split_k(GgmlType::Q4_1, 576, 8, 1536), 1);
        // The wide tile: O (3 x 71 tiles) and the fused Q|K|V (5 x 71) split, gate|up (16 x 71) not.
        let wide = |rows, k| super::split_k(MatmulTile::Wide, GgmlType::Q4_1, rows, 9042, k);
        assert_eq!((wide(576, 576), wide(960, 576), wide(3072, 576)), (2, 2, 1));
    }

    #[test]
    fn matmul_plan_picks_the_large_tile_only_for_well_filled_products() {
        use MatmulTile::*;
        // SmolLM2-135M's prefill GEMMs at the native batch (9,042 tokens), the 192-row K/V ones
        // (a 128-row tile 75 % full), the LM head's few rows, a 2,048-token batch.
        assert_eq!(MatmulTile::for_shape(1536, 9042), Large);
        assert_eq!(MatmulTile::for_shape(576, 9042), Large);
        assert_eq!(MatmulTile::for_shape(192, 9042), Small);
        assert_eq!(MatmulTile::for_shape(49152, 16), Small);
        assert_eq!(MatmulTile::for_shape(576, 2048), Large);
        // Too few large tiles to fill a GPU: 2 x 16.
        assert_eq!(MatmulTile::for_shape(256, 2048), Small);
        // The wide tile where the device has it and the rows are whole 192-row tiles (SmolLM2's
        // 576, 960, 1,536 and 3,072), not Qwen2.5-0.5B's 896 rows nor the small tile's products,
        // at 16,384 tokens and more.
        assert_eq!(MatmulTile::pick(576, 32768, true), Wide);
        assert_eq!(MatmulTile::pick(3072, 16384, true), Wide);
        assert_eq!(MatmulTile::pick(576, 9042, true), Large);
        assert_eq!(MatmulTile::pick(896, 32768, true), Large);
        assert_eq!(MatmulTile::pick(192, 32768, true), Small);
        assert_eq!(MatmulTile::pick(576, 32768, false), Large);
    }

    #[test]
    fn native_batches_follow_the_flop_and_workspace_budgets() {
        use super::batch_tokens;
        use crate::model::{ModelConfig, RopeLayout};
        let cfg = |n_embd, n_ff, n_head, n_head_kv, head_dim| ModelConfig {
            arch: "llama".into(),
            n_vocab: 49152,
            n_embd,
            n_layer: 30,
            n_ff,
            n_head,
            n_head_kv,
            head_dim,
            n_rot: head_dim,
            rms_eps: 1e-5,
            rope_base: 1e4,
            rope_freq_scale: 1.0,
            rope_layout: RopeLayout::Normal,
            context_length: 8192,
            gemma: None,
        };
        // SmolLM2-135M: 7.08 MFLOP of GEMMs and 10,944 floats of activations per token. A discrete
        // GPU takes the 32,768-token cap (256 GFLOP and 1.5 GiB allow ~36k); others the 512 MiB
        // workspace: floor(2^29 / 43,776) = 12,264.
        let smol = cfg(576, 1536, 9, 3, 64);
        assert_eq!(batch_tokens(&smol, true), 32768);
        assert_eq!(batch_tokens(&smol, false), 12264);
        // Qwen2.5-0.5B: 29.8 MFLOP per token, so the FLOP budget binds: floor(2.56e11 / 29,818,880).
        let qwen = cfg(896, 4864, 14, 2, 64);
        assert_eq!(batch_tokens(&qwen, true), 8585);
        // A 7B-sized layer stays at the floor of 2,048 tokens.
        assert_eq!(batch_tokens(&cfg(4096, 14336, 32, 8, 128), true), 2048);
    }
}
