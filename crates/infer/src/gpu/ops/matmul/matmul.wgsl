// y[t, col0 + r] = sum_k x[t, k] * W[r, k] for one weight matrix (or one row chunk of it) in
// its GGUF encoding. CPU twin: gpu::twin::matmul (model/matmul.rs computes the same product).
//
// Register-tiled: a workgroup of 16x16 threads computes a 64-token x 64-row output tile, each
// thread 4 tokens x 4 rows with f32 accumulators. Each K step stages 32 columns of 64
// activations and of 64 weight rows in workgroup memory, k-major (xs[k][token], ws[k][row]) as
// vec4s, so the inner loop reads one vec4 of each per k (conflict-free: a warp reads 16
// consecutive vec4s of ws and broadcasts xs) for 16 FMAs. 2 x 8 KiB = the 16 KiB WebGPU default.
// Staging: thread (flat % 64) takes one token / one weight row and 8 consecutive k; a warp
// then writes 32 consecutive words (no bank conflicts), and each weight block is decoded once
// per 8 weights (dequant8: one scale read, whole nibble words) rather than once per weight.
// (The former 32x32 tile with 8x8 threads read ws/xs with a 128-word stride: 8-way bank
// conflicts that held every type, F32 included, to ~0.35 TFLOP/s on an H100.)
// Shapes need not divide the tiles: out-of-range loads read 0 and stores are skipped.
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
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> w: array<u32>;
@group(0) @binding(2) var<storage, read> x: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

// Tokens and weight rows per tile (plan.rs MATMUL_TILE), K per step.
const TM: u32 = 64u;
const TN: u32 = 64u;
const TK: u32 = 32u;

// xs[kk * 16 + i] = activations of tokens 4i..4i+3 at column kk of the step.
var<workgroup> xs: array<vec4<f32>, 512>;
var<workgroup> ws: array<vec4<f32>, 512>;

@compute @workgroup_size(16, 16, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let t0 = wid.y * TM;
    let r0 = wid.x * TN;
    let flat = lid.y * 16u + lid.x;
    // Staging role: one token / weight row (lane) and 8 consecutive k (seg * 8 ..).
    let lane = flat % 64u;
    let seg = flat / 64u;
    let t_ld = t0 + lane;
    let r_ld = r0 + lane;
    let x_ok = t_ld < p.n_tok;
    let w_ok = r_ld < p.n_rows;
    let x_base = t_ld * p.k;
    let w_base = r_ld * p.row_words;
    let lv = lane / 4u;
    let lc = lane % 4u;
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    var acc2 = vec4<f32>(0.0);
    var acc3 = vec4<f32>(0.0);
    let n_steps = (p.k + TK - 1u) / TK;
    for (var s = 0u; s < n_steps; s++) {
        let kb = s * TK + seg * 8u;
        var xv = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        var wv = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
        if (kb + 8u <= p.k) {
            if (x_ok) {
                // @unroll 8 e=#
                    xv[#] = x[x_base + kb + #];
                // @end
            }
            if (w_ok) {
                wv = dequant8(w_base, kb);
            }
        } else {
            for (var e = 0u; e < 8u; e++) {
                if (kb + e < p.k) {
                    if (x_ok) {
                        xv[e] = x[x_base + kb + e];
                    }
                    if (w_ok) {
                        wv[e] = dequant(w_base, kb + e);
                    }
                }
            }
        }
        // @unroll 8 e=#
            xs[(seg * 8u + #) * 16u + lv][lc] = xv[#];
            ws[(seg * 8u + #) * 16u + lv][lc] = wv[#];
        // @end
        workgroupBarrier();
        // Unrolled by the host (source.rs): naga guards every loop with an iteration counter
        // (wgpu's loop bounding), which in this innermost loop cost more than the FMAs.
        // @unroll 32 kk=#
            let a# = xs[# * 16u + lid.y];
            let b# = ws[# * 16u + lid.x];
            acc0 = fma(vec4<f32>(a#.x), b#, acc0);
            acc1 = fma(vec4<f32>(a#.y), b#, acc1);
            acc2 = fma(vec4<f32>(a#.z), b#, acc2);
            acc3 = fma(vec4<f32>(a#.w), b#, acc3);
        // @end
        workgroupBarrier();
    }
    let accs = array<vec4<f32>, 4>(acc0, acc1, acc2, acc3);
    for (var i = 0u; i < 4u; i++) {
        let t = t0 + lid.y * 4u + i;
        if (t < p.n_tok) {
            let row = t * p.y_stride + p.y_col;
            for (var j = 0u; j < 4u; j++) {
                let r = r0 + lid.x * 4u + j;
                if (r < p.n_rows) {
                    y[row + r] = accs[i][j];
                }
            }
        }
    }
}
