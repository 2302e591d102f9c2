//! `y = x · Wᵀ` for a block of token activations `x` (T × cols) and a GGUF weight matrix W
//! (rows × cols) in any supported encoding.
//!
//! Work is tiled over (row block × token block): each task dequantizes its rows once into an f32
//! scratch buffer (kept in L2) and reuses them for every token of its block, so weights are never
//! expanded to f32 as a whole. The inner kernel computes 2 tokens × 4 rows with 8-lane
//! accumulators that LLVM vectorizes; on x86-64 with AVX2+FMA a `target_feature` copy of the same
//! code is selected at run time.

use super::parallel::{par_map, threads};
use super::weights::Matrix;

const ROW_BLOCK: usize = 32;
const TOKEN_BLOCK: usize = 64;
const LANES: usize = 8;

trait Madd {
    fn madd(a: f32, b: f32, c: f32) -> f32;
}
struct Plain;
impl Madd for Plain {
    #[inline(always)]
    fn madd(a: f32, b: f32, c: f32) -> f32 {
        a * b + c
    }
}
#[cfg(target_arch = "x86_64")]
struct Fused;
#[cfg(target_arch = "x86_64")]
impl Madd for Fused {
    #[inline(always)]
    fn madd(a: f32, b: f32, c: f32) -> f32 {
        a.mul_add(b, c)
    }
}

#[inline(always)]
fn reduce(acc: &[f32; LANES]) -> f32 {
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7]))
}

/// Dot products of up to 2 activation rows with up to 4 weight rows.
#[inline(always)]
fn tile<M: Madd>(xs: [&[f32]; 2], ws: [&[f32]; 4], out: &mut [[f32; 4]; 2]) {
    let k = xs[0].len();
    let full = k / LANES * LANES;
    let mut acc = [[[0f32; LANES]; 4]; 2];
    let mut c = 0;
    while c < full {
        let x0: &[f32; LANES] = xs[0][c..c + LANES].try_into().unwrap_or(&[0.0; LANES]);
        let x1: &[f32; LANES] = xs[1][c..c + LANES].try_into().unwrap_or(&[0.0; LANES]);
        for r in 0..4 {
            let w: &[f32; LANES] = ws[r][c..c + LANES].try_into().unwrap_or(&[0.0; LANES]);
            for l in 0..LANES {
                acc[0][r][l] = M::madd(x0[l], w[l], acc[0][r][l]);
                acc[1][r][l] = M::madd(x1[l], w[l], acc[1][r][l]);
            }
        }
        c += LANES;
    }
    for t in 0..2 {
        for r in 0..4 {
            let mut s = reduce(&acc[t][r]);
            for i in full..k {
                s = M::madd(xs[t][i], ws[r][i], s);
            }
            out[t][r] = s;
        }
    }
}

/// Computes `out[t][r]` for the tokens in `x_rows` and the rows in `w_rows` (f32, `k` each).
#[inline(always)]
fn block<M: Madd>(x: &[f32], n_tok: usize, w: &[f32], n_rows: usize, k: usize, out: &mut [f32]) {
    let zero = vec![0f32; k];
    let mut t = 0;
    while t < n_tok {
        let x0 = &x[t * k..(t + 1) * k];
        let x1 = if t + 1 < n_tok {
            &x[(t + 1) * k..(t + 2) * k]
        } else {
            &zero[..]
        };
        let mut r = 0;
        while r < n_rows {
            let row = |i: usize| {
                if r + i < n_rows {
                    &w[(r + i) * k..(r + i + 1) * k]
                } else {
                    &zero[..]
                }
            };
            let mut o = [[0f32; 4]; 2];
            tile::<M>([x0, x1], [row(0), row(1), row(2), row(3)], &mut o);
            for (dt, orow) in o.iter().enumerate() {
                if t + dt < n_tok {
                    for (dr, &v) in orow.iter().enumerate() {
                        if r + dr < n_rows {
                            out[(t + dt) * n_rows + r + dr] = v;
                        }
                    }
                }
            }
            r += 4;
        }
        t += 2;
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn block_avx2(x: &[f32], n_tok: usize, w: &[f32], n_rows: usize, k: usize, out: &mut [f32]) {
    block::<Fused>(x, n_tok, w, n_rows, k, out)
}

fn block_dispatch(x: &[f32], n_tok: usize, w: &[f32], n_rows: usize, k: usize, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports the features the function was compiled for.
            unsafe { block_avx2(x, n_tok, w, n_rows, k, out) };
            return;
        }
    }
    block::<Plain>(x, n_tok, w, n_rows, k, out)
}

/// `x` is `n_tok × w.cols` (row-major); returns `n_tok × w.rows`.
pub(crate) fn matmul(x: &[f32], n_tok: usize, w: &Matrix) -> Vec<f32> {
    let k = w.cols;
    debug_assert_eq!(x.len(), n_tok * k);
    let n_rows = w.rows;
    let row_blocks = n_rows.div_ceil(ROW_BLOCK);
    // Small batches: shrink token blocks so every thread still gets work.
    let mut tok_block = TOKEN_BLOCK;
    while tok_block > 8 && row_blocks * n_tok.div_ceil(tok_block) < threads() * 4 {
        tok_block /= 2;
    }
    let tok_blocks = n_tok.div_ceil(tok_block);
    let results = par_map(row_blocks * tok_blocks, |task| {
        let (rb, tb) = (task / tok_blocks, task % tok_blocks);
        let r0 = rb * ROW_BLOCK;
        let nr = ROW_BLOCK.min(n_rows - r0);
        let t0 = tb * tok_block;
        let nt = tok_block.min(n_tok - t0);
        let mut wbuf = vec![0f32; nr * k];
        w.dequantize_rows(r0, &mut wbuf);
        let mut out = vec![0f32; nt * nr];
        block_dispatch(&x[t0 * k..(t0 + nt) * k], nt, &wbuf, nr, k, &mut out);
        out
    });
    let mut y = vec![0f32; n_tok * n_rows];
    for (task, out) in results.into_iter().enumerate() {
        let (rb, tb) = (task / tok_blocks, task % tok_blocks);
        let r0 = rb * ROW_BLOCK;
        let nr = ROW_BLOCK.min(n_rows - r0);
        let t0 = tb * tok_block;
        for (dt, src) in out.chunks_exact(nr).enumerate() {
            let dst = (t0 + dt) * n_rows + r0;
            y[dst..dst + nr].copy_from_slice(src);
        }
    }
    y
}
