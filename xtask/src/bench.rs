//! `cargo xtask bench …`: side-by-side benchmarks against the anchors, reported as medians.
//! Never timed assertions: machines are shared and noisy, so these only print.

use crate::cmd::{self, root, run, step, Result};
use std::path::PathBuf;
use std::process::Command;

pub fn bench(args: &[String]) -> Result {
    match args.first().map(String::as_str) {
        Some("metrics") => metrics(),
        Some("udcg") => udcg(),
        Some("infer") => infer(),
        Some(other) => Err(format!("unknown bench `{other}`: metrics|udcg|infer")),
        None => Err("usage: cargo xtask bench metrics|udcg|infer".into()),
    }
}

fn bench_dir() -> PathBuf {
    root().join("target/bench")
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
    let python = cmd::venv(
        &bench_dir().join("venv"),
        &root().join("xtask/bench/requirements.txt"),
    )?;
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

/// Prefill tokens/s of the CPU engine vs llama-cpp-python on the same random-weight model with
/// SmolLM2-135M's shapes in Q8_0 and the same prompts, at 1 and 2 threads, alternating runs.
fn infer() -> Result {
    let oracle = root().join("tests/oracle");
    let python = cmd::venv(&oracle.join(".venv"), &oracle.join("requirements.txt"))?;
    let dir = bench_dir().join("infer");
    step("building the prefill bench (release)");
    run(cmd::cargo().args([
        "build",
        "--release",
        "-p",
        "ragscope-infer",
        "--example",
        "prefill_bench",
    ]))?;
    let ours = root().join("target/release/examples/prefill_bench");
    let model = dir.join("smollm2-135m-shape-q8_0.gguf");
    let prompts = dir.join("prompts.json");
    println!(
        "\n{:>8} {:>22} {:>22} {:>10}",
        "threads", "llama.cpp tokens/s", "ragscope tokens/s", "ratio"
    );
    for threads in [1, 2] {
        let (mut theirs, mut mine) = (Vec::new(), Vec::new());
        for _ in 0..3 {
            let out = cmd::output(
                Command::new(&python)
                    .arg(root().join("tests/oracle/bench_llama_cpp.py"))
                    .arg("--out")
                    .arg(&dir)
                    .args([
                        "--threads",
                        &threads.to_string(),
                        "--prompts",
                        "8",
                        "--tokens",
                        "256",
                    ]),
            )
            .ok_or("llama.cpp bench failed")?;
            theirs.push(tokens_per_s(&out)?);
            let out = cmd::output(
                Command::new(&ours)
                    .arg("--model")
                    .arg(&model)
                    .args(["--threads", &threads.to_string(), "--prompts-file"])
                    .arg(&prompts),
            )
            .ok_or("prefill_bench failed")?;
            mine.push(tokens_per_s(&out)?);
        }
        let (t, m) = (median(theirs), median(mine));
        println!("{threads:>8} {t:>22.1} {m:>22.1} {:>9.2}x", m / t);
    }
    infer_gpu(&model, &prompts)
}

/// The wgpu backend on the same model: on a software adapter (lavapipe: a CPU emulation, about
/// 1 token/s here) one short prompt only; on a hardware GPU the CPU rows' prompts.
fn infer_gpu(model: &std::path::Path, prompts: &std::path::Path) -> Result {
    step("building the prefill bench with the wgpu backend (release, --features gpu)");
    run(cmd::cargo().args([
        "build",
        "--release",
        "-p",
        "ragscope-infer",
        "--features",
        "gpu",
        "--example",
        "prefill_bench",
    ]))?;
    let ours = root().join("target/release/examples/prefill_bench");
    let short = cmd::output(Command::new(&ours).arg("--model").arg(model).args([
        "--backend",
        "gpu",
        "--prompts",
        "1",
        "--tokens",
        "64",
    ]));
    let Some(out) = short else {
        println!("wgpu: no GPU adapter (install mesa-vulkan-drivers for lavapipe); row skipped");
        return Ok(());
    };
    let out = if out.contains("CPU emulation") {
        out
    } else {
        cmd::output(
            Command::new(&ours)
                .arg("--model")
                .arg(model)
                .args(["--backend", "gpu", "--prompts-file"])
                .arg(prompts),
        )
        .ok_or("prefill_bench --backend gpu failed")?
    };
    let engine = out
        .split("\"engine\": \"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap_or("wgpu");
    println!(
        "\n{engine}\n    prefill {:.2} tokens/s",
        tokens_per_s(&out)?
    );
    Ok(())
}

fn tokens_per_s(json_line: &str) -> Result<f64> {
    let key = "\"tokens_per_s\":";
    let at = json_line
        .rfind(key)
        .ok_or_else(|| format!("no tokens_per_s in: {json_line}"))?;
    let rest = json_line[at + key.len()..].trim_start();
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end]
        .trim()
        .parse()
        .map_err(|e| format!("tokens_per_s: {e}"))
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}
