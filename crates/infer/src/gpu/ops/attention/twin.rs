//! CPU twin of attention.wgsl (also the decoding attention's, through `attend_ranges`).

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

/// Softmax attention of query row t over key rows `ranges[t].0..=ranges[t].1`, in f64.
#[allow(clippy::too_many_arguments)]
pub(crate) fn attend_ranges(
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
