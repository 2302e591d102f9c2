//! An input file as the parsers take it: a stream read in chunks, or bytes held whole and
//! shared. Natively a regular file is mapped into memory ([`open_input`]) and parsed in place
//! slice by slice ([`SharedBytes::feed_in_slices`]), so nothing is `read()` into fresh
//! buffers: in the 35 MB benchmark the kernel's copy was 4.4 % of the samples and the
//! buffers' pages 2,000 of its 13,600 page faults. Pipes, terminals and other special files
//! keep the chunked stream, so `-` (stdin) works as before.
//!
//! Results do not point into the mapping (they did in a first version, without the docno
//! copy): a mapped file is resident whole once read, which took the benchmark's peak memory
//! from 1.7 to 2.3 times the run file. Each slice is given back once parsed instead.

use std::io::Read;
use std::sync::Arc;

/// Bytes held whole and shared: a file mapped into memory (native only) or an owned buffer.
#[derive(Clone)]
pub struct SharedBytes(Arc<Backing>);

enum Backing {
    Owned(Vec<u8>),
    #[cfg(not(target_arch = "wasm32"))]
    Mapped(memmap2::Mmap),
}

impl SharedBytes {
    #[inline]
    pub fn bytes(&self) -> &[u8] {
        match &*self.0 {
            Backing::Owned(v) => v,
            #[cfg(not(target_arch = "wasm32"))]
            Backing::Mapped(m) => m,
        }
    }
}

impl SharedBytes {
    /// Hands the bytes to `feed` in slices of `chunk` bytes (a multiple of the page size).
    /// A slice of a mapped file is read in just before (one `madvise` instead of a page fault
    /// per 16 pages) and dropped from this process's memory just after (the parsers copy what
    /// they keep), so the file is never resident whole.
    pub fn feed_in_slices<E>(
        &self,
        chunk: usize,
        mut feed: impl FnMut(&[u8]) -> Result<(), E>,
    ) -> Result<(), E> {
        let bytes = self.bytes();
        let mut at = 0;
        while at < bytes.len() {
            let end = bytes.len().min(at.saturating_add(chunk));
            self.advise(at..end, true);
            feed(&bytes[at..end])?;
            self.advise(at..end, false);
            at = end;
        }
        Ok(())
    }

    /// Page `range` in (`before`) or out of a mapping; a no-op on owned bytes.
    #[allow(unused_variables)]
    fn advise(&self, range: std::ops::Range<usize>, before: bool) {
        #[cfg(target_os = "linux")]
        if let Backing::Mapped(map) = &*self.0 {
            if before {
                let _ = map.advise_range(memmap2::Advice::PopulateRead, range.start, range.len());
            } else {
                // SAFETY: the mapping is private and never written, so MADV_DONTNEED only
                // drops its page table entries: a later read would fault the same file bytes
                // back in from the page cache. Nothing reads this range again anyway.
                let _ = unsafe {
                    map.unchecked_advise_range(
                        memmap2::UncheckedAdvice::DontNeed,
                        range.start,
                        range.len(),
                    )
                };
            }
        }
    }
}

impl From<Vec<u8>> for SharedBytes {
    fn from(bytes: Vec<u8>) -> Self {
        SharedBytes(Arc::new(Backing::Owned(bytes)))
    }
}

impl std::ops::Deref for SharedBytes {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.bytes()
    }
}

impl std::fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SharedBytes({} bytes)", self.bytes().len())
    }
}

/// An opened input file.
pub enum Input {
    /// Read in chunks (stdin, pipes, anything given as a reader).
    Stream(Box<dyn Read>),
    /// Held whole (a mapped regular file).
    Whole(SharedBytes),
}

/// Opens `path` for the parsers: a non-empty regular file is mapped into memory, anything
/// else (a FIFO, a character device, an empty file, a failed mapping) is streamed. Errors are
/// those of `File::open`.
///
/// The mapping is read-only and private; as with any mapped file, another process truncating
/// the file while it is parsed could end this one (SIGBUS), which reading it could not.
#[cfg(not(target_arch = "wasm32"))]
pub fn open_input(path: &str) -> std::io::Result<Input> {
    let file = std::fs::File::open(path)?;
    let regular = file.metadata().is_ok_and(|m| m.is_file() && m.len() > 0);
    if regular {
        // SAFETY: memmap2's contract: the file must not be modified while mapped. It is opened
        // read-only here, and ragscope never writes its inputs; see the note above for others.
        if let Ok(map) = unsafe { memmap2::MmapOptions::new().map(&file) } {
            return Ok(Input::Whole(SharedBytes(Arc::new(Backing::Mapped(map)))));
        }
    }
    Ok(Input::Stream(Box::new(file)))
}
