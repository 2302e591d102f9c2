// Attention of each decoding step's new tokens, one per running prompt, against that prompt's
// KV cache. CPU twin: gpu::twin::decode_attention (model/forward.rs `attend` computes the same
// for a one-row query block).
//
// The caches of all prompts share one buffer per layer (rows × kv_stride); query i sees cache
// rows range[2i]..=range[2i+1] (its prompt's rows up to its own position; for a sliding-window
// layer only the last `window` of them). One 64-thread workgroup per (query, head): keys stream
// in tiles of 64 (one score per thread), the tile's max and sum combine by tree reductions into
// an online softmax, and each thread accumulates up to 4 of the head's dimensions in f32.
// Memory stays linear in the cache length; no subgroups.

struct Params {
    n_q: u32,
    n_head: u32,
    head_dim: u32,
    q_stride: u32,
    kv_stride: u32,
    group: u32,
    scale: f32,
    _pad: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> q: array<f32>;
@group(0) @binding(2) var<storage, read> kc: array<f32>;
@group(0) @binding(3) var<storage, read> vc: array<f32>;
@group(0) @binding(4) var<storage, read> range: array<u32>;
@group(0) @binding(5) var<storage, read_write> out: array<f32>;

const NEG_BIG: f32 = -1.0e30;

var<workgroup> qs: array<f32, 256>;
var<workgroup> probs: array<f32, 64>;
var<workgroup> red: array<f32, 64>;
var<workgroup> range_lo: u32;
var<workgroup> range_hi: u32;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let i = wid.x;
    let h = wid.y;
    let hd = p.head_dim;
    let kvh = h / p.group;
    if (lid.x == 0u) {
        range_lo = range[2u * i];
        range_hi = range[2u * i + 1u];
    }
    for (var d = lid.x; d < hd; d += 64u) {
        qs[d] = q[i * p.q_stride + h * hd + d] * p.scale;
    }
    let lo = workgroupUniformLoad(&range_lo);
    let hi = workgroupUniformLoad(&range_hi);
    var acc = array<f32, 4>(0.0, 0.0, 0.0, 0.0);
    var m = NEG_BIG;
    var l = 0.0;
    for (var k0 = lo; k0 <= hi; k0 += 64u) {
        let key = k0 + lid.x;
        let inside = key <= hi;
        var s = NEG_BIG;
        if (inside) {
            s = 0.0;
            let base = key * p.kv_stride + kvh * hd;
            for (var d = 0u; d < hd; d++) {
                s = fma(qs[d], kc[base + d], s);
            }
        }
        red[lid.x] = s;
        workgroupBarrier();
        for (var st = 32u; st > 0u; st >>= 1u) {
            if (lid.x < st) {
                red[lid.x] = max(red[lid.x], red[lid.x + st]);
            }
            workgroupBarrier();
        }
        let m_new = max(m, red[0]);
        workgroupBarrier();
        var e = 0.0;
        if (inside) {
            e = exp(s - m_new);
        }
        probs[lid.x] = e;
        red[lid.x] = e;
        workgroupBarrier();
        for (var st = 32u; st > 0u; st >>= 1u) {
            if (lid.x < st) {
                red[lid.x] += red[lid.x + st];
            }
            workgroupBarrier();
        }
        let corr = exp(m - m_new);
        l = l * corr + red[0];
        m = m_new;
        let n = min(64u, hi - k0 + 1u);
        for (var j = 0u; j < 4u; j++) {
            let d = lid.x + 64u * j;
            if (d < hd) {
                var a = acc[j] * corr;
                for (var kk = 0u; kk < n; kk++) {
                    a = fma(probs[kk], vc[(k0 + kk) * p.kv_stride + kvh * hd + d], a);
                }
                acc[j] = a;
            }
        }
        workgroupBarrier();
    }
    for (var j = 0u; j < 4u; j++) {
        let d = lid.x + 64u * j;
        if (d < hd) {
            out[i * p.q_stride + h * hd + d] = acc[j] / l;
        }
    }
}
