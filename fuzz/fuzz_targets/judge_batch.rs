//! The batch API parsers of ragscope-judge (results and output files, batch status objects, the
//! saved batch state) return a result or an error, never panic: the first byte picks the parser,
//! the rest is the body.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragscope_judge::batch::{anthropic, gemini, openai, state};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match which % 5 {
        0 => {
            let _ = anthropic::parse_results(&text);
        }
        1 => {
            let _ = openai::parse_output(&text);
        }
        2 => {
            let _ = state::parse_state(&text, "state.json");
        }
        _ => {
            let Ok(v) = serde_json::from_str::<Value>(&text) else {
                return;
            };
            let _ = anthropic::parse_status(&v);
            let _ = anthropic::parse_id(&v);
            let _ = openai::parse_status(&v);
            let _ = openai::batch_errors(&v);
            let _ = gemini::parse_name(&v);
            if let Ok(ragscope_judge::batch::Polled::Ended { state, status }) =
                gemini::parse_status(&v)
            {
                let ids: Vec<String> = (0..usize::from(which / 5 % 4)).map(|i| i.to_string()).collect();
                let _ = gemini::parse_results(&state, &status, &ids);
            }
        }
    }
});
