//! Issue 5 in a real browser: a GGUF model read from a `Blob` slice by slice (BlobSource) in a
//! dedicated worker, tokenized and run single-threaded on the CPU engine compiled to wasm32,
//! against llama.cpp's token ids and last-position logits (tests/oracle fixtures).
#![cfg(target_arch = "wasm32")]

use ragscope_infer::utility::token_probability;
use ragscope_infer::{GgufFile, Model, Tokenizer};
use ragscope_wasm_tests::blob;
use ragscope_worker::blob_source::BlobSource;
use serde_json::Value;
use wasm_bindgen_test::*;
wasm_bindgen_test_configure!(run_in_dedicated_worker);

const MODEL: &[u8] = include_bytes!("../../../crates/infer/tests/fixtures/llama-f32.gguf");
const ORACLE: &str = include_str!("../../../crates/infer/tests/fixtures/llama-f32.json");

fn ids(v: &Value) -> Vec<u32> {
    v.as_array()
        .expect("ids")
        .iter()
        .map(|x| x.as_u64().expect("id") as u32)
        .collect()
}

#[wasm_bindgen_test]
fn model_from_a_blob_matches_llama_cpp() {
    let oracle: Value = serde_json::from_str(ORACLE).expect("fixture JSON");
    let source = BlobSource::new(blob(MODEL)).expect("in a worker");
    let gguf = GgufFile::read(&source, "llama-f32.gguf").expect("GGUF from a Blob");
    let tokenizer = Tokenizer::from_gguf(&gguf).expect("tokenizer");
    let mut checked = 0;
    for case in oracle["tokenize"].as_array().expect("tokenize cases") {
        let text = case["text"].as_str().expect("text");
        let got = tokenizer.encode(
            text,
            case["add_special"].as_bool().unwrap_or(false),
            case["parse_special"].as_bool().unwrap_or(false),
        );
        assert_eq!(got, ids(&case["ids"]), "{text:?}");
        checked += 1;
    }
    assert!(checked > 10);

    let model = Model::load(&gguf, &source).expect("model from a Blob");
    let cases = oracle["logits"].as_array().expect("logit cases");
    let prompts: Vec<Vec<u32>> = cases.iter().map(|c| ids(&c["ids"])).collect();
    let refs: Vec<&[u32]> = prompts.iter().map(Vec::as_slice).collect();
    let out = model.prefill(&refs).expect("prefill");
    // p(NO-RESPONSE) is the probability of the first token of "NO-RESPONSE".
    let no_response = ids(&oracle["no_response_ids"])[0];
    for (case, logits) in cases.iter().zip(&out.last_logits) {
        let want: Vec<f64> = case["last_logits"]
            .as_array()
            .expect("logits")
            .iter()
            .map(|x| x.as_f64().expect("logit"))
            .collect();
        let scale = want.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        for (g, w) in logits.iter().zip(&want) {
            assert!((*g as f64 - w).abs() <= 1e-4 * scale, "logit {g} vs {w}");
        }
        let p = token_probability(logits, no_response);
        let want_p = case["p_no_response"].as_f64().expect("p");
        assert!((p - want_p).abs() <= 1e-4 * want_p, "p {p} vs {want_p}");
    }
    assert!(!cases.is_empty());
}
