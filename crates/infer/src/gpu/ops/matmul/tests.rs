//! The matmul's tiles against its CPU twin, on every weight type and on shapes that straddle
//! the tiles and K steps; the source assembly (`unroll`).

use super::twin;
use crate::gguf::GgmlType;
use crate::gpu::layout::{repack_raw, row_words, GPU_TYPES};
use crate::gpu::ops::test_util::{
    assert_close, bytes_f32, context, random_weights, run, run_z, Rng,
};
use crate::gpu::plan::MatmulTile;
use crate::gpu::GpuContext;

#[test]
fn matmul_matches_twin_for_every_weight_type() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(7);
    for ty in GPU_TYPES {
        let bs = ty.block_size();
        // Columns: not multiples of the 32-wide K step where the type allows it.
        let col_choices: Vec<usize> = match bs {
            1 => vec![37, 70],
            32 => vec![96, 160],
            _ => vec![256, 512],
        };
        for (cols, n_tok, rows) in [
            (col_choices[0], 5, 7),
            (col_choices[1], 33, 45),
            (col_choices[0], 1, 33),
            // Straddles the 64x64 tiles and the 32-wide K steps.
            (col_choices[1], 70, 65),
            // Straddles 128x128 tiles; K a multiple of the 16-wide K step for every type.
            (bs.max(64), 130, 131),
            // Straddles the wide tile's 192 rows.
            (bs.max(64), 130, 197),
        ] {
            let w = random_weights(&mut rng, ty, rows, cols);
            let x = rng.vec(n_tok * cols);
            let want = twin::matmul(ty, &w, rows, cols, &x);
            let rw = row_words(ty, cols);
            // Output written at a column offset inside a wider row, as for an LM-head chunk.
            let (stride, col0) = (rows + 3, 2);
            let words = [
                n_tok as u32,
                rows as u32,
                cols as u32,
                rw as u32,
                stride as u32,
                col0 as u32,
            ];
            let y = vec![0f32; n_tok * stride];
            // Every tile on every shape, whichever the engine would pick.
            for tile in tiles(ctx) {
                let Some(kernel) = tile.kernel(&ctx.kernels, ty) else {
                    continue;
                };
                let got = run(
                    ctx,
                    kernel,
                    &words,
                    &[repack_raw(ty, cols, &w), bytes_f32(&x), bytes_f32(&y)],
                    2,
                    tile.groups(rows, n_tok),
                );
                let got: Vec<f32> = (0..n_tok)
                    .flat_map(|t| got[t * stride + col0..t * stride + col0 + rows].to_vec())
                    .collect();
                assert_close(
                    &format!("matmul {tile:?} {} {n_tok}x{rows}x{cols}", ty.name()),
                    &got,
                    &want,
                    2e-5,
                );
            }
        }
        // Split-K on the large and wide tiles: K halves of whole 16-wide steps and blocks, two
        // output planes (n_tok x stride apart) that add up to the product.
        let (cols, n_tok, rows) = (2 * bs.max(32), 130, 197);
        let w = random_weights(&mut rng, ty, rows, cols);
        let x = rng.vec(n_tok * cols);
        let want = twin::matmul(ty, &w, rows, cols, &x);
        let (stride, col0) = (rows + 3, 2);
        let words = [
            n_tok as u32,
            rows as u32,
            cols as u32,
            row_words(ty, cols) as u32,
            stride as u32,
            col0 as u32,
            (cols / 2) as u32,
        ];
        for tile in tiles(ctx).into_iter().skip(1) {
            let Some(kernel) = tile.kernel(&ctx.kernels, ty) else {
                continue;
            };
            let (gx, gy) = tile.groups(rows, n_tok);
            let got = run_z(
                ctx,
                kernel,
                &words,
                &[
                    repack_raw(ty, cols, &w),
                    bytes_f32(&x),
                    bytes_f32(&vec![0f32; 2 * n_tok * stride]),
                ],
                2,
                (gx, gy, 2),
            );
            let plane = n_tok * stride;
            let got: Vec<f32> = (0..n_tok)
                .flat_map(|t| (0..rows).map(move |r| t * stride + col0 + r))
                .map(|i| got[i] + got[plane + i])
                .collect();
            assert_close(
                &format!(
                    "matmul {tile:?} split-K {} {n_tok}x{rows}x{cols}",
                    ty.name()
                ),
                &got,
                &want,
                2e-5,
            );
        }
    }
}

/// The matmul tiles this device runs (the wide one only where its limits fit it).
fn tiles(ctx: &GpuContext) -> Vec<MatmulTile> {
    let mut out = vec![MatmulTile::Small, MatmulTile::Large];
    if ctx.has_wide_tile() {
        out.push(MatmulTile::Wide);
    } else {
        // lavapipe fits it, so under `cargo xtask test` its absence is a failure, not a pass.
        crate::test_support::skip("the wide matmul tile (this device's limits do not fit it)");
    }
    out
}

#[test]
fn unroll_writes_out_the_marked_blocks() {
    let src = "a\n    // @unroll 3 i=#\n    x# = y[#];\n    // @end\nb\n";
    assert_eq!(
        super::source::unroll(src),
        "a\n    x0 = y[0];\n    x1 = y[1];\n    x2 = y[2];\nb\n"
    );
    let mm = super::matmul_source(GgmlType::Q4_1);
    assert!(mm.contains("let b31 = ") && !mm.contains("let b# ") && !mm.contains("b32"));
}
