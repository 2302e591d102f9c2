//! y (n_tok × rows) = x (n_tok × cols) · Wᵀ with W quantized on the device (layout.rs) and
//! dequantized inside the tiles: matmul.wgsl (64x64), matmul_large.wgsl (128x128, and its
//! 192-row wide form), each spliced with dequant.wgsl's functions for one weight type
//! (source.rs). The tile per product is chosen by plan.rs (`matmul_plan`, `split_k`).
//!
//! Params words: n_tok, rows (of this chunk), cols, row_words, output row stride, first output
//! column, and K per split (0: unsplit; with K split the grid's z picks the half and output
//! plane, n_tok × stride floats apart). Bindings: W, x, y.

mod source;
pub mod twin;

#[cfg(test)]
mod tests;

pub use source::{matmul_large_source, matmul_source, matmul_source_from, matmul_wide_source};
pub(crate) use source::{matmul_module, sources};

use super::{kernel, Kernel, Recorder, Shared, Slot};
use crate::gguf::GgmlType;
use crate::gpu::layout::{gpu_type_index, GPU_TYPES};
use crate::gpu::plan::{matmul_plan, split_k, MatmulTile};
use std::sync::OnceLock;

/// A weight matrix on the device in the GPU layout (layout.rs).
pub(crate) struct GpuMatrix {
    pub ty: GgmlType,
    pub rows: usize,
    pub cols: usize,
    pub row_words: usize,
    /// (buffer, first row, rows): row chunks that each fit one binding.
    pub chunks: Vec<(wgpu::Buffer, usize, usize)>,
}

/// One matmul tile's kernels, one per weight type, each compiled when a product of that type
/// first needs it: a model uses two to four of the eleven types, and compiling a pipeline costs
/// seconds on a software adapter (SwiftShader compiles each with LLVM) and a noticeable part
/// of opening a device on a real one. Compile errors then surface as the device's uncaptured
/// error, reported after the batch (GpuContext::take_failure).
pub(crate) struct LazyMatmuls {
    device: wgpu::Device,
    label: &'static str,
    source: fn(GgmlType) -> String,
    kernels: [OnceLock<Kernel>; GPU_TYPES.len()],
}

impl LazyMatmuls {
    fn new(device: &wgpu::Device, label: &'static str, source: fn(GgmlType) -> String) -> Self {
        LazyMatmuls {
            device: device.clone(),
            label,
            source,
            kernels: std::array::from_fn(|_| OnceLock::new()),
        }
    }

    /// The kernel for `ty` (every type has one: see [`gpu_type_index`]).
    pub fn get(&self, ty: GgmlType) -> &Kernel {
        self.kernels[gpu_type_index(ty)].get_or_init(|| {
            use Slot::*;
            let label = format!("{}_{}", self.label, ty.name());
            let m = matmul_module(&self.device, &label, &(self.source)(ty));
            kernel(&self.device, &m, "main", &[Uniform, Read, Read, ReadWrite])
        })
    }
}

/// The three tiles' kernels.
#[derive(Clone)]
pub(crate) struct MatmulKernels {
    pub small: Shared<LazyMatmuls>,
    /// The 128x128-tile matmul per weight type, for products with many tiles (plan.rs
    /// `matmul_plan`).
    pub large: Shared<LazyMatmuls>,
    /// The wide tile's kernels; `None` in the browser (its batches stay below the wide tile's
    /// token threshold) and where the device's limits do not fit it (`wide_tile_fits`).
    pub wide: Option<Shared<LazyMatmuls>>,
}

impl MatmulKernels {
    pub(crate) fn new(device: &wgpu::Device) -> Self {
        #[cfg(not(target_arch = "wasm32"))]
        let wide = source::wide_tile_fits(&device.limits())
            .then(|| Shared::new(LazyMatmuls::new(device, "matmul_wide", matmul_wide_source)));
        #[cfg(target_arch = "wasm32")]
        let wide = None;
        MatmulKernels {
            small: Shared::new(LazyMatmuls::new(device, "matmul", matmul_source)),
            large: Shared::new(LazyMatmuls::new(
                device,
                "matmul_large",
                matmul_large_source,
            )),
            wide,
        }
    }

    /// A tile's kernels, one per weight type; `None` for the wide tile on a device without it.
    pub(crate) fn tile(&self, tile: MatmulTile) -> Option<&Shared<LazyMatmuls>> {
        match tile {
            MatmulTile::Small => Some(&self.small),
            MatmulTile::Large => Some(&self.large),
            MatmulTile::Wide => self.wide.as_ref(),
        }
    }
}

/// y = x · Wᵀ, one dispatch per row chunk of W (`wide`: the wide tile allowed).
pub(crate) fn encode(
    rec: &mut Recorder,
    m: &GpuMatrix,
    x: &wgpu::Buffer,
    y: &wgpu::Buffer,
    n_tok: usize,
    wide: bool,
) {
    for (buf, r0, n) in &m.chunks {
        let (_, k, groups) = matmul_plan(rec.kernels(), m.ty, *n, n_tok, wide);
        let words = [
            n_tok as u32,
            *n as u32,
            m.cols as u32,
            m.row_words as u32,
            m.rows as u32,
            *r0 as u32,
        ];
        rec.dispatch(k, &words, &[buf, x, y], groups);
    }
}

/// y = x · Wᵀ, with K split in two (`split_k`) where it helps and `split` allows it (split-K
/// on, and y has room for two planes); only a single-chunk W splits. Returns the planes
/// written (the consumer adds them).
pub(crate) fn encode_split(
    rec: &mut Recorder,
    m: &GpuMatrix,
    x: &wgpu::Buffer,
    y: &wgpu::Buffer,
    n_tok: usize,
    wide: bool,
    split: bool,
) -> usize {
    let kernels = rec.kernels();
    let splits = match m.chunks.as_slice() {
        [(_, _, n)] if split => {
            let (tile, _, _) = matmul_plan(kernels, m.ty, *n, n_tok, wide);
            split_k(tile, m.ty, *n, n_tok, m.cols)
        }
        _ => 1,
    };
    if splits == 1 {
        encode(rec, m, x, y, n_tok, wide);
        return 1;
    }
    let (buf, _, n) = &m.chunks[0];
    let (_, k, (gx, gy)) = matmul_plan(kernels, m.ty, *n, n_tok, wide);
    let words = [
        n_tok as u32,
        *n as u32,
        m.cols as u32,
        m.row_words as u32,
        m.rows as u32,
        0,
        (m.cols / splits) as u32,
    ];
    rec.dispatch_z(k, &words, &[buf, x, y], (gx, gy, splits as u32));
    splits
}
