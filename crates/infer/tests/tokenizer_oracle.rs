//! Token ids identical to llama.cpp's for hard strings (unicode, emoji, CJK, digits, whitespace
//! runs, special tokens), for every pre-tokenizer and both vocabulary kinds, and the chat-
//! templated UDCG prompt rendered exactly as transformers/jinja2 renders it.

mod common;

use ragscope_infer::gguf::{GgufFile, VecSource};
use ragscope_infer::tokenizer::chat::{ChatMessage, ChatTemplate};
use ragscope_infer::Tokenizer;

fn tokenizer(file: &str) -> Tokenizer {
    let path = common::fixtures_dir().join(file);
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let g = GgufFile::read(&VecSource::new(bytes), &path.display().to_string()).unwrap();
    Tokenizer::from_gguf(&g).unwrap()
}

#[test]
fn token_ids_match_llama_cpp() {
    let mut failures = Vec::new();
    let mut checked = 0;
    let mut pres = std::collections::BTreeSet::new();
    for (name, fx) in common::model_fixtures() {
        let tok = tokenizer(fx["model_file"].as_str().unwrap());
        pres.insert(fx["pre"].as_str().unwrap_or("spm").to_string());
        for case in fx["tokenize"].as_array().unwrap() {
            let text = case["text"].as_str().unwrap();
            let add = case["add_special"].as_bool().unwrap();
            let parse = case["parse_special"].as_bool().unwrap();
            let want = common::ids(&case["ids"]);
            let got = tok.encode(text, add, parse);
            checked += 1;
            if got != want {
                failures.push(format!("{name}: {text:?} (add_special={add}, parse_special={parse})\n  llama.cpp {want:?}\n  ours      {got:?}"));
            }
        }
    }
    assert!(checked > 100, "only {checked} cases");
    for p in ["llama-bpe", "qwen2", "smollm", "gpt-2", "default", "spm"] {
        assert!(pres.contains(p), "no fixture for pre-tokenizer {p}");
    }
    assert!(
        failures.is_empty(),
        "{} of {checked} tokenizations differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn chat_template_and_prompt_ids_match() {
    let mut n = 0;
    for (name, fx) in common::model_fixtures() {
        let Some(chats) = fx["chat"].as_array() else {
            continue;
        };
        let tok = tokenizer(fx["model_file"].as_str().unwrap());
        let template =
            ChatTemplate::new(tok.chat_template().expect("chat template in fixture model"));
        assert_eq!(tok.bos_text(), fx["bos"].as_str().unwrap(), "{name}");
        for c in chats {
            let msgs = [
                ChatMessage::new("system", c["system"].as_str().unwrap()),
                ChatMessage::new("user", c["user"].as_str().unwrap()),
            ];
            let rendered = template
                .render(&msgs, true, tok.bos_text(), tok.eos_text())
                .unwrap();
            assert_eq!(
                rendered,
                c["rendered"].as_str().unwrap(),
                "{name}: rendered prompt differs from jinja2"
            );
            assert_eq!(
                tok.encode(&rendered, false, true),
                common::ids(&c["ids"]),
                "{name}: prompt ids"
            );
            n += 1;
        }
        let nr = common::ids(&fx["no_response_ids"]);
        assert_eq!(
            tok.encode("NO-RESPONSE", false, false),
            nr,
            "{name}: NO-RESPONSE ids"
        );
    }
    assert!(n >= 20, "only {n} chat prompts checked");
}

#[test]
fn corrupted_vocabularies_never_panic() {
    let path = common::fixtures_dir().join("vocab-default.gguf");
    let base = std::fs::read(&path).unwrap();
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..400 {
        let mut bytes = base.clone();
        for _ in 0..1 + next() % 4 {
            let i = (next() % bytes.len() as u64) as usize;
            bytes[i] = next() as u8;
        }
        let Ok(g) = GgufFile::read(&VecSource::new(bytes), "fuzz.gguf") else {
            continue;
        };
        if let Ok(t) = Tokenizer::from_gguf(&g) {
            let _ = t.encode("Hello <|im_start|> wörld 123 \u{1F44D}\n\n  x", true, true);
        }
    }
}
