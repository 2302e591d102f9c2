//! The matmul kernels alone, for `cargo xtask bench infer`: each prefill GEMM of the first layer
//! (and the LM head's first vocabulary slice) with `m` activation rows, timed on the GPU with
//! timestamp queries around a pass of repeated dispatches when the adapter has them, else by the
//! wall time from submit to completion (labelled so; it includes the submit's overhead). The
//! achieved FLOP/s is 2·M·N·K per product over its time: compared with the GPU's peak f32
//! FLOP/s it gives the fraction of peak the tiled matmul reaches.

use super::bench::time_dispatches;
use super::engine::{matmul_plan, split_k, GpuMatrix, GpuModel};
use super::error::GpuError;
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

impl GpuModel {
    /// Times the first layer's matmuls and the LM head with `m` rows, up to `reps` products each
    /// (Q|K|V and gate|up fused where the engine fuses them; O and down with the engine's K
    /// split).
    pub fn bench_matmuls(&self, m: usize, reps: usize) -> Result<Vec<MatmulTiming>, GpuError> {
        let Some(l) = self.layers.first() else {
            return Ok(Vec::new());
        };
        let mut mats: Vec<(&str, &GpuMatrix, bool)> = Vec::new();
        let qkv = l
            .qkv
            .matrices(&["attn_q", "attn_k", "attn_v"], "attn_qkv (fused)");
        // As encode_layer: the fused Q|K|V, and O and down where no post-norm reads them, may
        // split K.
        let split = self.split_k_on();
        let fused = l.qkv.is_fused();
        mats.extend(qkv.into_iter().map(|(n, m)| (n, m, split && fused)));
        mats.push(("attn_output", &l.wo, split && l.post_attn_norm.is_none()));
        let ff = l
            .gate_up
            .matrices(&["ffn_gate", "ffn_up"], "ffn_gate_up (fused)");
        mats.extend(ff.into_iter().map(|(n, m)| (n, m, false)));
        mats.push(("ffn_down", &l.w_down, split && l.post_ffn_norm.is_none()));
        mats.push(("output (first slice)", &self.lm_head, false));
        mats.iter()
            .map(|(name, mat, split)| self.time_matrix(name, mat, m, reps.max(1), *split))
            .collect()
    }

    fn time_matrix(
        &self,
        name: &str,
        mat: &GpuMatrix,
        m: usize,
        reps: usize,
        split: bool,
    ) -> Result<MatmulTiming, GpuError> {
        let ctx = self.context();
        let dev = &ctx.device;
        let Some((w, _, n)) = mat.chunks.first() else {
            return Err(GpuError::Device(format!("{name}: no rows")));
        };
        let (n, k) = (*n, mat.cols);
        let max = ctx.max_binding() as usize;
        let m = m.min(max / (4 * k)).min(max / (8 * n)).max(1);
        let (tile, kernel, (gx, gy)) = matmul_plan(&ctx.kernels, mat.ty, n, m, self.wide_tile_on());
        let splits = if split && mat.chunks.len() == 1 {
            split_k(tile, mat.ty, n, m, k)
        } else {
            1
        };
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
            size: (4 * m * n * splits) as u64,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let k_split = if splits > 1 { k / splits } else { 0 };
        let words: Vec<u8> = [m, n, k, mat.row_words, n, 0, k_split, 0]
            .iter()
            .flat_map(|&v| (v as u32).to_le_bytes())
            .collect();
        let params = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("bench params"),
            contents: &words,
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let bg = dev.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &kernel.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: params.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: w.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: x.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: y.as_entire_binding(),
                },
            ],
        });
        let t = time_dispatches(ctx, kernel, &bg, (gx, gy, splits as u32), reps)?;
        Ok(MatmulTiming {
            name: if splits > 1 {
                format!("{name} (split-K {splits})")
            } else {
                name.to_string()
            },
            ty: mat.ty.name().to_string(),
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
}
