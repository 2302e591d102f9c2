//! The matmul kernels alone, for `cargo xtask bench infer`: each prefill GEMM of the first layer
//! (and the LM head's first vocabulary slice) with `m` activation rows, timed on the GPU with
//! timestamp queries around a pass of repeated dispatches when the adapter has them, else by the
//! wall time from submit to completion (labelled so; it includes the submit's overhead). The
//! achieved FLOP/s is 2·M·N·K per product over its time: compared with the GPU's peak f32
//! FLOP/s it gives the fraction of peak the tiled matmul reaches.

use super::engine::{GpuMatrix, GpuModel};
use super::error::GpuError;
use std::time::Instant;
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

/// Seconds one timed submit may take at most (far below drivers' watchdogs).
const SUBMIT_BUDGET_S: f64 = 0.25;

impl GpuModel {
    /// Times the first layer's matmuls and the LM head with `m` rows, up to `reps` products each.
    pub fn bench_matmuls(&self, m: usize, reps: usize) -> Result<Vec<MatmulTiming>, GpuError> {
        let Some(l) = self.layers.first() else {
            return Ok(Vec::new());
        };
        let mats: [(&str, &GpuMatrix); 8] = [
            ("attn_q", &l.wq),
            ("attn_k", &l.wk),
            ("attn_v", &l.wv),
            ("attn_output", &l.wo),
            ("ffn_gate", &l.w_gate),
            ("ffn_up", &l.w_up),
            ("ffn_down", &l.w_down),
            ("output (first slice)", &self.lm_head),
        ];
        mats.iter()
            .map(|(name, mat)| self.time_matrix(name, mat, m, reps.max(1)))
            .collect()
    }

    fn time_matrix(
        &self,
        name: &str,
        mat: &GpuMatrix,
        m: usize,
        reps: usize,
    ) -> Result<MatmulTiming, GpuError> {
        let ctx = self.context();
        let dev = &ctx.device;
        let Some((w, _, n)) = mat.chunks.first() else {
            return Err(GpuError::Device(format!("{name}: no rows")));
        };
        let (n, k) = (*n, mat.cols);
        let max = ctx.max_binding() as usize;
        let m = m.min(max / (4 * k)).min(max / (4 * n)).max(1);
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
            size: (4 * m * n) as u64,
            usage: wgpu::BufferUsages::STORAGE,
            mapped_at_creation: false,
        });
        let words: Vec<u8> = [m, n, k, mat.row_words, n, 0, 0, 0]
            .iter()
            .flat_map(|&v| (v as u32).to_le_bytes())
            .collect();
        let params = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("bench params"),
            contents: &words,
            usage: wgpu::BufferUsages::UNIFORM,
        });
        // The kernel and grid the engine uses for this shape.
        let (kernel, groups) = super::engine::matmul_plan(&ctx.kernels, mat.ty, n, m);
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
        let queries = ctx.timestamps.then(|| {
            let set = dev.create_query_set(&wgpu::QuerySetDescriptor {
                label: Some("bench timestamps"),
                ty: wgpu::QueryType::Timestamp,
                count: 2,
            });
            let resolve = dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bench resolve"),
                size: 16,
                usage: wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: false,
            });
            let staging = dev.create_buffer(&wgpu::BufferDescriptor {
                label: Some("bench timestamps readback"),
                size: 16,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            });
            (set, resolve, staging)
        });
        let run = |count: usize, timed: bool| -> Result<(f64, Option<f64>), GpuError> {
            let mut enc = dev.create_command_encoder(&Default::default());
            {
                let tw = match (&queries, timed) {
                    (Some((set, _, _)), true) => Some(wgpu::ComputePassTimestampWrites {
                        query_set: set,
                        beginning_of_pass_write_index: Some(0),
                        end_of_pass_write_index: Some(1),
                    }),
                    _ => None,
                };
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("bench matmul"),
                    timestamp_writes: tw,
                });
                pass.set_pipeline(&kernel.pipeline);
                pass.set_bind_group(0, &bg, &[]);
                for _ in 0..count {
                    pass.dispatch_workgroups(groups.0, groups.1, 1);
                }
            }
            if let (Some((set, resolve, staging)), true) = (&queries, timed) {
                enc.resolve_query_set(set, 0..2, resolve, 0);
                enc.copy_buffer_to_buffer(resolve, 0, staging, 0, 16);
            }
            let t = Instant::now();
            ctx.queue.submit([enc.finish()]);
            ctx.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| GpuError::Device(format!("waiting for the GPU: {e}")))?;
            let wall = t.elapsed().as_secs_f64();
            let gpu = match (&queries, timed) {
                (Some((_, _, staging)), true) => {
                    let w = pollster::block_on(super::readback::read_u32(ctx, staging, 16))?;
                    let t0 = w[0] as u64 | (w[1] as u64) << 32;
                    let t1 = w[2] as u64 | (w[3] as u64) << 32;
                    let ns = t1.saturating_sub(t0) as f64 * ctx.queue.get_timestamp_period() as f64;
                    (ns > 0.0).then_some(ns * 1e-9)
                }
                _ => None,
            };
            Ok((wall, gpu))
        };
        // Warm-up (pipeline and memory first touches), then as many products as fit the budget.
        let (one, _) = run(1, false)?;
        let reps = ((SUBMIT_BUDGET_S / one.max(1e-6)) as usize).clamp(1, reps);
        let (wall, gpu) = run(reps, true)?;
        if let Some(e) = ctx.take_failure() {
            return Err(e);
        }
        let (seconds, timer) = match gpu {
            Some(s) => (s, "timestamp queries"),
            None => (wall, "wall time"),
        };
        Ok(MatmulTiming {
            name: name.to_string(),
            ty: mat.ty.name().to_string(),
            m,
            n,
            k,
            reps,
            seconds: seconds / reps as f64,
            timer,
        })
    }
}
