// Rotary position embedding, in place, on rows of `n_heads` heads of `head_dim` values.
// CPU twin: gpu::twin::rope (model/forward.rs apply_rope). The cos/sin tables come from the
// host, computed exactly as the CPU engine computes them (ggml's rope_cache_init, with the
// Llama-3 frequency factors of rope_freqs.weight and linear scaling folded in), so every RoPE
// variant the CPU engine knows is one table; `neox` picks the pairing: (2i, 2i+1) for normal
// models, (i, i + n_rot/2) for NeoX (Qwen2).

struct Params {
    n_tok: u32,
    n_heads: u32,
    head_dim: u32,
    n_rot: u32,
    neox: u32,
    groups_x: u32,
    _pad0: u32,
    _pad1: u32,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read_write> x: array<f32>;
@group(0) @binding(2) var<storage, read> pos: array<u32>;
@group(0) @binding(3) var<storage, read> cos_t: array<f32>;
@group(0) @binding(4) var<storage, read> sin_t: array<f32>;

@compute @workgroup_size(64, 1, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(workgroup_id) wid: vec3<u32>) {
    let half = p.n_rot / 2u;
    let idx = (wid.y * p.groups_x + wid.x) * 64u + lid.x;
    if (idx >= p.n_tok * p.n_heads * half) {
        return;
    }
    let i = idx % half;
    let h = (idx / half) % p.n_heads;
    let t = idx / (half * p.n_heads);
    var a = 2u * i;
    var b = 2u * i + 1u;
    if (p.neox != 0u) {
        a = i;
        b = i + half;
    }
    let base = (t * p.n_heads + h) * p.head_dim;
    let c = cos_t[pos[t] * half + i];
    let s = sin_t[pos[t] * half + i];
    let x0 = x[base + a];
    let x1 = x[base + b];
    x[base + a] = x0 * c - x1 * s;
    x[base + b] = x0 * s + x1 * c;
}
