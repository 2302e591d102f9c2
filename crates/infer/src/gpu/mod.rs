//! The wgpu backend (crate feature `gpu`): the prefill forward pass and greedy decoding as WGSL
//! compute shaders, on Vulkan/Metal/DX12 natively and on WebGPU in the browser, giving the CPU
//! engine's results.
//!
//! * device.rs: the adapter and the device, opened with the adapter's real limits, and its
//!   compiled kernels. plan.rs: how work is cut to fit it (tokens per batch, the matmul tile
//!   per product, split-K). upload.rs: a model's weights on the device. buffers.rs: the batch
//!   workspace. prefill.rs and decode.rs: the forward pass and greedy decoding, written as
//!   calls to the ops' launchers.
//! * ops/<op>/: one kernel each (matmul, rms_norm, rope, attention, decode_attention, softmax,
//!   elementwise, argmax): its WGSL, its launcher, its CPU twin and the test comparing them on
//!   random shapes that do not divide the tiles.
//! * Weights stay quantized on the GPU, uploaded once per model: GGUF blocks padded to whole
//!   u32 words (layout.rs) and dequantized inside the matmul tiles (ops/matmul/dequant.wgsl),
//!   8 weights per block read (dq8_*). The matmul's inner loops are unrolled in the WGSL text
//!   (ops/matmul `unroll`): naga guards every loop with an iteration counter, which in the
//!   innermost loop cost more than the FMAs (measured: 7x on an H100). Two tiles: 64x64
//!   (matmul.wgsl) for small products, 128x128 with 8x8 outputs per thread (matmul_large.wgsl)
//!   where it makes enough workgroups (plan.rs `matmul_plan`), and natively its 192-row form
//!   for large batches of products with whole 192-row tiles (compiled on first use, where the
//!   device's limits allow 384 threads and 20 KiB of workgroup memory); all compiled without
//!   naga's runtime checks, their indices in range by construction.
//!   Projections that read the same input run as one GEMM where their weights share a type:
//!   Q|K|V and gate|up are uploaded as one matrix each (upload.rs `Proj`), their output rows
//!   taken apart by elementwise.wgsl (`split`, `swiglu_halves`, `geglu_halves`). Products that
//!   make few large tiles split K in two (plan.rs `split_k`; the consumer adds the planes).
//! * The benchmarks live in examples/ (gpu_kernels_bench: single kernels on synthetic inputs;
//!   gpu_bench: a model's prefill, decoding and GEMMs); hooks.rs is their way in.
//! * Greedy decoding (decode.rs `greedy`): a KV cache on the device filled by the prefill, then
//!   decoding steps batched over the running prompts, arg-max on the GPU.
//! * f32 storage and accumulation everywhere; no shader-f16, no subgroups (the browser cannot
//!   request them through wgpu), so one code path runs on every adapter.
//! * Batches, the LM head's vocabulary chunks and every activation binding are sized to the
//!   device's limits (upload.rs, buffers.rs).

// Model::prefill's synchronous hook: native only (the browser awaits GpuModel::prefill).
#[cfg(not(target_arch = "wasm32"))]
mod backend;
mod buffers;
mod decode;
mod device;
mod error;
// The benchmarks' (examples/gpu_bench, examples/gpu_kernels_bench) way in.
#[cfg(not(target_arch = "wasm32"))]
mod hooks;
pub mod layout;
mod ops;
mod plan;
mod prefill;
mod readback;
mod upload;

/// CPU twins of the kernels: plain f64-accumulating reference code with the same inputs and
/// outputs as each shader. Each lives beside its kernel (ops/<op>/twin.rs) and restates, in
/// the simplest form, what model/forward.rs computes (whose functions are private and fused
/// for speed).
pub mod twin {
    pub use super::ops::argmax::twin::argmax_rows;
    pub use super::ops::attention::twin::attention;
    pub use super::ops::decode_attention::twin::decode_attention;
    pub use super::ops::elementwise::twin::{
        add_bias, gather_rows, geglu, halves, residual, residual_split, scatter_rows, split_cols,
        swiglu,
    };
    pub use super::ops::matmul::twin::matmul;
    pub use super::ops::rms_norm::twin::rms_norm;
    pub use super::ops::rope::twin::rope;
    pub use super::ops::softmax::twin::softmax_pick;
}

#[cfg(not(target_arch = "wasm32"))]
pub use backend::{GpuBackend, GpuPolicy};
pub use decode::DecodeStats;
pub use device::{AdapterSummary, GpuContext};
pub use error::GpuError;
#[cfg(not(target_arch = "wasm32"))]
#[doc(hidden)]
pub use hooks::{BenchKernel, BenchPipeline, BenchProduct};
pub use ops::all_shader_sources;
pub use ops::matmul::{matmul_large_source, matmul_source, matmul_source_from, matmul_wide_source};
pub use plan::{
    batch_tokens, split_k, MatmulTile, LAYER_FLOP_BUDGET, MAX_BATCH_TOKENS, MAX_BATCH_TOKENS_NATIVE,
};
pub use upload::{GpuModel, GPU_ARCHS, MAX_HEAD_DIM};
