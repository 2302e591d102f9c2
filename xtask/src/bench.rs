//! `cargo xtask bench …`: side-by-side benchmarks against the anchors, reported as medians.
//! Never timed assertions: machines are shared and noisy, so these only print.

use crate::cmd::{self, root, run, step, Result};
use std::path::PathBuf;
use std::process::Command;

pub fn bench(args: &[String]) -> Result {
    match args.first().map(String::as_str) {
        Some("metrics") => metrics(),
        Some("udcg") => udcg(),
        Some("infer") => Err("bench `infer` is not built yet".into()),
        Some(other) => Err(format!("unknown bench `{other}`: metrics|udcg|infer")),
        None => Err("usage: cargo xtask bench metrics|udcg|infer".into()),
    }
}

fn bench_dir() -> PathBuf {
    root().join("target/bench")
}

/// A venv under target/bench with the anchors' PyPI packages.
fn venv(requirements: &str) -> Result<PathBuf> {
    let venv = bench_dir().join("venv");
    if !venv.join("bin/python").exists() {
        step("creating the benchmark venv");
        run(Command::new("python3").args(["-m", "venv"]).arg(&venv))?;
    }
    run(Command::new(venv.join("bin/pip"))
        .args(["install", "-q", "--disable-pip-version-check", "-r"])
        .arg(root().join(requirements)))?;
    Ok(venv.join("bin/python"))
}

fn metrics() -> Result {
    step("building ragscope (release)");
    run(cmd::cargo().args(["build", "--release", "-p", "ragscope-cli"]))?;
    // The same engine as wasm under Node, for the "wasm within 2x of native" check.
    let node_dir = bench_dir().join("wasm-node");
    crate::serve::build_js(&node_dir, "nodejs")?;
    std::fs::copy(
        root().join("xtask/bench/wasm_node.cjs"),
        node_dir.join("bench.cjs"),
    )
    .map_err(|e| format!("copying the node bench runner: {e}"))?;
    let python = venv("xtask/bench/requirements.txt")?;
    step("bench metrics: ragscope vs pytrec_eval vs ranx");
    let mut c = Command::new(python);
    c.arg(root().join("xtask/bench/metrics.py"))
        .arg("--ragscope")
        .arg(root().join("target/release/ragscope"))
        .arg("--folder")
        .arg(bench_dir().join("metrics"));
    c.arg("--wasm-node").arg(node_dir.join("bench.cjs"));
    run(&mut c)
}

fn udcg() -> Result {
    step("bench udcg: UDCG + classic metrics + correlations, 10k -> 5M passages");
    run(cmd::cargo().args([
        "run",
        "--release",
        "-p",
        "ragscope-eval",
        "--example",
        "bench_udcg",
    ]))
}
