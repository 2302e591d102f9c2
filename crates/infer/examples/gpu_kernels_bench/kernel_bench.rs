//! Timing single kernels on synthetic inputs: each kernel is dispatched alone, as the engine
//! dispatches it (same Params words, bindings and grid), on random weights/activations; no model
//! file is needed. Timed with GPU timestamp queries around one compute pass of `reps`
//! dispatches when the device has TIMESTAMP_QUERY, else by wall time around the same submit
//! (after a warm-up), which then includes submit overhead (common/gpu_timing.rs).

use crate::timing::{bind, time_dispatches, KernelTime};
use half::f16;
use ragscope_infer::gguf::GgmlType;
use ragscope_infer::gpu::layout::{repack_raw, row_words};
use ragscope_infer::gpu::{split_k, BenchKernel, BenchPipeline, GpuContext, GpuError, MatmulTile};
use wgpu::util::DeviceExt;

/// Benchmarks kernels on one device.
pub struct KernelBench<'a> {
    ctx: &'a GpuContext,
    rng: u64,
    /// A matmul tile shader to time instead of the built-in one, with its (rows, tokens) tile.
    variant: Option<(String, (usize, usize))>,
    /// Compile the variant without wgpu's runtime checks (index clamping, loop bounding).
    unchecked: bool,
    /// Time this tile instead of the one the engine would pick.
    tile: Option<MatmulTile>,
    /// K splits of the large tile (plan.rs `split_k`): None = the engine's pick.
    split: Option<usize>,
}

impl<'a> KernelBench<'a> {
    pub fn new(ctx: &'a GpuContext) -> Self {
        KernelBench {
            ctx,
            rng: 0x9e37_79b9_7f4a_7c15,
            variant: None,
            unchecked: false,
            tile: None,
            split: None,
        }
    }

    /// Times `tile_shader` (a matmul.wgsl variant, same bindings and Params) instead of the
    /// built-in matmul; `tile` = (weight rows, tokens) per workgroup. Tuning aid only.
    pub fn with_matmul_variant(mut self, tile_shader: String, tile: (usize, usize)) -> Self {
        self.variant = Some((tile_shader, tile));
        self
    }

    /// Compiles the matmul variant without wgpu's runtime checks (bounds clamping of every
    /// index, loop bounding): measures what those checks cost. Only for variants that never
    /// index out of range (their loads are guarded or clamped by the shader itself).
    pub fn with_unchecked_variant(mut self) -> Self {
        self.unchecked = true;
        self
    }

    /// Times the built-in matmul with `tile` whatever the shape (the engine picks by shape).
    pub fn with_tile(mut self, tile: MatmulTile) -> Self {
        self.tile = Some(tile);
        self
    }

    /// Times the large tile with K split in `n` planes (1: unsplit) where K allows it, instead
    /// of the engine's pick.
    pub fn with_split_k(mut self, n: usize) -> Self {
        self.split = Some(n.max(1));
        self
    }

    fn next(&mut self) -> u32 {
        self.rng = self
            .rng
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.rng >> 33) as u32
    }

    /// Uniform in [-1, 1).
    fn f(&mut self) -> f32 {
        self.next() as f32 / (1u64 << 30) as f32 - 1.0
    }

    fn floats(&mut self, n: usize) -> Vec<u8> {
        (0..n).flat_map(|_| self.f().to_le_bytes()).collect()
    }

    /// Random GGUF bytes for `rows` × `cols` weights of `ty`: random quants, small finite scales.
    fn weights(&mut self, ty: GgmlType, rows: usize, cols: usize) -> Vec<u8> {
        match ty {
            GgmlType::F32 => self.floats(rows * cols),
            GgmlType::F16 | GgmlType::BF16 => (0..rows * cols)
                .flat_map(|_| f16::from_f32(self.f()).to_bits().to_le_bytes())
                .collect(),
            _ => {
                let mut out: Vec<u8> = (0..rows * ty.row_bytes(cols))
                    .map(|_| self.next() as u8)
                    .collect();
                let scale_at: &[usize] = match ty {
                    GgmlType::Q4_0 | GgmlType::Q5_0 | GgmlType::Q8_0 => &[0],
                    GgmlType::Q6K => &[208],
                    _ => &[0, 2],
                };
                for blk in out.chunks_exact_mut(ty.block_bytes()) {
                    for &at in scale_at {
                        let v = f16::from_f32(0.01).to_bits().to_le_bytes();
                        blk[at..at + 2].copy_from_slice(&v);
                    }
                }
                out
            }
        }
    }

    /// y[m × n] = x[m × k] · W[n × k]ᵀ with W of type `ty`, as the engine dispatches it.
    pub fn matmul(
        &mut self,
        ty: GgmlType,
        m: usize,
        n: usize,
        k: usize,
        reps: usize,
    ) -> Result<KernelTime, GpuError> {
        let w = repack_raw(ty, k, &self.weights(ty, n, k));
        let x = self.floats(m * k);
        let wide = self.ctx.has_wide_tile();
        let tile = self.tile.unwrap_or(MatmulTile::pick(n, m, wide));
        let splits = match self.split {
            None => split_k(tile, ty, n, m, k),
            Some(s) if s > 1 && tile != MatmulTile::Small && k.is_multiple_of(s) => {
                let part = k / s;
                if part.is_multiple_of(16) && part.is_multiple_of(ty.block_size()) {
                    s
                } else {
                    1
                }
            }
            Some(_) => 1,
        };
        let y = vec![0u8; 4 * m * n * splits];
        let words = [
            m as u32,
            n as u32,
            k as u32,
            row_words(ty, k) as u32,
            n as u32,
            0,
            if splits > 1 { (k / splits) as u32 } else { 0 },
        ];
        let bufs = [w, x, y];
        match &self.variant {
            None => {
                let kern = self
                    .ctx
                    .bench_kernel(BenchKernel::Matmul(tile, ty))
                    .ok_or_else(|| {
                        GpuError::Unsupported(format!("the {tile:?} tile on this device"))
                    })?;
                let (gx, gy) = tile.groups(n, m);
                self.time(&kern, &words, &bufs, (gx, gy, splits as u32), reps)
            }
            Some((src, (tn, tm))) => {
                let kern = self.ctx.matmul_variant(src, ty, self.unchecked);
                let groups = (
                    n.div_ceil(*tn) as u32,
                    m.div_ceil(*tm) as u32,
                    splits as u32,
                );
                self.time(&kern, &words, &bufs, groups, reps)
            }
        }
    }

    /// Causal GQA attention over `n_prompts` packed prompts of `len` tokens each.
    #[allow(clippy::too_many_arguments)]
    pub fn attention(
        &mut self,
        n_prompts: usize,
        len: usize,
        n_head: usize,
        n_kv: usize,
        hd: usize,
        reps: usize,
    ) -> Result<KernelTime, GpuError> {
        let n_tok = n_prompts * len;
        let (q_dim, kv_dim) = (n_head * hd, n_kv * hd);
        let start: Vec<u8> = (0..n_tok)
            .flat_map(|t| ((t / len * len) as u32).to_le_bytes())
            .collect();
        let scale = 1.0 / (hd as f32).sqrt();
        let words = [
            n_tok as u32,
            n_head as u32,
            hd as u32,
            q_dim as u32,
            kv_dim as u32,
            (n_head / n_kv) as u32,
            scale.to_bits(),
        ];
        let bufs = [
            self.floats(n_tok * q_dim),
            self.floats(n_tok * kv_dim),
            self.floats(n_tok * kv_dim),
            start,
            vec![0u8; 4 * n_tok * q_dim],
        ];
        let groups = (n_tok.div_ceil(64) as u32, n_head as u32, 1);
        let kern = self.bench_kernel(BenchKernel::Attention)?;
        self.time(&kern, &words, &bufs, groups, reps)
    }

    /// RMSNorm of `rows` rows of `dim`.
    pub fn rms_norm(
        &mut self,
        rows: usize,
        dim: usize,
        reps: usize,
    ) -> Result<KernelTime, GpuError> {
        let gx = rows.clamp(1, 32768);
        let gy = rows.div_ceil(gx).max(1);
        let words = [rows as u32, dim as u32, 1e-5f32.to_bits(), gx as u32];
        let bufs = [
            self.floats(rows * dim),
            self.floats(dim),
            vec![0u8; 4 * rows * dim],
        ];
        let kern = self.bench_kernel(BenchKernel::RmsNorm)?;
        self.time(&kern, &words, &bufs, (gx as u32, gy as u32, 1), reps)
    }

    fn bench_kernel(&self, k: BenchKernel) -> Result<BenchPipeline, GpuError> {
        self.ctx
            .bench_kernel(k)
            .ok_or_else(|| GpuError::Unsupported(format!("{k:?} on this device")))
    }

    fn time(
        &self,
        k: &BenchPipeline,
        words: &[u32],
        bufs: &[Vec<u8>],
        groups: (u32, u32, u32),
        reps: usize,
    ) -> Result<KernelTime, GpuError> {
        let dev = self.ctx.device();
        let buffers: Vec<wgpu::Buffer> = bufs
            .iter()
            .map(|b| {
                dev.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: None,
                    contents: b,
                    usage: wgpu::BufferUsages::STORAGE,
                })
            })
            .collect();
        let refs: Vec<&wgpu::Buffer> = buffers.iter().collect();
        let bg = bind(self.ctx, k, words, &refs);
        time_dispatches(self.ctx, k, &bg, groups, reps)
    }
}
