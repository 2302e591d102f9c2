//! Where GGUF bytes come from. Natively a memory map (zero copy); in the browser a `Blob` read
//! slice by slice, so that a model file is never held in one allocation there.

use std::sync::Arc;

/// Bytes shared between tensors without copying (a memory map, or one tensor's own buffer).
pub type SharedBytes = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// Random-access byte source for a GGUF file.
pub trait ByteSource {
    /// Total length in bytes.
    fn len(&self) -> u64;

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Fills `buf` with the bytes at `offset..offset + buf.len()`.
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()>;

    /// The whole source as one shared buffer when it already is one (memory map, in-memory
    /// bytes), so tensors can borrow from it instead of copying.
    fn shared(&self) -> Option<SharedBytes> {
        None
    }
}

/// A tensor's bytes: a range of a shared buffer.
#[derive(Clone)]
pub struct TensorBytes {
    storage: SharedBytes,
    start: usize,
    len: usize,
}

impl TensorBytes {
    /// `start..start + len` must lie inside `storage` (checked; `None` otherwise).
    pub fn new(storage: SharedBytes, start: usize, len: usize) -> Option<Self> {
        let total = (*storage).as_ref().len();
        if start.checked_add(len)? > total {
            return None;
        }
        Some(TensorBytes {
            storage,
            start,
            len,
        })
    }

    pub fn from_vec(bytes: Vec<u8>) -> Self {
        let len = bytes.len();
        TensorBytes {
            storage: Arc::new(bytes),
            start: 0,
            len,
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        &(*self.storage).as_ref()[self.start..self.start + self.len]
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::fmt::Debug for TensorBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TensorBytes({} bytes)", self.len)
    }
}

/// In-memory bytes (tests, small files, a browser `ArrayBuffer` already copied to wasm memory).
pub struct VecSource(Arc<Vec<u8>>);

impl VecSource {
    pub fn new(bytes: Vec<u8>) -> Self {
        VecSource(Arc::new(bytes))
    }
}

impl ByteSource for VecSource {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        read_slice(&self.0, offset, buf)
    }

    fn shared(&self) -> Option<SharedBytes> {
        Some(self.0.clone())
    }
}

/// `read_at` over bytes already in memory (a Vec or a memory map).
fn read_slice(bytes: &[u8], offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    let start = usize::try_from(offset).map_err(|_| eof())?;
    let end = start.checked_add(buf.len()).ok_or_else(eof)?;
    let src = bytes.get(start..end).ok_or_else(eof)?;
    buf.copy_from_slice(src);
    Ok(())
}

fn eof() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "read past the end")
}

/// A memory-mapped file (native only).
#[cfg(feature = "native")]
pub struct MmapSource(Arc<memmap2::Mmap>);

#[cfg(feature = "native")]
impl MmapSource {
    pub fn open(path: &std::path::Path) -> std::io::Result<Self> {
        let file = std::fs::File::open(path)?;
        // SAFETY: the map is read-only; a model file changed underneath a running process is
        // outside what this tool supports (same contract as llama.cpp's mmap loader).
        let map = unsafe { memmap2::Mmap::map(&file)? };
        Ok(MmapSource(Arc::new(map)))
    }
}

#[cfg(feature = "native")]
impl ByteSource for MmapSource {
    fn len(&self) -> u64 {
        self.0.len() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        read_slice(&self.0, offset, buf)
    }

    fn shared(&self) -> Option<SharedBytes> {
        Some(self.0.clone())
    }
}
