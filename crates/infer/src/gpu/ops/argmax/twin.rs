//! CPU twin of argmax.wgsl.

/// Index of each `n_cols` row's largest value, the first on ties (generate::argmax).
pub fn argmax_rows(logits: &[f32], n_cols: usize) -> Vec<u32> {
    logits
        .chunks_exact(n_cols)
        .map(crate::generate::argmax)
        .collect()
}
