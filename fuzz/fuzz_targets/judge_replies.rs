//! Every LLM reply parser of ragscope-judge must return a result or an error, never panic: the
//! first byte picks the parser (Anthropic, Gemini, OpenAI chat, OpenAI /completions, the error
//! bodies, the UMBRELA grade; then the part-2 tasks' list, label, verdict, grade and support
//! parsers and their input-file readers), the rest is the reply. A grade that parses is always
//! 0–3 (pointwise 0–2), a label list has the asked length.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragscope_judge::provider::{anthropic, gemini, openai};
use ragscope_judge::task::umbrela::parse_grade;
use ragscope_judge::task::{answer_equivalence, citations, nuggets, pairwise, pointwise, reply};

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    let text = String::from_utf8_lossy(rest);
    match which % 12 {
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
        5 => {
            if let Ok(g) = parse_grade(&text) {
                assert!(g <= 3);
            }
        }
        6 => {
            let _ = reply::parse_string_list(&text);
        }
        7 => {
            let n = usize::from(which / 12 % 4);
            if let Ok(l) = reply::parse_labels(&text, n, &nuggets::ASSIGNMENT) {
                assert_eq!(l.len(), n);
            }
        }
        8 => {
            if let Ok(v) = pairwise::parse_verdict(&text) {
                assert!(matches!(v, 'A' | 'B' | 'C'));
            }
        }
        9 => {
            if let Ok((g, _)) = pointwise::parse_grade(&text) {
                assert!(g <= 2);
            }
            let _ = citations::parse_support(&text);
            let _ = answer_equivalence::parse_verdict(&text);
        }
        10 => {
            let _ = nuggets::read_pool(&text, "f", 1);
            let _ = nuggets::read_nuggets(&text, "f");
            let _ = nuggets::read_answers(&text, "f", "run");
            let _ = citations::read_cited(&text, "f", "run");
        }
        _ => {
            let _ = pairwise::read_answers(&text, "f");
            let _ = pairwise::read_documents(&text, "f");
        }
    }
});
