//! Chunk-to-line reassembly and whitespace field splitting shared by both parsers.

/// Splits a byte stream fed in arbitrary chunks into complete lines without copying the
/// common case: only the tail of a chunk that ends mid-line is buffered.
#[derive(Default)]
pub(crate) struct LineSplitter {
    pending: Vec<u8>,
    line_no: u64,
}

impl LineSplitter {
    /// Calls `on_line(line_no, line)` for each complete line in `chunk`, stopping at the
    /// first error.
    pub fn feed<E>(
        &mut self,
        chunk: &[u8],
        mut on_line: impl FnMut(u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some(rest) = self.complete_pending(chunk, &mut on_line)? else {
            return Ok(());
        };
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', rest) {
            self.line_no += 1;
            on_line(self.line_no, &rest[start..end])?;
            start = end + 1;
        }
        self.pending.extend_from_slice(&rest[start..]);
        Ok(())
    }

    /// [`feed`](Self::feed) for parsers with a fast path over many lines at once: a line
    /// continued from the previous chunk goes to `on_line`, then every other complete line of
    /// `chunk` to `on_block(first_line_no, block)` as one slice that starts at a line start and
    /// ends with `\n`; it returns how many lines it read (all of them, unless it fails).
    /// Both get `parser`, the state they update.
    pub fn feed_block<P, E>(
        &mut self,
        chunk: &[u8],
        parser: &mut P,
        on_line: impl Fn(&mut P, u64, &[u8]) -> Result<(), E>,
        on_block: impl FnOnce(&mut P, u64, &[u8]) -> Result<u64, E>,
    ) -> Result<(), E> {
        let Some(rest) = self.complete_pending(chunk, &mut |no, line| on_line(parser, no, line))?
        else {
            return Ok(());
        };
        let tail = match last_newline(rest) {
            Some(last) => {
                self.line_no += on_block(parser, self.line_no + 1, &rest[..=last])?;
                &rest[last + 1..]
            }
            None => rest,
        };
        self.pending.extend_from_slice(tail);
        Ok(())
    }

    /// Ends the line left pending by the previous chunk with the head of `chunk` and hands it
    /// to `on_line`; returns the rest of `chunk`, or `None` when all of it was pending. Once a
    /// chunk, so kept out of the parsers' hot functions (see [`last_newline`]).
    #[inline(never)]
    fn complete_pending<'c, E>(
        &mut self,
        chunk: &'c [u8],
        on_line: &mut impl FnMut(u64, &[u8]) -> Result<(), E>,
    ) -> Result<Option<&'c [u8]>, E> {
        if chunk.is_empty() {
            return Ok(None);
        }
        if self.pending.is_empty() {
            return Ok(Some(chunk));
        }
        match memchr::memchr(b'\n', chunk) {
            None => {
                self.pending.extend_from_slice(chunk);
                Ok(None)
            }
            Some(i) => {
                self.pending.extend_from_slice(&chunk[..i]);
                self.line_no += 1;
                let line = std::mem::take(&mut self.pending);
                let result = on_line(self.line_no, &line);
                self.pending = line;
                self.pending.clear();
                result.map(|()| Some(&chunk[i + 1..]))
            }
        }
    }

    /// Delivers a last line that had no trailing newline.
    pub fn finish<E>(
        &mut self,
        mut on_line: impl FnMut(u64, &[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.pending.is_empty() {
            return Ok(());
        }
        self.line_no += 1;
        let line = std::mem::take(&mut self.pending);
        on_line(self.line_no, &line)
    }

    pub fn lines_seen(&self) -> u64 {
        self.line_no
    }

    /// Continues after a splitter that read the bytes following this one's (which ended
    /// on a line boundary): its partial last line and its line count carry over.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn absorb(&mut self, other: LineSplitter, line_offset: u64) {
        debug_assert!(self.pending.is_empty());
        self.pending = other.pending;
        self.line_no = line_offset + other.line_no;
    }
}

/// The end of the field that starts at `at` in `block` (which ends with `\n`): the first
/// whitespace byte at or after `at`. Eight bytes a step: a word without a byte below 0x21 holds
/// no whitespace (the classic "has a byte less than n" test, exact for the lowest such byte),
/// so a 9-byte docno takes two steps instead of nine byte tests; plain integer arithmetic, so
/// it is the same code on wasm32.
#[inline(always)]
pub(crate) fn field_end(block: &[u8], mut at: usize) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    while at + 8 <= block.len() {
        let mut w = [0u8; 8];
        w.copy_from_slice(&block[at..at + 8]);
        let word = u64::from_le_bytes(w);
        let low = word.wrapping_sub(ONES * 0x21) & !word & (ONES * 0x80);
        if low == 0 {
            at += 8;
            continue;
        }
        let first = at + (low.trailing_zeros() / 8) as usize;
        if is_space(block[first]) {
            return first;
        }
        // a control byte that is not whitespace belongs to the field
        at = first + 1;
    }
    while at < block.len() && !is_space(block[at]) {
        at += 1;
    }
    at
}

/// The first byte at or after `at` that is not a blank (whitespace other than `\n`).
#[inline(always)]
pub(crate) fn skip_blanks(block: &[u8], mut at: usize) -> usize {
    while at < block.len() && block[at] != b'\n' && is_space(block[at]) {
        at += 1;
    }
    at
}

/// The first `N` fields of the line at `at` in `block` (which ends with `\n`) as `(start,
/// end)` offsets, and the offset just past the line. `None` for every line the general path
/// must see: blank or comment lines, lines starting with whitespace, fewer than `N` fields,
/// or more than `N` when `exact`. What it accepts, it splits as [`split_fields`] does.
/// On x86-64 and wasm with SIMD a line within 64 bytes is split from two bit masks
/// ([`super::line_mask`]); others byte by byte ([`fields_bytewise`]).
#[inline(always)]
pub(crate) fn block_fields<const N: usize>(
    block: &[u8],
    at: usize,
    exact: bool,
) -> Option<super::line_mask::LineFields<N>> {
    let first = *block.get(at)?;
    if first == b'#' || is_space(first) {
        return None;
    }
    if let Some(answer) = super::line_mask::fields_within_64::<N>(block, at, exact) {
        return answer;
    }
    fields_bytewise::<N>(block, at, exact)
}

/// [`block_fields`] past its first byte's test, byte by byte.
#[inline(always)]
pub(crate) fn fields_bytewise<const N: usize>(
    block: &[u8],
    at: usize,
    exact: bool,
) -> Option<super::line_mask::LineFields<N>> {
    let mut fields = [(0, 0); N];
    let mut i = at;
    let mut k = 0;
    while k < N {
        let end = field_end(block, i);
        fields[k] = (i, end);
        k += 1;
        i = skip_blanks(block, end);
        match block.get(i) {
            Some(b'\n') => return (k == N).then_some((fields, i + 1)),
            Some(_) => {}
            None => return None,
        }
    }
    if exact {
        return None;
    }
    let newline = i + memchr::memchr(b'\n', &block[i..])?;
    Some((fields, newline + 1))
}

/// The offset of the last `\n` in `bytes`. Not inlined: it runs once a chunk, and inlined
/// (memchr's SIMD search, with its prologue and epilogue) it made the parsers' hot functions
/// larger, which V8 compiles with its optimising tier while a first `evaluate()` runs in the
/// baseline one: the bigger the function, the later the switch.
#[inline(never)]
pub(crate) fn last_newline(bytes: &[u8]) -> Option<usize> {
    memchr::memrchr(b'\n', bytes)
}

/// C's `isspace` in the "C" locale, which is what trec_eval splits fields on.
#[inline]
pub(crate) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// Whitespace-separated fields with their 0-based byte offsets, at most `N` of them; the
/// returned count keeps counting past `N` so callers can report how many there were.
#[inline]
pub(crate) fn split_fields<const N: usize>(line: &[u8]) -> ([(usize, &[u8]); N], usize) {
    let mut out: [(usize, &[u8]); N] = [(0, &[]); N];
    let mut count = 0;
    let mut i = 0;
    let n = line.len();
    while i < n {
        while i < n && is_space(line[i]) {
            i += 1;
        }
        if i >= n {
            break;
        }
        let start = i;
        while i < n && !is_space(line[i]) {
            i += 1;
        }
        if count < N {
            out[count] = (start, &line[start..i]);
        }
        count += 1;
    }
    (out, count)
}

/// True for blank lines and `#` comments (first non-blank byte is `#`).
#[inline]
pub(crate) fn is_skippable(line: &[u8]) -> bool {
    match line.iter().position(|&b| !is_space(b)) {
        None => true,
        Some(i) => line[i] == b'#',
    }
}

/// A score as C's `atof` would read a well-formed number (`1e-3`, `+.5`, `-7.`, `inf`).
/// Unlike `atof`, text that is not a number is refused instead of read as 0, and NaN is
/// refused because it has no place in a ranking.
pub(crate) fn parse_score(field: &[u8]) -> Option<f64> {
    if let Some(v) = parse_plain_decimal(field) {
        return Some(v);
    }
    let s = std::str::from_utf8(field).ok()?;
    let v: f64 = s.parse().ok()?;
    if v.is_nan() {
        None
    } else {
        Some(v)
    }
}

/// Clinger's fast path for the common score shape `[+-]digits[.digits]` with at most 15
/// significant digits: the mantissa and 10^k (k ≤ 15) are exact in f64, so one IEEE division
/// is the correctly rounded value — bit for bit what `atof` and `str::parse` give. Anything
/// else (exponents, long mantissas, junk) returns None and takes the general parser.
#[inline]
pub(crate) fn parse_plain_decimal(field: &[u8]) -> Option<f64> {
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let (negative, digits) = match field.first()? {
        b'-' => (true, &field[1..]),
        b'+' => (false, &field[1..]),
        _ => (false, field),
    };
    let (mut mantissa, mut count, mut fraction) = (0u64, 0usize, 0usize);
    let mut seen_point = false;
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(b - b'0');
                count += 1;
                fraction += usize::from(seen_point);
                if count > 15 {
                    return None;
                }
            }
            b'.' if !seen_point => seen_point = true,
            _ => return None,
        }
    }
    if count == 0 {
        return None;
    }
    let value = mantissa as f64 / POW10[fraction];
    Some(if negative { -value } else { value })
}

/// [`parse_plain_decimal`] of `block[start..end]`, the same value bit for bit; a field of at
/// most 8 bytes without a sign (most scores: `12.345`) is read as one word where at least 8
/// bytes of `block` follow its start (in a run line the tag does): the dot found and taken
/// out, the digits checked and converted eight at a time (the SWAR steps of fast_float's
/// `parse_eight_digits_unrolled`). The byte loop, with its branches and the spills of its
/// state, was a tenth of the run parser's samples. Plain integer code, so the same on wasm32.
#[inline(always)]
pub(crate) fn parse_plain_decimal_at(block: &[u8], start: usize, end: usize) -> Option<f64> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const ZEROS: u64 = ONES * b'0' as u64;
    const POW10: [f64; 8] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7];
    let n = end.wrapping_sub(start);
    if n == 0 || n > 8 || end > block.len() || block.len() - start < 8 {
        return parse_plain_decimal(block.get(start..end)?);
    }
    let mut raw = [0u8; 8];
    raw.copy_from_slice(&block[start..start + 8]);
    let word = u64::from_le_bytes(raw) & (u64::MAX >> (64 - 8 * n));
    // the first '.' (exact for the lowest zero byte of `word ^ dots`; the bytes past the
    // field are 0, not '.')
    let x = word ^ (ONES * u64::from(b'.'));
    let dot = x.wrapping_sub(ONES) & !x & (ONES * 0x80);
    let (digits, count, fraction) = if dot == 0 {
        (word, n, 0)
    } else {
        let p = (dot.trailing_zeros() / 8) as usize;
        let low = word & ((1u64 << (8 * p)) - 1);
        let high = (word.checked_shr(8 * p as u32 + 8).unwrap_or(0)) << (8 * p);
        (low | high, n - 1, n - 1 - p)
    };
    if count == 0 {
        return parse_plain_decimal(&block[start..end]);
    }
    // the digits in the high bytes, '0's before them: eight digits, leading zeros
    let v = (digits << (8 * (8 - count))) | ZEROS.checked_shr(8 * count as u32).unwrap_or(0);
    // all eight bytes '0'..='9' (a second '.', a sign or anything else fails)
    let all_digits =
        (v & 0xF0F0_F0F0_F0F0_F0F0) | ((v.wrapping_add(ONES * 6) & 0xF0F0_F0F0_F0F0_F0F0) >> 4);
    if all_digits != ONES * 0x33 {
        // a sign, or not a plain decimal: the byte loop decides
        return parse_plain_decimal(&block[start..end]);
    }
    let mut v = v - ZEROS;
    v = v.wrapping_mul(10).wrapping_add(v >> 8);
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    v = ((v & MASK).wrapping_mul(0x000F_4240_0000_0064))
        .wrapping_add(((v >> 16) & MASK).wrapping_mul(0x0000_2710_0000_0001))
        >> 32;
    Some(v as f64 / POW10[fraction])
}

/// The common relevance shape, `-?[0-9]{1,9}`, without going through `str`: the same value
/// as [`parse_rel`] (nine digits cannot overflow an `i32`); `None` for anything else, which
/// then takes [`parse_rel`].
#[inline]
pub(crate) fn parse_plain_rel(field: &[u8]) -> Option<i32> {
    let (negative, digits) = match field.first()? {
        b'-' => (true, &field[1..]),
        _ => (false, field),
    };
    if digits.is_empty() || digits.len() > 9 {
        return None;
    }
    let mut value = 0i32;
    for &b in digits {
        if !b.is_ascii_digit() {
            return None;
        }
        value = value * 10 + i32::from(b - b'0');
    }
    Some(if negative { -value } else { value })
}

/// A relevance value as `atol` reads a well-formed integer.
pub(crate) fn parse_rel(field: &[u8]) -> Option<i32> {
    let s = std::str::from_utf8(field).ok()?;
    s.parse::<i32>().ok()
}

pub(crate) fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The offending text as an error message quotes it: printable, and short. Control characters
/// and bytes that are not UTF-8 are escaped (`\u{1b}`, `\xff`) so a binary file cannot move the
/// cursor or change the colours of the terminal that shows the error, and a quote is cut after
/// [`QUOTE_CHARS`] characters so a megabyte-long "line" does not flood it.
pub(crate) fn quote(bytes: &[u8]) -> String {
    quote_bytes(bytes)
}

/// Characters of the offending text an error message shows before cutting it with `…`.
pub const QUOTE_CHARS: usize = 200;

/// See [`lossy`]; public so every parser (and the CLI) quotes text the same way.
pub fn quote_bytes(bytes: &[u8]) -> String {
    quote_bytes_max(bytes, QUOTE_CHARS)
}

/// [`quote_bytes`] cut after `max_chars` shown characters (an escape counts as one).
pub fn quote_bytes_max(bytes: &[u8], max_chars: usize) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let mut shown = 0;
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            if shown == max_chars {
                out.push('…');
                return out;
            }
            match c {
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                c if c.is_control() => {
                    let _ = write!(out, "\\u{{{:x}}}", c as u32);
                }
                c => out.push(c),
            }
            shown += 1;
        }
        for b in chunk.invalid() {
            if shown == max_chars {
                out.push('…');
                return out;
            }
            let _ = write!(out, "\\x{b:02x}");
            shown += 1;
        }
    }
    out
}

#[cfg(test)]
mod plain_decimal_tests {
    use super::{parse_plain_decimal, parse_plain_decimal_at, parse_score};
    use proptest::prelude::*;

    #[test]
    fn shapes_it_takes_and_leaves() {
        for (text, want) in [
            ("2.129133", Some(2.129133)),
            ("-0.5", Some(-0.5)),
            ("+3", Some(3.0)),
            ("7.", Some(7.0)),
            (".25", Some(0.25)),
            ("000123.4500", Some(123.45)),
        ] {
            assert_eq!(parse_plain_decimal(text.as_bytes()), want, "{text}");
        }
        assert_eq!(
            parse_plain_decimal(b"-0.0").map(f64::to_bits),
            Some((-0.0f64).to_bits())
        );
        for text in [
            "1e-3",
            "",
            "-",
            ".",
            "1.2.3",
            "nan",
            "inf",
            "0x10",
            "1234567890.1234567",
            " 1",
        ] {
            assert_eq!(parse_plain_decimal(text.as_bytes()), None, "{text}");
        }
        assert_eq!(parse_score(b"1e-3"), Some(1e-3));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(20_000))]
        /// Bit-identical to the correctly rounded general parser wherever it applies.
        #[test]
        fn equals_the_general_parser(
            sign in prop::sample::select(vec!["", "-", "+"]),
            int in "[0-9]{0,15}",
            frac in prop::option::of("[0-9]{0,15}"),
        ) {
            let text = match &frac {
                Some(f) => format!("{sign}{int}.{f}"),
                None => format!("{sign}{int}"),
            };
            let general: Option<f64> = text.parse().ok();
            if let Some(fast) = parse_plain_decimal(text.as_bytes()) {
                prop_assert_eq!(Some(fast.to_bits()), general.map(f64::to_bits), "{}", text);
            }
        }
    }

    /// The word-at-a-time score parse against the byte loop: every string of up to 5 bytes
    /// over digits, '.', signs, 'e' and a space, and pseudo-random ones of up to 10 bytes,
    /// each with a tag after it and at the very end of the block (where the loop takes it).
    #[test]
    fn word_score_parse_is_the_byte_loop() {
        let alphabet = b"0159.-+e ";
        let check = |field: &[u8]| {
            let want = parse_plain_decimal(field).map(f64::to_bits);
            let mut block = field.to_vec();
            block.extend_from_slice(b" run_tag\n");
            let got = parse_plain_decimal_at(&block, 0, field.len()).map(f64::to_bits);
            assert_eq!(got, want, "{:?}", String::from_utf8_lossy(field));
            let mut block = b"q1 Q0 d 1 ".to_vec();
            block.extend_from_slice(field);
            let at = block.len() - field.len();
            let got = parse_plain_decimal_at(&block, at, block.len()).map(f64::to_bits);
            assert_eq!(got, want, "{:?} at the end", String::from_utf8_lossy(field));
        };
        let mut field = Vec::new();
        for len in 0..=5u32 {
            for mut code in 0..alphabet.len().pow(len) {
                field.clear();
                for _ in 0..len {
                    field.push(alphabet[code % alphabet.len()]);
                    code /= alphabet.len();
                }
                check(&field);
            }
        }
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            let len = (state >> 60) as usize % 11;
            field.clear();
            for k in 0..len {
                // mostly digits, a dot now and then
                let pick = (state >> (4 * k as u32 % 56)) as usize % 23;
                field.push(match pick {
                    0 => b'.',
                    1 => b'-',
                    2 => b'x',
                    _ => b'0' + (pick % 10) as u8,
                });
            }
            check(&field);
        }
        assert_eq!(parse_plain_decimal_at(b"12.345 t\n", 0, 6), Some(12.345));
        assert_eq!(parse_plain_decimal_at(b"00000007 t\n", 0, 8), Some(7.0));
        assert_eq!(
            parse_plain_decimal_at(b"9.999999 t\n", 0, 8),
            Some(9.999999)
        );
    }
}
