// Causal grouped-query attention over packed variable-length prompts. CPU twin:
// gpu::twin::attention (model/forward.rs computes the same with a full softmax per row).
//
// The batch's prompts are concatenated (no padding); start[t] is the packed index of token t's
// prompt's first token, and t attends to keys start[t]..=t of its KV head (head / group).
// A workgroup takes 64 consecutive query tokens of one head; keys and values stream through
// workgroup memory in tiles of KT rows, and each thread keeps an online softmax (running max,
// running sum, rescaled f32 accumulator), so memory stays linear in the prompt length.
// window > 0 (Gemma 3's local layers): a query sees only the keys less than `window` positions
// before it. Two builds (context.rs): heads up to 128 values with 8-key tiles, and a wide one
// (heads up to 256, 4-key tiles) compiled from this source with MAX_HD and KT replaced, so
// the common case keeps its small register arrays.

struct Params {
    n_tok: u32,
    n_head: u32,
    head_dim: u32,
    q_stride: u32,
    kv_stride: u32,
    group: u32,
    scale: f32,
    window: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> k: array<f32>;
@group(0) @binding(3) var<storage, read> v: array<f32>;
@group(0) @binding(4) var<storage, read> start: array<u32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

const MAX_HD: u32 = 128u;
const KT: u32 = 8u;
const NEG_BIG: f32 = -1.0e30;

var<workgroup> kt: array<f32, 1024>;
var<workgroup> vt: array<f32, 1024>;
var<workgroup> range_lo: u32;
var<workgroup> range_hi: u32;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let h = wid.y;
    let kvh = h / p.group;
    let hd = p.head_dim;
    let first = wid.x * 64u;
    let t = first + lid.x;
    let valid = t < p.n_tok;
    let last = min(first + 63u, p.n_tok - 1u);
    if (lid.x == 0u) {
        range_lo = start[first];
        range_hi = last;
    }
    let lo = workgroupUniformLoad(&range_lo);
    let hi = workgroupUniformLoad(&range_hi);

    var qv: array<f32, MAX_HD>;
    var acc: array<f32, MAX_HD>;
    var my_start = 0u;
    if (valid) {
        my_start = start[t];
        for (var d = 0u; d < hd; d++) {
            qv[d] = q[t * p.q_stride + h * hd + d] * p.scale;
            acc[d] = 0.0;
        }
    }
    var m = NEG_BIG;
    var l = 0.0;
    for (var k0 = lo; k0 <= hi; k0 += KT) {
        // Stage KT keys and values of this KV head (KT * hd <= 1024 values each).
        for (var e = lid.x; e < KT * hd; e += 64u) {
            let j = e / hd;
            let d = e % hd;
            var kv = 0.0;
            var vv = 0.0;
            if (k0 + j <= hi) {
                kv = k[(k0 + j) * p.kv_stride + kvh * hd + d];
                vv = v[(k0 + j) * p.kv_stride + kvh * hd + d];
            }
            kt[e] = kv;
            vt[e] = vv;
        }
        workgroupBarrier();
        if (valid) {
            for (var j = 0u; j < KT; j++) {
                let key = k0 + j;
                if (key >= my_start && key <= t && (p.window == 0u || key + p.window > t)) {
                    var s = 0.0;
                    for (var d = 0u; d < hd; d++) {
                        s = fma(qv[d], kt[j * hd + d], s);
                    }
                    if (s > m) {
                        let corr = exp(m - s);
                        l *= corr;
                        for (var d = 0u; d < hd; d++) {
                            acc[d] *= corr;
                        }
                        m = s;
                    }
                    let e = exp(s - m);
                    l += e;
                    for (var d = 0u; d < hd; d++) {
                        acc[d] = fma(e, vt[j * hd + d], acc[d]);
                    }
                }
            }
        }
        workgroupBarrier();
    }
    if (valid) {
        let inv = 1.0 / l;
        for (var d = 0u; d < hd; d++) {
            out[t * p.q_stride + h * hd + d] = acc[d] * inv;
        }
    }
}
