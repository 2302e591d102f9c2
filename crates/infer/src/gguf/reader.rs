//! GGUF header, metadata and tensor-info parsing (format: ggml `docs/gguf.md`).
//!
//! Layout: magic "GGUF", u32 version, u64 tensor_count, u64 kv_count, the KVs, the tensor infos,
//! then padding to `general.alignment` (default 32) and the tensor data. Every length read from
//! the file is checked against the bytes that remain before anything is allocated for it, so a
//! corrupt or truncated file yields an error naming the byte offset, never a panic or an OOM.

use super::source::{ByteSource, TensorBytes};
use super::{GgmlType, MetadataValue};
use crate::error::{InferError, Result};
use std::collections::HashMap;

const CHUNK: usize = 1 << 16;
const MAX_DIMS: u32 = 4;

/// One tensor's description; `offset` is relative to the start of the data section.
#[derive(Debug, Clone)]
pub struct TensorInfo {
    pub name: String,
    /// ggml order: `dims[0]` is the contiguous (row) dimension.
    pub dims: Vec<u64>,
    pub ty: GgmlType,
    pub offset: u64,
    pub n_bytes: u64,
}

impl TensorInfo {
    pub fn n_elements(&self) -> u64 {
        self.dims.iter().product()
    }
}

/// A parsed GGUF file (metadata and tensor infos; tensor data stays in the source).
#[derive(Debug)]
pub struct GgufFile {
    /// Label used in error messages (usually the path).
    pub file: String,
    pub version: u32,
    pub metadata: Vec<(String, MetadataValue)>,
    pub tensors: Vec<TensorInfo>,
    pub alignment: u64,
    pub data_offset: u64,
    pub file_len: u64,
    meta_index: HashMap<String, usize>,
    tensor_index: HashMap<String, usize>,
}

struct Cursor<'a> {
    src: &'a dyn ByteSource,
    file: &'a str,
    len: u64,
    pos: u64,
    buf: Vec<u8>,
    buf_start: u64,
}

impl<'a> Cursor<'a> {
    fn truncated(&self, what: &str, needed: u64) -> InferError {
        InferError::Truncated {
            file: self.file.to_string(),
            what: what.to_string(),
            offset: self.pos,
            needed,
            len: self.len,
        }
    }

    fn malformed(&self, message: impl Into<String>) -> InferError {
        InferError::Malformed {
            file: self.file.to_string(),
            offset: self.pos,
            message: message.into(),
        }
    }

    fn remaining(&self) -> u64 {
        self.len.saturating_sub(self.pos)
    }

    fn bytes(&mut self, n: usize, what: &str) -> Result<&[u8]> {
        if (n as u64) > self.remaining() {
            return Err(self.truncated(what, n as u64 - self.remaining()));
        }
        let buf_end = self.buf_start + self.buf.len() as u64;
        if self.pos < self.buf_start || self.pos + n as u64 > buf_end {
            let want = n.max(CHUNK).min(self.remaining() as usize);
            self.buf.resize(want, 0);
            self.src
                .read_at(self.pos, &mut self.buf)
                .map_err(|source| InferError::Io {
                    file: self.file.to_string(),
                    source,
                })?;
            self.buf_start = self.pos;
        }
        let start = (self.pos - self.buf_start) as usize;
        self.pos += n as u64;
        Ok(&self.buf[start..start + n])
    }

    fn u8(&mut self, what: &str) -> Result<u8> {
        Ok(self.bytes(1, what)?[0])
    }
    fn u16(&mut self, what: &str) -> Result<u16> {
        let b = self.bytes(2, what)?;
        Ok(u16::from_le_bytes([b[0], b[1]]))
    }
    fn u32(&mut self, what: &str) -> Result<u32> {
        let b = self.bytes(4, what)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }
    fn u64(&mut self, what: &str) -> Result<u64> {
        let b = self.bytes(8, what)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        Ok(u64::from_le_bytes(a))
    }

    fn string(&mut self, what: &str) -> Result<String> {
        let n = self.u64(what)?;
        if n > self.remaining() {
            return Err(self.truncated(what, n - self.remaining()));
        }
        let at = self.pos;
        let bytes = self.bytes(n as usize, what)?.to_vec();
        String::from_utf8(bytes).map_err(|e| InferError::Malformed {
            file: self.file.to_string(),
            offset: at,
            message: format!("{what} is not valid UTF-8: {e}"),
        })
    }

    fn value(&mut self, ty: u32, what: &str, depth: u32) -> Result<MetadataValue> {
        Ok(match ty {
            0 => MetadataValue::U8(self.u8(what)?),
            1 => MetadataValue::I8(self.u8(what)? as i8),
            2 => MetadataValue::U16(self.u16(what)?),
            3 => MetadataValue::I16(self.u16(what)? as i16),
            4 => MetadataValue::U32(self.u32(what)?),
            5 => MetadataValue::I32(self.u32(what)? as i32),
            6 => MetadataValue::F32(f32::from_bits(self.u32(what)?)),
            7 => match self.u8(what)? {
                0 => MetadataValue::Bool(false),
                1 => MetadataValue::Bool(true),
                b => {
                    return Err(self.malformed(format!("{what}: bool byte {b} is neither 0 nor 1")))
                }
            },
            8 => MetadataValue::String(self.string(what)?),
            9 => {
                if depth > 2 {
                    return Err(self.malformed(format!("{what}: arrays nested too deeply")));
                }
                let elem_ty = self.u32(what)?;
                let count = self.u64(what)?;
                // Every element takes at least one byte: a count beyond the remaining bytes
                // is corruption, caught before allocating.
                let min_size = match elem_ty {
                    0 | 1 | 7 => 1,
                    2 | 3 => 2,
                    4..=6 => 4,
                    8 | 10..=12 => 8,
                    9 => 12,
                    other => {
                        return Err(
                            self.malformed(format!("{what}: unknown array element type {other}"))
                        )
                    }
                };
                if count.saturating_mul(min_size) > self.remaining() {
                    return Err(
                        self.truncated(what, count.saturating_mul(min_size) - self.remaining())
                    );
                }
                let mut items = Vec::with_capacity((count as usize).min(1 << 16));
                for _ in 0..count {
                    items.push(self.value(elem_ty, what, depth + 1)?);
                }
                MetadataValue::Array(items)
            }
            10 => MetadataValue::U64(self.u64(what)?),
            11 => MetadataValue::I64(self.u64(what)? as i64),
            12 => MetadataValue::F64(f64::from_bits(self.u64(what)?)),
            other => return Err(self.malformed(format!("{what}: unknown value type {other}"))),
        })
    }
}

impl GgufFile {
    /// Opens and parses a file natively (memory map), returning the parsed header and the source.
    #[cfg(feature = "native")]
    pub fn open(path: &std::path::Path) -> Result<(GgufFile, super::MmapSource)> {
        let file = path.display().to_string();
        let src = super::MmapSource::open(path).map_err(|source| InferError::Io {
            file: file.clone(),
            source,
        })?;
        let gguf = GgufFile::read(&src, &file)?;
        Ok((gguf, src))
    }

    /// Parses header, metadata and tensor infos from `src`; `file` labels error messages.
    pub fn read(src: &dyn ByteSource, file: &str) -> Result<GgufFile> {
        let mut c = Cursor {
            src,
            file,
            len: src.len(),
            pos: 0,
            buf: Vec::new(),
            buf_start: 0,
        };
        let magic = c.bytes(4, "magic")?;
        if magic != b"GGUF" {
            let mut found = [0u8; 4];
            found.copy_from_slice(magic);
            return Err(InferError::BadMagic {
                file: file.to_string(),
                found,
            });
        }
        let version = c.u32("version")?;
        if !(2..=3).contains(&version) {
            return Err(InferError::UnsupportedVersion {
                file: file.to_string(),
                version,
            });
        }
        let n_tensors = c.u64("tensor count")?;
        let n_kv = c.u64("metadata count")?;
        // A KV takes at least 8 (key length) + 4 (type) + 1 bytes; a tensor info at least 8+4+8+4+8.
        if n_kv.saturating_mul(13) > c.remaining() || n_tensors.saturating_mul(32) > c.remaining() {
            return Err(c.malformed(format!(
                "{n_kv} metadata entries and {n_tensors} tensors cannot fit in {} bytes",
                c.len
            )));
        }
        let mut metadata = Vec::with_capacity((n_kv as usize).min(1 << 12));
        let mut meta_index = HashMap::new();
        for i in 0..n_kv {
            let key = c.string(&format!("metadata key #{i}"))?;
            let ty = c.u32(&format!("type of metadata '{key}'"))?;
            let value = c.value(ty, &format!("metadata '{key}'"), 0)?;
            if meta_index.insert(key.clone(), metadata.len()).is_some() {
                return Err(c.malformed(format!("duplicate metadata key '{key}'")));
            }
            metadata.push((key, value));
        }
        let alignment = match meta_index.get("general.alignment").map(|&i| &metadata[i].1) {
            None => 32,
            Some(v) => match v.as_u64() {
                Some(a) if a > 0 && a.is_power_of_two() => a,
                _ => {
                    return Err(InferError::metadata(
                        file,
                        "general.alignment",
                        format!("must be a positive power of two, got {v:?}"),
                    ))
                }
            },
        };
        let mut infos = Vec::with_capacity((n_tensors as usize).min(1 << 12));
        for i in 0..n_tensors {
            let name = c.string(&format!("tensor #{i} name"))?;
            let n_dims = c.u32(&format!("tensor '{name}' dimension count"))?;
            if n_dims == 0 || n_dims > MAX_DIMS {
                return Err(c.malformed(format!(
                    "tensor '{name}' has {n_dims} dimensions (1 to {MAX_DIMS} allowed)"
                )));
            }
            let mut dims = Vec::with_capacity(n_dims as usize);
            for _ in 0..n_dims {
                dims.push(c.u64(&format!("tensor '{name}' dimensions"))?);
            }
            let type_id = c.u32(&format!("tensor '{name}' type"))?;
            let offset = c.u64(&format!("tensor '{name}' offset"))?;
            infos.push((name, dims, type_id, offset));
        }
        let data_offset = c.pos.div_ceil(alignment) * alignment;
        let data_len = c.len.saturating_sub(data_offset);
        let mut tensors = Vec::with_capacity(infos.len());
        let mut tensor_index = HashMap::new();
        for (name, dims, type_id, offset) in infos {
            let ty =
                GgmlType::from_id(type_id).map_err(|type_name| InferError::UnsupportedType {
                    file: file.to_string(),
                    tensor: name.clone(),
                    type_id,
                    type_name,
                })?;
            let n: u64 = dims
                .iter()
                .try_fold(1u64, |acc, &d| acc.checked_mul(d))
                .ok_or_else(|| {
                    InferError::tensor(file, &name, format!("dimensions {dims:?} overflow"))
                })?;
            if dims[0] % ty.block_size() as u64 != 0 {
                return Err(InferError::tensor(
                    file,
                    &name,
                    format!(
                        "row length {} is not a multiple of the {} block size {}",
                        dims[0],
                        ty.name(),
                        ty.block_size()
                    ),
                ));
            }
            let n_bytes = (n / ty.block_size() as u64)
                .checked_mul(ty.block_bytes() as u64)
                .ok_or_else(|| {
                    InferError::tensor(file, &name, format!("dimensions {dims:?} overflow"))
                })?;
            if offset % alignment != 0 {
                return Err(InferError::tensor(
                    file,
                    &name,
                    format!("data offset {offset} is not aligned to {alignment}"),
                ));
            }
            match offset.checked_add(n_bytes) {
                Some(end) if end <= data_len => {}
                _ => {
                    return Err(InferError::Truncated {
                        file: file.to_string(),
                        what: format!(
                            "tensor '{name}' data ({n_bytes} bytes at data offset {offset})"
                        ),
                        offset: data_offset + offset,
                        needed: (offset + n_bytes).saturating_sub(data_len),
                        len: c.len,
                    })
                }
            }
            if tensor_index.insert(name.clone(), tensors.len()).is_some() {
                return Err(InferError::tensor(file, &name, "duplicate tensor name"));
            }
            tensors.push(TensorInfo {
                name,
                dims,
                ty,
                offset,
                n_bytes,
            });
        }
        Ok(GgufFile {
            file: file.to_string(),
            version,
            metadata,
            tensors,
            alignment,
            data_offset,
            file_len: c.len,
            meta_index,
            tensor_index,
        })
    }

    pub fn get(&self, key: &str) -> Option<&MetadataValue> {
        self.meta_index.get(key).map(|&i| &self.metadata[i].1)
    }

    pub fn get_str(&self, key: &str) -> Result<Option<&str>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_str().map(Some).ok_or_else(|| {
                InferError::metadata(
                    &self.file,
                    key,
                    format!("expected a string, found {}", v.type_name()),
                )
            }),
        }
    }

    pub fn get_u64(&self, key: &str) -> Result<Option<u64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_u64().map(Some).ok_or_else(|| {
                InferError::metadata(
                    &self.file,
                    key,
                    format!("expected a non-negative integer, found {v:?}"),
                )
            }),
        }
    }

    pub fn get_f64(&self, key: &str) -> Result<Option<f64>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| {
                InferError::metadata(
                    &self.file,
                    key,
                    format!("expected a number, found {}", v.type_name()),
                )
            }),
        }
    }

    pub fn get_bool(&self, key: &str) -> Result<Option<bool>> {
        match self.get(key) {
            None => Ok(None),
            Some(v) => v.as_bool().map(Some).ok_or_else(|| {
                InferError::metadata(
                    &self.file,
                    key,
                    format!("expected a bool, found {}", v.type_name()),
                )
            }),
        }
    }

    pub fn require_u64(&self, key: &str) -> Result<u64> {
        self.get_u64(key)?
            .ok_or_else(|| InferError::metadata(&self.file, key, "missing"))
    }

    pub fn tensor(&self, name: &str) -> Option<&TensorInfo> {
        self.tensor_index.get(name).map(|&i| &self.tensors[i])
    }

    /// The tensor's bytes: borrowed from the source when it is one shared buffer, else copied
    /// out of it (one allocation per tensor).
    pub fn tensor_bytes(&self, src: &dyn ByteSource, info: &TensorInfo) -> Result<TensorBytes> {
        let start = self.data_offset + info.offset;
        let too_big = || {
            InferError::tensor(
                &self.file,
                &info.name,
                "does not fit in memory on this platform",
            )
        };
        let len = usize::try_from(info.n_bytes).map_err(|_| too_big())?;
        if let Some(shared) = src.shared() {
            let start = usize::try_from(start).map_err(|_| too_big())?;
            return TensorBytes::new(shared, start, len).ok_or_else(|| {
                InferError::tensor(&self.file, &info.name, "data lies outside the file")
            });
        }
        let mut buf = vec![0u8; len];
        src.read_at(start, &mut buf)
            .map_err(|source| InferError::Io {
                file: self.file.clone(),
                source,
            })?;
        Ok(TensorBytes::from_vec(buf))
    }
}
