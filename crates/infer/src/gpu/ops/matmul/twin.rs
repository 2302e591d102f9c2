//! CPU twin of the matmul (every tile): plain f64-accumulating reference code, the weights
//! dequantized by the CPU engine's GGUF code.

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
