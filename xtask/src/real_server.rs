//! The real OpenAI-compatible server step of `cargo xtask test`: llama-cpp-python's
//! `python -m llama_cpp.server` (from the venv tests/oracle/server/.venv, made here from its
//! pinned requirements) serving the cached SmolLM2-135M Q4_1 model, driven by
//! crates/cli/tests/judge_utility_server.rs (`judge utility` against the local engine, the
//! alignment probe's refusal, a short `judge umbrela` run) and
//! crates/worker/src/engine/litm_remote_server_tests.rs (the lost-in-the-middle page's remote
//! p(NO-RESPONSE) against the local engine's).
//!
//! The registry is reachable wherever xtask runs, so a venv that cannot be made (or a model that
//! cannot be fetched) fails the step: it is never skipped.

use crate::cmd::{self, root, step, Result};
use crate::skips::run_capturing;

/// Runs the step; returns the tests' output (libtest's lines), so the caller can see that the
/// tests `#[ignore]`d in the native step ran here.
pub fn test() -> Result<String> {
    step("real OpenAI-compatible server (llama-cpp-python): judge utility and judge umbrela");
    crate::models::ensure(&crate::models::SMOLLM2)?;
    let dir = root().join("tests/oracle/server");
    let python = cmd::venv(&dir.join(".venv"), &dir.join("requirements.txt"))
        .map_err(|e| format!("the real server's venv could not be made: {e}"))?;
    // `--workspace`, as the native step: `-p` would build these crates with other features
    // (cargo unifies them per selection) and recompile half the tree (≈ 55 s).
    let mut out = run_capturing(
        cmd::cargo()
            .args([
                "test",
                "--workspace",
                "--test",
                "judge_utility_server",
                "--",
                "--include-ignored",
                "--show-output",
            ])
            .env("RAGSCOPE_LLAMA_SERVER_PYTHON", &python),
    )?;
    // The lost-in-the-middle page's remote p(NO-RESPONSE) (exact, echo) against the local engine.
    // Both tests are #[ignore]d elsewhere, so the native step reports them as ignored, not passed.
    out += &run_capturing(
        cmd::cargo()
            .args([
                "test",
                "--workspace",
                "--lib",
                "litm_remote_server",
                "--",
                "--include-ignored",
                "--show-output",
            ])
            .env("RAGSCOPE_LLAMA_SERVER_PYTHON", python),
    )?;
    Ok(out)
}
