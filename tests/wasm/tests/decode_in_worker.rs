//! Greedy decoding (KV cache, batched decoding steps) compiled to wasm32 and run in a dedicated
//! worker, against llama.cpp's greedy tokens for the tiny llama-f32 model
//! (crates/infer/tests/fixtures/decode.json, tests/oracle/generate_decode.py).
#![cfg(target_arch = "wasm32")]

use ragscope_infer::generate::{greedy, GreedyOptions};
use ragscope_infer::gguf::VecSource;
use ragscope_infer::{GgufFile, Model, Tokenizer};
use serde_json::Value;
use wasm_bindgen_test::*;
wasm_bindgen_test_configure!(run_in_dedicated_worker);

const MODEL: &[u8] = include_bytes!("../../../crates/infer/tests/fixtures/llama-f32.gguf");
const ORACLE: &str = include_str!("../../../crates/infer/tests/fixtures/decode.json");

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("ids")
        .iter()
        .map(|x| x.as_u64().expect("id") as u32)
        .collect()
}

#[wasm_bindgen_test]
fn greedy_tokens_match_llama_cpp_in_the_browser() {
    let oracle: Value = serde_json::from_str(ORACLE).expect("fixture JSON");
    let fx = &oracle["models"]["llama-f32"];
    let source = VecSource::new(MODEL.to_vec());
    let gguf = GgufFile::read(&source, "llama-f32.gguf").expect("GGUF");
    let tokenizer = Tokenizer::from_gguf(&gguf).expect("tokenizer");
    let model = Model::load(&gguf, &source).expect("model");
    let runs = fx["runs"].as_array().expect("runs");
    let prompts: Vec<Vec<u32>> = runs.iter().map(|r| ids(&r["prompt"])).collect();
    let refs: Vec<&[u32]> = prompts.iter().map(Vec::as_slice).collect();
    let options = GreedyOptions {
        max_new_tokens: fx["max_new_tokens"].as_u64().expect("max") as usize,
        stop: Vec::new(),
    };
    let got = greedy(&model, &tokenizer, &refs, &options).expect("greedy");
    for (r, g) in runs.iter().zip(&got) {
        assert_eq!(g.tokens, ids(&r["tokens"]));
        assert_eq!(g.text, r["text"].as_str().expect("text"));
    }
    assert!(!runs.is_empty());
}
