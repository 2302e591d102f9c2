// y[t, col0 + r] = sum_k x[t, k] * W[r, k], as matmul.wgsl (same Params and bindings, same
// CPU twin gpu::twin::matmul), for large products: plan.rs `matmul_plan` picks this kernel
// when it makes enough workgroups to fill the GPU (prefill batches), matmul.wgsl otherwise
// (decoding steps, the LM head's few rows, small batches).
//
// A workgroup of 16x16 threads computes a 128-token x 128-row tile, each thread 8 tokens x 8
// rows (tokens 4*ty..+3 and 64+4*ty..+3, rows likewise with tx) in 16 vec4 accumulators: per k
// it reads 4 vec4s of workgroup memory for 64 FMAs (the 64x64 tile's 4x4 block reads 2 for 16
// and stays near 20 % of an H100's f32 peak). K steps of 16:
// 2 x 8 KiB of staging, the 16 KiB WebGPU default.
// The wide form (TN = 192, 384 threads in three warp columns of rows, 8 + 12 KiB of staging;
// native devices whose limits allow it, batches of 16,384 tokens and more: plan.rs
// WIDE_MIN_TOKENS) makes SmolLM2-135M's 576-, 960-, 1,536- and 3,072-row products whole
// tiles: on an H100 at 32,768 tokens its O, down and Q|K|V reach 43.8-45.1 % of f32 peak
// against 38.3-40.0 % in the 128-row tile. Staging as in matmul.wgsl: thread flat%128
// takes one token / weight row and 8 consecutive k (dequant8: one block decode per 8 weights).
// When K is a multiple of 16 (every real model) each step is whole: the next step's values are
// loaded into registers before this step's FMAs (their latency hides behind them), and tokens
// or rows past the matrix load a valid (clamped) row that feeds only outputs never stored, so
// the loop has no bounds branches. Other K take the checked loop below.
// Every index stays in range by construction (clamped or guarded loads, staging and tile
// indices < 512, guarded stores), so source.rs compiles the matmuls without naga's runtime
// checks (which clamp each index and bound each loop: 1.3-1.5x slower on an H100).
// Split-K (Params.k_split, grid z = 2): products with few tiles for the GPU (plan.rs
// `split_k`, measured there) sum each half of K in its own workgroup and write two planes of y,
// which the consumer adds (elementwise.wgsl residual_split, split).
// Tried on an H100 and dropped: the same tile without the register prefetch (8-20 % slower),
// double-buffered K steps of 8 with one barrier per step (9-18 % slower), the former 128x64
// variant with 8x4 outputs per thread (slower on every shape the engine gives this tile); a
// 64-row x 128-token tile with 128 threads of 8x8 outputs (same staging, prefetch and warp
// layout; 576 rows then make 9 whole tiles and twice the workgroups): 25-32 % of peak on
// every SmolLM2-135M and Qwen2.5-0.5B shape at 2,146-16,384 tokens where this tile reaches
// 35-46 % (Q4_1; SmolLM2's O 576x576 at 9,042 tokens: 25.2 % vs 35.0 %).
// Lines between `// @unroll N` and `// @end` are repeated N times by the host with # = 0..N-1.
// The host prepends `fn dequant(row_base: u32, k: u32) -> f32` and
// `fn dequant8(row_base: u32, k: u32) -> array<f32, 8>` (dequant.wgsl's dq_* / dq8_*).

struct Params {
    n_tok: u32,
    n_rows: u32,
    k: u32,
    row_words: u32,
    y_stride: u32,
    y_col: u32,
    // Split-K (plan.rs `split_k`): workgroup z sums k in [z * k_split, (z + 1) * k_split) and
    // writes plane z of y (planes n_tok * y_stride apart); 0 = one plane over all of K. Only
    // with k_split a multiple of TK and of the weight block (the whole-step loop below).
    k_split: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> w: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

// Tokens and weight rows per tile (plan.rs MATMUL_LARGE_TILE), K per step. source.rs
// `matmul_wide_source` sets TN to 192 (and the workgroup to 16x24) for the wide tile: the
// same kernel with 2 * TN threads, 8 x 8 outputs each, the rows in three warp columns.
const TM: u32 = 128u;
const TN: u32 = 128u;
const TK: u32 = 16u;
// vec4s of weight rows per k in ws; threads; warps across the rows.
const WV: u32 = TN / 4u;
const NT: u32 = 2u * TN;
const WX: u32 = TN / 64u;
const WS_LEN: u32 = TK * WV;

// xs[kk * 32 + v] = activations of tokens 4v..4v+3 at column kk of the step; ws[kk * WV + v]
// likewise rows.
var<workgroup> xs: array<vec4<f32>, 512>;
var<workgroup> ws: array<vec4<f32>, WS_LEN>;

// Writes 4 consecutive outputs (token t, rows r..r+3) that lie inside the matrix.
fn store_row(plane: u32, t: u32, r: u32, v: vec4<f32>) {
    if (t < p.n_tok) {
        let row = plane + t * p.y_stride + p.y_col;
        for (var j = 0u; j < 4u; j++) {
            if (r + j < p.n_rows) {
                y[row + r + j] = v[j];
            }
        }
    }
}

@compute @workgroup_size(16, 16, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    // Uniform: an empty product has nothing to store (and no row to clamp loads to).
    if (p.n_tok == 0u || p.n_rows == 0u) {
        return;
    }
    let t0 = wid.y * TM;
    let r0 = wid.x * TN;
    let flat = lid.y * 16u + lid.x;
    // Compute role: each warp (32 consecutive flat ids) covers 8 row groups x 4 token groups,
    // so each vec4 read of ws (8 distinct) and of xs (4 distinct, broadcast) is one 128-byte
    // wavefront; a 16 x 2 arrangement needed 3 per pair of reads (measured: +8-10 %).
    let lw = flat % 32u;
    let wi = flat / 32u;
    let tx = (wi % WX) * 8u + lw % 8u;
    let ty = (wi / WX) * 4u + lw / 8u;
    // Staging role: one token (lane) / weight row (wlane) and 8 consecutive k (seg * 8 ..).
    // 256 threads stage the tokens (x_stage: all of them in the 128-row tile, where it folds
    // to true), all 2 * TN the rows.
    let lane = flat % TM;
    let seg = flat / TM;
    let x_stage = NT == 2u * TM || flat < 2u * TM;
    let wlane = flat % TN;
    let wseg = flat / TN;
    let t_ld = t0 + lane;
    let r_ld = r0 + wlane;
    let x_ok = t_ld < p.n_tok;
    let w_ok = r_ld < p.n_rows;
    let x_base = t_ld * p.k;
    let w_base = r_ld * p.row_words;
    var acc00 = vec4<f32>(0.0);
    var acc01 = vec4<f32>(0.0);
    var acc10 = vec4<f32>(0.0);
    var acc11 = vec4<f32>(0.0);
    var acc20 = vec4<f32>(0.0);
    var acc21 = vec4<f32>(0.0);
    var acc30 = vec4<f32>(0.0);
    var acc31 = vec4<f32>(0.0);
    var acc40 = vec4<f32>(0.0);
    var acc41 = vec4<f32>(0.0);
    var acc50 = vec4<f32>(0.0);
    var acc51 = vec4<f32>(0.0);
    var acc60 = vec4<f32>(0.0);
    var acc61 = vec4<f32>(0.0);
    var acc70 = vec4<f32>(0.0);
    var acc71 = vec4<f32>(0.0);
    var n_steps = (p.k + TK - 1u) / TK;
    let kz = wid.z * p.k_split;
    if (p.k_split != 0u) {
        n_steps = p.k_split / TK;
    }
    if (p.k % TK == 0u && p.k > 0u) {
        // Every step is whole: tokens/rows past the matrix load a valid row (clamped), which
        // feeds only outputs that are never stored; the next step is loaded before the FMAs.
        let xb = min(t_ld, p.n_tok - 1u) * p.k + kz + seg * 8u;
        let wb = min(r_ld, p.n_rows - 1u) * p.row_words;
        var xv: array<f32, 8>;
        if (x_stage) {
        // @unroll 8 e=#
            xv[#] = x[xb + #];
        // @end
        }
        var wv = dequant8(wb, kz + wseg * 8u);
        for (var s = 0u; s < n_steps; s++) {
            if (x_stage) {
        // @unroll 8 e=#
                xs[(seg * 8u + #) * 32u + lane / 4u][lane % 4u] = xv[#];
        // @end
            }
        // @unroll 8 e=#
            ws[(wseg * 8u + #) * WV + wlane / 4u][wlane % 4u] = wv[#];
        // @end
            workgroupBarrier();
            let kn = min(s + 1u, n_steps - 1u) * TK;
            if (x_stage) {
            // @unroll 8 e=#
                xv[#] = x[xb + kn + #];
            // @end
            }
            wv = dequant8(wb, kz + kn + wseg * 8u);
        // @unroll 16 kk=#
            let a# = xs[# * 32u + ty];
            let c# = xs[# * 32u + 16u + ty];
            let b# = ws[# * WV + tx];
            let d# = ws[# * WV + WV / 2u + tx];
            acc00 = fma(vec4<f32>(a#.x), b#, acc00);
            acc01 = fma(vec4<f32>(a#.x), d#, acc01);
            acc10 = fma(vec4<f32>(a#.y), b#, acc10);
            acc11 = fma(vec4<f32>(a#.y), d#, acc11);
            acc20 = fma(vec4<f32>(a#.z), b#, acc20);
            acc21 = fma(vec4<f32>(a#.z), d#, acc21);
            acc30 = fma(vec4<f32>(a#.w), b#, acc30);
            acc31 = fma(vec4<f32>(a#.w), d#, acc31);
            acc40 = fma(vec4<f32>(c#.x), b#, acc40);
            acc41 = fma(vec4<f32>(c#.x), d#, acc41);
            acc50 = fma(vec4<f32>(c#.y), b#, acc50);
            acc51 = fma(vec4<f32>(c#.y), d#, acc51);
            acc60 = fma(vec4<f32>(c#.z), b#, acc60);
            acc61 = fma(vec4<f32>(c#.z), d#, acc61);
            acc70 = fma(vec4<f32>(c#.w), b#, acc70);
            acc71 = fma(vec4<f32>(c#.w), d#, acc71);
        // @end
            workgroupBarrier();
        }
    } else {
        // K not a multiple of 16 (F32/F16 matrices of odd width): guarded loads, zeros past K.
        for (var s = 0u; s < n_steps; s++) {
            let kb = s * TK + seg * 8u;
            let kw = s * TK + wseg * 8u;
        var xv = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        var wv = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        if (x_ok && x_stage) {
            if (kb + 8u <= p.k) {
                // @unroll 8 e=#
                    xv[#] = x[x_base + kb + #];
                // @end
            } else {
                for (var e = 0u; e < 8u; e++) {
                    if (kb + e < p.k) {
                        xv[e] = x[x_base + kb + e];
                    }
                }
            }
        }
        if (w_ok) {
            if (kw + 8u <= p.k) {
                wv = dequant8(w_base, kw);
            } else {
                for (var e = 0u; e < 8u; e++) {
                    if (kw + e < p.k) {
                        wv[e] = dequant(w_base, kw + e);
                    }
                }
            }
        }
        if (x_stage) {
        // @unroll 8 e=#
            xs[(seg * 8u + #) * 32u + lane / 4u][lane % 4u] = xv[#];
        // @end
        }
        // @unroll 8 e=#
            ws[(wseg * 8u + #) * WV + wlane / 4u][wlane % 4u] = wv[#];
        // @end
            workgroupBarrier();
        // @unroll 16 kk=#
            let a# = xs[# * 32u + ty];
            let c# = xs[# * 32u + 16u + ty];
            let b# = ws[# * WV + tx];
            let d# = ws[# * WV + WV / 2u + tx];
            acc00 = fma(vec4<f32>(a#.x), b#, acc00);
            acc01 = fma(vec4<f32>(a#.x), d#, acc01);
            acc10 = fma(vec4<f32>(a#.y), b#, acc10);
            acc11 = fma(vec4<f32>(a#.y), d#, acc11);
            acc20 = fma(vec4<f32>(a#.z), b#, acc20);
            acc21 = fma(vec4<f32>(a#.z), d#, acc21);
            acc30 = fma(vec4<f32>(a#.w), b#, acc30);
            acc31 = fma(vec4<f32>(a#.w), d#, acc31);
            acc40 = fma(vec4<f32>(c#.x), b#, acc40);
            acc41 = fma(vec4<f32>(c#.x), d#, acc41);
            acc50 = fma(vec4<f32>(c#.y), b#, acc50);
            acc51 = fma(vec4<f32>(c#.y), d#, acc51);
            acc60 = fma(vec4<f32>(c#.z), b#, acc60);
            acc61 = fma(vec4<f32>(c#.z), d#, acc61);
            acc70 = fma(vec4<f32>(c#.w), b#, acc70);
            acc71 = fma(vec4<f32>(c#.w), d#, acc71);
        // @end
            workgroupBarrier();
        }
    }
    let plane = wid.z * p.n_tok * p.y_stride;
    store_row(plane, t0 + ty * 4u + 0u, r0 + tx * 4u, acc00);
    store_row(plane, t0 + ty * 4u + 0u, r0 + TN / 2u + tx * 4u, acc01);
    store_row(plane, t0 + ty * 4u + 1u, r0 + tx * 4u, acc10);
    store_row(plane, t0 + ty * 4u + 1u, r0 + TN / 2u + tx * 4u, acc11);
    store_row(plane, t0 + ty * 4u + 2u, r0 + tx * 4u, acc20);
    store_row(plane, t0 + ty * 4u + 2u, r0 + TN / 2u + tx * 4u, acc21);
    store_row(plane, t0 + ty * 4u + 3u, r0 + tx * 4u, acc30);
    store_row(plane, t0 + ty * 4u + 3u, r0 + TN / 2u + tx * 4u, acc31);
    store_row(plane, t0 + 64u + ty * 4u + 0u, r0 + tx * 4u, acc40);
    store_row(plane, t0 + 64u + ty * 4u + 0u, r0 + TN / 2u + tx * 4u, acc41);
    store_row(plane, t0 + 64u + ty * 4u + 1u, r0 + tx * 4u, acc50);
    store_row(plane, t0 + 64u + ty * 4u + 1u, r0 + TN / 2u + tx * 4u, acc51);
    store_row(plane, t0 + 64u + ty * 4u + 2u, r0 + tx * 4u, acc60);
    store_row(plane, t0 + 64u + ty * 4u + 2u, r0 + TN / 2u + tx * 4u, acc61);
    store_row(plane, t0 + 64u + ty * 4u + 3u, r0 + tx * 4u, acc70);
    store_row(plane, t0 + 64u + ty * 4u + 3u, r0 + TN / 2u + tx * 4u, acc71);
}
