//! The run and qrels parsers' line split with wasm's SIMD (crates/eval/src/formats/line_mask.rs)
//! against the byte-by-byte split, at every offset of random blocks, in headless Chromium: the
//! native property test covers the SSE2 masks; this one the wasm32 ones. Fails on a wasm build
//! without SIMD (no offset taken).
#![cfg(target_arch = "wasm32")]

use ragscope_eval::formats::line_mask::{compare_with_bytewise, TEST_BYTES};
use wasm_bindgen_test::*;
wasm_bindgen_test_configure!(run_in_dedicated_worker);

#[wasm_bindgen_test]
fn simd_split_equals_the_bytewise_split() {
    // xorshift64: reproducible blocks without a dependency
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    let mut taken = 0;
    for _ in 0..3_000 {
        let mut block = Vec::new();
        for _ in 0..1 + next() % 60 {
            let byte = TEST_BYTES[(next() % TEST_BYTES.len() as u64) as usize];
            block.extend(std::iter::repeat_n(byte, 1 + (next() % 11) as usize));
        }
        block.push(b'\n');
        taken += compare_with_bytewise(&block).unwrap_or_else(|e| panic!("{e}"));
    }
    // a run file's lines, which the SIMD split must take
    let lines = "q1 Q0 doc1 1 2.5 tag\nq1 Q0 doc2 2 2.25 tag extra\n301 0 FBIS3-1 1\n".repeat(4);
    let run_lines = compare_with_bytewise(lines.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
    assert!(run_lines >= 8, "SIMD took {run_lines} offsets of run lines");
    assert!(taken > 1_000, "SIMD took {taken} offsets of random blocks");
}
