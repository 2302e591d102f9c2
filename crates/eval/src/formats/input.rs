//! An input file as the parsers take it: a stream read in chunks, or bytes held whole and
//! shared. Natively a regular file is mapped into memory ([`open_input`]): the run parser
//! then points its results into the mapping instead of copying every docno into an arena,
//! and nothing is `read()` into fresh buffers. In the 35 MB benchmark that copy, the buffers
//! and the arena's growth were about 6,000 of the 13,600 page faults (a third of the
//! process's system time) and 4 % of its samples in the kernel's copy. Pipes, terminals and
//! other special files keep the chunked stream, so `-` (stdin) works as before.

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
        // `populate` maps every page at once (MAP_POPULATE) instead of one fault per 16 pages.
        if let Ok(map) = unsafe { memmap2::MmapOptions::new().populate().map(&file) } {
            #[cfg(unix)]
            let _ = map.advise(memmap2::Advice::Sequential);
            return Ok(Input::Whole(SharedBytes(Arc::new(Backing::Mapped(map)))));
        }
    }
    Ok(Input::Stream(Box::new(file)))
}
