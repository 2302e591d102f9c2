// y[row] = x[row] / sqrt(mean(x[row]^2) + eps) * weight. CPU twin: gpu::twin::rms_norm
// (model/forward.rs sums the squares in f64; here 64 threads sum in f32 and combine by a tree).

struct Params {
    n_rows: u32,
    dim: u32,
    eps: f32,
    rows_per_y: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> x: array<f32>;
@group(0) @binding(2) var<storage, read> weight: array<f32>;
@group(0) @binding(3) var<storage, read_write> y: array<f32>;

var<workgroup> partial: array<f32, 64>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = wid.y * p.rows_per_y + wid.x;
    let valid = row < p.n_rows;
    var s = 0.0;
    if (valid) {
        for (var i = lid.x; i < p.dim; i += 64u) {
            let v = x[row * p.dim + i];
            s = fma(v, v, s);
        }
    }
    partial[lid.x] = s;
    workgroupBarrier();
    for (var stride = 32u; stride > 0u; stride >>= 1u) {
        if (lid.x < stride) {
            partial[lid.x] += partial[lid.x + stride];
        }
        workgroupBarrier();
    }
    let scale = 1.0 / sqrt(partial[0] / f32(p.dim) + p.eps);
    if (valid) {
        for (var i = lid.x; i < p.dim; i += 64u) {
            y[row * p.dim + i] = x[row * p.dim + i] * scale * weight[i];
        }
    }
}
