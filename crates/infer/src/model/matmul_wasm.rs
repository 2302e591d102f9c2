//! wasm32 `simd128` twin of the portable kernel (`matmul::block::<Plain>`), bit for bit.
//!
//! Under wasm32 the portable kernel is the whole of prefill (95% of a SmolLM2 prefill's samples
//! in Node's profiler; dequantizing the weight rows is 0.5%) and LLVM does not vectorize it
//! across its 8 accumulator lanes, so this kernel does it by hand: `R` weight rows × `T`
//! tokens, each (row, token) pair holding the portable kernel's 8 lanes as two `f32x4`
//! accumulators. Every lane sees the same products added in the same order (`acc + x·w`, no
//! fused multiply-add: plain simd128 has none), the lanes are reduced as `reduce` does
//! (((a0+a4)+(a1+a5))+((a2+a6)+(a3+a7))) and the tail `k % 8` columns are added one by one, so
//! the result equals the portable kernel's exactly (tested in `matmul::tests`). Relaxed SIMD's
//! `f32x4_relaxed_madd` would fuse (a different rounding, and a module that fails to compile
//! where the engine lacks relaxed SIMD: wasm has no run-time feature test inside one module).

use core::arch::wasm32::*;

/// `out (n_tok × n_rows) = x (n_tok × k) · w (n_rows × k)ᵀ`, as `matmul::block::<Plain>`. 3 rows ×
/// 2 tokens (12 accumulators): with SmolLM2-135M Q4_1 in Node 20 on a loaded 2-core EPYC,
/// 43 tokens/s against 40 for 2×2, 39 for 2×4 and 4×2, 43 for 2×3 (all within the noise).
pub(super) fn block(x: &[f32], n_tok: usize, w: &[f32], n_rows: usize, k: usize, out: &mut [f32]) {
    tiled::<3, 2>(x, n_tok, w, n_rows, k, out)
}

#[inline(always)]
fn tiled<const R: usize, const T: usize>(
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
        let nt = (n_tok - t).min(T);
        // Missing tokens/rows of an edge tile repeat the last valid one; their sums are dropped.
        let xp: [*const f32; T] = core::array::from_fn(|j| x[(t + j.min(nt - 1)) * k..].as_ptr());
        let mut r = 0;
        while r < n_rows {
            let nr = (n_rows - r).min(R);
            let wp: [*const f32; R] =
                core::array::from_fn(|i| w[(r + i.min(nr - 1)) * k..].as_ptr());
            let mut lo = [[f32x4_splat(0.0); T]; R];
            let mut hi = [[f32x4_splat(0.0); T]; R];
            let mut c = 0;
            while c < k8 {
                // SAFETY: c + 8 <= k and every pointer starts a row of k floats within its
                // slice (asserted above); v128_load has no alignment requirement.
                let (xl, xh): ([v128; T], [v128; T]) = unsafe {
                    (
                        core::array::from_fn(|j| v128_load(xp[j].add(c) as *const v128)),
                        core::array::from_fn(|j| v128_load(xp[j].add(c + 4) as *const v128)),
                    )
                };
                for i in 0..R {
                    // SAFETY: as above.
                    let (wl, wh) = unsafe {
                        (
                            v128_load(wp[i].add(c) as *const v128),
                            v128_load(wp[i].add(c + 4) as *const v128),
                        )
                    };
                    for j in 0..T {
                        lo[i][j] = f32x4_add(lo[i][j], f32x4_mul(xl[j], wl));
                        hi[i][j] = f32x4_add(hi[i][j], f32x4_mul(xh[j], wh));
                    }
                }
                c += 8;
            }
            for i in 0..nr {
                let wrow = &w[(r + i) * k..(r + i + 1) * k];
                for j in 0..nt {
                    let xrow = &x[(t + j) * k..(t + j + 1) * k];
                    let s4 = f32x4_add(lo[i][j], hi[i][j]);
                    let mut s = (f32x4_extract_lane::<0>(s4) + f32x4_extract_lane::<1>(s4))
                        + (f32x4_extract_lane::<2>(s4) + f32x4_extract_lane::<3>(s4));
                    for cc in k8..k {
                        s += xrow[cc] * wrow[cc];
                    }
                    out[(t + j) * n_rows + r + i] = s;
                }
            }
            r += R;
        }
        t += T;
    }
}
