//! Building and serving the web app with trunk, and the JS package.

use crate::cmd::{self, root, run, step, Result};
use crate::tools;
use std::process::Command;

fn trunk() -> Command {
    let mut c = Command::new("trunk");
    c.current_dir(root())
        .env("PATH", cmd::tool_path())
        // Pin the wasm-bindgen that trunk looks for to the locked one (found on PATH, never downloaded).
        .env(
            "TRUNK_TOOLS_WASM_BINDGEN",
            tools::locked_wasm_bindgen_version().unwrap_or_default(),
        );
    c
}

/// `trunk build` into dist/ (release: optimised and wasm-opt'ed; relative URLs so dist/ works
/// from any sub-path of a static host).
pub fn build_site(release: bool) -> Result {
    tools::ensure_all()?;
    step("building the web app (trunk)");
    let mut c = trunk();
    c.args(["build", "--offline", "--public-url", "./"]);
    if release {
        c.arg("--release");
    }
    run(&mut c)
}

/// `cargo xtask site`: dist/ as a static site (release build). Everything it needs is in the
/// repository (the demo data and the Learn page's utilities are committed outputs of
/// `cargo xtask learn-data`), so any static host (GitHub Pages, a sub-path) serves it as is.
pub fn site() -> Result {
    for needed in [
        "www/demo/nq/utilities.smollm2.tsv",
        "www/demo/nq/contexts.smollm2.jsonl",
        "www/learn/nq-smollm2.json",
    ] {
        if !root().join(needed).exists() {
            return Err(format!("{needed} is missing: run `cargo xtask learn-data`"));
        }
    }
    build_site(true)?;
    step("dist/ is ready: copy it to any static host, at any path (e.g. a gh-pages branch)");
    Ok(())
}

pub fn serve(args: &[String]) -> Result {
    let port = args
        .iter()
        .position(|a| a == "--port")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "8080".into());
    tools::ensure_all()?;
    step(&format!(
        "serving on http://127.0.0.1:{port} (the demo run is preloaded)"
    ));
    // No live reload: trunk injects an inline script for it that the page's CSP refuses, so a
    // newcomer's first look at the console would show a violation (#41). Rebuild by restarting.
    run(trunk().args([
        "serve",
        "--no-autoreload",
        "--offline",
        "--release",
        "--address",
        "127.0.0.1",
        "--port",
        &port,
    ]))
}

/// pkg/: the eval engine for JS users (wasm-bindgen --target web, TypeScript types included).
pub fn pkg() -> Result {
    build_js(&root().join("pkg"), "web")
}

/// Builds crates/js for wasm32 and binds it for `target` (web | nodejs) into `out`.
pub fn build_js(out: &std::path::Path, target: &str) -> Result {
    tools::ensure_wasm_target()?;
    tools::ensure_npm_packages()?;
    tools::ensure_wasm_bindgen_cli()?;
    step(&format!(
        "building the JS package ({target}) into {}",
        out.display()
    ));
    run(cmd::cargo().args([
        "build",
        "--release",
        "--target",
        "wasm32-unknown-unknown",
        "-p",
        "ragscope-js",
    ]))?;
    let wasm = root().join("target/wasm32-unknown-unknown/release/ragscope_js.wasm");
    run(Command::new("wasm-bindgen")
        .env("PATH", cmd::tool_path())
        .args(["--target", target, "--out-dir"])
        .arg(out)
        .arg(&wasm))?;
    let bg = out.join("ragscope_js_bg.wasm");
    run(Command::new("wasm-opt")
        .env("PATH", cmd::tool_path())
        .args([
            "-O3",
            // binaryen inlines a function with one caller whatever its size by default: that made
            // one 26 KB function of `evaluate()`'s per-run work, whose optimising compile by V8
            // alone took 0.09-0.20 s of a first call's CPU under Node (the worker in index.html
            // gets the same limit).
            "--one-caller-inline-max-function-size",
            "100",
            "--enable-bulk-memory",
            "--enable-nontrapping-float-to-int",
            "--enable-sign-ext",
            "--enable-mutable-globals",
        ])
        .arg(&bg)
        .arg("-o")
        .arg(&bg))
}
