//! The streaming run parser must never panic, and chunking must not change the result.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let whole = ragscope_eval::parse_run("fuzz", data);
    let cut = data.first().map(|b| *b as usize % (data.len() + 1)).unwrap_or(0);
    let mut p = ragscope_eval::RunParser::new("fuzz");
    let chunked = p.feed(&data[..cut]).and_then(|_| p.feed(&data[cut..])).and_then(|_| p.finish());
    assert_eq!(whole.is_ok(), chunked.is_ok());
    if let (Ok(a), Ok(b)) = (whole, chunked) {
        assert_eq!(a.num_results(), b.num_results());
        assert_eq!(a.run_id(), b.run_id());
    }
});
