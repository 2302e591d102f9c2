//! CPU twin of rope.wgsl.

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
