//! rope.wgsl against its CPU twin (normal and NeoX layouts, partial rotation).

use super::twin;
use crate::gpu::ops::test_util::{assert_close, bytes_f32, bytes_u32, context, run, Rng};

#[test]
fn rope_matches_twin_in_both_layouts() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(13);
    // n_rot < head_dim: partial rotation leaves the tail untouched.
    for (neox, n_tok, heads, hd, n_rot) in [
        (false, 5, 3, 10, 8),
        (true, 7, 2, 16, 16),
        (true, 3, 4, 12, 6),
    ] {
        let half = n_rot / 2;
        let max_pos = 9;
        let angles = rng.vec(max_pos * half);
        let cos: Vec<f32> = angles.iter().map(|a| (a * 3.0).cos()).collect();
        let sin: Vec<f32> = angles.iter().map(|a| (a * 3.0).sin()).collect();
        let pos: Vec<u32> = (0..n_tok).map(|_| rng.next() % max_pos as u32).collect();
        let x = rng.vec(n_tok * heads * hd);
        let mut want = x.clone();
        twin::rope(&mut want, heads, hd, n_rot, neox, &pos, &cos, &sin);
        let n = n_tok * heads * half;
        let gx = n.div_ceil(64) as u32;
        let words = [
            n_tok as u32,
            heads as u32,
            hd as u32,
            n_rot as u32,
            u32::from(neox),
            gx,
        ];
        let got = run(
            ctx,
            &ctx.kernels.rope,
            &words,
            &[
                bytes_f32(&x),
                bytes_u32(&pos),
                bytes_f32(&cos),
                bytes_f32(&sin),
            ],
            0,
            (gx, 1),
        );
        assert_close(&format!("rope neox={neox}"), &got, &want, 1e-6);
    }
}
