//! rms_norm.wgsl against its CPU twin.

use super::twin;
use crate::gpu::ops::test_util::{assert_close, bytes_f32, context, run, Rng};

#[test]
fn rms_norm_matches_twin() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(11);
    for (rows, dim) in [(3, 70), (5, 577), (1, 8)] {
        let x: Vec<f32> = rng.vec(rows * dim).iter().map(|v| v * 3.0).collect();
        let w = rng.vec(dim);
        let want = twin::rms_norm(&x, dim, &w, 1e-5);
        let words = [rows as u32, dim as u32, 1e-5f32.to_bits(), rows as u32];
        let got = run(
            ctx,
            &ctx.kernels.rms_norm,
            &words,
            &[
                bytes_f32(&x),
                bytes_f32(&w),
                bytes_f32(&vec![0.0; rows * dim]),
            ],
            2,
            (rows as u32, 1),
        );
        assert_close(&format!("rms_norm {rows}x{dim}"), &got, &want, 1e-6);
    }
}
