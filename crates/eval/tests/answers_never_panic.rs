//! Every answer-side parser returns an error (never panics) on mutations of the anchors' valid
//! files, and gives the same result fed in chunks as whole (a quick stand-in for the
//! `answer_files` fuzz target, which needs cargo-fuzz).

use proptest::prelude::*;
use ragscope_eval::answers::nugget_scores::{self, Compat};
use ragscope_eval::answers::{nuggetizer, open_rag_eval, trec_rag, umbrela_qrels};

fn shared(path: &str) -> Vec<u8> {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/data")
        .join(path);
    std::fs::read(p).unwrap()
}

fn mutate(base: &[u8], at: usize, cut: usize, insert: &[u8]) -> Vec<u8> {
    let at = at % (base.len() + 1);
    let end = (at + cut).min(base.len());
    [&base[..at], insert, &base[end..]].concat()
}

fn inserts() -> impl Strategy<Value = &'static [u8]> {
    prop::sample::select(vec![
        &b""[..],
        b"-1",
        b"NaN",
        b"1e999",
        b"\"",
        b"{",
        b"]",
        b",",
        b"null",
        b"7",
        b"\n",
        "é".as_bytes(),
        b"\xef\xbb\xbf",
        b"\xff",
        b"[1, 2]",
        b"\r\n",
    ])
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn mutated_anchor_files(at in 0usize..3000, cut in 0usize..12, insert in inserts(), chunk in 1usize..9) {
        let assignments = mutate(&shared("nuggetizer/assignments.jsonl"), at, cut, insert);
        let whole = nuggetizer::parse_assignments("f", &assignments);
        let mut p = nuggetizer::AssignmentsParser::new("f");
        let chunked = assignments.chunks(chunk).try_for_each(|c| p.feed(c)).and_then(|()| p.finish());
        prop_assert_eq!(&whole, &chunked);
        if let Ok(a) = whole {
            if let Ok(runs) = nuggetizer::group_runs("f", "f", a) {
                for r in &runs {
                    let s = nugget_scores::score_run(r, Compat::OpenRagEval);
                    prop_assert!((0.0..=1.0).contains(&s.mean.w));
                }
            }
        }
        let rag = mutate(&shared("nuggetizer/readme_trec2024_rag_answer_example.json"), at, cut, insert);
        let whole = trec_rag::parse("f", &rag);
        let mut p = trec_rag::RagAnswerParser::new("f");
        let chunked = rag.chunks(chunk).try_for_each(|c| p.feed(c)).and_then(|()| p.finish());
        prop_assert_eq!(whole, chunked);
        let _ = nuggetizer::parse_nuggets("f", &mutate(&shared("nuggetizer/nuggets.jsonl"), at, cut, insert));
        let _ = nuggetizer::parse_scores("f", &mutate(&shared("nuggetizer/expected_metrics.jsonl"), at, cut, insert));
        let csv = mutate(&shared("open-rag-eval/test_csv_connector.csv"), at, cut, insert);
        let _ = open_rag_eval::read_answers("f", &csv[..]);
        let _ = open_rag_eval::read_results("f", &csv[..]);
        let _ = umbrela_qrels::parse("f", &mutate(&shared("umbrela/sample.qrels"), at % 40, cut, insert));
        let _ = open_rag_eval::parse_generated_answer(&String::from_utf8_lossy(&csv));
    }
}
