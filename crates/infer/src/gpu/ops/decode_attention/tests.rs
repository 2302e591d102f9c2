//! decode_attention.wgsl against its CPU twin on cache ranges.

use super::twin;
use crate::gpu::ops::test_util::{assert_close, bytes_f32, bytes_u32, context, run, Rng};

#[test]
fn decode_attention_matches_twin() {
    let Some(ctx) = context() else { return };
    let mut rng = Rng(23);
    // Cache ranges shorter and longer than the 64-key tiles, one of a single key, windowed ones
    // starting inside a prompt's rows; heads of 24, 100 and 256 values (1, 2 and 4 per thread).
    for (ranges, n_head, n_kv, hd) in [
        (
            vec![(0u32, 0u32), (5, 74), (80, 209), (210, 212)],
            4usize,
            2usize,
            24usize,
        ),
        (vec![(3, 150), (151, 151)], 2, 1, 100),
        (vec![(0, 64), (70, 77)], 2, 2, 256),
    ] {
        let rows = ranges.iter().map(|r| r.1 as usize + 1).max().unwrap_or(1) + 3;
        let n_q = ranges.len();
        let (q_dim, kv_dim) = (n_head * hd, n_kv * hd);
        let q: Vec<f32> = rng.vec(n_q * q_dim).iter().map(|v| v * 2.0).collect();
        let k: Vec<f32> = rng.vec(rows * kv_dim).iter().map(|v| v * 2.0).collect();
        let v = rng.vec(rows * kv_dim);
        let range: Vec<u32> = ranges.iter().flat_map(|&(a, b)| [a, b]).collect();
        let scale = 0.7 / (hd as f32).sqrt();
        let want = twin::decode_attention(&q, &k, &v, &range, n_head, n_kv, hd, scale);
        let words = [
            n_q as u32,
            n_head as u32,
            hd as u32,
            q_dim as u32,
            kv_dim as u32,
            (n_head / n_kv) as u32,
            scale.to_bits(),
        ];
        let got = run(
            ctx,
            &ctx.kernels.decode_attention,
            &words,
            &[
                bytes_f32(&q),
                bytes_f32(&k),
                bytes_f32(&v),
                bytes_u32(&range),
                bytes_f32(&vec![0.0; n_q * q_dim]),
            ],
            4,
            (n_q as u32, n_head as u32),
        );
        assert_close(
            &format!("decode attention {ranges:?} h{n_head}/{n_kv} d{hd}"),
            &got,
            &want,
            2e-5,
        );
    }
}
