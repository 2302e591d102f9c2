//! The forward pass in f32, following llama.cpp's `llm_build_llama` / `llm_build_qwen2`:
//! RMSNorm → Q/K/V (+bias) → RoPE → causal grouped-query attention → output projection →
//! residual → RMSNorm → SwiGLU FFN → residual; final RMSNorm and LM head only at each sequence's
//! last new token. All sequences of a batch share the matmuls (their new tokens are
//! concatenated); attention stays within each sequence, over its KV cache. A prefill is a pass
//! over whole prompts with empty caches; a decoding step is a pass of one token per sequence.

use super::cache::KvCache;
use super::config::RopeLayout;
use super::matmul::{gemm_nt, matmul};
use super::parallel::par_map;
use super::{Layer, Model};

/// RMSNorm with the sum of squares in f64, like ggml's `ggml_compute_forward_rms_norm_f32`.
fn rms_norm(x: &mut [f32], dim: usize, weight: &[f32], eps: f32) {
    for row in x.chunks_exact_mut(dim) {
        let sum: f64 = row.iter().map(|&v| (v as f64) * (v as f64)).sum();
        let mean = (sum / dim as f64) as f32;
        let scale = 1.0 / (mean + eps).sqrt();
        for (v, w) in row.iter_mut().zip(weight) {
            *v = *v * scale * w;
        }
    }
}

fn add_bias(x: &mut [f32], dim: usize, bias: &Option<Vec<f32>>) {
    if let Some(b) = bias {
        for row in x.chunks_exact_mut(dim) {
            for (v, b) in row.iter_mut().zip(b) {
                *v += b;
            }
        }
    }
}

/// cos/sin for the given positions (one row of `n_rot/2` each), computed as ggml's
/// `rope_cache_init` does (theta multiplied step by step in f32, divided by the optional
/// frequency factors, scaled by freq_scale).
fn rope_rows(
    model: &Model,
    positions: &[usize],
    base: f32,
    freq_scale: f32,
) -> (Vec<f32>, Vec<f32>) {
    let c = &model.config;
    let half = c.n_rot / 2;
    let theta_scale = base.powf(-2.0 / c.n_rot as f32);
    let mut cos = vec![0f32; positions.len() * half];
    let mut sin = vec![0f32; positions.len() * half];
    for (r, &p) in positions.iter().enumerate() {
        let mut theta = p as f32;
        for i in 0..half {
            let ff = model.rope_freqs.as_ref().map_or(1.0, |f| f[i]);
            let t = freq_scale * (theta / ff);
            cos[r * half + i] = t.cos();
            sin[r * half + i] = t.sin();
            theta *= theta_scale;
        }
    }
    (cos, sin)
}

/// cos/sin tables for positions `0..max_pos` with the model's global RoPE base (the GPU
/// backend uploads them, so its RoPE uses exactly the CPU engine's numbers).
pub(super) fn rope_tables(model: &Model, max_pos: usize) -> (Vec<f32>, Vec<f32>) {
    let positions: Vec<usize> = (0..max_pos).collect();
    let c = &model.config;
    rope_rows(model, &positions, c.rope_base, c.rope_freq_scale)
}

/// Gemma 3's local-layer tables (as `Ropes::new` builds them), `None` without a sliding window.
pub(super) fn rope_tables_local(model: &Model, max_pos: usize) -> Option<(Vec<f32>, Vec<f32>)> {
    let positions: Vec<usize> = (0..max_pos).collect();
    model
        .config
        .gemma
        .as_ref()
        .filter(|g| g.sliding_window.is_some())
        .map(|g| rope_rows(model, &positions, g.rope_base_local, 1.0))
}

fn apply_rope(
    x: &mut [f32],
    n_heads: usize,
    head_dim: usize,
    n_rot: usize,
    layout: RopeLayout,
    cos: &[f32],
    sin: &[f32],
) {
    let half = n_rot / 2;
    for h in 0..n_heads {
        let v = &mut x[h * head_dim..(h + 1) * head_dim];
        for i in 0..half {
            let (a, b) = match layout {
                RopeLayout::Normal => (2 * i, 2 * i + 1),
                RopeLayout::NeoX => (i, i + half),
            };
            let (x0, x1) = (v[a], v[b]);
            v[a] = x0 * cos[i] - x1 * sin[i];
            v[b] = x0 * sin[i] + x1 * cos[i];
        }
    }
}

/// One forward pass's sequences: each brings its new tokens and its cache (whose length is the
/// position of its first new token).
pub(crate) struct Seq<'a> {
    pub tokens: &'a [u32],
    pub cache: &'a mut KvCache,
}

/// Where each sequence's new tokens sit in the concatenated batch.
struct Layout {
    /// Offset of each sequence's first new token in the batch.
    starts: Vec<usize>,
    /// Number of new tokens of each sequence.
    lens: Vec<usize>,
    /// Position of each sequence's first new token (its cache length before the pass).
    pasts: Vec<usize>,
    n_tok: usize,
}

struct HeadGeometry {
    hd: usize,
    q_dim: usize,
    kv_dim: usize,
    group: usize,
    scale: f32,
    /// Sliding window of a local layer: a query at q sees keys p with q − p < window.
    window: Option<usize>,
}

/// Query rows per attention task and keys per tile: the scores of one task are `QB × KB`
/// whatever the prompt length, so attention's memory grows linearly with the prompt.
const QB: usize = 32;
const KB: usize = 64;

/// One attention task: a block of query rows of one sequence, one head.
struct Task {
    seq: usize,
    /// Indices into the pass's query list.
    q0: usize,
    q1: usize,
    head: usize,
}

/// Causal attention of one head for a block of query rows of one sequence, over the keys of its
/// cache slot, in tiles of `KB` keys with an online softmax (running max and sum, the
/// accumulated output rescaled when the max grows; Milakov & Gimelshein 2018, as in
/// FlashAttention). Scores and the weighted sum of values run through the matmul kernel on packed
/// copies of the tile's keys and transposed values. Returns `rows × hd`.
fn attend(
    g: &HeadGeometry,
    q: &[f32],
    keys: &[f32],
    values: &[f32],
    queries: &[(usize, usize)],
    h: usize,
) -> Vec<f32> {
    let (hd, q_dim, kv_dim) = (g.hd, g.q_dim, g.kv_dim);
    let kvh = h / g.group;
    let n_q = queries.len();
    // queries: (batch row, position); a row sees keys 0..=position.
    let n_k = queries.iter().map(|&(_, pos)| pos).max().unwrap_or(0) + 1;
    let first = |pos: usize| g.window.map_or(0, |w| (pos + 1).saturating_sub(w));
    let mut qh = Vec::with_capacity(n_q * hd);
    for &(row, _) in queries {
        qh.extend_from_slice(&q[row * q_dim + h * hd..row * q_dim + (h + 1) * hd]);
    }
    for v in qh.iter_mut() {
        *v *= g.scale;
    }
    let mut acc = vec![0f32; n_q * hd];
    let mut run_max = vec![f32::NEG_INFINITY; n_q];
    let mut run_sum = vec![0f64; n_q];
    let mut kt = vec![0f32; KB * hd];
    let mut vt = vec![0f32; hd * KB];
    let mut scores = vec![0f32; n_q * KB];
    let mut part = vec![0f32; n_q * hd];
    // Tiles before the earliest key any row sees are skipped (sliding-window layers).
    let mut j0 = queries
        .iter()
        .map(|&(_, pos)| first(pos))
        .min()
        .unwrap_or(0)
        / KB
        * KB;
    while j0 < n_k {
        let kb = KB.min(n_k - j0);
        for j in 0..kb {
            let row = (j0 + j) * kv_dim + kvh * hd;
            kt[j * hd..(j + 1) * hd].copy_from_slice(&keys[row..row + hd]);
            for (d, &x) in values[row..row + hd].iter().enumerate() {
                vt[d * kb + j] = x;
            }
        }
        gemm_nt(&qh, n_q, &kt[..kb * hd], kb, hd, &mut scores[..n_q * kb]);
        for (i, &(_, pos)) in queries.iter().enumerate() {
            let row = &mut scores[i * kb..(i + 1) * kb];
            let visible = (pos + 1).saturating_sub(j0).min(kb);
            let from = first(pos).saturating_sub(j0).min(visible);
            row[..from].fill(0.0);
            let tile_max = row[from..visible]
                .iter()
                .fold(f32::NEG_INFINITY, |m, &s| m.max(s));
            let new_max = run_max[i].max(tile_max);
            if new_max > run_max[i] && run_max[i] > f32::NEG_INFINITY {
                let c = (run_max[i] - new_max).exp();
                run_sum[i] *= c as f64;
                for a in &mut acc[i * hd..(i + 1) * hd] {
                    *a *= c;
                }
            }
            run_max[i] = new_max;
            let mut sum = 0f64;
            for s in row[from..visible].iter_mut() {
                *s = (*s - new_max).exp();
                sum += *s as f64;
            }
            row[visible..].fill(0.0);
            run_sum[i] += sum;
        }
        gemm_nt(&scores[..n_q * kb], n_q, &vt[..hd * kb], hd, kb, &mut part);
        for (a, p) in acc.iter_mut().zip(&part) {
            *a += p;
        }
        j0 += kb;
    }
    for (i, out) in acc.chunks_exact_mut(hd).enumerate() {
        let inv = (1.0 / run_sum[i]) as f32;
        for a in out {
            *a *= inv;
        }
    }
    acc
}

/// Attention for the query rows `queries` (batch row, sequence, position), grouped by sequence.
/// Returns `queries.len() × (n_head·head_dim)`.
fn attention(
    model: &Model,
    seqs: &[Seq],
    slot: usize,
    q: &[f32],
    queries: &[(usize, usize, usize)],
) -> Vec<f32> {
    let c = &model.config;
    let (hd, n_head, n_kv) = (c.head_dim, c.n_head, c.n_head_kv);
    let q_dim = n_head * hd;
    let geo = HeadGeometry {
        hd,
        q_dim,
        kv_dim: n_kv * hd,
        group: n_head / n_kv,
        scale: c
            .gemma
            .as_ref()
            .map_or(1.0 / (hd as f32).sqrt(), |g| g.attn_scale),
        window: c
            .gemma
            .as_ref()
            .filter(|g| g.is_local(slot))
            .and_then(|g| g.sliding_window),
    };
    let mut tasks = Vec::new();
    let mut qi = 0;
    while qi < queries.len() {
        let seq = queries[qi].1;
        let mut end = qi + 1;
        while end < queries.len() && end - qi < QB && queries[end].1 == seq {
            end += 1;
        }
        for head in 0..n_head {
            tasks.push(Task {
                seq,
                q0: qi,
                q1: end,
                head,
            });
        }
        qi = end;
    }
    let rows: Vec<(usize, usize)> = queries.iter().map(|&(r, _, p)| (r, p)).collect();
    let results = par_map(tasks.len(), |t| {
        let task = &tasks[t];
        let cache = &seqs[task.seq].cache;
        attend(
            &geo,
            q,
            &cache.k[cache.slot(slot)],
            &cache.v[cache.slot(slot)],
            &rows[task.q0..task.q1],
            task.head,
        )
    });
    let mut y = vec![0f32; queries.len() * q_dim];
    for (task, out) in tasks.iter().zip(results) {
        for (i, src) in out.chunks_exact(hd).enumerate() {
            let dst = (task.q0 + i) * q_dim + task.head * hd;
            y[dst..dst + hd].copy_from_slice(src);
        }
    }
    y
}

fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

/// GELU, tanh approximation (ggml's `ggml_gelu_f32`, Gemma's `gelu_pytorch_tanh`).
fn gelu_f32(x: f32) -> f32 {
    const SQRT_2_OVER_PI: f32 = 0.797_884_6;
    0.5 * x * (1.0 + (SQRT_2_OVER_PI * x * (1.0 + 0.044_715 * x * x)).tanh())
}

/// GELU as ggml's CPU backend computes it (`GGML_GELU_FP16` in ggml-cpu/vec.h): the input rounded
/// to f16, the tanh formula on that value, the result rounded to f16 (its 64k-entry table), and
/// the tails clamped (0 below −10, x above 10). On the tiny gemma3 oracle model this rounding
/// brings p(NO-RESPONSE) within 6.3e-5 (relative) of llama.cpp's; the exact formula is 3.3e-4 off.
fn gelu(x: f32) -> f32 {
    if GELU_LIKE_GGML {
        if x <= -10.0 {
            0.0
        } else if x >= 10.0 {
            x
        } else {
            half::f16::from_f32(gelu_f32(half::f16::from_f32(x).to_f32())).to_f32()
        }
    } else {
        gelu_f32(x)
    }
}

const GELU_LIKE_GGML: bool = true;

/// RoPE tables of a pass's rows: the global base, and Gemma's local base when it differs.
struct Ropes {
    global: (Vec<f32>, Vec<f32>),
    local: Option<(Vec<f32>, Vec<f32>)>,
}

impl Ropes {
    fn new(model: &Model, positions: &[usize]) -> Self {
        let c = &model.config;
        let global = rope_rows(model, positions, c.rope_base, c.rope_freq_scale);
        let local = c
            .gemma
            .as_ref()
            .filter(|g| g.sliding_window.is_some())
            .map(|g| rope_rows(model, positions, g.rope_base_local, 1.0));
        Ropes { global, local }
    }

    fn for_layer(&self, model: &Model, li: usize) -> (&[f32], &[f32]) {
        let local = model.config.gemma.as_ref().is_some_and(|g| g.is_local(li));
        match (&self.local, local) {
            (Some((c, s)), true) => (c, s),
            _ => (&self.global.0, &self.global.1),
        }
    }
}

/// Rows of `x` (dim wide) at `rows`.
fn gather(x: &[f32], dim: usize, rows: &[usize]) -> Vec<f32> {
    let mut out = Vec::with_capacity(rows.len() * dim);
    for &r in rows {
        out.extend_from_slice(&x[r * dim..(r + 1) * dim]);
    }
    out
}

fn layer_forward(
    model: &Model,
    li: usize,
    seqs: &mut [Seq],
    lay: &Layout,
    x: &mut Vec<f32>,
    ropes: &Ropes,
    last: bool,
) {
    let layer: &Layer = &model.layers[li];
    let c = &model.config;
    let (cos, sin) = ropes.for_layer(model, li);
    let d = c.n_embd;
    let n = lay.n_tok;
    let mut h = x.clone();
    rms_norm(&mut h, d, &layer.attn_norm, c.rms_eps);
    let mut q = matmul(&h, n, &layer.wq);
    let mut k = matmul(&h, n, &layer.wk);
    let mut v = matmul(&h, n, &layer.wv);
    add_bias(&mut q, layer.wq.rows, &layer.bq);
    add_bias(&mut k, layer.wk.rows, &layer.bk);
    add_bias(&mut v, layer.wv.rows, &layer.bv);
    if let Some(w) = &layer.q_norm {
        rms_norm(&mut q, c.head_dim, w, c.rms_eps);
    }
    if let Some(w) = &layer.k_norm {
        rms_norm(&mut k, c.head_dim, w, c.rms_eps);
    }
    let half = c.n_rot / 2;
    let (qd, kd) = (layer.wq.rows, layer.wk.rows);
    for t in 0..n {
        let (cs, sn) = (
            &cos[t * half..(t + 1) * half],
            &sin[t * half..(t + 1) * half],
        );
        apply_rope(
            &mut q[t * qd..(t + 1) * qd],
            c.n_head,
            c.head_dim,
            c.n_rot,
            c.rope_layout,
            cs,
            sn,
        );
        apply_rope(
            &mut k[t * kd..(t + 1) * kd],
            c.n_head_kv,
            c.head_dim,
            c.n_rot,
            c.rope_layout,
            cs,
            sn,
        );
    }
    // Each sequence's new keys and values join its cache (a scratch slot starts empty per layer).
    for (s, seq) in seqs.iter_mut().enumerate() {
        let slot = seq.cache.slot(li);
        let (r0, r1) = (lay.starts[s], lay.starts[s] + lay.lens[s]);
        let keeps = seq.cache.keeps();
        let (kc, vc) = (&mut seq.cache.k[slot], &mut seq.cache.v[slot]);
        if !keeps {
            kc.clear();
            vc.clear();
        }
        kc.extend_from_slice(&k[r0 * kd..r1 * kd]);
        vc.extend_from_slice(&v[r0 * kd..r1 * kd]);
    }
    // In the last layer only each sequence's last row feeds the output, so attention, the output
    // projection and the FFN run for those rows alone (llama.cpp's `inp_out_ids`).
    let queries: Vec<(usize, usize, usize)> = (0..seqs.len())
        .flat_map(|s| {
            let from = if last { lay.lens[s] - 1 } else { 0 };
            (from..lay.lens[s]).map(move |i| (lay.starts[s] + i, s, lay.pasts[s] + i))
        })
        .collect();
    let attn = attention(model, seqs, li, &q, &queries);
    let rows = queries.len();
    let mut o = matmul(&attn, rows, &layer.wo);
    if let Some(w) = &layer.post_attn_norm {
        rms_norm(&mut o, d, w, c.rms_eps);
    }
    let mut resid = if last {
        gather(
            x,
            d,
            &queries.iter().map(|&(t, _, _)| t).collect::<Vec<_>>(),
        )
    } else {
        std::mem::take(x)
    };
    for (r, o) in resid.iter_mut().zip(&o) {
        *r += o;
    }
    let mut h = resid.clone();
    rms_norm(&mut h, d, &layer.ffn_norm, c.rms_eps);
    let g = matmul(&h, rows, &layer.w_gate);
    let u = matmul(&h, rows, &layer.w_up);
    let act: Vec<f32> = if c.gemma.is_some() {
        g.iter().zip(&u).map(|(&g, &u)| gelu(g) * u).collect()
    } else {
        g.iter().zip(&u).map(|(&g, &u)| silu(g) * u).collect()
    };
    let mut down = matmul(&act, rows, &layer.w_down);
    if let Some(w) = &layer.post_ffn_norm {
        rms_norm(&mut down, d, w, c.rms_eps);
    }
    for (r, dv) in resid.iter_mut().zip(&down) {
        *r += dv;
    }
    *x = resid;
}

/// Runs each sequence's new tokens (non-empty, checked by the caller) through the model after
/// what its cache holds, appends their keys and values to the cache, and returns each
/// sequence's logits at its last new token.
pub(crate) fn forward(model: &Model, seqs: &mut [Seq]) -> Vec<Vec<f32>> {
    let c = &model.config;
    let d = c.n_embd;
    let mut lay = Layout {
        starts: Vec::with_capacity(seqs.len()),
        lens: Vec::with_capacity(seqs.len()),
        pasts: Vec::with_capacity(seqs.len()),
        n_tok: 0,
    };
    let mut positions = Vec::new();
    for s in seqs.iter() {
        lay.starts.push(lay.n_tok);
        lay.lens.push(s.tokens.len());
        lay.pasts.push(s.cache.len());
        positions.extend((0..s.tokens.len()).map(|i| s.cache.len() + i));
        lay.n_tok += s.tokens.len();
    }
    let ropes = Ropes::new(model, &positions);

    let mut x = vec![0f32; lay.n_tok * d];
    for (t, &id) in seqs.iter().flat_map(|s| s.tokens.iter()).enumerate() {
        model
            .token_embd
            .dequantize_rows(id as usize, &mut x[t * d..(t + 1) * d]);
    }
    if c.gemma.is_some() {
        let scale = (d as f32).sqrt();
        for v in x.iter_mut() {
            *v *= scale;
        }
    }
    let n_layer = model.layers.len();
    for i in 0..n_layer {
        layer_forward(model, i, seqs, &lay, &mut x, &ropes, i + 1 == n_layer);
    }
    for (s, seq) in seqs.iter_mut().enumerate() {
        seq.cache.advance(lay.lens[s]);
    }
    // After the last layer x holds one row per sequence (or all rows if there were no layers).
    if n_layer == 0 {
        let last: Vec<usize> = (0..seqs.len())
            .map(|s| lay.starts[s] + lay.lens[s] - 1)
            .collect();
        x = gather(&x, d, &last);
    }
    rms_norm(&mut x, d, &model.output_norm, c.rms_eps);
    let head = model.output.as_ref().unwrap_or(&model.token_embd);
    let logits = matmul(&x, seqs.len(), head);
    logits.chunks_exact(c.n_vocab).map(|r| r.to_vec()).collect()
}
