//! The kernels, one folder per operation: its WGSL (`include_str!` from the same folder), its
//! launcher (pipeline, parameter words, bindings, grid), its CPU twin and the test comparing
//! the two. This module holds what they share: the explicit binding layouts, the compiled
//! kernel set of a device, and the `Recorder` through which every launcher dispatches.
//!
//! One folder per WGSL module, except that the matmul folder holds three: its 64x64 and
//! 128x128 (and 192-row) tile shaders are one operation with the same bindings, parameters,
//! launcher, twin and test, and dequant.wgsl is no kernel but the function library spliced
//! into each of them. The elementwise folder holds its ten entry points (bias, residual adds,
//! activations, column split, gather, scatter) that share one WGSL module and one layout.

pub mod argmax;
pub mod attention;
pub mod decode_attention;
pub mod elementwise;
pub mod matmul;
pub mod rms_norm;
pub mod rope;
pub mod softmax;

#[cfg(test)]
pub(crate) mod test_util;

use super::error::GpuError;
#[cfg(not(target_arch = "wasm32"))]
use std::sync::Arc;

/// What a binding is (explicit layouts: unused bindings still take a slot).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Slot {
    Uniform,
    Read,
    ReadWrite,
}

#[derive(Clone)]
pub(crate) struct Kernel {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
    pub slots: Vec<Slot>,
}

/// Shared handle to lazily compiled kernels: `Arc` natively (contexts cross threads), `Rc` in
/// the browser, where wgpu's handles are neither `Send` nor `Sync` and one worker owns them.
#[cfg(not(target_arch = "wasm32"))]
pub(crate) type Shared<T> = Arc<T>;
#[cfg(target_arch = "wasm32")]
pub(crate) type Shared<T> = std::rc::Rc<T>;

/// The compiled kernels of one device, one field per operation.
#[derive(Clone)]
pub(crate) struct Kernels {
    pub matmul: matmul::MatmulKernels,
    pub rms_norm: Kernel,
    pub rope: Kernel,
    pub elementwise: elementwise::ElementwiseKernels,
    pub attention: attention::AttentionKernels,
    pub softmax: Kernel,
    pub decode_attention: Kernel,
    pub argmax: Kernel,
}

impl Kernels {
    pub(crate) async fn compile(device: &wgpu::Device) -> Result<Kernels, GpuError> {
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let k = Kernels {
            matmul: matmul::MatmulKernels::new(device),
            rms_norm: rms_norm::compile(device),
            rope: rope::compile(device),
            elementwise: elementwise::compile(device),
            attention: attention::compile(device),
            softmax: softmax::compile(device),
            decode_attention: decode_attention::compile(device),
            argmax: argmax::compile(device),
        };
        if let Some(e) = scope.pop().await {
            return Err(GpuError::Device(format!("compiling the shaders: {e}")));
        }
        Ok(k)
    }
}

/// Every shader module's source with a label (compiled in Chrome by the wasm test too).
pub fn all_shader_sources() -> Vec<(String, String)> {
    let mut out = matmul::sources();
    out.push(("rms_norm".into(), rms_norm::WGSL.into()));
    out.push(("rope".into(), rope::WGSL.into()));
    out.push(("elementwise".into(), elementwise::WGSL.into()));
    out.extend(attention::sources());
    out.push(("softmax".into(), softmax::WGSL.into()));
    out.push(("decode_attention".into(), decode_attention::WGSL.into()));
    out.push(("argmax".into(), argmax::WGSL.into()));
    out
}

/// A checked shader module (every kernel but the matmul tiles: see matmul's `module`).
pub(crate) fn module(device: &wgpu::Device, label: &str, src: &str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(src.into()),
    })
}

fn layout_entries(slots: &[Slot]) -> Vec<wgpu::BindGroupLayoutEntry> {
    slots
        .iter()
        .enumerate()
        .map(|(i, s)| wgpu::BindGroupLayoutEntry {
            binding: i as u32,
            visibility: wgpu::ShaderStages::COMPUTE,
            ty: wgpu::BindingType::Buffer {
                ty: match s {
                    Slot::Uniform => wgpu::BufferBindingType::Uniform,
                    Slot::Read => wgpu::BufferBindingType::Storage { read_only: true },
                    Slot::ReadWrite => wgpu::BufferBindingType::Storage { read_only: false },
                },
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        })
        .collect()
}

pub(crate) fn kernel(
    device: &wgpu::Device,
    module: &wgpu::ShaderModule,
    entry: &str,
    slots: &[Slot],
) -> Kernel {
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(entry),
        entries: &layout_entries(slots),
    });
    let pl = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(entry),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: Some(&pl),
        module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    });
    Kernel {
        pipeline,
        layout,
        slots: slots.to_vec(),
    }
}

/// Splits `n` workgroups into a 2-D grid within the 65,535-per-dimension limit.
pub(crate) fn grid(n: usize) -> (u32, u32) {
    let gx = n.clamp(1, 32768);
    (gx as u32, n.div_ceil(gx).max(1) as u32)
}

pub(crate) fn u32_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// The uniform parameter buffers of a model's dispatches, kept and reused across batches: the
/// n-th dispatch since the last `reset` writes the n-th buffer (each submit's dispatches need
/// their own, as the queue's writes all land before the submit runs).
#[derive(Default)]
pub(crate) struct Params {
    bufs: Vec<wgpu::Buffer>,
    next: usize,
}

impl Params {
    pub fn reset(&mut self) {
        self.next = 0;
    }
}

/// Records dispatches into one compute pass: the launchers' only way to the GPU.
pub(crate) struct Recorder<'r, 'p> {
    pub ctx: &'r super::GpuContext,
    params: &'r mut Params,
    pass: &'r mut wgpu::ComputePass<'p>,
}

impl<'r, 'p> Recorder<'r, 'p> {
    pub fn new(
        ctx: &'r super::GpuContext,
        params: &'r mut Params,
        pass: &'r mut wgpu::ComputePass<'p>,
    ) -> Self {
        Recorder { ctx, params, pass }
    }

    /// The device's kernels (a handle that outlives the recorder's borrows).
    pub fn kernels(&self) -> &'r Kernels {
        &self.ctx.kernels
    }

    /// Records one dispatch: `words` are the kernel's uniform parameters, `bufs` its
    /// bindings 1.. in order.
    pub fn dispatch(&mut self, k: &Kernel, words: &[u32], bufs: &[&wgpu::Buffer], g: (u32, u32)) {
        self.dispatch_z(k, words, bufs, (g.0, g.1, 1));
    }

    /// `dispatch` with a 3-D grid.
    pub fn dispatch_z(
        &mut self,
        k: &Kernel,
        words: &[u32],
        bufs: &[&wgpu::Buffer],
        groups: (u32, u32, u32),
    ) {
        let dev = &self.ctx.device;
        let p = &mut *self.params;
        if p.next == p.bufs.len() {
            p.bufs.push(dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("params"),
                size: 32,
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        let pb = &p.bufs[p.next];
        p.next += 1;
        let mut w = words.to_vec();
        w.resize(8, 0);
        self.ctx.queue.write_buffer(pb, 0, &u32_bytes(&w));
        debug_assert_eq!(k.slots.len(), bufs.len() + 1);
        debug_assert_eq!(k.slots[0], Slot::Uniform);
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: pb.as_entire_binding(),
        }];
        for (i, b) in bufs.iter().enumerate() {
            entries.push(wgpu::BindGroupEntry {
                binding: i as u32 + 1,
                resource: b.as_entire_binding(),
            });
        }
        let bg = dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &k.layout,
            entries: &entries,
        });
        self.pass.set_pipeline(&k.pipeline);
        self.pass.set_bind_group(0, &bg, &[]);
        self.pass.dispatch_workgroups(groups.0, groups.1, groups.2);
    }
}
