//! The UDCG reference JSON parser must never panic, under either convention; what the paper
//! convention accepts the reference one accepts too (it only turns errors into warnings).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragscope_eval::rag::reference_json::parse;
use ragscope_eval::rag::udcg::{Convention, UdcgParams};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let paper = parse("fuzz", text, Convention::Paper);
    let reference = parse("fuzz", text, Convention::Reference);
    if let Ok(d) = &paper {
        assert!(reference.is_ok(), "paper accepted what reference rejected");
        // Scoring and writing back must not panic either.
        let scores = d.scores(&UdcgParams::default());
        let _ = d.to_json_with(&scores);
    }
    if let Ok(d) = &reference {
        let _ = d.scores_at(&UdcgParams::reference(), Some(3));
        let _ = d.utility_rows();
    }
});
