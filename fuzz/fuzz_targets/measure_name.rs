//! Measure names: parsing never panics and what parses prints back to the same measure.
//! Seeded with UDCG names through `-dict=measure_name.dict` (run from fuzz/).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(m) = text.parse::<ragscope_eval::Measure>() {
            let again: ragscope_eval::Measure = m.to_string().parse().expect("round trip");
            assert_eq!(m, again);
        }
    }
});
