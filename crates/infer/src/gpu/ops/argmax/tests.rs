//! argmax.wgsl against its CPU twin, ties included.

use super::twin;
use crate::gpu::ops::test_util::{bytes_f32, bytes_u32, context, run, Rng};

#[test]
fn argmax_matches_twin_first_on_ties() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(29);
    for (rows, cols) in [(3usize, 1000usize), (2, 37), (1, 1), (4, 70)] {
        let mut x = rng.vec(rows * cols);
        // Ties: the row maximum copied to a later column (the first must win) in two rows.
        for r in 0..rows.min(2) {
            let row = &mut x[r * cols..(r + 1) * cols];
            let best = crate::generate::argmax(row) as usize;
            row[cols - 1] = row[best];
            row[cols / 2] = row[best];
        }
        let want = twin::argmax_rows(&x, cols);
        let words = [rows as u32, cols as u32];
        let got = run(
            ctx,
            &ctx.kernels.argmax,
            &words,
            &[bytes_f32(&x), bytes_u32(&vec![0; rows])],
            1,
            (rows as u32, 1),
        );
        let got: Vec<u32> = got.iter().take(rows).map(|v| v.to_bits()).collect();
        assert_eq!(got, want, "argmax {rows}x{cols}");
    }
}
