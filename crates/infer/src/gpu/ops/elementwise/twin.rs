//! CPU twins of elementwise.wgsl's entry points.

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

/// silu(gate) · up, silu(g) = g / (1 + e^(−g)).
pub fn swiglu(gate: &[f32], up: &[f32]) -> Vec<f32> {
    gate.iter()
        .zip(up)
        .map(|(&g, &u)| g / (1.0 + (-g).exp()) * u)
        .collect()
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

/// Rows `rows` of x (`dim` wide).
pub fn gather_rows(x: &[f32], dim: usize, rows: &[u32]) -> Vec<f32> {
    rows.iter()
        .flat_map(|&r| x[r as usize * dim..(r as usize + 1) * dim].iter().copied())
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
