// y[t, col0 + r] = sum_k x[t, k] * W[r, k] for one weight matrix (or one row chunk of it) in
// its GGUF encoding. CPU twin: gpu::twin::matmul (model/matmul.rs computes the same product).
//
// Register-tiled: a workgroup of 8x8 threads computes a 32-token x 32-row output tile, each
// thread 4x4 outputs with f32 accumulators; each K step stages 32 activations x 32 columns and
// 32 weight rows x 32 columns (dequantized from their blocks) in workgroup memory (8 KiB).
// Shapes need not divide the tiles: out-of-range loads read 0 and stores are skipped.
// The host prepends `fn dequant(row_base: u32, k: u32) -> f32` (one of dequant.wgsl's dq_*).

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

const TILE: u32 = 32u;
const TK: u32 = 32u;

var<workgroup> xs: array<f32, 1024>;
var<workgroup> ws: array<f32, 1024>;

@compute @workgroup_size(8, 8, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let t0 = wid.y * TILE;
    let r0 = wid.x * TILE;
    let flat = lid.y * 8u + lid.x;
    var acc: array<array<f32, 4>, 4>;
    for (var i = 0u; i < 4u; i++) {
        for (var j = 0u; j < 4u; j++) {
            acc[i][j] = 0.0;
        }
    }
    let n_steps = (p.k + TK - 1u) / TK;
    for (var s = 0u; s < n_steps; s++) {
        let k0 = s * TK;
        // 64 threads stage 1024 activations and 1024 weights: 16 of each per thread.
        for (var e = 0u; e < 16u; e++) {
            let idx = e * 64u + flat;
            let rr = idx / TK;
            let kk = idx % TK;
            let kg = k0 + kk;
            var xv = 0.0;
            if (t0 + rr < p.n_tok && kg < p.k) {
                xv = x[(t0 + rr) * p.k + kg];
            }
            xs[idx] = xv;
            var wv = 0.0;
            if (r0 + rr < p.n_rows && kg < p.k) {
                wv = dequant((r0 + rr) * p.row_words, kg);
            }
            ws[idx] = wv;
        }
        workgroupBarrier();
        for (var kk = 0u; kk < TK; kk++) {
            var a: array<f32, 4>;
            var b: array<f32, 4>;
            for (var i = 0u; i < 4u; i++) {
                a[i] = xs[(lid.y * 4u + i) * TK + kk];
                b[i] = ws[(lid.x * 4u + i) * TK + kk];
            }
            for (var i = 0u; i < 4u; i++) {
                for (var j = 0u; j < 4u; j++) {
                    acc[i][j] = fma(a[i], b[j], acc[i][j]);
                }
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < 4u; i++) {
        let t = t0 + lid.y * 4u + i;
        for (var j = 0u; j < 4u; j++) {
            let r = r0 + lid.x * 4u + j;
            if (t < p.n_tok && r < p.n_rows) {
                y[t * p.y_stride + p.y_col + r] = acc[i][j];
            }
        }
    }
}
