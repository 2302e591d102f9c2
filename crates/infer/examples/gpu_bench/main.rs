//! The wgpu backend's throughput, for `cargo xtask bench infer` (also alone: `--gpu-only`).
//!
//! cargo run --release -p ragscope-infer --features gpu --example gpu_bench -- \
//!     --model M.gguf [--passages 8] [--tokens 512] [--decode 32] [--prompts-file P.json]
//!     [--matmul-rows 2048] [--no-split-k] [--no-fuse] [--no-wide] [--batch-tokens N]
//!
//! Prints the adapter, then: prefill tokens/s (the utility path: `--passages` prompts of
//! `--tokens` random ids, or the id lists of `--prompts-file`, packed into device-sized
//! batches); greedy decoding tokens/s (all prompts decoding together, `--decode` new tokens each,
//! no stop: the decoding steps' time alone, the prefill that fills the KV cache reported apart);
//! and each prefill GEMM's achieved FLOP/s (2·M·N·K / kernel time, from timestamp queries when the
//! adapter has them, else wall time of a matmul-only microbench, labelled). Ends with one JSON line.

mod matmuls;
#[path = "../common/gpu_timing.rs"]
mod timing;

use ragscope_infer::generate::GreedyOptions;
use ragscope_infer::gguf::GgufFile;
use ragscope_infer::gpu::{GpuContext, GpuModel};
use ragscope_infer::{Model, Tokenizer};
use std::time::Instant;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn fail(m: impl std::fmt::Display) -> ! {
    eprintln!("{m}");
    std::process::exit(1)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: gpu_bench --model M.gguf [--passages N] [--tokens L] [--decode S] [--prompts-file P.json] [--matmul-rows M] [--no-split-k] [--no-fuse] [--no-wide] [--batch-tokens N]";
    let Some(model_path) = arg(&args, "--model") else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let num = |name: &str, default: usize| -> usize {
        arg(&args, name).map_or(default, |v| {
            v.parse()
                .unwrap_or_else(|_| fail(format!("{name}: not a number: {v}\n{usage}")))
        })
    };
    let (g, src) = GgufFile::open(std::path::Path::new(&model_path)).unwrap_or_else(|e| fail(e));
    let model = Model::load(&g, &src).unwrap_or_else(|e| fail(e));
    let tok = Tokenizer::from_gguf(&g).unwrap_or_else(|e| fail(e));
    let ctx = GpuContext::new_blocking_profiling().unwrap_or_else(|e| fail(e));
    let adapter = ctx.summary.to_string();
    println!("GPU adapter: {adapter}");
    // --no-fuse: Q, K, V and gate, up as separate GEMMs (to compare with the fused ones).
    let fuse = !args.iter().any(|a| a == "--no-fuse");
    let gpu = GpuModel::upload_with(ctx, &model, fuse).unwrap_or_else(|e| fail(e));
    // --no-split-k: O and down without the engine's K split (to compare).
    let gpu = gpu.with_split_k(!args.iter().any(|a| a == "--no-split-k"));
    // --no-wide: the 128-row large tile where the engine would take the 192-row one.
    let gpu = gpu.with_wide_tile(!args.iter().any(|a| a == "--no-wide"));
    // --batch-tokens N: batches of N tokens instead of the engine's choice for the model.
    let gpu = match arg(&args, "--batch-tokens").and_then(|v| v.parse().ok()) {
        Some(n) => gpu.with_batch_tokens(n),
        None => gpu,
    };
    eprintln!("batches of up to {} tokens", gpu.max_batch_tokens());
    let prompts: Vec<Vec<u32>> = match arg(&args, "--prompts-file") {
        Some(p) => {
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| fail(format!("{p}: {e}")));
            let all: Vec<Vec<u32>> =
                serde_json::from_str(&text).unwrap_or_else(|e| fail(format!("{p}: {e}")));
            all.into_iter()
                .take(num("--passages", usize::MAX))
                .collect()
        }
        None => {
            let (n, len) = (num("--passages", 8), num("--tokens", 512));
            let len = len
                .min(model.config.context_length.saturating_sub(64))
                .max(1);
            let mut state = 0x9E37_79B9_7F4A_7C15u64;
            (0..n)
                .map(|_| {
                    (0..len)
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
    let refs: Vec<&[u32]> = prompts.iter().map(|p| p.as_slice()).collect();
    let total: usize = refs.iter().map(|p| p.len()).sum();

    // Prefill (the utility path). A first pass of one full batch warms up the pipelines, which
    // are compiled per weight type and tile on first use.
    let mut fill = 0;
    let warm = refs
        .iter()
        .take_while(|p| {
            fill += p.len();
            fill <= gpu.max_batch_tokens()
        })
        .count()
        .max(1);
    gpu.prefill_blocking(&model, &refs[..warm])
        .unwrap_or_else(|e| fail(e));
    let t = Instant::now();
    gpu.prefill_blocking(&model, &refs)
        .unwrap_or_else(|e| fail(e));
    let prefill_s = t.elapsed().as_secs_f64();
    let prefill_tps = total as f64 / prefill_s;
    println!(
        "prefill: {} prompts, {total} tokens in {prefill_s:.3} s = {prefill_tps:.1} tokens/s",
        refs.len()
    );

    // Greedy decoding: every prompt runs the full --decode steps (no stop string; EOS can still
    // end one early, which the token count reflects).
    let options = GreedyOptions {
        max_new_tokens: num("--decode", 32).max(2),
        stop: Vec::new(),
    };
    let gens = gpu
        .greedy_blocking(&model, &tok, &refs, &options)
        .unwrap_or_else(|e| fail(e));
    let st = gpu.last_decode_stats();
    let decode_tps = st.decode_tokens as f64 / st.decode_seconds.max(1e-9);
    let generated: usize = gens.iter().map(|g| g.tokens.len()).sum();
    println!(
        "decode: {} prompts together, {} steps, {} tokens through the steps in {:.3} s = {decode_tps:.1} tokens/s ({generated} tokens generated; KV-cache prefill {:.3} s)",
        refs.len(),
        st.steps,
        st.decode_tokens,
        st.decode_seconds,
        st.prefill_seconds
    );

    // The prefill GEMMs alone.
    let m = num("--matmul-rows", 2048).min(gpu.max_batch_tokens());
    let timings = matmuls::bench_matmuls(&gpu, m, 50).unwrap_or_else(|e| fail(e));
    let (mut flop, mut secs) = (0f64, 0f64);
    println!("prefill matmuls ({} rows):", m);
    for t in &timings {
        println!(
            "  {:<22} {:>5} M {:>5} N {:>6} K {:>5}: {:>9.3} ms  {:>8.1} GFLOP/s  [{}; {} reps]",
            t.name,
            t.ty,
            t.m,
            t.n,
            t.k,
            t.seconds * 1e3,
            t.flops_per_s() / 1e9,
            t.timer,
            t.reps
        );
        if t.name != "output (first slice)" {
            flop += 2.0 * (t.m * t.n * t.k) as f64;
            secs += t.seconds;
        }
    }
    let layer_flops = flop / secs.max(1e-12);
    let timer = timings.first().map_or("none", |t| t.timer);
    println!(
        "  one layer's GEMMs together: {:.1} GFLOP/s [{timer}] (divide by the GPU's peak f32 FLOP/s for the fraction of peak)",
        layer_flops / 1e9
    );
    println!(
        "{{\"engine\": \"ragscope-infer wgpu\", \"adapter\": {adapter:?}, \"prompts\": {}, \"prefill_tokens\": {total}, \"prefill_tokens_per_s\": {prefill_tps:.1}, \"decode_steps\": {}, \"decode_tokens\": {}, \"decode_tokens_per_s\": {decode_tps:.1}, \"matmul_rows\": {m}, \"layer_gemm_flops_per_s\": {layer_flops:.4e}, \"matmul_timer\": {timer:?}}}",
        refs.len(),
        st.steps,
        st.decode_tokens
    );
}
