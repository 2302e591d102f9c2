//! CPU twin of decode_attention.wgsl.

use crate::gpu::ops::attention::twin::attend_ranges;

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
