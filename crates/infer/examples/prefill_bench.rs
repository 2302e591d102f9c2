//! Prefill throughput of the CPU engine, for `cargo xtask bench infer`.
//!
//! cargo run --release -p ragscope-infer --example prefill_bench -- \
//!     --model M.gguf --threads 2 --prompts 8 [--tokens 256] [--batch 8] [--prompts-file P.json]
//!     [--backend gpu]   (built with --features gpu: the wgpu backend on the first adapter)
//!
//! Prompts are random token ids (fixed seed) of `--tokens` each, or the id lists in
//! `--prompts-file` (a JSON list of lists, as written by tests/oracle/bench_llama_cpp.py so both
//! engines see the same input). Prints one JSON line with tokens/s.

use ragscope_infer::gguf::GgufFile;
use ragscope_infer::Model;
use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: prefill_bench --model M.gguf [--threads N] [--prompts N] [--tokens L] [--batch B] [--prompts-file P.json]";
    let Some(model_path) = arg(&args, "--model") else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let num = |name: &str, default: usize| -> usize {
        arg(&args, name).map_or(default, |v| {
            v.parse().unwrap_or_else(|_| {
                eprintln!("{name}: not a number: {v}\n{usage}");
                std::process::exit(2)
            })
        })
    };
    let threads = num(
        "--threads",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let n_prompts = num("--prompts", 8);
    let n_tokens = num("--tokens", 256);
    let batch = num("--batch", 8).max(1);
    if let Err(e) = ragscope_infer::init_threads(threads) {
        eprintln!("threads: {e}");
        std::process::exit(1);
    }
    let (g, src) = match GgufFile::open(std::path::Path::new(&model_path)) {
        Ok(x) => x,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    #[allow(unused_mut)]
    let mut model = match Model::load(&g, &src) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}");
            std::process::exit(1);
        }
    };
    let backend = arg(&args, "--backend").unwrap_or_else(|| "cpu".into());
    #[cfg_attr(not(feature = "gpu"), allow(unused_mut))]
    let mut engine = "ragscope-infer cpu".to_string();
    match backend.as_str() {
        "cpu" => {}
        #[cfg(feature = "gpu")]
        "gpu" => {
            use ragscope_infer::gpu::{GpuBackend, GpuPolicy};
            match GpuBackend::new(&model, GpuPolicy::GpuOnly) {
                Ok(b) => {
                    engine = format!("ragscope-infer wgpu on {}", b.adapter());
                    model.set_backend(Some(Box::new(b)));
                }
                Err(e) => {
                    eprintln!("{e}");
                    std::process::exit(1);
                }
            }
        }
        other => {
            eprintln!("--backend {other}: cpu, or gpu in a build with --features gpu\n{usage}");
            std::process::exit(2);
        }
    }
    let prompts: Vec<Vec<u32>> = match arg(&args, "--prompts-file") {
        Some(p) => {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| {
                eprintln!("{p}: {e}");
                std::process::exit(1)
            });
            serde_json::from_str(&text).unwrap_or_else(|e| {
                eprintln!("{p}: {e}");
                std::process::exit(1)
            })
        }
        None => {
            let mut state = 0x9E37_79B9_7F4A_7C15u64;
            (0..n_prompts)
                .map(|_| {
                    (0..n_tokens)
                        .map(|_| {
                            state = state
                                .wrapping_mul(6364136223846793005)
                                .wrapping_add(1442695040888963407);
                            ((state >> 33) % model.n_vocab() as u64) as u32
                        })
                        .collect()
                })
                .collect()
        }
    };
    let total: usize = prompts.iter().map(Vec::len).sum();
    // The GPU backend compiles its matmul pipelines on first use: one untimed batch first.
    if backend == "gpu" {
        if let Some(chunk) = prompts.chunks(batch).next() {
            let refs: Vec<&[u32]> = chunk.iter().map(|p| p.as_slice()).collect();
            if let Err(e) = model.prefill(&refs) {
                eprintln!("{e}");
                std::process::exit(1);
            }
        }
    }
    let start = Instant::now();
    for chunk in prompts.chunks(batch) {
        let refs: Vec<&[u32]> = chunk.iter().map(|p| p.as_slice()).collect();
        if let Err(e) = model.prefill(&refs) {
            eprintln!("{e}");
            std::process::exit(1);
        }
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{{\"engine\": {engine:?}, \"model\": {:?}, \"threads\": {threads}, \"prompts\": {}, \"tokens\": {total}, \"seconds\": {secs:.3}, \"tokens_per_s\": {:.1}}}",
        model_path,
        prompts.len(),
        total as f64 / secs
    );
}
