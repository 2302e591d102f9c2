//! The answer-side parsers (crates/eval/src/answers) never panic, give the same result fed in
//! chunks as whole, and nugget scores stay in [0, 1]. The first byte picks the parser, the
//! second the chunk size.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragscope_eval::answers::nugget_scores::{self, Compat};
use ragscope_eval::answers::{nuggetizer, open_rag_eval, trec_rag, umbrela_qrels};

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let (kind, chunk, body) = (data[0] % 8, usize::from(data[1] % 17) + 1, &data[2..]);
    match kind {
        0 => {
            let whole = trec_rag::parse("fuzz", body);
            let mut p = trec_rag::RagAnswerParser::new("fuzz");
            let chunked = body
                .chunks(chunk)
                .try_for_each(|c| p.feed(c))
                .and_then(|()| p.finish());
            assert_eq!(whole.is_ok(), chunked.is_ok());
            if let (Ok(a), Ok(b)) = (whole, chunked) {
                assert_eq!(a, b);
            }
        }
        1 => {
            let whole = nuggetizer::parse_assignments("fuzz", body);
            let mut p = nuggetizer::AssignmentsParser::new("fuzz");
            let chunked = body
                .chunks(chunk)
                .try_for_each(|c| p.feed(c))
                .and_then(|()| p.finish());
            assert_eq!(whole.is_ok(), chunked.is_ok());
            if let (Ok(a), Ok(b)) = (whole, chunked) {
                assert_eq!(a, b);
                if let Ok(runs) = nuggetizer::group_runs("fuzz", "fuzz", a) {
                    for run in &runs {
                        for compat in [Compat::Paper, Compat::Nuggetizer, Compat::OpenRagEval] {
                            let s = nugget_scores::score_run(run, compat);
                            for v in [s.mean.a, s.mean.a_strict, s.mean.v, s.mean.v_strict, s.mean.w, s.mean.w_strict] {
                                assert!((0.0..=1.0).contains(&v), "{v}");
                            }
                        }
                    }
                }
            }
        }
        2 => {
            let _ = nuggetizer::parse_nuggets("fuzz", body);
        }
        3 => {
            let _ = nuggetizer::parse_scores("fuzz", body);
        }
        4 => {
            let _ = open_rag_eval::read_answers("fuzz", body);
        }
        5 => {
            if let Ok(scored) = open_rag_eval::read_results("fuzz", body) {
                for s in &scored {
                    let _ = s.assigned();
                }
            }
        }
        6 => {
            let _ = umbrela_qrels::parse("fuzz", body);
        }
        _ => {
            if let Ok(text) = std::str::from_utf8(body) {
                let _ = open_rag_eval::parse_generated_answer(text);
            }
        }
    }
});
