// Causal grouped-query attention over packed variable-length prompts. CPU twin:
// gpu::twin::attention (model/forward.rs computes the same with a full softmax per row).
//
// The batch's prompts are concatenated (no padding); start[t] is the packed index of token t's
// prompt's first token, and t attends to keys start[t]..=t of its KV head (head / group).
// A workgroup takes 64 consecutive query tokens of one head; keys and values stream through
// workgroup memory in tiles of 1024 / head_dim rows, and each thread keeps an online softmax
// (running max, running sum, rescaled f32 accumulator), so memory stays linear in the prompt
// length. Head vectors are handled as vec4s (head_dim must be a multiple of 4; upload.rs checks):
// a quarter of the loop iterations (naga bounds each one with a counter) and 128-bit loads; the
// dot products keep the scalar fma order. Keys per tile grew from a fixed 8 to 16 for head_dim 64
// (fewer barriers); measured on an H100 this kernel had become the largest cost per layer after
// the matmul was sped up.
//
// window > 0 (Gemma 3's local layers): a query sees only the keys less than `window` positions
// before it. Two builds (mod.rs beside this file): heads up to 128 values, and a wide one (heads up to 256)
// compiled from this source with MAX_HD and MAX_HD4 replaced, so the common case keeps its
// small register arrays.

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
const MAX_HD4: u32 = 32u;
const TILE4: u32 = 256u;
const NEG_BIG: f32 = -1.0e30;

var<workgroup> kt: array<vec4<f32>, 256>;
var<workgroup> vt: array<vec4<f32>, 256>;
var<workgroup> range_lo: u32;
var<workgroup> range_hi: u32;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let h = wid.y;
    let kvh = h / p.group;
    let hd = p.head_dim;
    let hd4 = hd / 4u;
    // Keys per tile: the tile holds TILE4 vec4s of keys and as many of values.
    let kt_n = TILE4 / hd4;
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

    var qv: array<vec4<f32>, MAX_HD4>;
    var acc: array<vec4<f32>, MAX_HD4>;
    var my_start = 0u;
    if (valid) {
        my_start = start[t];
        let qb = t * p.q_stride + h * hd;
        for (var d4 = 0u; d4 < hd4; d4++) {
            let b = qb + d4 * 4u;
            qv[d4] = vec4<f32>(q[b], q[b + 1u], q[b + 2u], q[b + 3u]) * p.scale;
            acc[d4] = vec4<f32>(0.0);
        }
    }
    var m = NEG_BIG;
    var l = 0.0;
    for (var k0 = lo; k0 <= hi; k0 += kt_n) {
        // Stage up to kt_n keys and values of this KV head (only keys <= hi: short prompts on
        // CPU emulators of a GPU would otherwise stage whole tiles of zeros).
        let n_keys = min(kt_n, hi + 1u - k0);
        for (var e = lid.x; e < n_keys * hd4; e += 64u) {
            let j = e / hd4;
            let d4 = e % hd4;
            var kv = vec4<f32>(0.0);
            var vv = vec4<f32>(0.0);
            if (k0 + j <= hi) {
                let b = (k0 + j) * p.kv_stride + kvh * hd + d4 * 4u;
                kv = vec4<f32>(k[b], k[b + 1u], k[b + 2u], k[b + 3u]);
                vv = vec4<f32>(v[b], v[b + 1u], v[b + 2u], v[b + 3u]);
            }
            kt[e] = kv;
            vt[e] = vv;
        }
        workgroupBarrier();
        if (valid) {
            for (var j = 0u; j < n_keys; j++) {
                let key = k0 + j;
                if (key >= my_start && key <= t && (p.window == 0u || key + p.window > t)) {
                    var s = 0.0;
                    for (var d4 = 0u; d4 < hd4; d4++) {
                        let a = qv[d4];
                        let b = kt[j * hd4 + d4];
                        s = fma(a.x, b.x, s);
                        s = fma(a.y, b.y, s);
                        s = fma(a.z, b.z, s);
                        s = fma(a.w, b.w, s);
                    }
                    if (s > m) {
                        let corr = exp(m - s);
                        l *= corr;
                        for (var d4 = 0u; d4 < hd4; d4++) {
                            acc[d4] *= corr;
                        }
                        m = s;
                    }
                    let e = exp(s - m);
                    l += e;
                    for (var d4 = 0u; d4 < hd4; d4++) {
                        acc[d4] = fma(vec4<f32>(e), vt[j * hd4 + d4], acc[d4]);
                    }
                }
            }
        }
        workgroupBarrier();
    }
    if (valid) {
        let inv = 1.0 / l;
        let ob = t * p.q_stride + h * hd;
        for (var d4 = 0u; d4 < hd4; d4++) {
            let r = acc[d4] * inv;
            out[ob + d4 * 4u] = r.x;
            out[ob + d4 * 4u + 1u] = r.y;
            out[ob + d4 * 4u + 2u] = r.z;
            out[ob + d4 * 4u + 3u] = r.w;
        }
    }
}
