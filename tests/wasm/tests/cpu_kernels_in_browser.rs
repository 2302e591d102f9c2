//! Issue 42: the CPU engine's wasm32 simd128 matmul kernel in a real browser equals, bit for
//! bit, the portable kernel it twins (same products, same summation order), on ragged shapes
//! and SmolLM2's widths. End to end against llama.cpp: infer_from_blob_in_worker.rs.
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::*;
wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[wasm_bindgen_test]
fn simd128_matmul_equals_the_portable_kernel() {
    assert_eq!(
        ragscope_infer::test_support::cpu_kernel_twin_mismatch(),
        None
    );
}
