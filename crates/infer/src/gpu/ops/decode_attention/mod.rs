//! A decoding step's attention (decode_attention.wgsl): each new token's query against its own
//! prompt's KV-cache rows `range[2i]..=range[2i+1]`. Params: the attention geometry's words.
//! Bindings: q, K cache, V cache, ranges, out.

pub mod twin;

#[cfg(test)]
mod tests;

use super::attention::Geometry;
use super::{kernel, module, Kernel, Recorder, Slot};

pub(crate) const WGSL: &str = include_str!("decode_attention.wgsl");

pub(crate) fn compile(device: &wgpu::Device) -> Kernel {
    use Slot::*;
    let m = module(device, "decode_attention", WGSL);
    kernel(
        device,
        &m,
        "main",
        &[Uniform, Read, Read, Read, Read, ReadWrite],
    )
}

/// out = attention of `g.n_tok` queries (one per running prompt) over their cache ranges.
pub(crate) fn encode(
    rec: &mut Recorder,
    g: &Geometry,
    q: &wgpu::Buffer,
    (k_cache, v_cache): (&wgpu::Buffer, &wgpu::Buffer),
    range: &wgpu::Buffer,
    out: &wgpu::Buffer,
) {
    let groups = (g.n_tok as u32, g.n_head as u32);
    let k = &rec.kernels().decode_attention;
    rec.dispatch(k, &g.words(), &[q, k_cache, v_cache, range, out], groups);
}
