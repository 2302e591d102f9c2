//! p(target) of each row of logits (softmax.wgsl): one float per prompt is read back instead of
//! its logits. Params: rows, columns. Bindings: logits, target ids, probabilities.

pub mod twin;

#[cfg(test)]
mod tests;

use super::{kernel, module, Kernel, Recorder, Slot};

pub(crate) const WGSL: &str = include_str!("softmax.wgsl");

pub(crate) fn compile(device: &wgpu::Device) -> Kernel {
    use Slot::*;
    let m = module(device, "softmax", WGSL);
    kernel(device, &m, "main", &[Uniform, Read, Read, ReadWrite])
}

/// probs[r] = softmax(logits[r])[targets[r]] for `rows` rows of `cols` logits.
pub(crate) fn encode(
    rec: &mut Recorder,
    logits: &wgpu::Buffer,
    targets: &wgpu::Buffer,
    probs: &wgpu::Buffer,
    rows: usize,
    cols: usize,
) {
    let words = [rows as u32, cols as u32];
    let k = &rec.kernels().softmax;
    rec.dispatch(k, &words, &[logits, targets, probs], (rows as u32, 1));
}
