//! Times the wgpu kernels one by one on synthetic inputs (no model file): the dequantizing
//! matmul for each weight type at the prefill GEMM shapes of SmolLM2-135M (K 576/1536) and
//! Qwen2.5-0.5B (K 896/4864), attention and RMSNorm. One JSON line per kernel and shape.
//!
//! cargo run --release -p ragscope-infer --features gpu --example gpu_kernels_bench -- \
//!     [--peak-gflops 67000] [--reps 20] [--tokens 2048] [--types Q4_1,Q8_0] [--quick]
//!     [--force-tile small|large|wide] [--matmul-wgsl variant.wgsl --tile 64x128 [--unchecked]]
//!     [--split-k 1|2] [--no-attention]
//!
//! GFLOP/s = 2·M·N·K / time for the matmuls (M tokens, N weight rows, K columns); attention
//! counts 4·hd per (query, key) pair over the causal triangle. Times come from GPU timestamp
//! queries when the adapter has them ("timed_by": "gpu-timestamps"), else from wall time
//! around one submit of `--reps` dispatches after a warm-up ("wall-clock", includes overhead).

mod kernel_bench;
#[path = "../common/gpu_timing.rs"]
mod timing;

use kernel_bench::KernelBench;
use ragscope_infer::gguf::GgmlType;
use ragscope_infer::gpu::{split_k, GpuContext, GpuError, MatmulTile};
use timing::KernelTime;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

const TYPES: [GgmlType; 7] = [
    GgmlType::F32,
    GgmlType::F16,
    GgmlType::Q8_0,
    GgmlType::Q4_0,
    GgmlType::Q4_1,
    GgmlType::Q4K,
    GgmlType::Q6K,
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let peak: Option<f64> = arg(&args, "--peak-gflops").and_then(|v| v.parse().ok());
    let reps: usize = arg(&args, "--reps")
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let quick = args.iter().any(|a| a == "--quick");
    let m: usize = arg(&args, "--tokens")
        .and_then(|v| v.parse().ok())
        .unwrap_or(if quick { 128 } else { 2048 });
    let only: Option<Vec<String>> =
        arg(&args, "--types").map(|v| v.split(',').map(|s| s.to_uppercase()).collect());
    let ctx = match GpuContext::new_blocking_profiling() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("no GPU adapter: {e}");
            std::process::exit(1);
        }
    };
    println!(
        "{}",
        serde_json::json!({"adapter": ctx.summary.name, "backend": ctx.summary.backend,
            "device_type": ctx.summary.device_type, "driver": ctx.summary.driver,
            "timestamps": ctx.has_timestamps()})
    );
    let mut b = KernelBench::new(&ctx);
    // --force-tile small|large: time that built-in tile on every shape (default: the engine's pick).
    match arg(&args, "--force-tile").as_deref() {
        Some("small") => b = b.with_tile(MatmulTile::Small),
        Some("large") => b = b.with_tile(MatmulTile::Large),
        Some("wide") => b = b.with_tile(MatmulTile::Wide),
        Some(other) => {
            eprintln!("--force-tile {other}: small, large or wide");
            std::process::exit(2)
        }
        None => {}
    }
    // --split-k N: the large tile with K split in N (1: unsplit) where K allows, on every shape.
    let forced_split: Option<usize> = arg(&args, "--split-k").and_then(|v| v.parse().ok());
    if let Some(n) = forced_split {
        b = b.with_split_k(n);
    }
    // Tuning: --matmul-wgsl FILE --tile ROWSxTOKENS times a variant of src/gpu/ops/matmul/matmul.wgsl.
    if let Some(path) = arg(&args, "--matmul-wgsl") {
        let src = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            eprintln!("{path}: {e}");
            std::process::exit(1)
        });
        let tile = arg(&args, "--tile").unwrap_or_else(|| "64x64".into());
        let mut it = tile.split('x').map(|v| v.parse::<usize>().unwrap_or(64));
        let (tn, tm) = (it.next().unwrap_or(64), it.next().unwrap_or(64));
        println!(
            "{}",
            serde_json::json!({"matmul_variant": path, "tile_rows_x_tokens": tile})
        );
        b = b.with_matmul_variant(src, (tn, tm));
        if args.iter().any(|a| a == "--unchecked") {
            b = b.with_unchecked_variant();
        }
    }
    let report = |kernel: &str,
                  shape: serde_json::Value,
                  flops: f64,
                  r: Result<KernelTime, GpuError>| match r {
        Ok(t) => {
            let gflops = flops / t.seconds * 1e-9;
            let mut j = serde_json::json!({"kernel": kernel, "shape": shape,
                    "ms": t.seconds * 1e3, "gflops": gflops, "timed_by": t.timed_by});
            if let Some(p) = peak {
                j["fraction_of_peak"] = serde_json::json!(gflops / p);
            }
            println!("{j}");
        }
        Err(e) => println!(
            "{}",
            serde_json::json!({"kernel": kernel, "error": e.to_string()})
        ),
    };
    // (N rows, K cols): SmolLM2-135M q/o, k/v, gate/up, the fused Q|K|V and gate|up, down, an
    // LM-head chunk; Qwen2.5-0.5B.
    let mut shapes: Vec<(&str, usize, usize, usize)> = vec![
        ("smol_qo", m, 576, 576),
        ("smol_kv", m, 192, 576),
        ("smol_gate_up", m, 1536, 576),
        ("smol_qkv_fused", m, 960, 576),
        ("smol_gate_up_fused", m, 3072, 576),
        ("smol_down", m, 576, 1536),
        ("smol_lm_head", 16, 49152, 576),
        ("qwen_gate_up", m, 4864, 896),
        ("qwen_down", m, 896, 4864),
    ];
    if quick {
        shapes = vec![("quick", m, 192, 512)];
    }
    for ty in TYPES {
        if only
            .as_ref()
            .is_some_and(|o| !o.iter().any(|n| n == ty.name()))
        {
            continue;
        }
        for &(label, mm, n, k) in &shapes {
            if k % ty.block_size() != 0 {
                continue;
            }
            let flops = 2.0 * (mm * n * k) as f64;
            let tile = match arg(&args, "--force-tile").as_deref() {
                Some("large") => MatmulTile::Large,
                Some("wide") => MatmulTile::Wide,
                Some(_) => MatmulTile::Small,
                None => MatmulTile::pick(n, mm, ctx.has_wide_tile()),
            };
            let split = forced_split.unwrap_or_else(|| split_k(tile, ty, n, mm, k));
            let mut shape = serde_json::json!({"name": label, "m": mm, "n": n, "k": k,
                "tile": format!("{tile:?}"), "split_k": split});
            if arg(&args, "--matmul-wgsl").is_some() {
                shape["tile"] = serde_json::json!("variant");
            }
            report(
                &format!("matmul_{}", ty.name()),
                shape,
                flops,
                b.matmul(ty, mm, n, k, reps),
            );
        }
    }
    // Attention: SmolLM2-135M heads (9 query, 3 KV, hd 64), one long or many 400-token prompts.
    let attention = !args.iter().any(|a| a == "--no-attention");
    for (n_p, len) in [(1, m), (m / 400, 400), (m / 50, 50)] {
        if n_p == 0 || !attention {
            continue;
        }
        let pairs = (n_p * len * (len + 1) / 2) as f64;
        let flops = 4.0 * 64.0 * 9.0 * pairs;
        let shape =
            serde_json::json!({"prompts": n_p, "len": len, "heads": 9, "kv_heads": 3, "hd": 64});
        report(
            "attention",
            shape,
            flops,
            b.attention(n_p, len, 9, 3, 64, reps),
        );
    }
    let shape = serde_json::json!({"rows": m, "dim": 576});
    report(
        "rms_norm",
        shape,
        4.0 * (m * 576) as f64,
        b.rms_norm(m, 576, reps),
    );
}
