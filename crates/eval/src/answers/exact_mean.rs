//! The correctly rounded mean of f64 values, as Python's `statistics.mean` computes it
//! (exact rational sum, one rounding at the end). nuggetizer averages its per-topic scores with
//! `statistics.mean`; `sum / n` would differ from it in the last bit on many inputs.
//!
//! Written by hand (no crate does exactly this): every finite f64 is an integer multiple of
//! 2^-1074, so the sum is an exact fixed-point big integer (36 64-bit limbs cover 2^1024 times
//! 2^64 values), divided once by n and rounded half to even.

const LIMBS: usize = 36;
type Big = [u64; LIMBS];

fn add_shifted(acc: &mut Big, mantissa: u64, shift: u32) {
    let limb = (shift / 64) as usize;
    let bit = shift % 64;
    let wide = (mantissa as u128) << bit;
    let mut carry = 0u128;
    for (i, part) in [wide as u64, (wide >> 64) as u64].into_iter().enumerate() {
        let s = acc[limb + i] as u128 + part as u128 + carry;
        acc[limb + i] = s as u64;
        carry = s >> 64;
    }
    let mut i = limb + 2;
    while carry != 0 && i < LIMBS {
        let s = acc[i] as u128 + carry;
        acc[i] = s as u64;
        carry = s >> 64;
        i += 1;
    }
}

fn cmp(a: &Big, b: &Big) -> std::cmp::Ordering {
    for i in (0..LIMBS).rev() {
        match a[i].cmp(&b[i]) {
            std::cmp::Ordering::Equal => continue,
            o => return o,
        }
    }
    std::cmp::Ordering::Equal
}

fn sub(a: &Big, b: &Big) -> Big {
    let mut out = [0u64; LIMBS];
    let mut borrow = 0u64;
    for i in 0..LIMBS {
        let (d1, b1) = a[i].overflowing_sub(b[i]);
        let (d2, b2) = d1.overflowing_sub(borrow);
        out[i] = d2;
        borrow = u64::from(b1 || b2);
    }
    out
}

fn bit(a: &Big, i: usize) -> bool {
    (a[i / 64] >> (i % 64)) & 1 == 1
}

fn pow2(e: i32) -> f64 {
    if e >= -1022 {
        f64::from_bits(((e + 1023) as u64) << 52)
    } else {
        f64::from_bits(1u64 << (e + 1074))
    }
}

/// The mean of `values` rounded once (half to even); NaN for an empty slice or a non-finite
/// value.
pub fn mean(values: &[f64]) -> f64 {
    if values.is_empty() || values.iter().any(|v| !v.is_finite()) {
        return f64::NAN;
    }
    let (mut pos, mut neg) = ([0u64; LIMBS], [0u64; LIMBS]);
    for &v in values {
        let bits = v.to_bits();
        let exp = ((bits >> 52) & 0x7ff) as u32;
        let frac = bits & ((1u64 << 52) - 1);
        // value = mantissa · 2^(shift − 1074)
        let (mantissa, shift) = if exp == 0 {
            (frac, 0)
        } else {
            (frac | (1u64 << 52), exp - 1)
        };
        if mantissa == 0 {
            continue;
        }
        let acc = if v < 0.0 { &mut neg } else { &mut pos };
        add_shifted(acc, mantissa, shift);
    }
    let (negative, total) = match cmp(&pos, &neg) {
        std::cmp::Ordering::Less => (true, sub(&neg, &pos)),
        _ => (false, sub(&pos, &neg)),
    };
    // Long division by n.
    let n = values.len() as u128;
    let mut q = [0u64; LIMBS];
    let mut r = 0u128;
    for i in (0..LIMBS).rev() {
        let cur = (r << 64) | total[i] as u128;
        q[i] = (cur / n) as u64;
        r = cur % n;
    }
    let Some(top) = (0..LIMBS * 64).rev().find(|&i| bit(&q, i)) else {
        // |mean| < 2^-1074: 0 or the smallest subnormal.
        let up = 2 * r > n;
        let v = if up { pow2(-1074) } else { 0.0 };
        return if negative { -v } else { v };
    };
    let shift = top.saturating_sub(52);
    let mut m = 0u64;
    for i in (shift..=top).rev() {
        m = (m << 1) | u64::from(bit(&q, i));
    }
    let round_up = if shift == 0 {
        2 * r > n || (2 * r == n && m & 1 == 1)
    } else {
        let half = bit(&q, shift - 1);
        let below = (0..shift - 1).any(|i| bit(&q, i)) || r != 0;
        half && (below || m & 1 == 1)
    };
    if round_up {
        m += 1;
    }
    let v = m as f64 * pow2(shift as i32 - 1074);
    if negative {
        -v
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::mean;

    #[test]
    fn exact_where_naive_sum_is_not() {
        // 0.1 + 0.2 + 0.3 = 0.6000000000000001 in floats; the exact mean of the three doubles
        // rounds to 0.2 (Python: statistics.mean([0.1, 0.2, 0.3]) == 0.2).
        assert_eq!(mean(&[0.1, 0.2, 0.3]), 0.2);
        assert_ne!((0.1 + 0.2 + 0.3) / 3.0, 0.2);
        assert_eq!(mean(&[1.0, 0.5]), 0.75);
        assert_eq!(mean(&[-1.0, 0.25]), -0.375);
        assert_eq!(mean(&[1e308, 1e308]), 1e308);
        assert_eq!(mean(&[5e-324, 0.0]), 0.0); // exactly half the smallest subnormal: to even
        assert_eq!(mean(&[5e-324, 5e-324, 5e-324, 0.0]), 5e-324);
        assert!(mean(&[]).is_nan());
        // statistics.mean([1/3, 2/3, 0.7]) == 0.5666666666666667
        assert_eq!(mean(&[1.0 / 3.0, 2.0 / 3.0, 0.7]), 0.5666666666666667);
    }
}
