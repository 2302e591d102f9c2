//! Block dequantization, bit-exact with ggml's `dequantize_row_*` reference code (ggml-quants.c):
//! each block's f16 scales are widened to f32 and the products are formed in the same order.

use super::GgmlType;
use half::{bf16, f16};

#[inline]
fn f16_at(b: &[u8], i: usize) -> f32 {
    f16::from_bits(u16::from_le_bytes([b[i], b[i + 1]])).to_f32()
}

/// Dequantizes `dst.len()` weights stored as `ty` in `src`.
///
/// Returns an error message when `dst.len()` is not a multiple of the block size or when `src`
/// does not hold exactly the bytes those weights need.
pub fn dequantize_row(ty: GgmlType, src: &[u8], dst: &mut [f32]) -> Result<(), String> {
    let n = dst.len();
    if !n.is_multiple_of(ty.block_size()) {
        return Err(format!(
            "{} weights is not a multiple of the {} block size {}",
            n,
            ty.name(),
            ty.block_size()
        ));
    }
    if src.len() != ty.row_bytes(n) {
        return Err(format!(
            "{} weights of {} need {} bytes, got {}",
            n,
            ty.name(),
            ty.row_bytes(n),
            src.len()
        ));
    }
    let bb = ty.block_bytes();
    let bs = ty.block_size();
    match ty {
        GgmlType::F32 => {
            for (d, c) in dst.iter_mut().zip(src.chunks_exact(4)) {
                *d = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            }
        }
        GgmlType::F16 => {
            for (d, c) in dst.iter_mut().zip(src.chunks_exact(2)) {
                *d = f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32();
            }
        }
        GgmlType::BF16 => {
            for (d, c) in dst.iter_mut().zip(src.chunks_exact(2)) {
                *d = bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f32();
            }
        }
        _ => {
            for (blk, out) in src.chunks_exact(bb).zip(dst.chunks_exact_mut(bs)) {
                match ty {
                    GgmlType::Q4_0 => q4_0(blk, out),
                    GgmlType::Q4_1 => q4_1(blk, out),
                    GgmlType::Q5_0 => q5_0(blk, out),
                    GgmlType::Q5_1 => q5_1(blk, out),
                    GgmlType::Q8_0 => q8_0(blk, out),
                    GgmlType::Q4K => q4_k(blk, out),
                    GgmlType::Q5K => q5_k(blk, out),
                    GgmlType::Q6K => q6_k(blk, out),
                    GgmlType::F32 | GgmlType::F16 | GgmlType::BF16 => {}
                }
            }
        }
    }
    Ok(())
}

// Q4_0: f16 d, 16 bytes of nibbles; low nibbles are weights 0..16, high nibbles 16..32.
fn q4_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let qs = &b[2..18];
    for j in 0..16 {
        y[j] = ((qs[j] & 0x0F) as i32 - 8) as f32 * d;
        y[j + 16] = ((qs[j] >> 4) as i32 - 8) as f32 * d;
    }
}

fn q4_1(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let m = f16_at(b, 2);
    let qs = &b[4..20];
    for j in 0..16 {
        y[j] = (qs[j] & 0x0F) as f32 * d + m;
        y[j + 16] = (qs[j] >> 4) as f32 * d + m;
    }
}

// Q5_0: the fifth bit of weight j is bit j of a little-endian u32.
fn q5_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let qh = u32::from_le_bytes([b[2], b[3], b[4], b[5]]);
    let qs = &b[6..22];
    for j in 0..16 {
        let xh0 = (((qh >> j) << 4) & 0x10) as u8;
        let xh1 = ((qh >> (j + 12)) & 0x10) as u8;
        let x0 = ((qs[j] & 0x0F) | xh0) as i32 - 16;
        let x1 = ((qs[j] >> 4) | xh1) as i32 - 16;
        y[j] = x0 as f32 * d;
        y[j + 16] = x1 as f32 * d;
    }
}

fn q5_1(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let m = f16_at(b, 2);
    let qh = u32::from_le_bytes([b[4], b[5], b[6], b[7]]);
    let qs = &b[8..24];
    for j in 0..16 {
        let xh0 = (((qh >> j) << 4) & 0x10) as u8;
        let xh1 = ((qh >> (j + 12)) & 0x10) as u8;
        let x0 = (qs[j] & 0x0F) | xh0;
        let x1 = (qs[j] >> 4) | xh1;
        y[j] = x0 as f32 * d + m;
        y[j + 16] = x1 as f32 * d + m;
    }
}

fn q8_0(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    for j in 0..32 {
        y[j] = (b[2 + j] as i8) as f32 * d;
    }
}

// The 12 scale bytes of Q4_K/Q5_K pack eight 6-bit (scale, min) pairs.
#[inline]
fn scale_min_k4(j: usize, q: &[u8]) -> (u8, u8) {
    if j < 4 {
        (q[j] & 63, q[j + 4] & 63)
    } else {
        (
            (q[j + 4] & 0x0F) | ((q[j - 4] >> 6) << 4),
            (q[j + 4] >> 4) | ((q[j] >> 6) << 4),
        )
    }
}

fn q4_k(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let dmin = f16_at(b, 2);
    let scales = &b[4..16];
    let qs = &b[16..144];
    for (chunk, (q, out)) in qs.chunks_exact(32).zip(y.chunks_exact_mut(64)).enumerate() {
        let is = chunk * 2;
        let (sc1, m1) = scale_min_k4(is, scales);
        let (sc2, m2) = scale_min_k4(is + 1, scales);
        let (d1, m1) = (d * sc1 as f32, dmin * m1 as f32);
        let (d2, m2) = (d * sc2 as f32, dmin * m2 as f32);
        for l in 0..32 {
            out[l] = d1 * (q[l] & 0x0F) as f32 - m1;
            out[l + 32] = d2 * (q[l] >> 4) as f32 - m2;
        }
    }
}

fn q5_k(b: &[u8], y: &mut [f32]) {
    let d = f16_at(b, 0);
    let dmin = f16_at(b, 2);
    let scales = &b[4..16];
    let qh = &b[16..48];
    let ql = &b[48..176];
    let (mut u1, mut u2) = (1u8, 2u8);
    for (chunk, (q, out)) in ql.chunks_exact(32).zip(y.chunks_exact_mut(64)).enumerate() {
        let is = chunk * 2;
        let (sc1, m1) = scale_min_k4(is, scales);
        let (sc2, m2) = scale_min_k4(is + 1, scales);
        let (d1, m1) = (d * sc1 as f32, dmin * m1 as f32);
        let (d2, m2) = (d * sc2 as f32, dmin * m2 as f32);
        for l in 0..32 {
            let h1 = if qh[l] & u1 != 0 { 16 } else { 0 };
            let h2 = if qh[l] & u2 != 0 { 16 } else { 0 };
            out[l] = d1 * ((q[l] & 0x0F) + h1) as f32 - m1;
            out[l + 32] = d2 * ((q[l] >> 4) + h2) as f32 - m2;
        }
        u1 <<= 2;
        u2 <<= 2;
    }
}

fn q6_k(b: &[u8], y: &mut [f32]) {
    let ql_all = &b[0..128];
    let qh_all = &b[128..192];
    let sc_all = &b[192..208];
    let d = f16_at(b, 208);
    for n in 0..2 {
        let ql = &ql_all[n * 64..n * 64 + 64];
        let qh = &qh_all[n * 32..n * 32 + 32];
        let sc = &sc_all[n * 8..n * 8 + 8];
        let out = &mut y[n * 128..n * 128 + 128];
        for l in 0..32 {
            let is = l / 16;
            let q1 = ((ql[l] & 0x0F) | ((qh[l] & 3) << 4)) as i32 - 32;
            let q2 = ((ql[l + 32] & 0x0F) | (((qh[l] >> 2) & 3) << 4)) as i32 - 32;
            let q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) as i32 - 32;
            let q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) as i32 - 32;
            out[l] = d * (sc[is] as i8) as f32 * q1 as f32;
            out[l + 32] = d * (sc[is + 2] as i8) as f32 * q2 as f32;
            out[l + 64] = d * (sc[is + 4] as i8) as f32 * q3 as f32;
            out[l + 96] = d * (sc[is + 6] as i8) as f32 * q4 as f32;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rejects_wrong_lengths() {
        let mut out = [0f32; 32];
        assert!(dequantize_row(GgmlType::Q8_0, &[0u8; 33], &mut out).is_err());
        let mut out = [0f32; 31];
        assert!(dequantize_row(GgmlType::Q8_0, &[0u8; 34], &mut out).is_err());
    }
}
