//! The CPU engine's prefill built for wasm32 and driven from Node, for `cargo xtask bench
//! wasm-cpu` (xtask/bench/wasm_cpu.cjs): plain C-ABI exports, no wasm-bindgen, so Node
//! instantiates the module with no imports and times each call itself (`Instant` is not
//! available on wasm32-unknown-unknown).
//!
//! cargo build --release -p ragscope-infer --example wasm_cpu_bench \
//!     --target wasm32-unknown-unknown --no-default-features
//!
//! Natively it builds too (as a library nobody calls), so `cargo test`/`clippy --all-targets`
//! keep it compiling.

use ragscope_infer::gguf::{GgufFile, VecSource};
use ragscope_infer::Model;
use std::cell::RefCell;

thread_local! {
    static MODEL: RefCell<Option<Model>> = const { RefCell::new(None) };
}

/// 0 when the dispatched matmul kernel (simd128 here) equals the portable one bit for bit, else
/// 1 (the host says so and benches nothing).
#[no_mangle]
pub extern "C" fn bench_selfcheck() -> i32 {
    i32::from(ragscope_infer::test_support::cpu_kernel_twin_mismatch().is_some())
}

/// A buffer of `len` bytes the host fills with the GGUF file; handed back to `load`.
#[no_mangle]
pub extern "C" fn bench_alloc(len: usize) -> *mut u8 {
    let mut v = vec![0u8; len];
    let p = v.as_mut_ptr();
    std::mem::forget(v);
    p
}

/// Parses the GGUF at `ptr..ptr + len` (from `bench_alloc(len)`, which it takes back) and keeps
/// the model; 0 on success, 1 when the file is not a model the engine loads.
///
/// # Safety
/// `ptr` must come from `bench_alloc(len)` and not be used afterwards.
#[no_mangle]
pub unsafe extern "C" fn bench_load(ptr: *mut u8, len: usize) -> i32 {
    // SAFETY: the caller's contract: the allocation was made by `bench_alloc(len)`.
    let bytes = unsafe { Vec::from_raw_parts(ptr, len, len) };
    let src = VecSource::new(bytes);
    let loaded = GgufFile::read(&src, "model.gguf").and_then(|g| Model::load(&g, &src));
    match loaded {
        Ok(m) => {
            MODEL.with(|c| *c.borrow_mut() = Some(m));
            0
        }
        Err(_) => 1,
    }
}

/// One prefill of `n_prompts` prompts of `n_tokens` pseudo-random token ids (fixed seed, as
/// examples/prefill_bench.rs) in one batch; returns the sum of the last position's logits of
/// every prompt (a checksum the host compares across builds), NaN when no model is loaded.
#[no_mangle]
pub extern "C" fn bench_prefill(n_prompts: usize, n_tokens: usize) -> f64 {
    MODEL.with(|c| {
        let guard = c.borrow();
        let Some(model) = guard.as_ref() else {
            return f64::NAN;
        };
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let prompts: Vec<Vec<u32>> = (0..n_prompts)
            .map(|_| {
                (0..n_tokens)
                    .map(|_| {
                        state = state
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        ((state >> 33) % model.n_vocab() as u64) as u32
                    })
                    .collect()
            })
            .collect();
        let refs: Vec<&[u32]> = prompts.iter().map(|p| p.as_slice()).collect();
        match model.prefill(&refs) {
            Ok(out) => out
                .last_logits
                .iter()
                .flat_map(|l| l.iter())
                .map(|&v| v as f64)
                .sum(),
            Err(_) => f64::NAN,
        }
    })
}
