//! Rotary position embedding in place (rope.wgsl), from the host's cos/sin tables (the CPU
//! engine's, so every RoPE variant it knows is one table). Params: n_tok, heads, head_dim,
//! n_rot, neox, grid width. Bindings: x (in place), positions, cos, sin.

pub mod twin;

#[cfg(test)]
mod tests;

use super::{grid, kernel, module, Kernel, Recorder, Slot};

pub(crate) const WGSL: &str = include_str!("rope.wgsl");

pub(crate) fn compile(device: &wgpu::Device) -> Kernel {
    use Slot::*;
    let m = module(device, "rope", WGSL);
    kernel(device, &m, "main", &[Uniform, ReadWrite, Read, Read, Read])
}

/// The rotation of `y`'s `n_tok` rows of `heads` heads of `hd` values (the first `n_rot` of
/// each rotate; `neox`: pairs (i, i + n_rot/2), else (2i, 2i+1)) at positions `pos`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode(
    rec: &mut Recorder,
    y: &wgpu::Buffer,
    pos: &wgpu::Buffer,
    (cos, sin): (&wgpu::Buffer, &wgpu::Buffer),
    n_tok: usize,
    heads: usize,
    hd: usize,
    n_rot: usize,
    neox: bool,
) {
    let n = n_tok * heads * (n_rot / 2);
    if n == 0 {
        return;
    }
    let (gx, gy) = grid(n.div_ceil(64));
    let words = [
        n_tok as u32,
        heads as u32,
        hd as u32,
        n_rot as u32,
        u32::from(neox),
        gx,
    ];
    let k = &rec.kernels().rope;
    rec.dispatch(k, &words, &[y, pos, cos, sin], (gx, gy));
}
