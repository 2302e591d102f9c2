//! The context-set JSONL parser must never panic, and what it writes it reads back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragscope_eval::rag::contexts::{parse, write_jsonl};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(sets) = parse("fuzz", text, None) {
        let again = parse("fuzz", &write_jsonl(&sets), None).expect("written contexts parse");
        assert_eq!(again.len(), sets.len());
    }
});
