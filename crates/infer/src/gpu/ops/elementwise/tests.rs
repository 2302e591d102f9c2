//! elementwise.wgsl's entry points against their CPU twins.

use super::twin;
use crate::gpu::ops::test_util::{assert_close, bytes_f32, bytes_u32, context, run, Rng};
use crate::gpu::ops::Kernel;

#[test]
fn elementwise_kernels_match_twins() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(19);
    let (rows, dim) = (7, 45);
    let n = rows * dim;
    let y: Vec<f32> = rng.vec(n).iter().map(|v| v * 8.0).collect();
    let a = rng.vec(n);
    let bias = rng.vec(dim);
    let idx: Vec<u32> = vec![6, 0, 3];
    let gx = n.div_ceil(64) as u32;
    let words = [n as u32, dim as u32, gx];
    let k = &ctx.kernels.elementwise;
    let ew = |kern: &Kernel, y: &[f32], a: &[f32], rows_b: &[u32], n: usize| {
        let gx = n.div_ceil(64) as u32;
        run(
            ctx,
            kern,
            &[n as u32, dim as u32, gx],
            &[bytes_f32(y), bytes_f32(a), bytes_u32(rows_b)],
            0,
            (gx, 1),
        )
    };
    let _ = words;
    assert_close(
        "bias",
        &ew(&k.bias, &y, &bias, &idx, n),
        &twin::add_bias(&y, &bias),
        1e-7,
    );
    assert_close(
        "residual",
        &ew(&k.residual, &y, &a, &idx, n),
        &twin::residual(&y, &a),
        1e-7,
    );
    // Two planes of a split-K product: a holds 2n values.
    let planes = rng.vec(2 * n);
    assert_close(
        "residual_split",
        &ew(&k.residual_split, &y, &planes, &idx, n),
        &twin::residual_split(&y, &planes),
        1e-7,
    );
    assert_close(
        "swiglu",
        &ew(&k.swiglu, &y, &a, &idx, n),
        &twin::swiglu(&y, &a),
        1e-6,
    );
    let out = vec![0f32; idx.len() * dim];
    let got = ew(&k.gather, &out, &y, &idx, idx.len() * dim);
    assert_close("gather", &got, &twin::gather_rows(&y, dim, &idx), 0.0);
}

/// The fused projections' kernels: a column slice of wider rows (Q, K, V out of Q|K|V rows, on
/// a width and offsets that are no multiple of 64), SwiGLU and GeGLU over gate|up rows.
#[test]
fn fused_projection_kernels_match_twins() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(37);
    let (rows, stride) = (9usize, 45 + 2 * 13);
    let a: Vec<f32> = rng.vec(rows * stride).iter().map(|v| v * 8.0).collect();
    let k = &ctx.kernels.elementwise;
    for (col, dim) in [(0usize, 45usize), (45, 13), (58, 13)] {
        let n = rows * dim;
        let gx = n.div_ceil(64) as u32;
        let got = run(
            ctx,
            &k.split,
            &[n as u32, dim as u32, gx, stride as u32, col as u32],
            &[bytes_f32(&vec![0.0; n]), bytes_f32(&a), bytes_u32(&[0])],
            0,
            (gx, 1),
        );
        let want = twin::split_cols(&a, stride, col, dim);
        assert_close(&format!("split col {col} dim {dim}"), &got, &want, 0.0);
    }
    // Two planes of a split-K product (the second rows * stride floats further) are summed.
    let planes = rng.vec(2 * rows * stride);
    let plane = rows * stride;
    let sum: Vec<f32> = (0..plane).map(|i| planes[i] + planes[plane + i]).collect();
    let (col, dim) = (45usize, 13usize);
    let n = rows * dim;
    let gx = n.div_ceil(64) as u32;
    let got = run(
        ctx,
        &k.split,
        &[
            n as u32,
            dim as u32,
            gx,
            stride as u32,
            col as u32,
            plane as u32,
        ],
        &[
            bytes_f32(&vec![0.0; n]),
            bytes_f32(&planes),
            bytes_u32(&[0]),
        ],
        0,
        (gx, 1),
    );
    let want = twin::split_cols(&sum, stride, col, dim);
    assert_close("split of two planes", &got, &want, 0.0);
    // gate|up rows of 2 x 67; values spanning GeGLU's clamps (|x| >= 10).
    let dim = 67;
    let gu: Vec<f32> = rng.vec(rows * 2 * dim).iter().map(|v| v * 12.0).collect();
    let (gate, up) = twin::halves(&gu, dim);
    let n = rows * dim;
    let gx = n.div_ceil(64) as u32;
    let halves = |kern: &Kernel| {
        run(
            ctx,
            kern,
            &[n as u32, dim as u32, gx],
            &[bytes_f32(&vec![0.0; n]), bytes_f32(&gu), bytes_u32(&[0])],
            0,
            (gx, 1),
        )
    };
    assert_close(
        "swiglu_halves",
        &halves(&k.swiglu_halves),
        &twin::swiglu(&gate, &up),
        1e-6,
    );
    // The same values through the unfused GeGLU kernel: both must agree exactly (the twin
    // comparison with its f16-rounding tolerance is scatter_and_geglu_match_twins').
    let unfused = run(
        ctx,
        &k.geglu,
        &[n as u32, dim as u32, gx],
        &[bytes_f32(&gate), bytes_f32(&up), bytes_u32(&[0])],
        0,
        (gx, 1),
    );
    let want = twin::geglu(&gate, &up);
    let got = halves(&k.geglu_halves);
    assert_eq!(&got[..n], &unfused[..n], "geglu_halves vs geglu");
    assert_close("geglu_halves", &got, &want, 2e-3);
}

#[test]
fn scatter_and_geglu_match_twins() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(31);
    let (n, dim, rows_total) = (5usize, 67usize, 12usize);
    let a = rng.vec(n * dim);
    let y = rng.vec(rows_total * dim);
    let dst = [7u32, 0, 11, 3, 4];
    let want = twin::scatter_rows(&y, &a, dim, &dst);
    let (gx, gy) = (((n * dim).div_ceil(64)) as u32, 1);
    let got = run(
        ctx,
        &ctx.kernels.elementwise.scatter,
        &[(n * dim) as u32, dim as u32, gx],
        &[bytes_f32(&y), bytes_f32(&a), bytes_u32(&dst)],
        0,
        (gx, gy),
    );
    assert_eq!(&got[..want.len()], &want[..], "scatter");
    // GeGLU over values spanning the clamps (|x| >= 10), f16 subnormals and normal values.
    let len = 1000;
    let mut gate: Vec<f32> = rng.vec(len).iter().map(|v| v * 12.0).collect();
    gate[0] = 3.0e-6;
    gate[1] = -4.5e-7;
    gate[2] = 10.0;
    gate[3] = -10.0;
    let up = rng.vec(len);
    let want = twin::geglu(&gate, &up);
    let gx = len.div_ceil(64) as u32;
    let got = run(
        ctx,
        &ctx.kernels.elementwise.geglu,
        &[len as u32, len as u32, gx],
        &[bytes_f32(&gate), bytes_f32(&up), bytes_u32(&[0])],
        0,
        (gx, 1),
    );
    // The f16 roundings make values equal; a tanh a few ulp off may flip a rounding by one f16
    // step (2^-11 relative) now and then, nothing more.
    let mut flips = 0;
    for (i, (&g, &w)) in got.iter().zip(&want).enumerate() {
        let d = (g - w).abs();
        if d > 0.0 {
            // Below -3, 1 + tanh(z) cancels in f32 (in ggml too): the bound above covers it.
            flips += usize::from(gate[i] > -3.0);
            // Below ~1e-6 the f32 cancellation in 1 + tanh(z) (ggml's too) dominates.
            assert!(
                d <= w.abs() * 1.0e-3 + 3e-7,
                "geglu[{i}] gate {}: GPU {g} vs twin {w}",
                gate[i]
            );
        }
    }
    assert!(
        flips <= len / 50,
        "geglu: {flips} of {len} values differ from the twin"
    );
}
