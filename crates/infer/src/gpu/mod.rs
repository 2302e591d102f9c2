//! The wgpu backend (crate feature `gpu`): the prefill forward pass as WGSL compute shaders,
//! on Vulkan/Metal/DX12 natively and on WebGPU in the browser, giving the CPU engine's results.
//!
//! * Weights stay quantized on the GPU, uploaded once per model: GGUF blocks padded to whole
//!   u32 words (layout.rs) and dequantized inside the matmul tiles (shaders/dequant.wgsl), 8
//!   weights per block read (dq8_*). The matmul's inner loops are unrolled in the WGSL text
//!   (context.rs `unroll`): naga guards every loop with an iteration counter, which in the
//!   innermost loop cost more than the FMAs (measured: 7x on an H100). Two tiles: 64x64
//!   (shaders/matmul.wgsl) for small products, 128x128 with 8x8 outputs per thread
//!   (shaders/matmul_large.wgsl) where it makes enough workgroups (engine.rs `matmul_plan`),
//!   and natively its 192-row form for large batches of products with whole 192-row tiles
//!   (compiled on first use, where the device's limits allow 384 threads and 20 KiB of
//!   workgroup memory); all compiled without naga's runtime checks, their indices in range by
//!   construction.
//!   Projections that read the same input run as one GEMM where their weights share a type:
//!   Q|K|V and gate|up are uploaded as one matrix each (engine.rs `Proj`), their output rows
//!   taken apart by elementwise.wgsl (`split`, `swiglu_halves`, `geglu_halves`). Products that
//!   make few large tiles split K in two (engine.rs `split_k`; the consumer adds the planes).
//! * `bench` times single kernels on synthetic inputs (examples/gpu_kernels_bench.rs).
//! * Kernels (shaders/*.wgsl), each with a CPU twin in `twin.rs` and a test comparing them on
//!   random shapes that do not divide the tiles (tests.rs): tiled matmul for every weight type,
//!   RMSNorm, RoPE (normal/NeoX, the CPU's tables: Llama-3 frequency factors included), causal
//!   grouped-query attention over packed variable-length prompts (online softmax over key
//!   tiles: memory linear in the prompt), SwiGLU, bias and residual adds, last-row gather.
//! * Greedy decoding (engine.rs `greedy`): a KV cache on the device filled by the prefill, then
//!   decoding steps batched over the running prompts, arg-max on the GPU.
//! * f32 storage and accumulation everywhere; no shader-f16, no subgroups (the browser cannot
//!   request them through wgpu), so one code path runs on every adapter.
//! * The device is opened with the adapter's real limits; batches, the LM head's vocabulary
//!   chunks and every activation binding are sized to them (engine.rs).

// Model::prefill's synchronous hook: native only (the browser awaits GpuModel::prefill).
#[cfg(not(target_arch = "wasm32"))]
mod backend;
#[cfg(not(target_arch = "wasm32"))]
pub mod bench;
mod context;
mod engine;
mod error;
pub mod layout;
#[cfg(not(target_arch = "wasm32"))]
mod model_bench;
mod readback;
pub mod twin;

#[cfg(test)]
mod tests;

#[cfg(not(target_arch = "wasm32"))]
pub use backend::{GpuBackend, GpuPolicy};
pub use context::{
    all_shader_sources, matmul_large_source, matmul_source, matmul_source_from, matmul_wide_source,
    AdapterSummary, GpuContext,
};
pub use engine::{
    batch_tokens, split_k, DecodeStats, GpuModel, MatmulTile, GPU_ARCHS, LAYER_FLOP_BUDGET,
    MAX_BATCH_TOKENS, MAX_BATCH_TOKENS_NATIVE, MAX_HEAD_DIM,
};
pub use error::GpuError;
#[cfg(not(target_arch = "wasm32"))]
pub use model_bench::MatmulTiming;
