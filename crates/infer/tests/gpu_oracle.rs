//! The wgpu backend against the CPU engine and llama.cpp on every tiny oracle model: each
//! prompt's p(NO-RESPONSE) within 1e-4 relative of the CPU engine's (and within the CPU test's
//! tolerance of llama.cpp's), all prompts in one packed batch. Natively this runs on whatever
//! adapter wgpu finds (lavapipe on a machine without a GPU); with none, the test prints
//! `SKIPPED: no Vulkan adapter` and asserts nothing (a failure under `cargo xtask test`, which
//! installs lavapipe: ragscope_infer::test_support).
#![cfg(feature = "gpu")]

mod common;

use ragscope_infer::generate::{greedy, greedy_cpu, GreedyOptions, StopReason};
use ragscope_infer::gguf::{GgufFile, VecSource};
use ragscope_infer::gpu::{GpuBackend, GpuContext, GpuError, GpuModel, GpuPolicy};
use ragscope_infer::utility::token_probability;
use ragscope_infer::{Model, Tokenizer};

fn load(file: &str) -> Model {
    let path = common::fixtures_dir().join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let src = VecSource::new(bytes);
    let g = GgufFile::read(&src, &path.display().to_string()).unwrap();
    Model::load(&g, &src).unwrap()
}

fn adapter() -> Option<GpuContext> {
    match GpuContext::new_blocking() {
        Ok(c) => {
            eprintln!("GPU adapter: {}", c.summary);
            Some(c)
        }
        Err(GpuError::NoAdapter(e)) => {
            ragscope_infer::test_support::skip(&format!("no Vulkan adapter ({e})"));
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[test]
fn p_no_response_on_the_gpu_equals_the_cpu_engine() {
    if adapter().is_none() {
        return;
    }
    let mut models = 0;
    for (name, fx) in common::model_fixtures() {
        let Some(entries) = fx["logits"].as_array() else {
            continue;
        };
        let model = load(fx["model_file"].as_str().unwrap());
        models += 1;
        let float_only = fx["weight_types"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| matches!(t.as_str(), Some("F32") | Some("F16")));
        // gemma3: the CPU oracle test's own tolerance (ggml rounds GELU through f16; see
        // forward_oracle.rs), which the GPU's GeGLU reproduces.
        let llama_tol = if model.config.arch == "gemma3" {
            1.3e-4
        } else if float_only {
            1e-4
        } else {
            1e-3
        };
        // GPU vs CPU engine: 1e-4 (issue 10), except gemma3, where a GELU input on an f16
        // rounding boundary can round either way in each, so each lands within its own oracle
        // tolerance of llama.cpp (the CPU engine's AVX2 kernels sum in another order and were
        // 2.6e-4 off, the GPU 2e-5, on an AMD EPYC with lavapipe, 2026-11-28) and the two within
        // the sum of those tolerances.
        let cpu_tol = if model.config.arch == "gemma3" {
            llama_tol + common::cpu_oracle_tolerances(&name).1
        } else {
            1e-4
        };
        let target = common::ids(&fx["no_response_ids"])[0];
        let prompts: Vec<Vec<u32>> = entries.iter().map(|e| common::ids(&e["ids"])).collect();
        let refs: Vec<&[u32]> = prompts.iter().map(|p| p.as_slice()).collect();
        let cpu = model.prefill(&refs).unwrap();
        let ctx = GpuContext::new_blocking().unwrap();
        let gpu = GpuModel::upload(ctx, &model).unwrap();
        // Q|K|V and gate|up are fused where a layer's parts share their weight type: every
        // layer of the single-type models; none of qwen2-qmix (Q4_0/Q4_1/Q5_0 Q, K, V); in the
        // llama.cpp Q4_K_M file layer 0 (all Q5_0) but not layer 1 (V in Q8_0).
        let fused = gpu.fused_projections();
        match name.as_str() {
            n if n.starts_with("qwen2-qmix") => assert!(
                fused.iter().all(|&f| f == (false, false)),
                "{name}: {fused:?}"
            ),
            n if n.starts_with("llama-q4km") => {
                assert_eq!(&fused[..2], &[(true, true), (false, true)], "{name}")
            }
            _ => assert!(
                fused.iter().all(|&f| f == (true, true)),
                "{name}: {fused:?}"
            ),
        }
        let out = gpu.prefill_blocking(&model, &refs).unwrap();
        assert_eq!(out.last_logits.len(), refs.len(), "{name}");
        // The GPU softmax (only p(target) read back) gives the same probabilities.
        let targets = vec![target; refs.len()];
        let picked = gpu
            .prefill_token_probs_blocking(&model, &refs, &targets)
            .unwrap();
        for (i, (&pg, c)) in picked.iter().zip(&cpu.last_logits).enumerate() {
            let pc = token_probability(c, target);
            let rel = (pg as f64 - pc).abs() / pc;
            assert!(
                rel <= cpu_tol,
                "{name} prompt {i}: GPU softmax p {pg} vs CPU {pc}"
            );
        }
        let (mut worst_p, mut worst_logit, mut worst_ll) = (0f64, 0f64, 0f64);
        for (i, e) in entries.iter().enumerate() {
            let (g, c) = (&out.last_logits[i], &cpu.last_logits[i]);
            assert_eq!(g.len(), c.len(), "{name} prompt {i}");
            let max_abs = c.iter().fold(0f32, |m, v| m.max(v.abs())) as f64;
            let dl = g
                .iter()
                .zip(c)
                .fold(0f64, |m, (a, b)| m.max((a - b).abs() as f64));
            worst_logit = worst_logit.max(dl / max_abs);
            let (pg, pc) = (token_probability(g, target), token_probability(c, target));
            let rel = (pg - pc).abs() / pc;
            worst_p = worst_p.max(rel);
            assert!(
                rel <= cpu_tol,
                "{name} prompt {i}: GPU p {pg} vs CPU {pc} (rel {rel:e})"
            );
            let want = e["p_no_response"].as_f64().unwrap();
            let rel_ll = (pg - want).abs() / want;
            worst_ll = worst_ll.max(rel_ll);
            assert!(
                rel_ll <= llama_tol,
                "{name} prompt {i}: GPU p {pg} vs llama.cpp {want} (rel {rel_ll:e})"
            );
        }
        println!(
            "{name}: {} prompts, GPU vs CPU max rel Δp = {worst_p:.2e}, max |Δlogit|/max|logit| = {worst_logit:.2e}, GPU vs llama.cpp max rel Δp = {worst_ll:.2e}",
            refs.len()
        );
    }
    assert!(
        models >= 8,
        "only {models} models with logits (gemma3 included)"
    );
}

/// `Model::prefill` through the backend switch, and a device lost mid-run: the next batch is
/// retried on a new device and still equals the CPU engine.
#[test]
fn backend_switch_and_lost_device_recovery() {
    if adapter().is_none() {
        return;
    }
    let (name, fx) = common::model_fixtures()
        .into_iter()
        .find(|(name, fx)| fx["logits"].is_array() && !name.starts_with("gemma3"))
        .unwrap();
    let mut model = load(fx["model_file"].as_str().unwrap());
    let prompts: Vec<Vec<u32>> = fx["logits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| common::ids(&e["ids"]))
        .collect();
    let refs: Vec<&[u32]> = prompts.iter().map(|p| p.as_slice()).collect();
    let cpu = model.prefill(&refs).unwrap();
    let backend = GpuBackend::new(&model, GpuPolicy::GpuOnly).unwrap();
    backend.simulate_device_loss();
    model.set_backend(Some(Box::new(backend)));
    assert!(model.backend_name().unwrap().starts_with("GPU: "));
    let out = model.prefill(&refs).unwrap();
    for (i, (g, c)) in out.last_logits.iter().zip(&cpu.last_logits).enumerate() {
        let d = g.iter().zip(c).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        let max_abs = c.iter().fold(0f32, |m, v| m.max(v.abs()));
        assert!(d <= 1e-4 * max_abs, "{name} prompt {i}: {d} after recovery");
    }
    // prefill_cpu bypasses the backend.
    assert_eq!(
        model.prefill_cpu(&refs).unwrap().last_logits,
        cpu.last_logits
    );
}

/// A device that runs out of memory on batches of more than 2 (then 1) prompts: the batch runs
/// in parts on new devices, and prefill and greedy decoding still equal the CPU engine, in the
/// prompts' order.
#[test]
fn out_of_memory_runs_the_batch_in_parts() {
    if adapter().is_none() {
        return;
    }
    let fx = common::load_json("decode.json");
    let (name, m) = fx["models"]
        .as_object()
        .expect("models")
        .iter()
        .find(|(n, _)| !n.starts_with("gemma3"))
        .expect("a model");
    let (mut model, tok) = load_with_tokenizer(m["model_file"].as_str().unwrap());
    let prompts: Vec<Vec<u32>> = m["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| common::ids(&r["prompt"]))
        .collect();
    assert!(prompts.len() >= 5, "{name}: {} prompts", prompts.len());
    let refs: Vec<&[u32]> = prompts.iter().map(|p| p.as_slice()).collect();
    let cpu = model.prefill(&refs).unwrap();
    let options = GreedyOptions {
        max_new_tokens: 6,
        stop: Vec::new(),
    };
    let cpu_tokens = greedy_cpu(&model, &tok, &refs, &options).unwrap();
    for room in [2, 1] {
        let backend = GpuBackend::new(&model, GpuPolicy::GpuOnly).unwrap();
        backend.simulate_memory_for(room);
        model.set_backend(Some(Box::new(backend)));
        let out = model.prefill(&refs).unwrap();
        assert_eq!(out.last_logits.len(), refs.len(), "room for {room}");
        for (i, (g, c)) in out.last_logits.iter().zip(&cpu.last_logits).enumerate() {
            let d = g.iter().zip(c).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
            let max_abs = c.iter().fold(0f32, |m, v| m.max(v.abs()));
            assert!(
                d <= 1e-4 * max_abs,
                "{name} prompt {i}, room for {room}: {d}"
            );
        }
        let got = greedy(&model, &tok, &refs, &options).unwrap();
        assert_eq!(got, cpu_tokens, "{name}: greedy with room for {room}");
    }
    // room for none: the error says so (no CPU fallback with GpuOnly)
    let backend = GpuBackend::new(&model, GpuPolicy::GpuOnly).unwrap();
    backend.simulate_memory_for(0);
    model.set_backend(Some(Box::new(backend)));
    let e = model.prefill(&refs).unwrap_err().to_string();
    assert!(e.contains("ran out of memory"), "{e}");
}

/// A device with a small binding limit: the LM head is split into vocabulary slices and the
/// prompts into several batches, and the results still equal the CPU engine's; a limit below
/// one row of logits is refused with a message.
#[test]
fn small_binding_limit_splits_the_vocabulary_and_the_batches() {
    if adapter().is_none() {
        return;
    }
    let (name, fx) = common::model_fixtures()
        .into_iter()
        .find(|(n, _)| n.starts_with("qwen2-qmix"))
        .unwrap();
    let model = load(fx["model_file"].as_str().unwrap());
    let c = &model.config;
    let prompts: Vec<Vec<u32>> = fx["logits"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| common::ids(&e["ids"]))
        .collect();
    let refs: Vec<&[u32]> = prompts.iter().map(|p| p.as_slice()).collect();
    // The engine's widest activation rows (qwen2-qmix fuses no projections: its Q, K, V and
    // gate, up differ in type, so no wider Q|K|V or gate|up rows).
    let widest = c.n_embd.max(c.n_ff).max(c.n_head * c.head_dim);
    // A third of the LM head per binding, and at least two prompts' logits.
    let head_bytes = model.output_matrix().bytes().len();
    let cap = (head_bytes / 3).max(8 * c.n_vocab) as u64;
    let max_tok = cap as usize / (4 * widest);
    let refs: Vec<&[u32]> = refs.into_iter().filter(|p| p.len() <= max_tok).collect();
    eprintln!(
        "{name}: vocab {} × d {}, LM head {head_bytes} bytes, cap {cap}, {} prompts of ≤ {max_tok} tokens",
        c.n_vocab,
        c.n_embd,
        refs.len()
    );
    assert!(refs.len() >= 3, "{name}: too few short prompts");
    let ctx = GpuContext::new_blocking().unwrap().with_binding_cap(cap);
    let gpu = GpuModel::upload(ctx, &model).unwrap();
    assert!(gpu.lm_head_chunks() > 1, "{name}: LM head not split");
    let total: usize = refs.iter().map(|p| p.len()).sum();
    assert!(total > gpu.max_batch_tokens(), "{name}: one batch");
    let out = gpu.prefill_blocking(&model, &refs).unwrap();
    let cpu = model.prefill(&refs).unwrap();
    for (i, (g, c)) in out.last_logits.iter().zip(&cpu.last_logits).enumerate() {
        let d = g.iter().zip(c).fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        let max_abs = c.iter().fold(0f32, |m, v| m.max(v.abs()));
        assert!(d <= 1e-5 * max_abs, "{name} prompt {i}: {d}");
    }
    let tiny = GpuContext::new_blocking().unwrap().with_binding_cap(64);
    let e = GpuModel::upload(tiny, &model).unwrap_err().to_string();
    assert!(
        e.contains("does not fit the GPU") && e.contains("binding limit"),
        "{e}"
    );
}

/// A real GGUF (SmolLM2-135M-Instruct Q4_1 from the model cache, or the file named by
/// RAGSCOPE_GPU_REAL_MODEL): two short chat prompts through the scorer, GPU vs CPU engine,
/// p(NO-RESPONSE) within 1e-4 relative. Short prompts: lavapipe is slow. `#[ignore]`d so that a
/// plain `cargo test` reports it as ignored; `cargo xtask test` runs it with `--ignored`.
#[test]
#[ignore = "a real model on the GPU (slow on lavapipe): cargo xtask test runs this with --ignored"]
fn real_model_on_the_gpu_equals_the_cpu_engine() {
    let path = match std::env::var_os("RAGSCOPE_GPU_REAL_MODEL") {
        Some(p) => std::path::PathBuf::from(p),
        None => match common::real::model(common::real::SMOLLM2_FILE, "gpu real model") {
            Some(p) => p,
            None => return,
        },
    };
    if adapter().is_none() {
        return;
    }
    use ragscope_infer::utility::{NoResponseScorer, PromptTemplate};
    let (mut model, tok, _) = Model::open(std::path::Path::new(&path)).unwrap();
    let items = [
        (
            "Who wrote Hamlet?",
            "Hamlet is a tragedy by William Shakespeare.",
        ),
        (
            "What is the boiling point of water?",
            "Paris is the capital of France.",
        ),
    ];
    let short = PromptTemplate {
        system: "Answer from the document or say NO-RESPONSE.".into(),
        user: "Document: {text}\nQuestion: {question}\nAnswer:".into(),
    };
    let cpu = NoResponseScorer::new(&model, &tok, short.clone())
        .unwrap()
        .score(&items)
        .unwrap();
    let backend = ragscope_infer::gpu::GpuBackend::new(&model, GpuPolicy::GpuOnly).unwrap();
    model.set_backend(Some(Box::new(backend)));
    let gpu = NoResponseScorer::new(&model, &tok, short)
        .unwrap()
        .score(&items)
        .unwrap();
    for (i, (g, c)) in gpu.iter().zip(&cpu).enumerate() {
        let rel = (g - c).abs() / c;
        println!("real model prompt {i}: GPU p {g:.6e}, CPU p {c:.6e}, rel {rel:.2e}");
        assert!(rel <= 1e-4, "prompt {i}: GPU {g} vs CPU {c}");
    }
}

fn load_with_tokenizer(file: &str) -> (Model, Tokenizer) {
    let path = common::fixtures_dir().join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let src = VecSource::new(bytes);
    let g = GgufFile::read(&src, &path.display().to_string()).unwrap();
    (
        Model::load(&g, &src).unwrap(),
        Tokenizer::from_gguf(&g).unwrap(),
    )
}

/// Greedy decoding on the GPU (KV cache on the device, steps batched over the prompts, arg-max
/// on the GPU) against llama.cpp's greedy tokens (fixtures/decode.json) and the CPU engine, on
/// every tiny oracle model, gemma3 included: all 8 prompts of a model (1 to 389 tokens) decode
/// together, leaving the batch as they finish. Then the default stop string (a newline) on the
/// models whose answers hold one, through `generate::greedy` with the GPU backend set.
#[test]
fn greedy_on_the_gpu_equals_llama_cpp_and_the_cpu_engine() {
    if adapter().is_none() {
        return;
    }
    let fx = common::load_json("decode.json");
    let models = fx["models"].as_object().expect("models");
    assert!(models.len() >= 8, "only {} models", models.len());
    let mut report = Vec::new();
    for (name, m) in models {
        let (mut model, tok) = load_with_tokenizer(m["model_file"].as_str().unwrap());
        let max_new = m["max_new_tokens"].as_u64().unwrap() as usize;
        let runs = m["runs"].as_array().unwrap();
        let prompts: Vec<Vec<u32>> = runs.iter().map(|r| common::ids(&r["prompt"])).collect();
        let refs: Vec<&[u32]> = prompts.iter().map(|p| p.as_slice()).collect();
        let options = GreedyOptions {
            max_new_tokens: max_new,
            stop: Vec::new(),
        };
        let gpu = GpuModel::upload(GpuContext::new_blocking().unwrap(), &model).unwrap();
        let got = gpu.greedy_blocking(&model, &tok, &refs, &options).unwrap();
        let cpu = greedy_cpu(&model, &tok, &refs, &options).unwrap();
        let mut tokens = 0;
        for (i, (r, g)) in runs.iter().zip(&got).enumerate() {
            let want = common::ids(&r["tokens"]);
            assert_eq!(
                g.tokens, want,
                "{name} prompt {i}: GPU greedy tokens differ from llama.cpp (smallest top-2 gap {})",
                r["min_top2_gap"]
            );
            let eog = r["eog"].as_bool().unwrap();
            let reason = if eog {
                StopReason::Eos
            } else {
                StopReason::MaxTokens
            };
            assert_eq!(g.reason, reason, "{name} prompt {i}");
            assert_eq!(g.text, r["text"].as_str().unwrap(), "{name} prompt {i}");
            assert_eq!(g, &cpu[i], "{name} prompt {i}: GPU vs CPU engine");
            tokens += want.len();
        }
        // Through the backend switch, with the default stop string (a newline).
        model.set_backend(Some(Box::new(
            GpuBackend::new(&model, GpuPolicy::GpuOnly).unwrap(),
        )));
        let cut_options = GreedyOptions {
            max_new_tokens: max_new,
            ..GreedyOptions::default()
        };
        let cut = greedy(&model, &tok, &refs, &cut_options).unwrap();
        let cut_cpu = greedy_cpu(&model, &tok, &refs, &cut_options).unwrap();
        let mut stopped = 0;
        for (i, (c, w)) in cut.iter().zip(&cut_cpu).enumerate() {
            assert_eq!(c, w, "{name} prompt {i}: stop string, GPU vs CPU engine");
            stopped += usize::from(c.reason == StopReason::Stop);
        }
        report.push(format!(
            "{name}: {} prompts, {tokens} tokens equal to llama.cpp on the GPU; {stopped} stopped at a newline",
            runs.len()
        ));
    }
    println!("{}", report.join("\n"));
}

/// A device whose binding limit holds the KV cache of only a few prompts: the prompts decode in
/// several groups and the tokens still equal llama.cpp's.
#[test]
fn greedy_splits_prompts_into_groups_that_fit_the_cache() {
    if adapter().is_none() {
        return;
    }
    let fx = common::load_json("decode.json");
    let m = &fx["models"]["qwen2-qmix"];
    let (model, tok) = load_with_tokenizer(m["model_file"].as_str().unwrap());
    let c = &model.config;
    let runs = m["runs"].as_array().unwrap();
    let prompts: Vec<Vec<u32>> = runs.iter().map(|r| common::ids(&r["prompt"])).collect();
    let refs: Vec<&[u32]> = prompts.iter().map(|p| p.as_slice()).collect();
    let max_new = m["max_new_tokens"].as_u64().unwrap() as usize;
    // Room for 300 cache rows: the 8 prompts (~1,100 rows with their new tokens) need 4+ groups.
    let ctx = GpuContext::new_blocking().unwrap();
    let gpu = GpuModel::upload(ctx, &model).unwrap().with_cache_rows(300);
    let need: usize = refs
        .iter()
        .map(|p| (p.len() + max_new).min(c.context_length))
        .sum();
    assert!(need > 3 * 300, "{need} rows fit in too few groups");
    let options = GreedyOptions {
        max_new_tokens: max_new,
        stop: Vec::new(),
    };
    let got = gpu.greedy_blocking(&model, &tok, &refs, &options).unwrap();
    for (i, (r, g)) in runs.iter().zip(&got).enumerate() {
        assert_eq!(g.tokens, common::ids(&r["tokens"]), "prompt {i}");
    }
}
