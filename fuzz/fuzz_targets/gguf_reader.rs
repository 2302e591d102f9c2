//! The GGUF reader and the tokenizer built from its metadata must never panic (and never
//! allocate what the header merely claims), whatever the bytes. Seeds: fuzz/seeds/gguf_reader.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragscope_infer::gguf::VecSource;
use ragscope_infer::{GgufFile, Tokenizer};

fuzz_target!(|data: &[u8]| {
    let source = VecSource::new(data.to_vec());
    if let Ok(gguf) = GgufFile::read(&source, "fuzz.gguf") {
        if let Ok(tokenizer) = Tokenizer::from_gguf(&gguf) {
            let _ = tokenizer.encode("Hello wörld 123  \n\n日本語 🙂 <|im_start|>", true, true);
        }
    }
});
