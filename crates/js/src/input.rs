//! How `evaluate()` reads the files it is given: each is fed to its streaming parser in slices
//! of [`FEED_BYTES`], and a `Uint8Array` is copied into wasm memory one slice at a time into
//! one reused buffer instead of whole.
//!
//! Why slices, in wasm: V8 runs a wasm function first in its baseline compiler (Liftoff) and
//! switches to the optimised code (TurboFan) at the function's next call; it has no on-stack
//! replacement for wasm. A run fed whole is parsed by one call of the parser's inner loop, so
//! a first `evaluate()` parsed all of it in baseline code (1.9-2.3x native single-threaded
//! cold, 1.0-1.3x warm). Fed in slices, the loop is optimised after the first few. Why no
//! whole copy: the copy of a 35 MB array was 5 % of a warm profile, and in a first call each
//! of its pages is touched for the first time (the kernel zeroes it); a 1 MiB buffer is copied
//! and parsed while it is in the CPU's cache.

/// Bytes fed to a parser at a time.
pub(crate) const FEED_BYTES: usize = 1 << 20;

/// The bytes of one file handed to `evaluate`.
pub(crate) enum Input<'a> {
    /// Bytes already in this module's memory (a string's UTF-8; native callers).
    Bytes(std::borrow::Cow<'a, [u8]>),
    /// A `Uint8Array` still in JS memory, copied in slices as it is parsed.
    Array(js_sys::Uint8Array),
}

impl Input<'_> {
    pub(crate) fn len(&self) -> usize {
        match self {
            Input::Bytes(b) => b.len(),
            Input::Array(a) => a.length() as usize,
        }
    }

    /// Hands the bytes to `feed` in order, `slice` bytes at a time (the last may be shorter).
    pub(crate) fn feed_slices<E>(
        &self,
        slice: usize,
        mut feed: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let slice = slice.max(1);
        match self {
            Input::Bytes(bytes) => bytes.chunks(slice).try_for_each(feed),
            Input::Array(array) => {
                let len = array.length();
                let step = u32::try_from(slice).unwrap_or(u32::MAX);
                let mut buffer = vec![0u8; slice.min(len as usize)];
                let mut at = 0u32;
                while at < len {
                    let end = at.saturating_add(step).min(len);
                    let part = &mut buffer[..(end - at) as usize];
                    array.subarray(at, end).copy_to(part);
                    feed(part)?;
                    at = end;
                }
                Ok(())
            }
        }
    }
}
