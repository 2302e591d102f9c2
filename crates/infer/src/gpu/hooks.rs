//! What the benchmarks in examples/ (gpu_kernels_bench, gpu_bench) reach inside for: the
//! device, a kernel's pipeline as the engine dispatches it, and a model's first-layer products
//! as the engine plans them. The timing itself (timestamp queries, warm-up, repetitions) is
//! the examples' own. Hidden from the docs: no API for other uses.

use super::device::GpuContext;
use super::error::GpuError;
use super::ops::matmul::{matmul_module, matmul_source_from, GpuMatrix};
use super::ops::{kernel, Kernel, Slot};
use super::plan::{matmul_plan, split_k, MatmulTile};
use super::upload::GpuModel;
use crate::gguf::GgmlType;

/// A kernel the benchmarks time alone.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum BenchKernel {
    /// The matmul for one weight type in one tile.
    Matmul(MatmulTile, GgmlType),
    /// Prefill attention (heads up to 128 values).
    Attention,
    RmsNorm,
}

/// A compiled kernel: binding 0 takes the 32-byte uniform parameters, bindings 1.. the buffers
/// in the order its op's launcher passes them (ops/<op>/mod.rs).
#[doc(hidden)]
#[derive(Clone)]
pub struct BenchPipeline {
    pub pipeline: wgpu::ComputePipeline,
    pub layout: wgpu::BindGroupLayout,
}

impl From<&Kernel> for BenchPipeline {
    fn from(k: &Kernel) -> Self {
        BenchPipeline {
            pipeline: k.pipeline.clone(),
            layout: k.layout.clone(),
        }
    }
}

impl GpuContext {
    #[doc(hidden)]
    pub fn device(&self) -> &wgpu::Device {
        &self.device
    }

    #[doc(hidden)]
    pub fn queue(&self) -> &wgpu::Queue {
        &self.queue
    }

    /// The device's failure since the last check (lost, or a command failed), if any.
    #[doc(hidden)]
    pub fn bench_failure(&self) -> Option<GpuError> {
        self.take_failure()
    }

    /// The engine's kernel; `None` for the wide tile on a device without it.
    #[doc(hidden)]
    pub fn bench_kernel(&self, k: BenchKernel) -> Option<BenchPipeline> {
        let kernels = &self.kernels;
        match k {
            BenchKernel::Matmul(tile, ty) => tile.kernel(kernels, ty).map(BenchPipeline::from),
            BenchKernel::Attention => Some((&kernels.attention.normal).into()),
            BenchKernel::RmsNorm => Some((&kernels.rms_norm).into()),
        }
    }

    /// A matmul tile shader variant (same bindings and Params as matmul.wgsl) compiled for
    /// `ty`; `unchecked`: without wgpu's runtime checks, as the engine compiles its own tiles
    /// (only for variants whose every index stays in range and whose loops all have constant
    /// or uniform bounds).
    #[doc(hidden)]
    pub fn matmul_variant(
        &self,
        tile_shader: &str,
        ty: GgmlType,
        unchecked: bool,
    ) -> BenchPipeline {
        let src = matmul_source_from(tile_shader, ty);
        let module = if unchecked {
            matmul_module(&self.device, "matmul variant", &src)
        } else {
            super::ops::module(&self.device, "matmul variant", &src)
        };
        use Slot::*;
        let k = kernel(
            &self.device,
            &module,
            "main",
            &[Uniform, Read, Read, ReadWrite],
        );
        (&k).into()
    }
}

/// One of a model's prefill GEMMs as the engine runs it: y (m × n) = x (m × k) · Wᵀ over W's
/// first row chunk, with the engine's tile and K split.
#[doc(hidden)]
pub struct BenchProduct {
    pub name: String,
    pub ty: GgmlType,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub row_words: usize,
    /// K splits (output planes).
    pub splits: usize,
    pub weights: wgpu::Buffer,
    pub kernel: BenchPipeline,
    pub groups: (u32, u32, u32),
}

impl GpuModel {
    /// The first layer's products and the LM head's first vocabulary slice with (at most) `m`
    /// rows of activations: Q|K|V and gate|up fused where the engine fuses them; O, down and
    /// the fused Q|K|V with the engine's K split where no post-norm reads them.
    #[doc(hidden)]
    pub fn bench_products(&self, m: usize) -> Result<Vec<BenchProduct>, GpuError> {
        let Some(l) = self.layers.first() else {
            return Ok(Vec::new());
        };
        let split = self.split_k;
        let fused = l.qkv.is_fused();
        let mut mats: Vec<(&str, &GpuMatrix, bool)> = Vec::new();
        let qkv = l
            .qkv
            .matrices(&["attn_q", "attn_k", "attn_v"], "attn_qkv (fused)");
        mats.extend(qkv.into_iter().map(|(n, m)| (n, m, split && fused)));
        mats.push(("attn_output", &l.wo, split && l.post_attn_norm.is_none()));
        let ff = l
            .gate_up
            .matrices(&["ffn_gate", "ffn_up"], "ffn_gate_up (fused)");
        mats.extend(ff.into_iter().map(|(n, m)| (n, m, false)));
        mats.push(("ffn_down", &l.w_down, split && l.post_ffn_norm.is_none()));
        mats.push(("output (first slice)", &self.lm_head, false));
        mats.into_iter()
            .map(|(name, mat, split)| self.product(name, mat, m, split))
            .collect()
    }

    fn product(
        &self,
        name: &str,
        mat: &GpuMatrix,
        m: usize,
        split: bool,
    ) -> Result<BenchProduct, GpuError> {
        let Some((w, _, n)) = mat.chunks.first() else {
            return Err(GpuError::Device(format!("{name}: no rows")));
        };
        let (n, k) = (*n, mat.cols);
        let max = self.ctx.max_binding() as usize;
        let m = m.min(max / (4 * k)).min(max / (8 * n)).max(1);
        let (tile, kernel, (gx, gy)) = matmul_plan(&self.ctx.kernels, mat.ty, n, m, self.wide_tile);
        let splits = if split && mat.chunks.len() == 1 {
            split_k(tile, mat.ty, n, m, k)
        } else {
            1
        };
        Ok(BenchProduct {
            name: if splits > 1 {
                format!("{name} (split-K {splits})")
            } else {
                name.to_string()
            },
            ty: mat.ty,
            m,
            n,
            k,
            row_words: mat.row_words,
            splits,
            weights: w.clone(),
            kernel: kernel.into(),
            groups: (gx, gy, splits as u32),
        })
    }
}
