//! Greedy decoding against llama.cpp (fixtures/decode.json, written by
//! tests/oracle/generate_decode.py: llama-cpp-python, arg-max of its logits at every step, f32 KV
//! cache, on the F32 twin of every model not stored in F32), the KV cache against a full prefill,
//! and prompts longer than the context window.

mod common;

use ragscope_infer::generate::{greedy, GreedyOptions, StopReason};
use ragscope_infer::gguf::{GgufFile, VecSource};
use ragscope_infer::{InferError, KvCache, Model, Tokenizer};

fn load(file: &str) -> (Model, Tokenizer) {
    let path = common::fixtures_dir().join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let src = VecSource::new(bytes);
    let g = GgufFile::read(&src, &path.display().to_string()).unwrap();
    (
        Model::load(&g, &src).unwrap(),
        Tokenizer::from_gguf(&g).unwrap(),
    )
}

#[test]
fn greedy_tokens_match_llama_cpp() {
    let fx = common::load_json("decode.json");
    let models = fx["models"].as_object().expect("models");
    assert!(models.len() >= 7, "only {} models", models.len());
    let mut report = Vec::new();
    for (name, m) in models {
        let (model, tok) = load(m["model_file"].as_str().unwrap());
        let max_new = m["max_new_tokens"].as_u64().unwrap() as usize;
        let runs = m["runs"].as_array().unwrap();
        let prompts: Vec<Vec<u32>> = runs.iter().map(|r| common::ids(&r["prompt"])).collect();
        let refs: Vec<&[u32]> = prompts.iter().map(|p| p.as_slice()).collect();
        // All prompts decoded as one batch (different lengths; some stop earlier than others).
        let options = GreedyOptions {
            max_new_tokens: max_new,
            stop: Vec::new(),
        };
        let got = greedy(&model, &tok, &refs, &options).unwrap();
        let mut tokens = 0;
        for (i, (r, g)) in runs.iter().zip(&got).enumerate() {
            let want = common::ids(&r["tokens"]);
            assert_eq!(
                g.tokens, want,
                "{name} prompt {i}: greedy tokens differ from llama.cpp (smallest top-2 gap {})",
                r["min_top2_gap"]
            );
            let eog = r["eog"].as_bool().unwrap();
            assert_eq!(
                g.reason,
                if eog {
                    StopReason::Eos
                } else {
                    StopReason::MaxTokens
                },
                "{name} prompt {i}"
            );
            assert_eq!(
                g.text,
                r["text"].as_str().unwrap(),
                "{name} prompt {i}: detokenized text"
            );
            tokens += want.len();
        }
        // With the default stop string the answer is llama.cpp's text cut at its first newline,
        // and decoding stops at the token that wrote the newline (the two models whose answers hold newlines).
        if !matches!(name.as_str(), "llama-f32" | "qwen2-f16") {
            report.push(format!(
                "{name}: {} prompts, {tokens} tokens equal",
                runs.len()
            ));
            continue;
        }
        let cut = greedy(
            &model,
            &tok,
            &refs,
            &GreedyOptions {
                max_new_tokens: max_new,
                ..GreedyOptions::default()
            },
        )
        .unwrap();
        for (i, (r, c)) in runs.iter().zip(&cut).enumerate() {
            let text = r["text"].as_str().unwrap();
            let want_tokens = common::ids(&r["tokens"]);
            assert_eq!(
                c.text,
                text.split('\n').next().unwrap(),
                "{name} prompt {i}: cut text"
            );
            if text.contains('\n') {
                assert_eq!(c.reason, StopReason::Stop, "{name} prompt {i}");
                assert!(want_tokens.starts_with(&c.tokens), "{name} prompt {i}");
                assert!(tok.decode(&c.tokens).contains('\n'), "{name} prompt {i}");
                assert!(!tok.decode(&c.tokens[..c.tokens.len() - 1]).contains('\n'));
            } else {
                assert_eq!(c.tokens, want_tokens, "{name} prompt {i}");
            }
        }
        let min_gap = runs
            .iter()
            .map(|r| r["min_top2_gap"].as_f64().unwrap())
            .fold(f64::INFINITY, f64::min);
        report.push(format!(
            "{name}: {} prompts, {tokens} tokens equal; smallest top-2 logit gap met {min_gap:.2e}",
            runs.len()
        ));
    }
    println!("{}", report.join("\n"));
}

#[test]
fn decoding_with_the_cache_equals_a_full_prefill() {
    let (model, _) = load("qwen2-f16.gguf");
    let prompt: Vec<u32> = (0..70).map(|i| (i * 37 + 5) % 600).collect();
    let extra = [17u32, 250, 3, 599, 42];
    let (_, mut caches) = model.prefill_cached(&[&prompt]).unwrap();
    let mut seq = prompt.clone();
    for &t in &extra {
        let mut refs: Vec<&mut KvCache> = caches.iter_mut().collect();
        let step = model.decode_step(&mut refs, &[t]).unwrap();
        seq.push(t);
        let full = model.prefill(&[&seq]).unwrap();
        let max = full.last_logits[0].iter().fold(0f32, |m, v| m.max(v.abs()));
        let d = step[0]
            .iter()
            .zip(&full.last_logits[0])
            .fold(0f32, |m, (a, b)| m.max((a - b).abs()));
        assert!(d <= 1e-5 * max, "step {t}: {d} vs max {max}");
    }
    assert_eq!(caches[0].len(), prompt.len() + extra.len());
}

#[test]
fn prompts_longer_than_the_context_are_refused() {
    let (model, _) = load("llama-f32.gguf");
    let n = model.config.context_length;
    let ok: Vec<u32> = vec![5; n];
    let long: Vec<u32> = vec![5; n + 1];
    let e = model.prefill(&[&ok, &long]).unwrap_err();
    match &e {
        InferError::ContextOverflow {
            prompt,
            tokens,
            context_length,
        } => assert_eq!((*prompt, *tokens, *context_length), (1, n + 1, n)),
        other => panic!("{other}"),
    }
    assert!(e.to_string().contains("context length of 1024"), "{e}");
    // A cache at the limit cannot take one more token.
    let (_, mut caches) = model.prefill_cached(&[&ok]).unwrap();
    let mut refs: Vec<&mut KvCache> = caches.iter_mut().collect();
    assert!(matches!(
        model.decode_step(&mut refs, &[5]),
        Err(InferError::ContextOverflow { .. })
    ));
}
