//! attention.wgsl (and its 256-value form) against its CPU twin on packed prompts.

use super::twin;
use crate::gpu::ops::test_util::{assert_close, bytes_f32, bytes_u32, context, run, Rng};

#[test]
fn attention_matches_twin_on_packed_prompts() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(17);
    // Prompt lengths straddle the 64-token workgroups and the 8-key tiles (4 keys for 256-wide
    // heads); a sliding window (Gemma 3's local layers) shorter than some prompts.
    for (lens, n_head, n_kv, hd, window) in [
        (vec![1usize, 70, 5, 3], 4usize, 2usize, 24usize, 0usize),
        (vec![9, 130], 2, 1, 64, 0),
        (vec![3, 2], 3, 3, 128, 0),
        (vec![40, 7, 75], 2, 1, 40, 13),
        (vec![11, 6], 2, 1, 256, 5),
        (vec![20, 3], 2, 2, 136, 0),
    ] {
        let n_tok: usize = lens.iter().sum();
        let mut start = Vec::new();
        let mut s = 0u32;
        for &l in &lens {
            start.extend(std::iter::repeat_n(s, l));
            s += l as u32;
        }
        let (q_dim, kv_dim) = (n_head * hd, n_kv * hd);
        let q: Vec<f32> = rng.vec(n_tok * q_dim).iter().map(|v| v * 2.0).collect();
        let k: Vec<f32> = rng.vec(n_tok * kv_dim).iter().map(|v| v * 2.0).collect();
        let v = rng.vec(n_tok * kv_dim);
        let scale = 1.0 / (hd as f32).sqrt();
        let want = twin::attention(&q, &k, &v, &start, n_head, n_kv, hd, scale, window);
        let words = [
            n_tok as u32,
            n_head as u32,
            hd as u32,
            q_dim as u32,
            kv_dim as u32,
            (n_head / n_kv) as u32,
            scale.to_bits(),
            window as u32,
        ];
        let kernel = if hd > 128 {
            &ctx.kernels.attention.wide
        } else {
            &ctx.kernels.attention.normal
        };
        let got = run(
            ctx,
            kernel,
            &words,
            &[
                bytes_f32(&q),
                bytes_f32(&k),
                bytes_f32(&v),
                bytes_u32(&start),
                bytes_f32(&vec![0.0; n_tok * q_dim]),
            ],
            4,
            (n_tok.div_ceil(64) as u32, n_head as u32),
        );
        assert_close(
            &format!("attention {lens:?} h{n_head}/{n_kv} d{hd} window {window}"),
            &got,
            &want,
            1e-5,
        );
    }
}
