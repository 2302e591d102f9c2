//! Tensors of the model, checked against the shapes the metadata implies. Matrices stay in their
//! GGUF encoding (dequantized a block of rows at a time by the matmul); vectors are expanded once.

use crate::error::{InferError, Result};
use crate::gguf::{dequantize_row, ByteSource, GgmlType, GgufFile, TensorBytes};

/// A matrix of `rows` output rows, each `cols` weights long (ggml dims `[cols, rows]`).
#[derive(Debug, Clone)]
pub struct Matrix {
    pub(crate) name: String,
    pub(crate) ty: GgmlType,
    pub(crate) rows: usize,
    pub(crate) cols: usize,
    pub(crate) bytes: TensorBytes,
}

impl Matrix {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn ty(&self) -> GgmlType {
        self.ty
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// The raw GGUF bytes (rows × `row_bytes()`), e.g. for upload to a GPU.
    pub fn bytes(&self) -> &[u8] {
        self.bytes.as_slice()
    }

    pub fn row_bytes(&self) -> usize {
        self.ty.row_bytes(self.cols)
    }

    /// Dequantizes rows `start..start + out.len() / cols` into `out` (the range must lie within
    /// the matrix; shapes and byte lengths were validated when it was loaded).
    pub fn dequantize_rows(&self, start: usize, out: &mut [f32]) {
        let rb = self.row_bytes();
        let n = out.len() / self.cols;
        let src = &self.bytes.as_slice()[start * rb..(start + n) * rb];
        for (r, dst) in out.chunks_exact_mut(self.cols).enumerate() {
            // Lengths were validated when the tensor was loaded; a failure here is a bug.
            if let Err(e) = dequantize_row(self.ty, &src[r * rb..(r + 1) * rb], dst) {
                unreachable!("{}: {e}", self.name);
            }
        }
    }
}

pub(crate) struct Loader<'a> {
    pub g: &'a GgufFile,
    pub src: &'a dyn ByteSource,
}

impl Loader<'_> {
    fn shape_error(&self, name: &str, dims: &[u64], want: &[usize]) -> InferError {
        InferError::tensor(
            &self.g.file,
            name,
            format!("has shape {dims:?} but the metadata implies {want:?}"),
        )
    }

    pub fn has(&self, name: &str) -> bool {
        self.g.tensor(name).is_some()
    }

    pub fn matrix(&self, name: &str, cols: usize, rows: usize) -> Result<Matrix> {
        let t = self
            .g
            .tensor(name)
            .ok_or_else(|| InferError::tensor(&self.g.file, name, "missing"))?;
        if t.dims.len() != 2 || t.dims[0] as usize != cols || t.dims[1] as usize != rows {
            return Err(self.shape_error(name, &t.dims, &[cols, rows]));
        }
        Ok(Matrix {
            name: name.to_string(),
            ty: t.ty,
            rows,
            cols,
            bytes: self.g.tensor_bytes(self.src, t)?,
        })
    }

    pub fn vector(&self, name: &str, len: usize) -> Result<Vec<f32>> {
        let t = self
            .g
            .tensor(name)
            .ok_or_else(|| InferError::tensor(&self.g.file, name, "missing"))?;
        let n: u64 = t.dims.iter().product();
        if n as usize != len || t.dims[0] as usize != len {
            return Err(self.shape_error(name, &t.dims, &[len]));
        }
        let bytes = self.g.tensor_bytes(self.src, t)?;
        let mut out = vec![0f32; len];
        dequantize_row(t.ty, bytes.as_slice(), &mut out)
            .map_err(|e| InferError::tensor(&self.g.file, name, e))?;
        Ok(out)
    }

    pub fn optional_vector(&self, name: &str, len: usize) -> Result<Option<Vec<f32>>> {
        if self.has(name) {
            self.vector(name, len).map(Some)
        } else {
            Ok(None)
        }
    }
}
