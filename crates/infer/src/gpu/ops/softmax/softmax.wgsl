// Softmax over each prompt's last-position logits, reporting the probability of one target
// token per row (p(NO-RESPONSE) needs only that one), so only n_rows floats are read back.
// CPU twin: gpu::twin::softmax_pick (utility::token_probability computes the same in f64).
// One 64-thread workgroup per row: max by tree reduction, then the sum of exp(x - max).

struct Params {
    n_rows: u32,
    n_cols: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read> target_ids: array<u32>;
@group(0) @binding(3) var<storage, read_write> out: array<f32>;

var<workgroup> red: array<f32, 64>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = wid.x;
    let base = row * p.n_cols;
    // Rows past n_rows are never dispatched (one workgroup per row).
    var m = logits[base];
    for (var i = lid.x; i < p.n_cols; i += 64u) {
        m = max(m, logits[base + i]);
    }
    red[lid.x] = m;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            red[lid.x] = max(red[lid.x], red[lid.x + s]);
        }
        workgroupBarrier();
    }
    let mx = red[0];
    workgroupBarrier();
    var sum = 0.0;
    for (var i = lid.x; i < p.n_cols; i += 64u) {
        sum += exp(logits[base + i] - mx);
    }
    red[lid.x] = sum;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            red[lid.x] += red[lid.x + s];
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        out[row] = exp(logits[base + target_ids[row]] - mx) / red[0];
    }
}
