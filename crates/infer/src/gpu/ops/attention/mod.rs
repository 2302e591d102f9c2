//! Causal grouped-query attention over packed variable-length prompts (attention.wgsl): online
//! softmax over key tiles, memory linear in the prompt; heads of up to 128 values, and of up to
//! 256 in its wide form. Params: the geometry's words, then the sliding window (0: none).
//! Bindings: q, k, v, each token's prompt start, out.

pub mod twin;

#[cfg(test)]
mod tests;

use super::{kernel, module, Kernel, Recorder, Slot};

pub(crate) const WGSL: &str = include_str!("attention.wgsl");

/// attention.wgsl for heads up to 256 values (the key tiles then hold 4 keys: they stay 256
/// vec4s of keys and as many of values).
fn wide_source() -> String {
    WGSL.replace("const MAX_HD: u32 = 128u;", "const MAX_HD: u32 = 256u;")
        .replace("const MAX_HD4: u32 = 32u;", "const MAX_HD4: u32 = 64u;")
}

pub(crate) fn sources() -> Vec<(String, String)> {
    vec![
        ("attention".into(), WGSL.into()),
        ("attention_wide".into(), wide_source()),
    ]
}

#[derive(Clone)]
pub(crate) struct AttentionKernels {
    pub normal: Kernel,
    /// For heads of 129 to 256 values.
    pub wide: Kernel,
}

pub(crate) fn compile(device: &wgpu::Device) -> AttentionKernels {
    use Slot::*;
    let slots = [Uniform, Read, Read, Read, Read, ReadWrite];
    let normal = module(device, "attention", WGSL);
    let wide = module(device, "attention_wide", &wide_source());
    AttentionKernels {
        normal: kernel(device, &normal, "main", &slots),
        wide: kernel(device, &wide, "main", &slots),
    }
}

/// The shape of one attention (prefill or decoding step): queries, heads and the score scale.
#[derive(Clone, Copy)]
pub(crate) struct Geometry {
    pub n_tok: usize,
    pub n_head: usize,
    pub n_kv: usize,
    pub head_dim: usize,
    pub scale: f32,
}

impl Geometry {
    /// The Params words both attention kernels start with.
    pub fn words(&self) -> [u32; 7] {
        let hd = self.head_dim;
        [
            self.n_tok as u32,
            self.n_head as u32,
            hd as u32,
            (self.n_head * hd) as u32,
            (self.n_kv * hd) as u32,
            (self.n_head / self.n_kv) as u32,
            self.scale.to_bits(),
        ]
    }
}

/// out = attention of the packed prompts' queries over their own keys (`start[t]`: token t's
/// prompt start; `window` > 0: only the last `window` keys).
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode(
    rec: &mut Recorder,
    g: &Geometry,
    window: usize,
    (q, k, v): (&wgpu::Buffer, &wgpu::Buffer, &wgpu::Buffer),
    start: &wgpu::Buffer,
    out: &wgpu::Buffer,
) {
    let mut words = g.words().to_vec();
    words.push(window as u32);
    let groups = (g.n_tok.div_ceil(64) as u32, g.n_head as u32);
    let kn = &rec.kernels().attention;
    let kern = if g.head_dim > 128 {
        &kn.wide
    } else {
        &kn.normal
    };
    rec.dispatch(kern, &words, &[q, k, v, start, out], groups);
}
