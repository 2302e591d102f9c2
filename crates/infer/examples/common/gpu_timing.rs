//! Timing one kernel's dispatches, shared by gpu_kernels_bench and gpu_bench (included with
//! `#[path]`; this folder has no main.rs, so it is no example of its own).

use ragscope_infer::gpu::{BenchPipeline, GpuContext, GpuError};
use wgpu::util::DeviceExt;

/// How long one dispatch took, and how that was measured.
#[derive(Debug, Clone, Copy)]
pub struct KernelTime {
    /// Seconds per dispatch (mean over the repetitions).
    pub seconds: f64,
    /// "gpu-timestamps" or "wall-clock".
    pub timed_by: &'static str,
    /// Dispatches in the timed pass (gpu_bench reports it; gpu_kernels_bench does not).
    #[allow(dead_code)]
    pub reps: usize,
}

/// Seconds one timed submit may take at most (far below drivers' watchdogs).
const SUBMIT_BUDGET_S: f64 = 0.25;

/// Binds `words` (the kernel's uniform parameters, padded to 8) and `bufs` (bindings 1.. in
/// order) to `k`.
pub fn bind(
    ctx: &GpuContext,
    k: &BenchPipeline,
    words: &[u32],
    bufs: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    let dev = ctx.device();
    let mut w = words.to_vec();
    w.resize(8, 0);
    let wb: Vec<u8> = w.iter().flat_map(|x| x.to_le_bytes()).collect();
    let params = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("bench params"),
        contents: &wb,
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let mut entries = vec![wgpu::BindGroupEntry {
        binding: 0,
        resource: params.as_entire_binding(),
    }];
    for (i, b) in bufs.iter().enumerate() {
        entries.push(wgpu::BindGroupEntry {
            binding: i as u32 + 1,
            resource: b.as_entire_binding(),
        });
    }
    dev.create_bind_group(&wgpu::BindGroupDescriptor {
        label: None,
        layout: &k.layout,
        entries: &entries,
    })
}

/// Reads the two u64 timestamps back from `staging` (mapped for reading).
fn read_ticks(ctx: &GpuContext, staging: &wgpu::Buffer) -> Result<(u64, u64), GpuError> {
    let (tx, rx) = std::sync::mpsc::channel();
    staging.map_async(wgpu::MapMode::Read, 0..16, move |r| {
        let _ = tx.send(r);
    });
    ctx.device()
        .poll(wgpu::PollType::wait_indefinitely())
        .map_err(|e| GpuError::Device(format!("waiting for the GPU: {e}")))?;
    let mapped = rx
        .recv()
        .map_err(|_| GpuError::DeviceLost("the GPU dropped a readback".into()))?;
    mapped.map_err(|e| GpuError::Device(format!("mapping the timestamps: {e}")))?;
    let ticks = {
        let view = staging
            .get_mapped_range(0..16)
            .map_err(|e| GpuError::Device(format!("reading the timestamps: {e}")))?;
        let word =
            |i: usize| u64::from_le_bytes(view[8 * i..8 * i + 8].try_into().unwrap_or([0; 8]));
        (word(0), word(1))
    };
    staging.unmap();
    Ok(ticks)
}

/// Times `reps` dispatches of `k` (bound to `bg`) in one compute pass, after warm-up
/// dispatches (pipeline and memory first touches, clocks); fewer when `reps` would exceed
/// SUBMIT_BUDGET_S. GPU time from timestamp queries around the pass when the device has them,
/// else wall time from submit to completion (which includes the submit's overhead).
pub fn time_dispatches(
    ctx: &GpuContext,
    k: &BenchPipeline,
    bg: &wgpu::BindGroup,
    groups: (u32, u32, u32),
    reps: usize,
) -> Result<KernelTime, GpuError> {
    let dev = ctx.device();
    let query = ctx.has_timestamps().then(|| {
        dev.create_query_set(&wgpu::QuerySetDescriptor {
            label: Some("bench timestamps"),
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        })
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
    // Wall seconds of the submit, and the pass's GPU seconds when timed with timestamps.
    let submit = |n: usize, timed: bool| -> Result<(f64, Option<f64>), GpuError> {
        let mut enc = dev.create_command_encoder(&Default::default());
        {
            let tw = query
                .as_ref()
                .filter(|_| timed)
                .map(|q| wgpu::ComputePassTimestampWrites {
                    query_set: q,
                    beginning_of_pass_write_index: Some(0),
                    end_of_pass_write_index: Some(1),
                });
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("bench"),
                timestamp_writes: tw,
            });
            pass.set_pipeline(&k.pipeline);
            pass.set_bind_group(0, bg, &[]);
            for _ in 0..n {
                pass.dispatch_workgroups(groups.0, groups.1, groups.2);
            }
        }
        if let (Some(q), true) = (&query, timed) {
            enc.resolve_query_set(q, 0..2, &resolve, 0);
            enc.copy_buffer_to_buffer(&resolve, 0, &staging, 0, 16);
        }
        let t0 = std::time::Instant::now();
        ctx.queue().submit([enc.finish()]);
        dev.poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Device(format!("waiting for the GPU: {e}")))?;
        let wall = t0.elapsed().as_secs_f64();
        if !(timed && query.is_some()) {
            return Ok((wall, None));
        }
        let (start, end) = read_ticks(ctx, &staging)?;
        let ns = end.saturating_sub(start) as f64 * ctx.queue().get_timestamp_period() as f64;
        Ok((wall, (ns > 0.0).then_some(ns * 1e-9)))
    };
    let (one, _) = submit(1, false)?;
    let reps = ((SUBMIT_BUDGET_S / one.max(1e-6)) as usize).clamp(1, reps.max(1));
    // A quarter as many again before timing. A cold GPU still reads low: on a fresh H100
    // machine the first process's first shapes gave 3-9 % of peak at 2,048 tokens where the
    // same run's second round gave 20-42 %, so tables come from a second round.
    submit(reps.div_ceil(4), false)?;
    let (wall, gpu) = submit(reps, true)?;
    if let Some(e) = ctx.bench_failure() {
        return Err(e);
    }
    let (total, timed_by) = match gpu {
        Some(s) => (s, "gpu-timestamps"),
        None => (wall, "wall-clock"),
    };
    Ok(KernelTime {
        seconds: total / reps as f64,
        timed_by,
        reps,
    })
}
