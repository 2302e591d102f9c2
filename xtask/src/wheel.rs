//! `cargo xtask wheel`: the Python package (crates/python) as an abi3 wheel in target/wheels,
//! built by maturin from PyPI (in target/py/build, a venv made here) over `cargo build
//! --release --locked`; nothing but the registries is reached.

use crate::cmd::{self, root, run, step, Result};
use std::path::PathBuf;
use std::process::Command;

/// Builds `target/wheels/ragscope-<version>-cp39-abi3-<platform>.whl` and returns its path.
pub fn wheel() -> Result<PathBuf> {
    let crate_dir = root().join("crates/python");
    let venv = cmd::venv(
        &root().join("target/py/build"),
        &crate_dir.join("requirements-build.txt"),
    )?;
    let maturin = venv.with_file_name("maturin");
    let out = root().join("target/wheels");
    let version = workspace_version()?;
    let name = |f: &std::fs::DirEntry| f.file_name().to_string_lossy().into_owned();
    let prefix = format!("ragscope-{version}-cp39-abi3-");
    // an older build's wheel must not pass for this one
    if let Ok(entries) = std::fs::read_dir(&out) {
        for f in entries.flatten().filter(|f| name(f).starts_with(&prefix)) {
            std::fs::remove_file(f.path()).map_err(|e| format!("removing an old wheel: {e}"))?;
        }
    }
    step("building the Python wheel (maturin build --release --locked)");
    run(Command::new(&maturin)
        .args(["build", "--release", "--locked", "--out"])
        .arg(&out)
        .current_dir(&crate_dir))?;
    let built = std::fs::read_dir(&out)
        .map_err(|e| format!("reading {}: {e}", out.display()))?
        .flatten()
        .find(|f| name(f).starts_with(&prefix) && name(f).ends_with(".whl"))
        .ok_or_else(|| format!("maturin wrote no {prefix}*.whl into {}", out.display()))?;
    eprintln!("wheel: {}", built.path().display());
    Ok(built.path())
}

fn workspace_version() -> Result<String> {
    let manifest = std::fs::read_to_string(root().join("Cargo.toml"))
        .map_err(|e| format!("reading Cargo.toml: {e}"))?;
    manifest
        .lines()
        .skip_while(|l| l.trim() != "[workspace.package]")
        .find_map(|l| l.trim().strip_prefix("version = "))
        .map(|v| v.trim_matches('"').to_string())
        .ok_or_else(|| "no version in [workspace.package] of Cargo.toml".to_string())
}

/// The pytest suite (crates/python/tests) in a venv made afresh with the anchors from PyPI
/// (numpy, pandas, pytrec-eval-terrier, ir-measures, ranx, scipy, pytest) and `wheel` installed.
/// Returns pytest's output, whose `SKIPPED [...]` lines (`-rs`) the caller counts as skips.
pub fn pytest(wheel: &std::path::Path) -> Result<String> {
    let venv_dir = root().join("target/py/test");
    if venv_dir.exists() {
        std::fs::remove_dir_all(&venv_dir).map_err(|e| format!("removing the old venv: {e}"))?;
    }
    let tests = root().join("crates/python/tests");
    let python = cmd::venv(&venv_dir, &tests.join("requirements.txt"))?;
    run(Command::new(venv_dir.join("bin/pip"))
        .args(["install", "-q", "--disable-pip-version-check", "--no-deps"])
        .arg(wheel))?;
    // The RAG half is tested against the CLI's JSON: the debug binary (`cargo test
    // --workspace` has built it already in a full run; then this is a no-op).
    step("the CLI for the RAG half's tests (cargo build -p ragscope-cli)");
    run(cmd::cargo().args(["build", "-p", "ragscope-cli"]))?;
    step("Python tests (pytest crates/python/tests)");
    crate::skips::run_capturing(
        Command::new(python)
            .args(["-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider"])
            .arg(&tests)
            .current_dir(&tests)
            .env("RAGSCOPE_CLI", root().join("target/debug/ragscope"))
            .env("RAGSCOPE_SHARED", root().join("../shared")),
    )
}
