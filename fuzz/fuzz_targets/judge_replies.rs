//! Every LLM reply parser of ragscope-judge must return a result or an error, never panic: the
//! first byte picks the parser (Anthropic, Gemini, OpenAI chat, OpenAI /completions, the error
//! bodies, the UMBRELA grade), the rest is the reply. A grade that parses is always 0–3.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragscope_judge::provider::{anthropic, gemini, openai};
use ragscope_judge::task::umbrela::parse_grade;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match which % 6 {
        0 => {
            let _ = anthropic::parse_reply(&text);
        }
        1 => {
            let _ = gemini::parse_reply(&text);
        }
        2 => {
            let _ = openai::parse_chat_reply(&text);
        }
        3 => {
            let _ = openai::parse_completion_reply(&text);
        }
        4 => {
            let status = u16::from(which);
            let _ = anthropic::parse_error(status, &text).to_string();
            let _ = gemini::parse_error(status, &text).to_string();
            let _ = openai::parse_error(status, &text).to_string();
        }
        _ => {
            if let Ok(g) = parse_grade(&text) {
                assert!(g <= 3);
            }
        }
    }
});
