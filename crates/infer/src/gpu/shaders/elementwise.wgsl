// Element-wise kernels over n values (2-D grid of 64-thread workgroups, groups_x wide).
// CPU twins: gpu::twin::{add_bias, residual, swiglu, gather_rows}.
//   bias:     y[i] += a[i % dim]                   (Qwen2's Q/K/V biases)
//   residual: y[i] += a[i]
//   swiglu:   y[i] = silu(y[i]) * a[i], silu(g) = g / (1 + exp(-g))   (y holds gate, a holds up)
//   gather:   y[r * dim + c] = a[rows[r] * dim + c]  (each prompt's last row)

struct Params {
    n: u32,
    dim: u32,
    groups_x: u32,
    _pad: u32,
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
