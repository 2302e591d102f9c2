//! Greedy decoding throughput of the CPU engine, for `cargo xtask bench infer`.
//!
//! cargo run --release -p ragscope-infer --example decode_bench -- \
//!     --model M.gguf --prompts-file P.json [--threads N] [--steps 32] [--batch 1]
//!
//! Each prompt of `--prompts-file` (a JSON list of token-id lists, as written by
//! tests/oracle/bench_llama_cpp.py) is prefilled, then `--steps` greedy tokens are decoded with
//! its KV cache; `--batch` prompts decode together (one matmul per step for all of them). Only the
//! decoding steps are timed. Prints one JSON line with decode tokens/s.

use ragscope_infer::generate::argmax;
use ragscope_infer::gguf::GgufFile;
use ragscope_infer::{KvCache, Model};
use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn fail(m: String) -> ! {
    eprintln!("{m}");
    std::process::exit(1)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: decode_bench --model M.gguf --prompts-file P.json [--threads N] [--steps S] [--batch B]";
    let (Some(model_path), Some(prompts_path)) =
        (arg(&args, "--model"), arg(&args, "--prompts-file"))
    else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let num = |name: &str, default: usize| -> usize {
        arg(&args, name).map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| fail(format!("{name}: not a number: {v}\n{usage}")))
        })
    };
    let threads = num(
        "--threads",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
    );
    let steps = num("--steps", 32);
    let batch = num("--batch", 1).max(1);
    ragscope_infer::init_threads(threads).unwrap_or_else(|e| fail(format!("threads: {e}")));
    let (g, src) =
        GgufFile::open(std::path::Path::new(&model_path)).unwrap_or_else(|e| fail(e.to_string()));
    let model = Model::load(&g, &src).unwrap_or_else(|e| fail(e.to_string()));
    let text = std::fs::read_to_string(&prompts_path)
        .unwrap_or_else(|e| fail(format!("{prompts_path}: {e}")));
    let prompts: Vec<Vec<u32>> =
        serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{prompts_path}: {e}")));
    let mut seconds = 0.0;
    let mut decoded = 0usize;
    for chunk in prompts.chunks(batch) {
        let refs: Vec<&[u32]> = chunk.iter().map(|p| p.as_slice()).collect();
        let (first, mut caches) = model
            .prefill_cached(&refs)
            .unwrap_or_else(|e| fail(e.to_string()));
        let mut logits = first.last_logits;
        let start = Instant::now();
        for _ in 0..steps {
            let next: Vec<u32> = logits.iter().map(|l| argmax(l)).collect();
            let mut step: Vec<&mut KvCache> = caches.iter_mut().collect();
            logits = model
                .decode_step(&mut step, &next)
                .unwrap_or_else(|e| fail(e.to_string()));
            decoded += next.len();
        }
        seconds += start.elapsed().as_secs_f64();
    }
    println!(
        "{{\"engine\": \"ragscope-infer (CPU)\", \"threads\": {threads}, \"batch\": {batch}, \"prompts\": {}, \"decode_steps\": {decoded}, \"seconds\": {seconds:.3}, \"decode_tokens_per_s\": {:.1}}}",
        prompts.len(),
        decoded as f64 / seconds
    );
}
