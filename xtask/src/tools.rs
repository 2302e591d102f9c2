//! Installs the tools the build and the tests need, only when missing.
//!
//! Only package registries are used (crates.io, npm, Debian): no step downloads a prebuilt
//! binary from anywhere else, so everything works on the project's offline machines.
//! Versions and traps: shared/REFERENCE.md §1.

use crate::cmd::{self, output, root, run, step, Result};
use std::process::Command;

pub const TRUNK_VERSION: &str = "0.21.14";
pub const CARGO_FUZZ_VERSION: &str = "0.13.2";

pub fn ensure_all() -> Result {
    ensure_wasm_target()?;
    ensure_apt_packages()?;
    ensure_npm_packages()?;
    ensure_wasm_bindgen_cli()?;
    ensure_trunk()?;
    Ok(())
}

pub fn ensure_wasm_target() -> Result {
    let installed =
        output(Command::new("rustup").args(["target", "list", "--installed"])).unwrap_or_default();
    if installed
        .lines()
        .any(|l| l.trim() == "wasm32-unknown-unknown")
    {
        return Ok(());
    }
    step("installing the wasm32-unknown-unknown target");
    run(Command::new("rustup").args(["target", "add", "wasm32-unknown-unknown"]))
}

fn installed_version(bin: &str) -> Option<String> {
    let out = output(
        Command::new(bin)
            .arg("--version")
            .env("PATH", cmd::tool_path()),
    )?;
    out.split_whitespace()
        .nth(1)
        .map(|v| v.trim_start_matches('v').to_string())
}

pub fn ensure_trunk() -> Result {
    if installed_version("trunk").as_deref() == Some(TRUNK_VERSION) {
        return Ok(());
    }
    step("installing trunk (cold: ~9 min)");
    // trunk 0.22 needs a newer rustc than this toolchain; 0.21.14 is the pinned one.
    run(cmd::cargo().args(["install", "--locked", &format!("trunk@{TRUNK_VERSION}")]))
}

/// The wasm-bindgen version the workspace is locked to; the CLI must match it exactly,
/// else trunk tries to download one (and fails offline).
pub fn locked_wasm_bindgen_version() -> Result<String> {
    let lock = std::fs::read_to_string(root().join("Cargo.lock"))
        .map_err(|e| format!("cannot read Cargo.lock: {e}"))?;
    let mut lines = lock.lines();
    while let Some(line) = lines.next() {
        if line == "name = \"wasm-bindgen\"" {
            if let Some(v) = lines.next().and_then(|l| l.strip_prefix("version = \"")) {
                return Ok(v.trim_end_matches('"').to_string());
            }
        }
    }
    Err("wasm-bindgen is not in Cargo.lock".into())
}

pub fn ensure_wasm_bindgen_cli() -> Result {
    let want = locked_wasm_bindgen_version()?;
    if installed_version("wasm-bindgen").as_deref() == Some(want.as_str())
        && installed_version("wasm-bindgen-test-runner").as_deref() == Some(want.as_str())
    {
        return Ok(());
    }
    step(&format!("installing wasm-bindgen-cli {want}"));
    // Without --locked on purpose: one of its locked dependencies is missing from the mirror.
    run(cmd::cargo().args(["install", "--force", "wasm-bindgen-cli", "--version", &want]))
}

/// npm packages for the browser tests (playwright-core drives Debian's Chromium) and wasm-opt
/// (binaryen 132: Debian's binaryen cannot read this rustc's output).
pub fn ensure_npm_packages() -> Result {
    let dir = root().join("tests/browser");
    // Every package package.json names, so a package added there is installed on a machine whose
    // node_modules predates it (a fresh clone has none and always installs).
    let manifest = std::fs::read_to_string(dir.join("package.json"))
        .map_err(|e| format!("tests/browser/package.json: {e}"))?;
    let manifest: serde_json::Value =
        serde_json::from_str(&manifest).map_err(|e| format!("tests/browser/package.json: {e}"))?;
    let names: Vec<String> = ["dependencies", "devDependencies"]
        .iter()
        .filter_map(|k| manifest.get(*k).and_then(|d| d.as_object()))
        .flat_map(|d| d.keys().cloned())
        .collect();
    let have_all = names.iter().all(|p| {
        dir.join("node_modules")
            .join(p)
            .join("package.json")
            .exists()
    });
    if have_all {
        return Ok(());
    }
    step(&format!(
        "installing npm packages for the browser tests ({})",
        names.join(", ")
    ));
    run(Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir))
}

const APT_PACKAGES: &[(&str, &str)] = &[
    ("chromium", "/usr/bin/chromium"),
    ("chromium-driver", "/usr/bin/chromedriver"),
    // lavapipe: a software Vulkan device for native wgpu tests.
    (
        "mesa-vulkan-drivers",
        "/usr/share/vulkan/icd.d/lvp_icd.x86_64.json",
    ),
];

pub fn ensure_apt_packages() -> Result {
    let missing: Vec<&str> = APT_PACKAGES
        .iter()
        .filter(|(_, probe)| !std::path::Path::new(probe).exists())
        .map(|(pkg, _)| *pkg)
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let is_root = output(Command::new("id").arg("-u")).is_some_and(|u| u.trim() == "0");
    if !is_root {
        return Err(format!(
            "missing Debian packages {missing:?}; run as root or `sudo apt-get install {}`",
            missing.join(" ")
        ));
    }
    step(&format!("installing Debian packages {missing:?}"));
    run(Command::new("apt-get").arg("update").arg("-q"))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-q", "--no-install-recommends"])
        .args(&missing)
        .env("DEBIAN_FRONTEND", "noninteractive"))
}

/// cargo-fuzz needs a nightly compiler for its sanitizer flags: use the rustup nightly when
/// present, otherwise let the stable compiler accept nightly flags (RUSTC_BOOTSTRAP).
pub fn fuzz_toolchain() -> FuzzToolchain {
    let has_nightly = output(Command::new("rustup").args(["toolchain", "list"]))
        .is_some_and(|t| t.lines().any(|l| l.starts_with("nightly")));
    if has_nightly {
        FuzzToolchain::Nightly
    } else {
        FuzzToolchain::BootstrapStable
    }
}

pub enum FuzzToolchain {
    Nightly,
    BootstrapStable,
}

pub fn ensure_cargo_fuzz() -> Result {
    if output(cmd::cargo().args(["fuzz", "--version"])).is_some() {
        return Ok(());
    }
    step("installing cargo-fuzz");
    run(cmd::cargo().args([
        "install",
        "--locked",
        &format!("cargo-fuzz@{CARGO_FUZZ_VERSION}"),
    ]))
}
