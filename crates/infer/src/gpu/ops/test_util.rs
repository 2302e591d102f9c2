//! What the kernel tests share: the device (once per test binary), a seeded generator, and
//! `run`, which dispatches one kernel alone on given inputs and reads one binding back. Each
//! op's tests.rs compares its kernel with its CPU twin on random inputs whose shapes do not
//! divide the tiles (64×64 and 128×128 matmul tiles, 32- and 16-wide K steps, 64-token
//! attention workgroups, 8-key tiles).
//! Without a GPU adapter (e.g. no lavapipe) each test prints `SKIPPED: ...` and asserts nothing,
//! except under `cargo xtask test`, where that fails (crate::test_support).

use super::Kernel;
use crate::gguf::GgmlType;
use crate::gpu::GpuContext;
use half::{bf16, f16};
use std::sync::OnceLock;
use wgpu::util::DeviceExt;

pub(crate) fn context() -> Option<&'static GpuContext> {
    static CTX: OnceLock<Option<GpuContext>> = OnceLock::new();
    CTX.get_or_init(|| match GpuContext::new_blocking() {
        Ok(c) => {
            eprintln!("GPU adapter: {}", c.summary);
            Some(c)
        }
        Err(e) => {
            crate::test_support::skip(&format!("no Vulkan adapter ({e})"));
            None
        }
    })
    .as_ref()
}

pub(crate) struct Rng(pub u64);
impl Rng {
    pub fn next(&mut self) -> u32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 33) as u32
    }
    /// Uniform in [-1, 1).
    pub fn f(&mut self) -> f32 {
        self.next() as f32 / (1u64 << 30) as f32 - 1.0
    }
    pub fn vec(&mut self, n: usize) -> Vec<f32> {
        (0..n).map(|_| self.f()).collect()
    }
}

pub(crate) fn bytes_f32(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}
pub(crate) fn bytes_u32(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

/// Runs one kernel: binding 0 gets `words`, bindings 1.. the given buffers; returns buffer
/// `out` (index into `bufs`) as f32.
pub(crate) fn run(
    ctx: &GpuContext,
    k: &Kernel,
    words: &[u32],
    bufs: &[Vec<u8>],
    out: usize,
    groups: (u32, u32),
) -> Vec<f32> {
    run_z(ctx, k, words, bufs, out, (groups.0, groups.1, 1))
}

/// `run` with a 3-D grid.
pub(crate) fn run_z(
    ctx: &GpuContext,
    k: &Kernel,
    words: &[u32],
    bufs: &[Vec<u8>],
    out: usize,
    groups: (u32, u32, u32),
) -> Vec<f32> {
    let dev = &ctx.device;
    let mut w = words.to_vec();
    w.resize(8, 0);
    let params = dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: None,
        contents: &bytes_u32(&w),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let buffers: Vec<wgpu::Buffer> = bufs
        .iter()
        .map(|b| {
            let mut b = b.clone();
            b.resize(b.len().max(4), 0);
            dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: None,
                contents: &b,
                usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            })
        })
        .collect();
    let mut entries = vec![wgpu::BindGroupEntry {
        binding: 0,
        resource: params.as_entire_binding(),
    }];
    for (i, b) in buffers.iter().enumerate() {
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
    let size = buffers[out].size();
    let staging = dev.create_buffer(&wgpu::BufferDescriptor {
        label: None,
        size,
        usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
        mapped_at_creation: false,
    });
    let mut enc = dev.create_command_encoder(&Default::default());
    {
        let mut pass = enc.begin_compute_pass(&Default::default());
        pass.set_pipeline(&k.pipeline);
        pass.set_bind_group(0, &bg, &[]);
        pass.dispatch_workgroups(groups.0, groups.1, groups.2);
    }
    enc.copy_buffer_to_buffer(&buffers[out], 0, &staging, 0, size);
    ctx.queue.submit([enc.finish()]);
    let r = pollster::block_on(crate::gpu::readback::read_f32(ctx, &staging, size));
    match r {
        Ok(v) => v,
        Err(e) => panic!("kernel failed: {e}"),
    }
}

pub(crate) fn assert_close(name: &str, got: &[f32], want: &[f32], rel: f64) {
    assert!(
        got.len() >= want.len(),
        "{name}: {} values, want {}",
        got.len(),
        want.len()
    );
    let scale = want
        .iter()
        .fold(0f64, |m, &v| m.max((v as f64).abs()))
        .max(1e-30);
    for (i, (&g, &w)) in got.iter().zip(want).enumerate() {
        let d = (g as f64 - w as f64).abs();
        assert!(
            d <= rel * scale && g.is_finite(),
            "{name}[{i}]: GPU {g} vs CPU twin {w} (|diff| {d:e} > {rel} × {scale})"
        );
    }
}

/// Random GGUF bytes for `rows` rows of `cols` weights of `ty`, with finite, moderate scales.
pub(crate) fn random_weights(rng: &mut Rng, ty: GgmlType, rows: usize, cols: usize) -> Vec<u8> {
    let n = rows * cols;
    match ty {
        GgmlType::F32 => bytes_f32(&rng.vec(n)),
        GgmlType::F16 => (0..n)
            .flat_map(|_| f16::from_f32(rng.f()).to_bits().to_le_bytes())
            .collect(),
        GgmlType::BF16 => (0..n)
            .flat_map(|_| bf16::from_f32(rng.f()).to_bits().to_le_bytes())
            .collect(),
        _ => {
            let bb = ty.block_bytes();
            let mut out: Vec<u8> = (0..rows * ty.row_bytes(cols))
                .map(|_| rng.next() as u8)
                .collect();
            let scale_at: &[usize] = match ty {
                GgmlType::Q4_0 | GgmlType::Q5_0 | GgmlType::Q8_0 => &[0],
                GgmlType::Q6K => &[208],
                _ => &[0, 2],
            };
            for blk in out.chunks_exact_mut(bb) {
                for &at in scale_at {
                    let v = f16::from_f32(rng.f() * 0.05).to_bits().to_le_bytes();
                    blk[at..at + 2].copy_from_slice(&v);
                }
            }
            out
        }
    }
}
