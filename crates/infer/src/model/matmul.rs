//! `y = x · Wᵀ` for a block of token activations `x` (T × cols) and a GGUF weight matrix W
//! (rows × cols) in any supported encoding.
//!
//! Work is tiled over (row block × token block): each task dequantizes its rows once into an f32
//! scratch buffer (kept in L2) and reuses them for every token of its block, so weights are never
//! expanded to f32 as a whole. On x86-64 an AVX-512 (4 rows × 6 tokens) or AVX2+FMA (4 rows ×
//! 3 tokens) intrinsics kernel is picked at run time; elsewhere (wasm32 included) a portable
//! kernel computes 2 tokens × 4 rows with 8-lane accumulators that LLVM vectorizes. Attention
//! reuses the same kernels (`gemm_nt`).

use super::parallel::{par_map, threads};
use super::weights::Matrix;

const ROW_BLOCK: usize = 32;
const TOKEN_BLOCK: usize = 256;
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

/// AVX2+FMA kernel: 4 weight rows × 3 tokens of 8-lane accumulators (12 of the 16 ymm
/// registers), one weight vector streamed at a time.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::*;

    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn hsum(v: __m256) -> f32 {
        let lo = _mm256_castps256_ps128(v);
        let hi = _mm256_extractf128_ps(v, 1);
        let s = _mm_add_ps(lo, hi);
        let sh = _mm_movehdup_ps(s);
        let s2 = _mm_add_ps(s, sh);
        let hi64 = _mm_movehl_ps(sh, s2);
        _mm_cvtss_f32(_mm_add_ss(s2, hi64))
    }

    /// # Safety
    /// The CPU must support AVX2 and FMA. `x` holds `n_tok × k` and `w` `n_rows × k` floats,
    /// `out` `n_tok × n_rows` (checked below).
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn block(
        x: &[f32],
        n_tok: usize,
        w: &[f32],
        n_rows: usize,
        k: usize,
        out: &mut [f32],
    ) {
        assert!(x.len() >= n_tok * k && w.len() >= n_rows * k && out.len() >= n_tok * n_rows);
        if n_tok == 0 || n_rows == 0 {
            return;
        }
        let k8 = k / 8 * 8;
        let mut t = 0;
        while t < n_tok {
            let nt = (n_tok - t).min(3);
            // Missing tokens/rows of an edge tile repeat the last valid one; their sums are dropped.
            let xp = [0usize, 1, 2].map(|i| x[(t + i.min(nt - 1)) * k..].as_ptr());
            let mut r = 0;
            while r < n_rows {
                let nr = (n_rows - r).min(4);
                let wp = [0usize, 1, 2, 3].map(|i| w[(r + i.min(nr - 1)) * k..].as_ptr());
                let mut acc = [[_mm256_setzero_ps(); 3]; 4];
                let mut c = 0;
                while c < k8 {
                    // SAFETY: c + 8 <= k and every pointer starts a row of k floats.
                    let (x0, x1, x2) = unsafe {
                        (
                            _mm256_loadu_ps(xp[0].add(c)),
                            _mm256_loadu_ps(xp[1].add(c)),
                            _mm256_loadu_ps(xp[2].add(c)),
                        )
                    };
                    for i in 0..4 {
                        // SAFETY: as above.
                        let wv = unsafe { _mm256_loadu_ps(wp[i].add(c)) };
                        acc[i][0] = _mm256_fmadd_ps(wv, x0, acc[i][0]);
                        acc[i][1] = _mm256_fmadd_ps(wv, x1, acc[i][1]);
                        acc[i][2] = _mm256_fmadd_ps(wv, x2, acc[i][2]);
                    }
                    c += 8;
                }
                for (i, acc_row) in acc.iter().enumerate().take(nr) {
                    let wrow = &w[(r + i) * k..(r + i + 1) * k];
                    for (j, &a) in acc_row.iter().enumerate().take(nt) {
                        let xrow = &x[(t + j) * k..(t + j + 1) * k];
                        let mut s = hsum(a);
                        for cc in k8..k {
                            s = wrow[cc].mul_add(xrow[cc], s);
                        }
                        out[(t + j) * n_rows + r + i] = s;
                    }
                }
                r += 4;
            }
            t += 3;
        }
    }
}

/// AVX-512 kernel: 4 weight rows × 6 tokens of 16-lane accumulators (24 of the 32 zmm registers).
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use std::arch::x86_64::*;

    /// # Safety
    /// The CPU must support AVX-512F. Slice sizes are checked as in the AVX2 kernel.
    #[target_feature(enable = "avx512f")]
    pub(super) unsafe fn block(
        x: &[f32],
        n_tok: usize,
        w: &[f32],
        n_rows: usize,
        k: usize,
        out: &mut [f32],
    ) {
        assert!(x.len() >= n_tok * k && w.len() >= n_rows * k && out.len() >= n_tok * n_rows);
        if n_tok == 0 || n_rows == 0 {
            return;
        }
        let k16 = k / 16 * 16;
        let mut t = 0;
        while t < n_tok {
            let nt = (n_tok - t).min(6);
            let xp = [0usize, 1, 2, 3, 4, 5].map(|i| x[(t + i.min(nt - 1)) * k..].as_ptr());
            let mut r = 0;
            while r < n_rows {
                let nr = (n_rows - r).min(4);
                let wp = [0usize, 1, 2, 3].map(|i| w[(r + i.min(nr - 1)) * k..].as_ptr());
                let mut acc = [[_mm512_setzero_ps(); 6]; 4];
                let mut c = 0;
                while c < k16 {
                    // SAFETY: c + 16 <= k and every pointer starts a row of k floats.
                    let xs = unsafe { [0, 1, 2, 3, 4, 5].map(|j| _mm512_loadu_ps(xp[j].add(c))) };
                    for i in 0..4 {
                        // SAFETY: as above.
                        let wv = unsafe { _mm512_loadu_ps(wp[i].add(c)) };
                        for j in 0..6 {
                            acc[i][j] = _mm512_fmadd_ps(wv, xs[j], acc[i][j]);
                        }
                    }
                    c += 16;
                }
                for (i, acc_row) in acc.iter().enumerate().take(nr) {
                    let wrow = &w[(r + i) * k..(r + i + 1) * k];
                    for (j, &a) in acc_row.iter().enumerate().take(nt) {
                        let xrow = &x[(t + j) * k..(t + j + 1) * k];
                        let mut s = _mm512_reduce_add_ps(a);
                        for cc in k16..k {
                            s = wrow[cc].mul_add(xrow[cc], s);
                        }
                        out[(t + j) * n_rows + r + i] = s;
                    }
                }
                r += 4;
            }
            t += 6;
        }
    }
}

/// `out (n_tok × n_rows) = x (n_tok × k) · w (n_rows × k)ᵀ` for f32 operands, on the calling
/// thread (used inside already-parallel attention tasks).
pub(crate) fn gemm_nt(
    x: &[f32],
    n_tok: usize,
    w: &[f32],
    n_rows: usize,
    k: usize,
    out: &mut [f32],
) {
    block_dispatch(x, n_tok, w, n_rows, k, out)
}

fn block_dispatch(x: &[f32], n_tok: usize, w: &[f32], n_rows: usize, k: usize, out: &mut [f32]) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU supports the feature the function was compiled for.
            unsafe { avx512::block(x, n_tok, w, n_rows, k, out) };
            return;
        }
        if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports the features the function was compiled for.
            unsafe { avx2::block(x, n_tok, w, n_rows, k, out) };
            return;
        }
    }
    #[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
    {
        super::matmul_wasm::block(x, n_tok, w, n_rows, k, out);
    }
    #[cfg(not(all(target_arch = "wasm32", target_feature = "simd128")))]
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

/// Pseudo-random values in [-0.5, 0.5) (an LCG: the same on every target).
fn test_values(n: usize, state: &mut u32) -> Vec<f32> {
    (0..n)
        .map(|_| {
            *state = state.wrapping_mul(1664525).wrapping_add(1013904223);
            (*state >> 8) as f32 / (1u32 << 24) as f32 - 0.5
        })
        .collect()
}

/// Shapes with ragged edges: tokens not a multiple of 2 or 3, rows not a multiple of 3 or 4,
/// `k` not a multiple of 8, and SmolLM2's widths (576, 1536).
const TEST_SHAPES: [(usize, usize, usize); 8] = [
    (1, 1, 1),
    (5, 7, 13),
    (3, 4, 8),
    (7, 9, 70),
    (2, 33, 64),
    (4, 5, 576),
    (3, 32, 1536),
    (9, 10, 37),
];

/// Where the dispatched kernel (the simd128 one on wasm32) differs from the portable kernel it
/// twins, bit for bit: `None` when it never does. Values come from `test_values`, plus rows of
/// large and tiny magnitudes so that a change in summation order would show.
pub(crate) fn dispatched_kernel_mismatch() -> Option<String> {
    let mut state = 777u32;
    for &(n_tok, n_rows, k) in &TEST_SHAPES {
        let mut x = test_values(n_tok * k, &mut state);
        let w = test_values(n_rows * k, &mut state);
        for (i, v) in x.iter_mut().enumerate() {
            *v *= [1.0, 1e6, 1e-6][i % 3];
        }
        let mut portable = vec![0f32; n_tok * n_rows];
        block::<Plain>(&x, n_tok, &w, n_rows, k, &mut portable);
        let mut dispatched = vec![f32::NAN; n_tok * n_rows];
        block_dispatch(&x, n_tok, &w, n_rows, k, &mut dispatched);
        for (i, (a, b)) in portable.iter().zip(&dispatched).enumerate() {
            if a.to_bits() != b.to_bits() {
                return Some(format!(
                    "{n_tok}x{n_rows}x{k} [{i}]: portable {a:e}, dispatched {b:e}"
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(x: &[f32], n_tok: usize, w: &[f32], n_rows: usize, k: usize) -> Vec<f64> {
        let mut out = vec![0f64; n_tok * n_rows];
        for t in 0..n_tok {
            for r in 0..n_rows {
                out[t * n_rows + r] = (0..k)
                    .map(|c| x[t * k + c] as f64 * w[r * k + c] as f64)
                    .sum();
            }
        }
        out
    }

    // Both kernels agree with a float64 dot product on shapes with ragged edges.
    #[test]
    fn kernels_match_a_plain_dot_product() {
        let mut state = 12345u32;
        for &(n_tok, n_rows, k) in &TEST_SHAPES {
            let x = test_values(n_tok * k, &mut state);
            let w = test_values(n_rows * k, &mut state);
            let want = naive(&x, n_tok, &w, n_rows, k);
            let mut portable = vec![0f32; n_tok * n_rows];
            block::<Plain>(&x, n_tok, &w, n_rows, k, &mut portable);
            let mut dispatched = vec![0f32; n_tok * n_rows];
            block_dispatch(&x, n_tok, &w, n_rows, k, &mut dispatched);
            #[cfg(target_arch = "x86_64")]
            if std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") {
                let mut a2 = vec![0f32; n_tok * n_rows];
                // SAFETY: features checked just above.
                unsafe { avx2::block(&x, n_tok, &w, n_rows, k, &mut a2) };
                for i in 0..want.len() {
                    assert!(
                        (a2[i] as f64 - want[i]).abs() < 1e-5,
                        "avx2 {n_tok}x{n_rows}x{k} [{i}]"
                    );
                }
            }
            for i in 0..want.len() {
                assert!(
                    (portable[i] as f64 - want[i]).abs() < 1e-5,
                    "portable {n_tok}x{n_rows}x{k} [{i}]"
                );
                assert!(
                    (dispatched[i] as f64 - want[i]).abs() < 1e-5,
                    "dispatched {n_tok}x{n_rows}x{k} [{i}]"
                );
            }
        }
    }
}

#[cfg(all(test, not(target_arch = "wasm32")))]
mod twin_tests {
    // Natively the dispatched kernel is AVX-512/AVX2 (fused multiply-adds, other lane counts),
    // so the bit-for-bit check only holds where none is picked; the wasm32 twin is checked by
    // tests/wasm/tests/cpu_kernels_in_browser.rs and before every `cargo xtask bench wasm-cpu`.
    #[test]
    fn the_twin_check_finds_a_changed_summation() {
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            // AVX2/AVX-512 fuse and sum 8/16 lanes otherwise: the check must see it.
            assert!(super::dispatched_kernel_mismatch().is_some());
            return;
        }
        assert_eq!(super::dispatched_kernel_mismatch(), None);
    }
}
