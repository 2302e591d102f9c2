//! Element-wise kernels over n values (elementwise.wgsl, one module, ten entry points with one
//! layout): bias and residual adds (residual_split also adds a split-K product's two planes),
//! SwiGLU/GeGLU, the last rows' gather, the KV cache's scatter, and the fused projections'
//! column split and activations over gate|up rows. Params: n, dim, grid width (split: source
//! stride, first column, second plane's offset). Bindings: y, a, row indices.

pub mod twin;

#[cfg(test)]
mod tests;

use super::{grid, kernel, module, Kernel, Recorder, Slot};

pub(crate) const WGSL: &str = include_str!("elementwise.wgsl");

/// One kernel per entry point.
#[derive(Clone)]
pub(crate) struct ElementwiseKernels {
    pub bias: Kernel,
    pub residual: Kernel,
    /// The residual add of a split-K product's two planes.
    pub residual_split: Kernel,
    pub swiglu: Kernel,
    /// Column slice of wider rows, and SwiGLU/GeGLU over gate|up rows (the fused projections).
    pub split: Kernel,
    pub swiglu_halves: Kernel,
    pub geglu_halves: Kernel,
    pub gather: Kernel,
    pub scatter: Kernel,
    pub geglu: Kernel,
}

pub(crate) fn compile(device: &wgpu::Device) -> ElementwiseKernels {
    use Slot::*;
    let m = module(device, "elementwise", WGSL);
    let k = |entry: &str| kernel(device, &m, entry, &[Uniform, ReadWrite, Read, Read]);
    ElementwiseKernels {
        bias: k("bias"),
        residual: k("residual"),
        residual_split: k("residual_split"),
        swiglu: k("swiglu"),
        split: k("split"),
        swiglu_halves: k("swiglu_halves"),
        geglu_halves: k("geglu_halves"),
        gather: k("gather"),
        scatter: k("scatter"),
        geglu: k("geglu"),
    }
}

/// One of the kernels over `n` values of `dim`-wide rows: y op= a (`rows`: the gather's and
/// scatter's row indices; any buffer for the others, which do not read it).
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode(
    rec: &mut Recorder,
    k: &Kernel,
    n: usize,
    dim: usize,
    y: &wgpu::Buffer,
    a: &wgpu::Buffer,
    rows: &wgpu::Buffer,
) {
    let (gx, gy) = grid(n.div_ceil(64));
    rec.dispatch(k, &[n as u32, dim as u32, gx], &[y, a, rows], (gx, gy));
}

/// y (n_tok × dim) = columns `col..col + dim` of a's `stride`-wide rows (`cols` = (stride,
/// col, plane)), plus those of the plane `plane` floats further when `plane` > 0.
#[allow(clippy::too_many_arguments)]
pub(crate) fn split(
    rec: &mut Recorder,
    y: &wgpu::Buffer,
    a: &wgpu::Buffer,
    n_tok: usize,
    dim: usize,
    cols: (usize, usize, usize),
    unused: &wgpu::Buffer,
) {
    let (stride, col, plane) = cols;
    let n = n_tok * dim;
    let (gx, gy) = grid(n.div_ceil(64));
    let words = [
        n as u32,
        dim as u32,
        gx,
        stride as u32,
        col as u32,
        plane as u32,
    ];
    let k = &rec.kernels().elementwise.split;
    rec.dispatch(k, &words, &[y, a, unused], (gx, gy));
}
