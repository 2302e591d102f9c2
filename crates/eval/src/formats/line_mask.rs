//! The fields of a line found from two bit masks over a 64-byte window (SSE2, which every
//! x86-64 CPU has; wasm's SIMD, which the wasm builds enable): one bit per whitespace byte,
//! one per `\n`. Field starts and ends are the edges of the runs of non-whitespace bits below
//! the first `\n`, read off with `trailing_zeros`. The scalar path
//! ([`super::lines::fields_bytewise`]) tests the bytes of a field eight at a time, then each
//! byte of whitespace, with a branch at every field edge; a run line (six fields, ~35 bytes)
//! takes 4 vector loads and compares here instead.
//!
//! Same answers as the scalar path for every line it takes (a property test below compares
//! them at every offset of random blocks); a line longer than 63 bytes, or closer than 64
//! bytes to the block's end, is left to it, as is every line on other targets. "Whitespace"
//! is C's `isspace` in the "C" locale ([`super::lines::is_space`]): space, `\t`, `\n`,
//! `\v`, `\f`, `\r`.
//!
//! Hand-written because no crate splits on a class of bytes this way (memchr finds one to
//! three given bytes, not their runs).

/// Fields as `(start, end)` offsets in the block, and the offset just past the line.
pub(crate) type LineFields<const N: usize> = ([(usize, usize); N], usize);

/// The first `N` fields of the line at `at` (whose first byte is no whitespace), as
/// [`super::lines::block_fields`] splits them: `Some(None)` where it says `None` (fewer than
/// `N` fields, or more when `exact`), and `None` when the line's `\n` is not within 64 bytes
/// of `at`, the block ends sooner, or the target has no SIMD here (the caller splits it byte
/// by byte).
#[inline(always)]
pub(crate) fn fields_within_64<const N: usize>(
    block: &[u8],
    at: usize,
    exact: bool,
) -> Option<Option<LineFields<N>>> {
    let window: &[u8; 64] = block.get(at..at.checked_add(64)?)?.try_into().ok()?;
    let (space, newline) = masks(window)?;
    if newline == 0 {
        return None;
    }
    let end = newline.trailing_zeros();
    let text = !space & ((1u64 << end) - 1);
    let mut starts = text & !(text << 1);
    let mut ends = text & !(text >> 1);
    // (no `count_ones`: x86-64 without POPCNT counts bits in a dozen instructions)
    let mut fields = [(0, 0); N];
    for field in &mut fields {
        if starts == 0 {
            return Some(None);
        }
        *field = (
            at + starts.trailing_zeros() as usize,
            at + ends.trailing_zeros() as usize + 1,
        );
        starts &= starts - 1;
        ends &= ends - 1;
    }
    if exact && starts != 0 {
        return Some(None);
    }
    Some(Some((fields, at + end as usize + 1)))
}

/// Bit `i` of the first mask is set when `window[i]` is whitespace, of the second when it is
/// `\n`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn masks(window: &[u8; 64]) -> Option<(u64, u64)> {
    use std::arch::x86_64::{
        __m128i, _mm_and_si128, _mm_cmpeq_epi8, _mm_cmpgt_epi8, _mm_cmplt_epi8, _mm_loadu_si128,
        _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
    };
    let mut space = 0u64;
    let mut newline = 0u64;
    for (k, sixteen) in window.chunks_exact(16).enumerate() {
        // SAFETY: SSE2 is part of x86-64 (every x86_64 target enables it), and `sixteen` is
        // 16 readable bytes (`loadu` takes any alignment).
        let (spaces, newlines) = unsafe {
            let x = _mm_loadu_si128(sixteen.as_ptr().cast::<__m128i>());
            // bytes 0x09..=0x0d or 0x20 (signed compares: bytes from 0x80 are negative)
            let controls = _mm_and_si128(
                _mm_cmpgt_epi8(x, _mm_set1_epi8(0x08)),
                _mm_cmplt_epi8(x, _mm_set1_epi8(0x0e)),
            );
            let spaces = _mm_or_si128(controls, _mm_cmpeq_epi8(x, _mm_set1_epi8(0x20)));
            let newlines = _mm_cmpeq_epi8(x, _mm_set1_epi8(b'\n' as i8));
            (_mm_movemask_epi8(spaces), _mm_movemask_epi8(newlines))
        };
        space |= u64::from(spaces as u16) << (16 * k);
        newline |= u64::from(newlines as u16) << (16 * k);
    }
    Some((space, newline))
}

/// [`masks`] with wasm's 128-bit SIMD.
#[cfg(all(target_arch = "wasm32", target_feature = "simd128"))]
#[inline(always)]
fn masks(window: &[u8; 64]) -> Option<(u64, u64)> {
    use std::arch::wasm32::{
        i8x16_bitmask, i8x16_eq, i8x16_gt, i8x16_lt, i8x16_splat, v128, v128_and, v128_load,
        v128_or,
    };
    let mut space = 0u64;
    let mut newline = 0u64;
    for (k, sixteen) in window.chunks_exact(16).enumerate() {
        // SAFETY: `sixteen` is 16 readable bytes; `v128_load` takes any alignment.
        let x = unsafe { v128_load(sixteen.as_ptr().cast::<v128>()) };
        let controls = v128_and(
            i8x16_gt(x, i8x16_splat(0x08)),
            i8x16_lt(x, i8x16_splat(0x0e)),
        );
        let spaces = v128_or(controls, i8x16_eq(x, i8x16_splat(0x20)));
        let newlines = i8x16_eq(x, i8x16_splat(b'\n' as i8));
        space |= u64::from(i8x16_bitmask(spaces)) << (16 * k);
        newline |= u64::from(i8x16_bitmask(newlines)) << (16 * k);
    }
    Some((space, newline))
}

/// No masks without SIMD: every line is split byte by byte.
#[cfg(not(any(
    target_arch = "x86_64",
    all(target_arch = "wasm32", target_feature = "simd128")
)))]
#[inline(always)]
fn masks(_: &[u8; 64]) -> Option<(u64, u64)> {
    None
}

/// Bytes that matter to the split, for random test blocks: every whitespace byte, other
/// control bytes, `#`, bytes from 0x80, digits, letters.
#[doc(hidden)]
pub const TEST_BYTES: [u8; 22] = [
    b' ', b'\t', b'\n', b'\r', 0x0b, 0x0c, 0x00, 0x01, 0x08, 0x0e, 0x1f, 0x21, b'#', 0x7f, 0x80,
    0xa0, 0xff, b'0', b'.', b'-', b'q', b'Q',
];

/// Compares this split with the byte-by-byte one at every offset of `block` that could start
/// a line (N = 6, and N = 4 exact); returns how many offsets this one took. For tests, the
/// property test below and a wasm32 one in headless Chromium (tests/wasm): 0 where there is
/// no mask split (a wasm build without SIMD).
#[doc(hidden)]
pub fn compare_with_bytewise(block: &[u8]) -> Result<usize, String> {
    use super::lines::{fields_bytewise, is_space};
    let mut taken = 0;
    for at in 0..block.len() {
        if block[at] == b'#' || is_space(block[at]) {
            continue;
        }
        if let Some(fast) = fields_within_64::<6>(block, at, false) {
            let slow = fields_bytewise::<6>(block, at, false);
            if fast != slow {
                return Err(format!("N = 6 at {at}: {fast:?} against {slow:?}"));
            }
            taken += 1;
        }
        if let Some(fast) = fields_within_64::<4>(block, at, true) {
            let slow = fields_bytewise::<4>(block, at, true);
            if fast != slow {
                return Err(format!("N = 4 exact at {at}: {fast:?} against {slow:?}"));
            }
        }
    }
    Ok(taken)
}

#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::{compare_with_bytewise, fields_within_64};
    use proptest::prelude::*;

    #[test]
    fn run_and_qrels_lines() {
        let block = b"q1 Q0 doc1 1 2.5 tag\nq1 Q0 doc2 2 2.25 tag extra\n301 0 FBIS3-1 1\n\
                      q2\tQ0  d\x01c 3 -1 t\r\nshort line\n# comment 1 2 3 4 5 6\n\
                      q3 Q0 d \x0b x \x0c y\n\xffq \xc3\xa9 1 2 3 4\n"
            .repeat(3);
        let taken = compare_with_bytewise(&block).unwrap();
        assert!(taken > 20, "the fast path took {taken} offsets");
        let (fields, next) = fields_within_64::<6>(&block, 0, false).unwrap().unwrap();
        assert_eq!(
            fields,
            [(0, 2), (3, 5), (6, 10), (11, 12), (13, 16), (17, 20)]
        );
        assert_eq!(next, 21);
        // a line too long for the window, and a window past the block's end: not taken
        let long = [b"q Q0 ".as_slice(), &[b'd'; 70], b" 1 2 t\n"].concat();
        assert_eq!(fields_within_64::<6>(&long, 0, false), None);
        assert_eq!(fields_within_64::<6>(b"q Q0 d 1 2 t\n", 0, false), None);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]
        /// Random blocks of bytes that matter (every whitespace byte, other control bytes,
        /// `#`, bytes from 0x80, digits, letters) in runs, ending with `\n`.
        #[test]
        fn equals_the_bytewise_split(
            parts in prop::collection::vec(
                (prop::sample::select(crate::formats::line_mask::TEST_BYTES.to_vec()), 1..12usize),
                1..60,
            ),
        ) {
            let mut block: Vec<u8> = parts.iter().flat_map(|&(b, n)| std::iter::repeat_n(b, n)).collect();
            block.push(b'\n');
            compare_with_bytewise(&block).map_err(TestCaseError::fail)?;
        }
    }
}
