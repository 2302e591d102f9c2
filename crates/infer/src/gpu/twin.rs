//! CPU twins of the WGSL kernels: plain f64-accumulating reference code with the same inputs
//! and outputs as each shader, used by the kernel tests (tests.rs). They restate, in the simplest
//! form, what model/forward.rs computes (whose functions are private and fused for speed).

use crate::gguf::{dequantize_row, GgmlType};

/// `y (n_tok × rows) = x (n_tok × cols) · Wᵀ`, W given as GGUF bytes of `ty`.
pub fn matmul(ty: GgmlType, w: &[u8], rows: usize, cols: usize, x: &[f32]) -> Vec<f32> {
    let rb = ty.row_bytes(cols);
    let mut wf = vec![0f32; rows * cols];
    for r in 0..rows {
        if let Err(e) = dequantize_row(
            ty,
            &w[r * rb..(r + 1) * rb],
            &mut wf[r * cols..(r + 1) * cols],
        ) {
            panic!("twin matmul: {e}");
        }
    }
    let n_tok = x.len() / cols.max(1);
    let mut y = vec![0f32; n_tok * rows];
    for t in 0..n_tok {
        for r in 0..rows {
            let s: f64 = (0..cols)
                .map(|c| x[t * cols + c] as f64 * wf[r * cols + c] as f64)
                .sum();
            y[t * rows + r] = s as f32;
        }
    }
    y
}

/// RMSNorm of each `dim`-row (sum of squares in f64, as forward.rs).
pub fn rms_norm(x: &[f32], dim: usize, weight: &[f32], eps: f32) -> Vec<f32> {
    let mut y = x.to_vec();
    for row in y.chunks_exact_mut(dim) {
        let sum: f64 = row.iter().map(|&v| v as f64 * v as f64).sum();
        let scale = 1.0 / ((sum / dim as f64) as f32 + eps).sqrt();
        for (v, w) in row.iter_mut().zip(weight) {
            *v = *v * scale * w;
        }
    }
    y
}

/// RoPE in place on rows of `n_heads × head_dim`, position `pos[t]`, tables `pos × n_rot/2`.
#[allow(clippy::too_many_arguments)]
pub fn rope(
    x: &mut [f32],
    n_heads: usize,
    head_dim: usize,
    n_rot: usize,
    neox: bool,
    pos: &[u32],
    cos: &[f32],
    sin: &[f32],
) {
    let half = n_rot / 2;
    for (t, &p) in pos.iter().enumerate() {
        for h in 0..n_heads {
            let base = (t * n_heads + h) * head_dim;
            for i in 0..half {
                let (a, b) = if neox {
                    (i, i + half)
                } else {
                    (2 * i, 2 * i + 1)
                };
                let (c, s) = (cos[p as usize * half + i], sin[p as usize * half + i]);
                let (x0, x1) = (x[base + a], x[base + b]);
                x[base + a] = x0 * c - x1 * s;
                x[base + b] = x0 * s + x1 * c;
            }
        }
    }
}

/// Causal GQA attention over packed prompts: token t attends to keys `start[t]..=t` (with a
/// sliding `window` > 0: only the last `window` of them), scores scaled by `scale`.
#[allow(clippy::too_many_arguments)]
pub fn attention(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    start: &[u32],
    n_head: usize,
    n_kv: usize,
    head_dim: usize,
    scale: f32,
    window: usize,
) -> Vec<f32> {
    let n_tok = start.len();
    let ranges: Vec<(usize, usize)> = (0..n_tok)
        .map(|t| {
            let lo = start[t] as usize;
            let lo = if window > 0 {
                lo.max((t + 1).saturating_sub(window))
            } else {
                lo
            };
            (lo, t)
        })
        .collect();
    attend_ranges(q, k, v, &ranges, n_head, n_kv, head_dim, scale)
}

/// Decoding attention: query i attends to the cache rows `range[2i]..=range[2i+1]`.
#[allow(clippy::too_many_arguments)]
pub fn decode_attention(
    q: &[f32],
    k_cache: &[f32],
    v_cache: &[f32],
    range: &[u32],
    n_head: usize,
    n_kv: usize,
    head_dim: usize,
    scale: f32,
) -> Vec<f32> {
    let ranges: Vec<(usize, usize)> = range
        .chunks_exact(2)
        .map(|r| (r[0] as usize, r[1] as usize))
        .collect();
    attend_ranges(q, k_cache, v_cache, &ranges, n_head, n_kv, head_dim, scale)
}

/// Softmax attention of query row t over key rows `ranges[t].0..=ranges[t].1`, in f64.
#[allow(clippy::too_many_arguments)]
fn attend_ranges(
    q: &[f32],
    k: &[f32],
    v: &[f32],
    ranges: &[(usize, usize)],
    n_head: usize,
    n_kv: usize,
    head_dim: usize,
    scale: f32,
) -> Vec<f32> {
    let (q_dim, kv_dim) = (n_head * head_dim, n_kv * head_dim);
    let n_tok = ranges.len();
    let scale = scale as f64;
    let mut out = vec![0f32; n_tok * q_dim];
    for (t, &(lo, hi)) in ranges.iter().enumerate() {
        for h in 0..n_head {
            let kvh = h / (n_head / n_kv);
            let keys: Vec<usize> = (lo..=hi).collect();
            let scores: Vec<f64> = keys
                .iter()
                .map(|&j| {
                    (0..head_dim)
                        .map(|d| {
                            q[t * q_dim + h * head_dim + d] as f64
                                * k[j * kv_dim + kvh * head_dim + d] as f64
                        })
                        .sum::<f64>()
                        * scale
                })
                .collect();
            let max = scores.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let e: Vec<f64> = scores.iter().map(|s| (s - max).exp()).collect();
            let sum: f64 = e.iter().sum();
            for d in 0..head_dim {
                let acc: f64 = keys
                    .iter()
                    .zip(&e)
                    .map(|(&j, &w)| w * v[j * kv_dim + kvh * head_dim + d] as f64)
                    .sum();
                out[t * q_dim + h * head_dim + d] = (acc / sum) as f32;
            }
        }
    }
    out
}

/// silu(gate) · up, silu(g) = g / (1 + e^(−g)).
pub fn swiglu(gate: &[f32], up: &[f32]) -> Vec<f32> {
    gate.iter()
        .zip(up)
        .map(|(&g, &u)| g / (1.0 + (-g).exp()) * u)
        .collect()
}

/// Columns `col..col + dim` of each `stride`-wide row of `a` (one output of a fused projection).
pub fn split_cols(a: &[f32], stride: usize, col: usize, dim: usize) -> Vec<f32> {
    a.chunks_exact(stride)
        .flat_map(|row| row[col..col + dim].iter().copied())
        .collect()
}

/// The first and second halves of each `2 * dim`-wide row (gate and up of the fused gate|up
/// projection), for `swiglu` / `geglu`.
pub fn halves(a: &[f32], dim: usize) -> (Vec<f32>, Vec<f32>) {
    (
        split_cols(a, 2 * dim, 0, dim),
        split_cols(a, 2 * dim, dim, dim),
    )
}

/// y + bias broadcast over rows of `bias.len()`.
pub fn add_bias(y: &[f32], bias: &[f32]) -> Vec<f32> {
    y.iter()
        .enumerate()
        .map(|(i, &v)| v + bias[i % bias.len()])
        .collect()
}

/// y + a element-wise.
pub fn residual(y: &[f32], a: &[f32]) -> Vec<f32> {
    y.iter().zip(a).map(|(&y, &a)| y + a).collect()
}

/// y + (a's first half + its second half): the residual add of a split-K product's planes.
pub fn residual_split(y: &[f32], a: &[f32]) -> Vec<f32> {
    let n = y.len();
    y.iter()
        .zip(a[..n].iter().zip(&a[n..2 * n]))
        .map(|(&y, (&a0, &a1))| y + (a0 + a1))
        .collect()
}

/// Rows `rows` of x (`dim` wide).
pub fn gather_rows(x: &[f32], dim: usize, rows: &[u32]) -> Vec<f32> {
    rows.iter()
        .flat_map(|&r| x[r as usize * dim..(r as usize + 1) * dim].iter().copied())
        .collect()
}

/// Softmax of each `n_cols` row, probability of `targets[row]` (f64, like
/// utility::token_probability).
pub fn softmax_pick(logits: &[f32], n_cols: usize, targets: &[u32]) -> Vec<f32> {
    logits
        .chunks_exact(n_cols)
        .zip(targets)
        .map(|(row, &t)| crate::utility::token_probability(row, t) as f32)
        .collect()
}

/// Row r of `a` (`dim` wide) written to row `rows[r]` of `y`.
pub fn scatter_rows(y: &[f32], a: &[f32], dim: usize, rows: &[u32]) -> Vec<f32> {
    let mut y = y.to_vec();
    for (r, &dst) in rows.iter().enumerate() {
        let d = dst as usize * dim;
        y[d..d + dim].copy_from_slice(&a[r * dim..(r + 1) * dim]);
    }
    y
}

/// gelu(gate) · up with GELU as ggml's CPU backend computes it (model/forward.rs `gelu`, in f32
/// like it): input and output rounded to f16, the tanh formula in between, 0 below −10 and x
/// above 10.
pub fn geglu(gate: &[f32], up: &[f32]) -> Vec<f32> {
    use half::f16;
    let gelu = |x: f32| -> f32 {
        if x <= -10.0 {
            return 0.0;
        }
        if x >= 10.0 {
            return x;
        }
        let h = f16::from_f32(x).to_f32();
        let t = (0.797_884_6 * h * (1.0 + 0.044_715 * h * h)).tanh();
        f16::from_f32(0.5 * h * (1.0 + t)).to_f32()
    };
    gate.iter().zip(up).map(|(&g, &u)| gelu(g) * u).collect()
}

/// Index of each `n_cols` row's largest value, the first on ties (generate::argmax).
pub fn argmax_rows(logits: &[f32], n_cols: usize) -> Vec<u32> {
    logits
        .chunks_exact(n_cols)
        .map(crate::generate::argmax)
        .collect()
}
