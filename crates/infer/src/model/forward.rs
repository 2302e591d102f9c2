//! The prefill forward pass in f32, following llama.cpp's `llm_build_llama` / `llm_build_qwen2`:
//! RMSNorm → Q/K/V (+bias) → RoPE → causal grouped-query attention → output projection →
//! residual → RMSNorm → SwiGLU FFN → residual; final RMSNorm and LM head only at each prompt's
//! last position. All prompts of a batch share the matmuls (their tokens are concatenated);
//! attention stays within each prompt and positions restart at 0 for each.

use super::config::RopeLayout;
use super::matmul::{gemm_nt, matmul};
use super::parallel::par_map;
use super::{Layer, Model, PrefillOutput};

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

/// Per-position cos/sin tables, computed as ggml's `rope_cache_init` does (theta multiplied
/// step by step in f32, divided by the optional frequency factors, scaled by freq_scale).
pub(super) fn rope_tables(model: &Model, max_pos: usize) -> (Vec<f32>, Vec<f32>) {
    let c = &model.config;
    let half = c.n_rot / 2;
    let theta_scale = c.rope_base.powf(-2.0 / c.n_rot as f32);
    let mut cos = vec![0f32; max_pos * half];
    let mut sin = vec![0f32; max_pos * half];
    for p in 0..max_pos {
        let mut theta = p as f32;
        for i in 0..half {
            let ff = model.rope_freqs.as_ref().map_or(1.0, |f| f[i]);
            let t = c.rope_freq_scale * (theta / ff);
            cos[p * half + i] = t.cos();
            sin[p * half + i] = t.sin();
            theta *= theta_scale;
        }
    }
    (cos, sin)
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

struct Batch<'a> {
    prompts: &'a [&'a [u32]],
    /// Offset of each prompt's first token in the concatenated batch.
    starts: Vec<usize>,
    n_tok: usize,
}

/// Causal attention for the rows `queries` (global token indices, each attending to its own
/// prompt's tokens up to itself). Returns `queries.len() × (n_head·head_dim)`.
struct HeadGeometry {
    hd: usize,
    q_dim: usize,
    kv_dim: usize,
    group: usize,
    scale: f32,
}

/// Attention of one head for a block of query rows of one prompt; returns `rows × hd`.
/// Scores and the weighted sum of values run through the matmul kernel on packed copies of
/// the head's Q, K and Vᵀ (keys up to the block's last query; later keys are masked).
fn attend(
    g: &HeadGeometry,
    batch: &Batch,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    queries: &[(usize, usize)],
    h: usize,
) -> Vec<f32> {
    let (hd, q_dim, kv_dim) = (g.hd, g.q_dim, g.kv_dim);
    let kvh = h / g.group;
    let n_q = queries.len();
    let start = batch.starts[queries[0].1];
    let last = queries.iter().map(|&(t, _)| t).max().unwrap_or(start);
    let n_k = last + 1 - start;
    let mut qh = Vec::with_capacity(n_q * hd);
    for &(tok, _) in queries {
        qh.extend_from_slice(&q[tok * q_dim + h * hd..tok * q_dim + (h + 1) * hd]);
    }
    let mut kh = Vec::with_capacity(n_k * hd);
    let mut vt = vec![0f32; hd * n_k];
    for j in 0..n_k {
        let row = (start + j) * kv_dim + kvh * hd;
        kh.extend_from_slice(&k[row..row + hd]);
        for (d, &x) in v[row..row + hd].iter().enumerate() {
            vt[d * n_k + j] = x;
        }
    }
    let mut scores = vec![0f32; n_q * n_k];
    gemm_nt(&qh, n_q, &kh, n_k, hd, &mut scores);
    for (i, &(tok, _)) in queries.iter().enumerate() {
        let row = &mut scores[i * n_k..(i + 1) * n_k];
        let visible = tok + 1 - start;
        let mut max = f32::NEG_INFINITY;
        for s in row[..visible].iter_mut() {
            *s *= g.scale;
            max = max.max(*s);
        }
        let mut sum = 0f64;
        for s in row[..visible].iter_mut() {
            *s = (*s - max).exp();
            sum += *s as f64;
        }
        let inv = (1.0 / sum) as f32;
        for s in row[..visible].iter_mut() {
            *s *= inv;
        }
        row[visible..].fill(0.0);
    }
    let mut out = vec![0f32; n_q * hd];
    gemm_nt(&scores, n_q, &vt, hd, n_k, &mut out);
    out
}

fn attention(
    model: &Model,
    batch: &Batch,
    q: &[f32],
    k: &[f32],
    v: &[f32],
    queries: &[(usize, usize)],
) -> Vec<f32> {
    let c = &model.config;
    let (hd, n_head, n_kv) = (c.head_dim, c.n_head, c.n_head_kv);
    let q_dim = n_head * hd;
    let kv_dim = n_kv * hd;
    let group = n_head / n_kv;
    let scale = 1.0 / (hd as f32).sqrt();
    // One task per head and block of up to QB query rows of the same prompt.
    const QB: usize = 32;
    let mut tasks = Vec::new();
    let mut qi = 0;
    while qi < queries.len() {
        let prompt = queries[qi].1;
        let mut end = qi + 1;
        while end < queries.len() && end - qi < QB && queries[end].1 == prompt {
            end += 1;
        }
        for h in 0..n_head {
            tasks.push((qi, end, h));
        }
        qi = end;
    }
    let geo = HeadGeometry {
        hd,
        q_dim,
        kv_dim,
        group,
        scale,
    };
    let results = par_map(tasks.len(), |t| {
        let (q0, q1, h) = tasks[t];
        attend(&geo, batch, q, k, v, &queries[q0..q1], h)
    });
    let mut y = vec![0f32; queries.len() * q_dim];
    for (t, out) in results.into_iter().enumerate() {
        let (q0, _, h) = tasks[t];
        for (i, src) in out.chunks_exact(hd).enumerate() {
            let dst = (q0 + i) * q_dim + h * hd;
            y[dst..dst + hd].copy_from_slice(src);
        }
    }
    y
}

fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
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
    layer: &Layer,
    batch: &Batch,
    x: &mut Vec<f32>,
    cos: &[f32],
    sin: &[f32],
    last: bool,
) {
    let c = &model.config;
    let d = c.n_embd;
    let n = batch.n_tok;
    let mut h = x.clone();
    rms_norm(&mut h, d, &layer.attn_norm, c.rms_eps);
    let mut q = matmul(&h, n, &layer.wq);
    let mut k = matmul(&h, n, &layer.wk);
    let mut v = matmul(&h, n, &layer.wv);
    add_bias(&mut q, layer.wq.rows, &layer.bq);
    add_bias(&mut k, layer.wk.rows, &layer.bk);
    add_bias(&mut v, layer.wv.rows, &layer.bv);
    let half = c.n_rot / 2;
    for (p, prompt) in batch.prompts.iter().enumerate() {
        for pos in 0..prompt.len() {
            let t = batch.starts[p] + pos;
            let (cs, sn) = (
                &cos[pos * half..(pos + 1) * half],
                &sin[pos * half..(pos + 1) * half],
            );
            let qd = layer.wq.rows;
            let kd = layer.wk.rows;
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
    }
    // In the last layer only each prompt's last row feeds the output, so attention, the output
    // projection and the FFN run for those rows alone (llama.cpp's `inp_out_ids`).
    let queries: Vec<(usize, usize)> = if last {
        batch
            .prompts
            .iter()
            .enumerate()
            .map(|(p, pr)| (batch.starts[p] + pr.len() - 1, p))
            .collect()
    } else {
        batch
            .prompts
            .iter()
            .enumerate()
            .flat_map(|(p, pr)| (0..pr.len()).map(move |i| (i, p)))
            .map(|(i, p)| (batch.starts[p] + i, p))
            .collect()
    };
    let attn = attention(model, batch, &q, &k, &v, &queries);
    let rows = queries.len();
    let o = matmul(&attn, rows, &layer.wo);
    let mut resid = if last {
        gather(x, d, &queries.iter().map(|&(t, _)| t).collect::<Vec<_>>())
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
    let act: Vec<f32> = g.iter().zip(&u).map(|(&g, &u)| silu(g) * u).collect();
    let down = matmul(&act, rows, &layer.w_down);
    for (r, dv) in resid.iter_mut().zip(&down) {
        *r += dv;
    }
    *x = resid;
}

pub(super) fn prefill(model: &Model, prompts: &[&[u32]]) -> PrefillOutput {
    let c = &model.config;
    let d = c.n_embd;
    let mut starts = Vec::with_capacity(prompts.len());
    let mut n_tok = 0;
    for p in prompts {
        starts.push(n_tok);
        n_tok += p.len();
    }
    let batch = Batch {
        prompts,
        starts,
        n_tok,
    };
    let max_len = prompts.iter().map(|p| p.len()).max().unwrap_or(0);
    let (cos, sin) = rope_tables(model, max_len);

    let mut x = vec![0f32; n_tok * d];
    for (t, &id) in prompts.iter().flat_map(|p| p.iter()).enumerate() {
        model
            .token_embd
            .dequantize_rows(id as usize, &mut x[t * d..(t + 1) * d]);
    }
    let n_layer = model.layers.len();
    for (i, layer) in model.layers.iter().enumerate() {
        layer_forward(model, layer, &batch, &mut x, &cos, &sin, i + 1 == n_layer);
    }
    // After the last layer x holds one row per prompt (or all rows if there were no layers).
    if n_layer == 0 {
        let last: Vec<usize> = prompts
            .iter()
            .enumerate()
            .map(|(p, pr)| batch.starts[p] + pr.len() - 1)
            .collect();
        x = gather(&x, d, &last);
    }
    rms_norm(&mut x, d, &model.output_norm, c.rms_eps);
    let head = model.output.as_ref().unwrap_or(&model.token_embd);
    let logits = matmul(&x, prompts.len(), head);
    PrefillOutput {
        last_logits: logits.chunks_exact(c.n_vocab).map(|r| r.to_vec()).collect(),
    }
}
