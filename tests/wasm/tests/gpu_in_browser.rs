//! The wgpu backend in Chromium's WebGPU (SwiftShader without a GPU: `--enable-unsafe-webgpu`
//! in webdriver.json), in a dedicated worker like the app's: every WGSL shader compiled by
//! Chrome (stricter than naga), and every tiny oracle model read from a Blob, run on the GPU
//! and compared with the CPU engine (p(NO-RESPONSE) within 1e-4 relative) and llama.cpp.
//! Greedy decoding on WebGPU (KV cache on the device, steps batched over the prompts, arg-max on
//! the GPU) gives llama.cpp's tokens (fixtures/decode.json) on every tiny oracle model, gemma3
//! included natively; here gemma3 and qwen2-qmix (SwiftShader decodes slowly).
//! Without WebGPU the tests print `SKIPPED: no WebGPU adapter` and assert nothing, except under
//! `cargo xtask test`, where that fails (ragscope_wasm_tests::skip).
#![cfg(target_arch = "wasm32")]

use ragscope_infer::generate::{greedy_cpu, GreedyOptions, StopReason};
use ragscope_infer::gpu::{GpuContext, GpuError, GpuModel};
use ragscope_infer::utility::token_probability;
use ragscope_infer::{GgufFile, Model, Tokenizer};
use ragscope_wasm_tests::blob;
use ragscope_worker::blob_source::BlobSource;
use serde_json::Value;
use wasm_bindgen_test::*;
wasm_bindgen_test_configure!(run_in_dedicated_worker);

const FIXTURES: &[(&str, &[u8], &str)] = &[
    (
        "llama-f32",
        include_bytes!("../../../crates/infer/tests/fixtures/llama-f32.gguf"),
        include_str!("../../../crates/infer/tests/fixtures/llama-f32.json"),
    ),
    (
        "llama-bf16-q6k",
        include_bytes!("../../../crates/infer/tests/fixtures/llama-bf16-q6k.gguf"),
        include_str!("../../../crates/infer/tests/fixtures/llama-bf16-q6k.json"),
    ),
    (
        "llama-q4km-llamacpp",
        include_bytes!("../../../crates/infer/tests/fixtures/llama-q4km-llamacpp.gguf"),
        include_str!("../../../crates/infer/tests/fixtures/llama-q4km-llamacpp.json"),
    ),
    (
        "llama-spm",
        include_bytes!("../../../crates/infer/tests/fixtures/llama-spm.gguf"),
        include_str!("../../../crates/infer/tests/fixtures/llama-spm.json"),
    ),
    (
        "qwen2-f16",
        include_bytes!("../../../crates/infer/tests/fixtures/qwen2-f16.gguf"),
        include_str!("../../../crates/infer/tests/fixtures/qwen2-f16.json"),
    ),
    (
        "qwen2-qmix",
        include_bytes!("../../../crates/infer/tests/fixtures/qwen2-qmix.gguf"),
        include_str!("../../../crates/infer/tests/fixtures/qwen2-qmix.json"),
    ),
    (
        "smollm-q8_0",
        include_bytes!("../../../crates/infer/tests/fixtures/smollm-q8_0.gguf"),
        include_str!("../../../crates/infer/tests/fixtures/smollm-q8_0.json"),
    ),
    (
        "gemma3-f32",
        include_bytes!("../../../crates/infer/tests/fixtures/gemma3-f32.gguf"),
        include_str!("../../../crates/infer/tests/fixtures/gemma3-f32.json"),
    ),
];

const DECODE: &str = include_str!("../../../crates/infer/tests/fixtures/decode.json");

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("ids")
        .iter()
        .map(|x| x.as_u64().expect("id") as u32)
        .collect()
}

async fn adapter() -> Option<GpuContext> {
    match GpuContext::new().await {
        Ok(c) => {
            web_sys::console::log_1(&format!("WebGPU adapter: {}", c.summary).into());
            Some(c)
        }
        Err(GpuError::NoAdapter(e)) => {
            ragscope_wasm_tests::skip(&format!("no WebGPU adapter ({e})"));
            None
        }
        Err(e) => panic!("{e}"),
    }
}

#[wasm_bindgen_test]
async fn chrome_compiles_every_shader() {
    let Some(ctx) = adapter().await else { return };
    let errors = ctx.shader_errors().await;
    assert!(errors.is_empty(), "Chrome rejected: {errors:#?}");
}

#[wasm_bindgen_test]
async fn every_oracle_model_on_webgpu_equals_the_cpu_engine() {
    // One device for every model: its shaders are compiled once (SwiftShader compiles each
    // pipeline with LLVM, seconds apiece), as an app that switches models would do.
    let Some(ctx) = adapter().await else { return };
    for (name, bytes, oracle) in FIXTURES {
        let oracle: Value = serde_json::from_str(oracle).expect("fixture JSON");
        let source = BlobSource::new(blob(bytes)).expect("in a worker");
        let gguf = GgufFile::read(&source, name).expect("GGUF from a Blob");
        let model = Model::load(&gguf, &source).expect("model from a Blob");
        let cases = oracle["logits"].as_array().expect("logit cases");
        let prompts: Vec<Vec<u32>> = cases.iter().map(|c| ids(&c["ids"])).collect();
        let refs: Vec<&[u32]> = prompts.iter().map(Vec::as_slice).collect();
        let cpu = model.prefill(&refs).expect("CPU prefill");
        let gpu = GpuModel::upload(ctx.clone(), &model).expect("upload");
        let out = gpu.prefill(&model, &refs).await.expect("GPU prefill");
        let target = ids(&oracle["no_response_ids"])[0];
        let quantized = oracle["weight_types"]
            .as_array()
            .expect("weight types")
            .iter()
            .any(|t| !matches!(t.as_str(), Some("F32") | Some("F16")));
        // gemma3: the CPU oracle test's tolerance (ggml's f16-rounded GELU; see
        // crates/infer/tests/forward_oracle.rs) and twice it against the CPU engine.
        let gemma = name.starts_with("gemma3");
        let llama_tol = if gemma {
            1.3e-4
        } else if quantized {
            1e-3
        } else {
            1e-4
        };
        let cpu_tol = if gemma { 2.6e-4 } else { 1e-4 };
        for (i, case) in cases.iter().enumerate() {
            let pg = token_probability(&out.last_logits[i], target);
            let pc = token_probability(&cpu.last_logits[i], target);
            assert!(
                (pg - pc).abs() <= cpu_tol * pc,
                "{name} prompt {i}: WebGPU p {pg} vs CPU {pc}"
            );
            let want = case["p_no_response"].as_f64().expect("p");
            assert!(
                (pg - want).abs() <= llama_tol * want,
                "{name} prompt {i}: WebGPU p {pg} vs llama.cpp {want}"
            );
        }
        web_sys::console::log_1(&format!("{name}: {} prompts equal on WebGPU", cases.len()).into());
    }
}

/// Greedy decoding of one oracle model's 8 prompts together on WebGPU: llama.cpp's tokens,
/// stop reasons and text, and the CPU engine's generations.
async fn greedy_equals_llama_cpp(name: &str) {
    let Some(ctx) = adapter().await else { return };
    let (_, bytes, _) = FIXTURES
        .iter()
        .find(|(n, _, _)| *n == name)
        .expect("a fixture");
    let fx: Value = serde_json::from_str(DECODE).expect("decode.json");
    let m = &fx["models"][name];
    let source = BlobSource::new(blob(bytes)).expect("in a worker");
    let gguf = GgufFile::read(&source, name).expect("GGUF from a Blob");
    let model = Model::load(&gguf, &source).expect("model from a Blob");
    let tok = Tokenizer::from_gguf(&gguf).expect("tokenizer");
    let runs = m["runs"].as_array().expect("runs");
    let prompts: Vec<Vec<u32>> = runs.iter().map(|r| ids(&r["prompt"])).collect();
    let refs: Vec<&[u32]> = prompts.iter().map(Vec::as_slice).collect();
    let options = GreedyOptions {
        max_new_tokens: m["max_new_tokens"].as_u64().expect("max_new_tokens") as usize,
        stop: Vec::new(),
    };
    let gpu = GpuModel::upload(ctx, &model).expect("upload");
    let got = gpu
        .greedy(&model, &tok, &refs, &options)
        .await
        .expect("GPU greedy");
    let cpu = greedy_cpu(&model, &tok, &refs, &options).expect("CPU greedy");
    let mut tokens = 0;
    for (i, (r, g)) in runs.iter().zip(&got).enumerate() {
        let want = ids(&r["tokens"]);
        assert_eq!(
            g.tokens, want,
            "{name} prompt {i}: WebGPU tokens vs llama.cpp"
        );
        let reason = if r["eog"].as_bool().expect("eog") {
            StopReason::Eos
        } else {
            StopReason::MaxTokens
        };
        assert_eq!(g.reason, reason, "{name} prompt {i}");
        assert_eq!(
            g.text,
            r["text"].as_str().expect("text"),
            "{name} prompt {i}"
        );
        assert_eq!(g, &cpu[i], "{name} prompt {i}: WebGPU vs CPU engine");
        tokens += want.len();
    }
    web_sys::console::log_1(
        &format!("{name}: {tokens} greedy tokens equal to llama.cpp on WebGPU").into(),
    );
}

// Two models in the browser (SwiftShader decodes slowly; the native test covers all eight):
// gemma3 (its own kernels) and qwen2-qmix (mixed quantized types, NeoX RoPE, Q/K/V biases).
#[wasm_bindgen_test]
async fn greedy_on_webgpu_qwen2_qmix() {
    greedy_equals_llama_cpp("qwen2-qmix").await;
}

#[wasm_bindgen_test]
async fn greedy_on_webgpu_gemma3_f32() {
    greedy_equals_llama_cpp("gemma3-f32").await;
}
