//! softmax.wgsl against its CPU twin.

use super::twin;
use crate::gpu::ops::test_util::{bytes_f32, bytes_u32, context, run, Rng};

#[test]
fn softmax_pick_matches_twin() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(23);
    for (rows, cols) in [(3, 1000), (1, 7), (2, 49153)] {
        let logits: Vec<f32> = rng.vec(rows * cols).iter().map(|v| v * 20.0).collect();
        let targets: Vec<u32> = (0..rows).map(|_| rng.next() % cols as u32).collect();
        let want = twin::softmax_pick(&logits, cols, &targets);
        let got = run(
            ctx,
            &ctx.kernels.softmax,
            &[rows as u32, cols as u32],
            &[
                bytes_f32(&logits),
                bytes_u32(&targets),
                bytes_f32(&vec![0.0; rows]),
            ],
            2,
            (rows as u32, 1),
        );
        for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
            let rel = ((g - w) / w).abs();
            assert!(rel <= 1e-5, "softmax {rows}x{cols} row {i}: {g} vs {w}");
        }
    }
}
