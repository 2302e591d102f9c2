//! A GGUF model read from a `Blob` (a file the user picked) slice by slice, so a model file is
//! never one JS allocation: `Model::load` copies each tensor through `read_at`.
//!
//! Reads are synchronous (`FileReaderSync`), which browsers allow only in workers — where
//! inference runs anyway, never on the UI thread. This lives in the app, not in crates/infer,
//! which stays free of web APIs.

use ragscope_infer::ByteSource;
use wasm_bindgen::JsValue;

pub struct BlobSource {
    blob: web_sys::Blob,
    reader: web_sys::FileReaderSync,
}

impl BlobSource {
    /// Fails outside a worker (no `FileReaderSync` there).
    pub fn new(blob: web_sys::Blob) -> Result<Self, String> {
        let reader = web_sys::FileReaderSync::new().map_err(|e| {
            format!(
                "reading a model needs a worker (FileReaderSync): {}",
                js_text(&e)
            )
        })?;
        Ok(BlobSource { blob, reader })
    }
}

impl ByteSource for BlobSource {
    fn len(&self) -> u64 {
        self.blob.size() as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
        let end = offset
            .checked_add(buf.len() as u64)
            .filter(|&end| end <= self.len())
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        let io = |e: JsValue| std::io::Error::other(js_text(&e));
        let slice = self
            .blob
            .slice_with_f64_and_f64(offset as f64, end as f64)
            .map_err(io)?;
        let bytes = self.reader.read_as_array_buffer(&slice).map_err(io)?;
        js_sys::Uint8Array::new(&bytes).copy_to(buf);
        Ok(())
    }
}

fn js_text(v: &JsValue) -> String {
    v.as_string().unwrap_or_else(|| format!("{v:?}"))
}
