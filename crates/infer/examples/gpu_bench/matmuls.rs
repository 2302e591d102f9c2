//! The matmul kernels alone: each prefill GEMM of the first layer (and the LM head's first
//! vocabulary slice) with `m` activation rows, as the engine plans it (tile, K split), timed
//! on the GPU with timestamp queries around a pass of repeated dispatches when the adapter has
//! them, else by the wall time from submit to completion (labelled so; it includes the
//! submit's overhead). The achieved FLOP/s is 2·M·N·K per product over its time: compared with
//! the GPU's peak f32 FLOP/s it gives the fraction of peak the tiled matmul reaches.

use crate::timing::{bind, time_dispatches};
use ragscope_infer::gpu::{BenchProduct, GpuError, GpuModel};
use wgpu::util::DeviceExt;

/// One GEMM's timing: y (m × n) = x (m × k) · Wᵀ, W in its GGUF type.
#[derive(Debug, Clone)]
pub struct MatmulTiming {
    pub name: String,
    pub ty: String,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    /// Products in the timed pass.
    pub reps: usize,
    /// Seconds per product.
    pub seconds: f64,
    /// "timestamp queries" (GPU time of the pass) or "wall time" (submit to completion).
    pub timer: &'static str,
}

impl MatmulTiming {
    pub fn flops_per_s(&self) -> f64 {
        2.0 * self.m as f64 * self.n as f64 * self.k as f64 / self.seconds
    }
}

/// Times the first layer's matmuls and the LM head with `m` rows, up to `reps` products each
/// (Q|K|V and gate|up fused where the engine fuses them; O and down with the engine's K split).
pub fn bench_matmuls(gpu: &GpuModel, m: usize, reps: usize) -> Result<Vec<MatmulTiming>, GpuError> {
    gpu.bench_products(m)?
        .iter()
        .map(|p| time_product(gpu, p, reps.max(1)))
        .collect()
}

fn time_product(gpu: &GpuModel, p: &BenchProduct, reps: usize) -> Result<MatmulTiming, GpuError> {
    let ctx = gpu.context();
    let dev = ctx.device();
    let (m, n, k) = (p.m, p.n, p.k);
    let x: Vec<u8> = (0..m * k)
        .flat_map(|i| (((i * 7919) % 1000) as f32 / 1000.0 - 0.5).to_le_bytes())
        .collect();
    let x = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("bench x"),
        contents: &x,
        usage: wgpu::BufferUsages::STORAGE,
    });
    let y = dev.create_buffer(&wgpu::BufferDescriptor {
        label: Some("bench y"),
        size: (4 * m * n * p.splits) as u64,
        usage: wgpu::BufferUsages::STORAGE,
        mapped_at_creation: false,
    });
    let k_split = if p.splits > 1 { k / p.splits } else { 0 };
    let words = [m, n, k, p.row_words, n, 0, k_split].map(|v| v as u32);
    let bg = bind(ctx, &p.kernel, &words, &[&p.weights, &x, &y]);
    let t = time_dispatches(ctx, &p.kernel, &bg, p.groups, reps)?;
    Ok(MatmulTiming {
        name: p.name.clone(),
        ty: p.ty.name().to_string(),
        m,
        n,
        k,
        reps: t.reps,
        seconds: t.seconds,
        timer: if t.timed_by == "gpu-timestamps" {
            "timestamp queries"
        } else {
            "wall time"
        },
    })
}
