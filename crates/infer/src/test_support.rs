//! For tests that need something the machine may lack (a Vulkan adapter, a cached real model).
//! Run alone (`cargo test`), such a test says `SKIPPED: ...` on stderr and checks nothing. Run
//! by `cargo xtask test`, which installs lavapipe and fetches the models first, their absence
//! is a failure: xtask sets `RAGSCOPE_NO_SKIPS=1`, so no test passes there without checking
//! anything.

/// The variable `cargo xtask test` sets for its native test step.
pub const NO_SKIPS: &str = "RAGSCOPE_NO_SKIPS";

/// Says why the calling test checks nothing, or fails it where skipping is not allowed.
pub fn skip(reason: &str) {
    if std::env::var(NO_SKIPS).as_deref() == Ok("1") {
        panic!("{reason}; {NO_SKIPS}=1 (cargo xtask test provides it), so this is a failure");
    }
    eprintln!("SKIPPED: {reason}");
}

/// Where the CPU engine's dispatched f32 matmul kernel differs, bit for bit, from the portable
/// kernel it twins (`None`: nowhere). On wasm32 with simd128 it must be `None` (the simd128
/// kernel keeps the portable summation order); natively AVX2/AVX-512 fuse, so it is `Some`.
pub fn cpu_kernel_twin_mismatch() -> Option<String> {
    crate::model::dispatched_kernel_mismatch()
}
