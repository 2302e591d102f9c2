//! RMSNorm of each row (rms_norm.wgsl): one 64-thread workgroup per row. Params: rows, dim,
//! eps (f32 bits), rows per grid row. Bindings: x, weight, y.

pub mod twin;

#[cfg(test)]
mod tests;

use super::{grid, kernel, module, Kernel, Recorder, Slot};

pub(crate) const WGSL: &str = include_str!("rms_norm.wgsl");

pub(crate) fn compile(device: &wgpu::Device) -> Kernel {
    use Slot::*;
    let m = module(device, "rms_norm", WGSL);
    kernel(device, &m, "main", &[Uniform, Read, Read, ReadWrite])
}

/// y = RMSNorm(x) · w over `rows` rows of `dim` values.
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode(
    rec: &mut Recorder,
    x: &wgpu::Buffer,
    w: &wgpu::Buffer,
    y: &wgpu::Buffer,
    rows: usize,
    dim: usize,
    eps: f32,
) {
    let (gx, gy) = grid(rows);
    let words = [rows as u32, dim as u32, eps.to_bits(), gx];
    let k = &rec.kernels().rms_norm;
    rec.dispatch(k, &words, &[x, w, y], (gx, gy));
}
