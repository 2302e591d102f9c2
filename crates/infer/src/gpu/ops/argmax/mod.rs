//! The index of each row's largest logit, the first on ties (argmax.wgsl): decoding reads back
//! only these ids. Params: rows, columns. Bindings: logits, ids.

pub mod twin;

#[cfg(test)]
mod tests;

use super::{kernel, module, Kernel, Recorder, Slot};

pub(crate) const WGSL: &str = include_str!("argmax.wgsl");

pub(crate) fn compile(device: &wgpu::Device) -> Kernel {
    use Slot::*;
    let m = module(device, "argmax", WGSL);
    kernel(device, &m, "main", &[Uniform, Read, ReadWrite])
}

/// ids[r] = argmax(logits[r]) for `rows` rows of `cols` logits.
pub(crate) fn encode(
    rec: &mut Recorder,
    logits: &wgpu::Buffer,
    ids: &wgpu::Buffer,
    rows: usize,
    cols: usize,
) {
    let words = [rows as u32, cols as u32];
    let k = &rec.kernels().argmax;
    rec.dispatch(k, &words, &[logits, ids], (rows as u32, 1));
}
