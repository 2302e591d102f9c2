// The greedy next token of each row of logits: the index of the largest value, the first one on
// ties (as llama.cpp's greedy sampler and generate::argmax, its CPU twin). Only these ids are
// read back during decoding. One 64-thread workgroup per row: each thread scans a strided slice
// in ascending order, then (value, index) pairs combine by a tree reduction.

struct Params {
    n_rows: u32,
    n_cols: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> logits: array<f32>;
@group(0) @binding(2) var<storage, read_write> out: array<u32>;

const NONE: u32 = 0xffffffffu;

var<workgroup> best_v: array<f32, 64>;
var<workgroup> best_i: array<u32, 64>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let row = wid.x;
    let base = row * p.n_cols;
    var bv = 0.0;
    var bi = NONE;
    for (var c = lid.x; c < p.n_cols; c += 64u) {
        let v = logits[base + c];
        if (bi == NONE || v > bv) {
            bv = v;
            bi = c;
        }
    }
    best_v[lid.x] = bv;
    best_i[lid.x] = bi;
    workgroupBarrier();
    for (var s = 32u; s > 0u; s >>= 1u) {
        if (lid.x < s) {
            let ov = best_v[lid.x + s];
            let oi = best_i[lid.x + s];
            let mi = best_i[lid.x];
            let mv = best_v[lid.x];
            if (oi != NONE && (mi == NONE || ov > mv || (ov == mv && oi < mi))) {
                best_v[lid.x] = ov;
                best_i[lid.x] = oi;
            }
        }
        workgroupBarrier();
    }
    if (lid.x == 0u) {
        out[row] = best_i[0];
    }
}
