//! `cargo xtask bench …`: side-by-side benchmarks against the anchors, reported as medians.
//! Never timed assertions: machines are shared and noisy, so these only print.

use crate::cmd::{self, root, run, step, Result};
use std::path::PathBuf;
use std::process::Command;

pub fn bench(args: &[String]) -> Result {
    match args.first().map(String::as_str) {
        Some("metrics") if args.iter().any(|a| a == "--sizes") => metrics_sizes(&args[1..]),
        Some("metrics") => metrics(&args[1..]),
        Some("udcg") => udcg(),
        Some("python") => python(&args[1..]),
        Some("infer") if args.iter().any(|a| a == "--gpu-only") => infer_gpu_only(&args[1..]),
        Some("infer") => infer(),
        Some("browser") => browser(&args[1..]),
        Some("wasm-cpu") => wasm_cpu(),
        Some(other) => Err(format!(
            "unknown bench `{other}`: metrics|udcg|infer|python|browser"
        )),
        None => Err(
            "usage: cargo xtask bench metrics [--sizes [Q1,Q2,...]] [--no-ranx] [--no-wasm] [--baseline PATH] [--repeat N] | udcg | python [--repeat N] | infer [--gpu-only --model PATH --passages N] | browser large|huge"
                .into(),
        ),
    }
}

/// `bench browser large|huge`: a 7,000 × 1,000 run (~290 MB) or a 500 MB run evaluated in a
/// headless Chromium tab (tests/browser/{large,huge}.bench.mjs), with time and peak memory
/// printed; never part of `cargo xtask test` (minutes each, and they measure, not check).
fn browser(args: &[String]) -> Result {
    let file = match args.first().map(String::as_str) {
        Some("large") => "large.bench.mjs",
        Some("huge") => "huge.bench.mjs",
        other => return Err(format!("bench browser takes large or huge (got {other:?})")),
    };
    crate::tools::ensure_all()?;
    crate::serve::build_site(true)?;
    step(&format!("tests/browser/{file} in headless Chromium"));
    run(crate::test::node_test().arg(file))
}

/// `bench wasm-cpu`: the CPU engine's prefill compiled to wasm32 (+simd128, as the app's worker
/// runs it) under Node on one thread, against the native build on one thread, on SmolLM2-135M
/// Q4_1 with the same prompts (4 × 128 pseudo-random tokens in one batch, the seed of
/// examples/prefill_bench.rs); medians of 5 runs each. The wasm runner first checks that the
/// simd128 kernel equals the portable one bit for bit (xtask/bench/wasm_cpu.cjs).
fn wasm_cpu() -> Result {
    let model = crate::models::ensure(&crate::models::SMOLLM2)?;
    step("building the prefill bench for wasm32 and natively (release)");
    run(cmd::cargo().args([
        "build",
        "--release",
        "-p",
        "ragscope-infer",
        "--example",
        "wasm_cpu_bench",
        "--target",
        "wasm32-unknown-unknown",
        "--no-default-features",
    ]))?;
    run(cmd::cargo().args([
        "build",
        "--release",
        "-p",
        "ragscope-infer",
        "--example",
        "prefill_bench",
    ]))?;
    let wasm = root().join("target/wasm32-unknown-unknown/release/examples/wasm_cpu_bench.wasm");
    step(&format!("bench wasm-cpu: {}", model.display()));
    let out = cmd::output(
        Command::new("node")
            .arg(root().join("xtask/bench/wasm_cpu.cjs"))
            .arg(&wasm)
            .arg(&model)
            .args(["4", "128", "5"]),
    )
    .ok_or("the wasm32 bench under Node failed")?;
    println!("{}", out.trim());
    let in_wasm = value_of(&out, "median_tokens_per_s")?;
    let mut native = Vec::new();
    for _ in 0..5 {
        let out = cmd::output(
            Command::new(root().join("target/release/examples/prefill_bench"))
                .arg("--model")
                .arg(&model)
                .args(["--threads", "1", "--prompts", "4", "--tokens", "128"])
                .args(["--batch", "4"]),
        )
        .ok_or("prefill_bench failed")?;
        native.push(tokens_per_s(&out)?);
    }
    let native = median(native);
    println!(
        "\nprefill tokens/s, one thread: wasm32 in Node {in_wasm:.1}, native {native:.1}, \
         wasm/native {:.3}",
        in_wasm / native
    );
    Ok(())
}

fn bench_dir() -> PathBuf {
    root().join("target/bench")
}

/// `bench metrics [--no-ranx] [--no-wasm] [--baseline PATH] [--repeat N]`: the flags leave ranx
/// or the wasm row out, time an earlier ragscope build alongside, or change the rounds.
fn metrics(args: &[String]) -> Result {
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let no_wasm = args.iter().any(|a| a == "--no-wasm");
    step("building ragscope (release)");
    run(cmd::cargo().args(["build", "--release", "-p", "ragscope-cli"]))?;
    // The same engine as wasm under Node, for the "wasm within 2x of native" check.
    let node_dir = bench_dir().join("wasm-node");
    if !no_wasm {
        crate::serve::build_js(&node_dir, "nodejs")?;
        std::fs::copy(
            root().join("xtask/bench/wasm_node.cjs"),
            node_dir.join("bench.cjs"),
        )
        .map_err(|e| format!("copying the node bench runner: {e}"))?;
    }
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
    if !no_wasm {
        c.arg("--wasm-node").arg(node_dir.join("bench.cjs"));
    }
    if args.iter().any(|a| a == "--no-ranx") {
        c.arg("--no-ranx");
    }
    for flag in ["--baseline", "--repeat"] {
        if let Some(v) = value(flag) {
            c.args([flag, &v]);
        }
    }
    run(&mut c)
}

/// `bench metrics --sizes [Q1,Q2,...]`: time per line and peak memory of `ragscope trec-eval`
/// and `eval` (and pytrec_eval) on MS MARCO-shaped runs of Q queries x 1,000 documents, from
/// ~1 MB (28 queries) to ~280 MB (7,000 queries, MS MARCO dev's size). Generated once into
/// target/bench/sized (about 340 MB with the qrels).
fn metrics_sizes(args: &[String]) -> Result {
    let sizes = args
        .iter()
        .skip_while(|a| *a != "--sizes")
        .nth(1)
        .filter(|a| !a.starts_with("--"))
        .map_or("28,280,1000,2800,7000", String::as_str)
        .to_string();
    step("building ragscope (release)");
    run(cmd::cargo().args(["build", "--release", "-p", "ragscope-cli"]))?;
    let python = cmd::venv(
        &bench_dir().join("venv"),
        &root().join("xtask/bench/requirements.txt"),
    )?;
    step(&format!("bench metrics --sizes {sizes}: time per line"));
    let mut c = Command::new(python);
    c.arg(root().join("xtask/bench/metrics.py"))
        .arg("--ragscope")
        .arg(root().join("target/release/ragscope"))
        .arg("--folder")
        .arg(bench_dir().join("sized"))
        .arg("--sizes")
        .arg(&sizes);
    if args.iter().any(|a| a == "--no-pytrec") {
        c.arg("--no-pytrec");
    }
    run(&mut c)
}

/// `bench python [--repeat N]`: in-process evaluation from Python (xtask/bench/python.py) with
/// the wheel of `cargo xtask wheel`, beside pytrec-eval-terrier, ranx and ir_measures.
fn python(args: &[String]) -> Result {
    let wheel = crate::wheel::wheel()?;
    let venv = bench_dir().join("python-venv");
    let python = cmd::venv(&venv, &root().join("crates/python/tests/requirements.txt"))?;
    run(Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "-q",
            "--disable-pip-version-check",
            "--no-deps",
            "--force-reinstall",
        ])
        .arg(&wheel))?;
    step("bench python: RelevanceEvaluator.evaluate in-process, 1,000 x 1,000");
    let mut c = Command::new(python);
    c.arg(root().join("xtask/bench/python.py"))
        .arg("--folder")
        .arg(bench_dir().join("metrics"));
    if let Some(i) = args.iter().position(|a| a == "--repeat") {
        if let Some(n) = args.get(i + 1) {
            c.args(["--repeat", n]);
        }
    }
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

/// Prefill tokens/s of the CPU engine vs llama-cpp-python on the real SmolLM2-135M-Instruct Q4_1
/// file (`cargo xtask models`), the paper's prompt through the model's chat template with
/// ~400-token passages (tests/oracle/bench_llama_cpp.py writes the token ids both engines run),
/// at 1 and 2 threads, alternating runs, medians of 3. llama.cpp evaluates one prompt per pass;
/// ragscope is shown with one prompt per pass and with 8 (what `ragscope utility` does).
fn infer() -> Result {
    let oracle = root().join("tests/oracle");
    let python = cmd::venv(&oracle.join(".venv"), &oracle.join("requirements.txt"))?;
    let model = crate::models::ensure(&crate::models::SMOLLM2)?;
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
    let prompts = dir.join("prompts.json");
    step(&format!(
        "bench infer: {} (8 prompts, paper's prompt, ~400-token passages)",
        model.display()
    ));
    println!(
        "\n{:>8} {:>20} {:>22} {:>22} {:>10}",
        "threads", "llama.cpp tok/s", "ragscope tok/s (1)", "ragscope tok/s (8)", "ratio (1)"
    );
    for threads in [1, 2] {
        let (mut theirs, mut one, mut eight) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..3 {
            let out = cmd::output(
                Command::new(&python)
                    .arg(root().join("tests/oracle/bench_llama_cpp.py"))
                    .arg("--out")
                    .arg(&dir)
                    .arg("--model")
                    .arg(&model)
                    .args(["--threads", &threads.to_string(), "--prompts", "8"]),
            )
            .ok_or("llama.cpp bench failed")?;
            theirs.push(tokens_per_s(&out)?);
            for (batch, into) in [("1", &mut one), ("8", &mut eight)] {
                let out = cmd::output(
                    Command::new(&ours)
                        .arg("--model")
                        .arg(&model)
                        .args(["--threads", &threads.to_string(), "--batch", batch])
                        .arg("--prompts-file")
                        .arg(&prompts),
                )
                .ok_or("prefill_bench failed")?;
                into.push(tokens_per_s(&out)?);
            }
        }
        let (t, a, b) = (median(theirs), median(one), median(eight));
        println!("{threads:>8} {t:>20.1} {a:>22.1} {b:>22.1} {:>9.2}x", a / t);
    }
    infer_decode(&python, &dir)
}

/// Greedy decoding tokens/s after 128-token prompts: llama.cpp one sequence at a time vs the CPU
/// engine one at a time and 8 prompts decoding together, at 1 and 2 threads.
fn infer_decode(python: &std::path::Path, dir: &std::path::Path) -> Result {
    step("building the decode bench (release)");
    run(cmd::cargo().args([
        "build",
        "--release",
        "-p",
        "ragscope-infer",
        "--example",
        "decode_bench",
    ]))?;
    let ours = root().join("target/release/examples/decode_bench");
    let model = dir.join("smollm2-135m-shape-q8_0.gguf");
    let prompts = dir.join("prompts.json");
    println!(
        "\n{:>8} {:>24} {:>24} {:>24}",
        "threads", "llama.cpp decode tok/s", "ragscope batch 1 tok/s", "ragscope batch 8 tok/s"
    );
    for threads in [1, 2] {
        let (mut theirs, mut one, mut eight) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..3 {
            let out = cmd::output(
                Command::new(python)
                    .arg(root().join("tests/oracle/bench_llama_cpp.py"))
                    .arg("--out")
                    .arg(dir)
                    .args(["--threads", &threads.to_string()])
                    .args(["--prompts", "8", "--tokens", "128", "--decode", "32"]),
            )
            .ok_or("llama.cpp decode bench failed")?;
            theirs.push(value_of(&out, "decode_tokens_per_s")?);
            for (batch, into) in [(1, &mut one), (8, &mut eight)] {
                let out = cmd::output(
                    Command::new(&ours)
                        .arg("--model")
                        .arg(&model)
                        .args(["--threads", &threads.to_string(), "--steps", "32"])
                        .args(["--batch", &batch.to_string(), "--prompts-file"])
                        .arg(&prompts),
                )
                .ok_or("decode_bench failed")?;
                into.push(value_of(&out, "decode_tokens_per_s")?);
            }
        }
        println!(
            "{threads:>8} {:>24.1} {:>24.1} {:>24.1}",
            median(theirs),
            median(one),
            median(eight)
        );
    }
    infer_gpu(&model, &prompts)
}

/// The wgpu backend on the same model and prompts: prefill tokens/s (the utility path), greedy
/// decoding tokens/s (all prompts decoding together), and the prefill GEMMs' achieved FLOP/s
/// (crates/infer/examples/gpu_bench/). On a software adapter (lavapipe: a CPU emulation) two
/// prompts and 8 new tokens only.
fn infer_gpu(model: &std::path::Path, prompts: &std::path::Path) -> Result {
    let bench = build_gpu_bench()?;
    let probe = cmd::output(Command::new(&bench).arg("--model").arg(model).args([
        "--passages",
        "1",
        "--tokens",
        "16",
        "--decode",
        "2",
        "--matmul-rows",
        "32",
    ]));
    let Some(probe) = probe else {
        println!("wgpu: no GPU adapter (install mesa-vulkan-drivers for lavapipe); rows skipped");
        return Ok(());
    };
    let software = probe.contains("CPU emulation");
    let mut c = Command::new(&bench);
    c.arg("--model")
        .arg(model)
        .arg("--prompts-file")
        .arg(prompts);
    if software {
        c.args(["--passages", "2", "--decode", "8", "--matmul-rows", "256"]);
    }
    report_gpu_bench(&mut c)
}

/// `cargo xtask bench infer --gpu-only --model PATH [--passages N] [--tokens L] [--decode S]`:
/// the wgpu rows alone on any GGUF (random prompts of L tokens, default 512), for a machine
/// with a real GPU and no Python.
fn infer_gpu_only(args: &[String]) -> Result {
    let value = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let model = value("--model").ok_or("--gpu-only needs --model PATH (a GGUF file)")?;
    let bench = build_gpu_bench()?;
    let mut c = Command::new(&bench);
    c.args(["--model", &model]);
    for flag in ["--passages", "--tokens", "--decode", "--matmul-rows"] {
        if let Some(v) = value(flag) {
            c.args([flag, &v]);
        }
    }
    report_gpu_bench(&mut c)
}

fn build_gpu_bench() -> Result<PathBuf> {
    step("building the GPU bench (release, --features gpu)");
    run(cmd::cargo().args([
        "build",
        "--release",
        "-p",
        "ragscope-infer",
        "--features",
        "gpu",
        "--example",
        "gpu_bench",
    ]))?;
    Ok(root().join("target/release/examples/gpu_bench"))
}

fn report_gpu_bench(c: &mut Command) -> Result {
    let out = cmd::output(c).ok_or("gpu_bench failed")?;
    // Its human-readable lines, then the numbers the README's table takes.
    for line in out.lines().filter(|l| !l.starts_with('{')) {
        println!("{line}");
    }
    let json = out
        .lines()
        .rfind(|l| l.starts_with('{'))
        .ok_or("gpu_bench printed no JSON line")?;
    println!(
        "\nwgpu: prefill {:.1} tokens/s, decode {:.1} tokens/s, one layer's prefill GEMMs {:.1} GFLOP/s",
        value_of(json, "prefill_tokens_per_s")?,
        value_of(json, "decode_tokens_per_s")?,
        value_of(json, "layer_gemm_flops_per_s")? / 1e9
    );
    Ok(())
}

fn value_of(json_line: &str, key: &str) -> Result<f64> {
    let key = format!("\"{key}\":");
    let at = json_line
        .rfind(&key)
        .ok_or_else(|| format!("no {key} in: {json_line}"))?;
    let rest = json_line[at + key.len()..].trim_start();
    let end = rest.find([',', '}']).unwrap_or(rest.len());
    rest[..end]
        .trim()
        .parse()
        .map_err(|e| format!("{key}: {e}"))
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
