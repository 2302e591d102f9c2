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
        if chunk.is_empty() {
            return Ok(());
        }
        let mut rest = chunk;
        if !self.pending.is_empty() {
            match memchr::memchr(b'\n', rest) {
                None => {
                    self.pending.extend_from_slice(rest);
                    return Ok(());
                }
                Some(i) => {
                    self.pending.extend_from_slice(&rest[..i]);
                    rest = &rest[i + 1..];
                    self.line_no += 1;
                    let line = std::mem::take(&mut self.pending);
                    let result = on_line(self.line_no, &line);
                    self.pending = line;
                    self.pending.clear();
                    result?;
                }
            }
        }
        let mut start = 0;
        for end in memchr::memchr_iter(b'\n', rest) {
            self.line_no += 1;
            on_line(self.line_no, &rest[start..end])?;
            start = end + 1;
        }
        self.pending.extend_from_slice(&rest[start..]);
        Ok(())
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
    let s = std::str::from_utf8(field).ok()?;
    let v: f64 = s.parse().ok()?;
    if v.is_nan() {
        None
    } else {
        Some(v)
    }
}

/// A relevance value as `atol` reads a well-formed integer.
pub(crate) fn parse_rel(field: &[u8]) -> Option<i32> {
    let s = std::str::from_utf8(field).ok()?;
    s.parse::<i32>().ok()
}

pub(crate) fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}
