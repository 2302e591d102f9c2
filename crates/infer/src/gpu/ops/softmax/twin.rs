//! CPU twin of softmax.wgsl.

/// Softmax of each `n_cols` row, probability of `targets[row]` (f64, like
/// utility::token_probability).
pub fn softmax_pick(logits: &[f32], n_cols: usize, targets: &[u32]) -> Vec<f32> {
    logits
        .chunks_exact(n_cols)
        .zip(targets)
        .map(|(row, &t)| crate::utility::token_probability(row, t) as f32)
        .collect()
}
