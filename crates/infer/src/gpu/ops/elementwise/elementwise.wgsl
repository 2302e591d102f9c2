// Element-wise kernels over n values (2-D grid of 64-thread workgroups, groups_x wide).
// CPU twins: gpu::twin::{add_bias, residual, swiglu, gather_rows}.
//   bias:     y[i] += a[i % dim]                   (Qwen2's Q/K/V biases)
//   residual: y[i] += a[i]
//   residual_split: y[i] += a[i] + a[n + i]  (the two K halves of a split-K matmul's output)
//   swiglu:   y[i] = silu(y[i]) * a[i], silu(g) = g / (1 + exp(-g))   (y holds gate, a holds up)
//   gather:   y[r * dim + c] = a[rows[r] * dim + c]  (each prompt's last row)
//   scatter:  y[rows[r] * dim + c] = a[r * dim + c]  (new keys/values into the KV cache rows)
//   geglu:    y[i] = gelu(y[i]) * a[i]  (Gemma 3), GELU as ggml's CPU backend computes it:
//             input and output rounded to f16 (round to nearest even, done with bit operations
//             so no shader-f16 is needed), tanh formula, 0 below -10 and x above 10.
// CPU twins also: gpu::twin::{scatter_rows, geglu}.
// The fused projections (upload.rs `Proj::Fused`: one GEMM over Q|K|V or gate|up rows) write
// rows that hold several outputs side by side; these kernels take them apart:
//   split:         y[r * dim + c] = a[r * src_stride + src_col + c]  (Q, K or V of the QKV rows),
//                  + a[src_plane + (same index)] when src_plane > 0 (a split-K product's 2 planes)
//   swiglu_halves: y[r * dim + c] = silu(a[r * 2dim + c]) * a[r * 2dim + dim + c]  (gate | up rows)
//   geglu_halves:  the same with geglu's gelu.
// CPU twins: gpu::twin::{split_cols, swiglu, geglu} on the halves (twin::halves).

struct Params {
    n: u32,
    dim: u32,
    groups_x: u32,
    // split: the source rows' width, the first column taken, the second plane's offset (0: none).
    src_stride: u32,
    src_col: u32,
    src_plane: u32,
    _pad1: u32,
    _pad2: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<storage, read> a: array<f32>;
@group(0) @binding(3) var<storage, read> rows: array<u32>;

fn index(lid: vec3<u32>, wid: vec3<u32>) -> u32 {
    return (wid.y * p.groups_x + wid.x) * 64u + lid.x;
}

@compute @workgroup_size(64, 1, 1)
fn bias(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = index(lid, wid);
    if (i < p.n) {
        y[i] += a[i % p.dim];
    }
}

@compute @workgroup_size(64, 1, 1)
fn residual(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = index(lid, wid);
    if (i < p.n) {
        y[i] += a[i];
    }
}

@compute @workgroup_size(64, 1, 1)
fn residual_split(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = index(lid, wid);
    if (i < p.n) {
        y[i] += a[i] + a[p.n + i];
    }
}

@compute @workgroup_size(64, 1, 1)
fn swiglu(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = index(lid, wid);
    if (i < p.n) {
        let g = y[i];
        y[i] = g / (1.0 + exp(-g)) * a[i];
    }
}

@compute @workgroup_size(64, 1, 1)
fn gather(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = index(lid, wid);
    if (i < p.n) {
        let r = i / p.dim;
        y[i] = a[rows[r] * p.dim + i % p.dim];
    }
}

@compute @workgroup_size(64, 1, 1)
fn scatter(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = index(lid, wid);
    if (i < p.n) {
        let r = i / p.dim;
        y[rows[r] * p.dim + i % p.dim] = a[i];
    }
}

@compute @workgroup_size(64, 1, 1)
fn split(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = index(lid, wid);
    if (i < p.n) {
        let at = (i / p.dim) * p.src_stride + p.src_col + i % p.dim;
        if (p.src_plane == 0u) {
            y[i] = a[at];
        } else {
            y[i] = a[at] + a[p.src_plane + at];
        }
    }
}

@compute @workgroup_size(64, 1, 1)
fn swiglu_halves(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = index(lid, wid);
    if (i < p.n) {
        let at = (i / p.dim) * 2u * p.dim + i % p.dim;
        let g = a[at];
        y[i] = g / (1.0 + exp(-g)) * a[at + p.dim];
    }
}

// f32 -> nearest f16 value (ties to even), returned as f32. Normal f16 range: drop 13 mantissa
// bits with rounding; below 2^-14 (f16 subnormals): a multiple of 2^-24 (round() ties to even).
fn round_f16(x: f32) -> f32 {
    if (abs(x) < 6.103515625e-05) {
        return round(x * 16777216.0) / 16777216.0;
    }
    let b = bitcast<u32>(x);
    return bitcast<f32>((b + 0xfffu + ((b >> 13u) & 1u)) & 0xffffe000u);
}

fn gelu_ggml(x: f32) -> f32 {
    if (x <= -10.0) {
        return 0.0;
    }
    if (x >= 10.0) {
        return x;
    }
    let h = round_f16(x);
    let z = clamp(0.7978846 * h * (1.0 + 0.044715 * h * h), -10.0, 10.0);
    // tanh(z) in f32, then 1 + tanh as ggml computes it (with its f32 cancellation near -1).
    let t = 1.0 - 2.0 / (exp(2.0 * z) + 1.0);
    return round_f16(0.5 * h * (1.0 + t));
}

@compute @workgroup_size(64, 1, 1)
fn geglu(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = index(lid, wid);
    if (i < p.n) {
        y[i] = gelu_ggml(y[i]) * a[i];
    }
}

@compute @workgroup_size(64, 1, 1)
fn geglu_halves(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = index(lid, wid);
    if (i < p.n) {
        let at = (i / p.dim) * 2u * p.dim + i % p.dim;
        y[i] = gelu_ggml(a[at]) * a[at + p.dim];
    }
}
