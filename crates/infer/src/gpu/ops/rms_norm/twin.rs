//! CPU twin of rms_norm.wgsl.

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
