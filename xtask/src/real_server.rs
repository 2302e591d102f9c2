//! The real OpenAI-compatible server step of `cargo xtask test`: llama-cpp-python's
//! `python -m llama_cpp.server` (from the venv tests/oracle/server/.venv, made here from its
//! pinned requirements) serving the cached SmolLM2-135M Q4_1 model, driven by
//! crates/cli/tests/judge_utility_server.rs (`judge utility` against the local engine, the
//! alignment probe's refusal, a short `judge umbrela` run) and
//! crates/worker/src/engine/litm_remote_server_tests.rs (the lost-in-the-middle page's remote
//! p(NO-RESPONSE) against the local engine's).
//!
//! When the venv cannot be made (no PyPI, no compiler for llama-cpp-python's source build) or the
//! model is not cached, the step prints `SKIPPED: <reason>` and the suite's summary says it was
//! skipped: a skip is never reported as a pass.

use crate::cmd::{self, root, run, step, Result};

/// Runs the step; `Ok(Some(reason))` when it was skipped.
pub fn test() -> Result<Option<String>> {
    step("real OpenAI-compatible server (llama-cpp-python): judge utility and judge umbrela");
    let model = crate::models::cache_dir().join(crate::models::SMOLLM2.file);
    if !model.is_file() {
        return Ok(skip(format!(
            "{} is not in the model cache",
            model.display()
        )));
    }
    let dir = root().join("tests/oracle/server");
    let python = match cmd::venv(&dir.join(".venv"), &dir.join("requirements.txt")) {
        Ok(p) => p,
        Err(e) => return Ok(skip(format!("the server's venv could not be made: {e}"))),
    };
    // `--workspace`, as the native step: `-p` would build these crates with other features
    // (cargo unifies them per selection) and recompile half the tree (≈ 55 s).
    run(cmd::cargo()
        .args([
            "test",
            "--workspace",
            "--test",
            "judge_utility_server",
            "--",
            "--include-ignored",
            "--nocapture",
        ])
        .env("RAGSCOPE_LLAMA_SERVER_PYTHON", &python))?;
    // The lost-in-the-middle page's remote p(NO-RESPONSE) (exact, echo) against the local engine.
    // Both tests are #[ignore]d elsewhere, so the native step reports them as ignored, not passed.
    run(cmd::cargo()
        .args([
            "test",
            "--workspace",
            "--lib",
            "litm_remote_server",
            "--",
            "--include-ignored",
            "--nocapture",
        ])
        .env("RAGSCOPE_LLAMA_SERVER_PYTHON", python))?;
    Ok(None)
}

fn skip(reason: String) -> Option<String> {
    eprintln!("SKIPPED: {reason}");
    Some(reason)
}
