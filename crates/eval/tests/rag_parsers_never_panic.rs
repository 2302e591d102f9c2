//! Every RAG parser returns an error (never panics) on arbitrary input, including mutations of
//! valid files.

use proptest::prelude::*;
use ragscope_eval::rag::answer_match::DownstreamMetric;
use ragscope_eval::rag::udcg::Convention;
use ragscope_eval::rag::{contexts, erag_outcomes, reference_json, utilities_tsv};

const VALID_JSON: &str = r#"[{"example_id":"a","passages":[{"doc_id":"d","is_relevant":true,"models_info":{"m":{"no_res_prob":0.5}}}],"udcg":{}}]"#;
const VALID_JSONL: &str = r#"{"qid":"q","passages":{"d":{"is_relevant":true,"no_res_prob":0.5}},"contexts":[{"passages":["d"],"outcome":"wrong"}]}"#;
const VALID_ERAG: &str = r#"{"qid":"q","answers":["Paris"],"passages":{"d":{"erag_answer":"paris","erag":1,"erag_metric":"substring"},"e":{"erag":0.5,"erag_metric":"rouge_l"}}}"#;
const VALID_TSV: &str = "qid docno relevant no_res_prob model\nq d 1 0.5 m\n";

fn mutate(base: &str, at: usize, cut: usize, insert: &str) -> String {
    let chars: Vec<char> = base.chars().collect();
    let at = at % (chars.len() + 1);
    let end = (at + cut).min(chars.len());
    chars[..at]
        .iter()
        .chain(insert.chars().collect::<Vec<_>>().iter())
        .chain(chars[end..].iter())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn arbitrary_text(text in ".{0,200}") {
        let _ = reference_json::parse("f", &text, Convention::Paper);
        let _ = reference_json::parse("f", &text, Convention::Reference);
        let _ = contexts::parse("f", &text, None);
        let _ = utilities_tsv::parse("f", &text);
        let _ = erag_outcomes::parse("f", &text);
    }

    #[test]
    fn mutated_valid_files(at in 0usize..200, cut in 0usize..8,
                           insert in prop::sample::select(vec!["", "-1", "NaN", "1e999", "\"", "{", "]", ",", "null", "2", " x", "\n", "é"])) {
        let _ = reference_json::parse("f", &mutate(VALID_JSON, at, cut, insert), Convention::Paper);
        let _ = reference_json::parse("f", &mutate(VALID_JSON, at, cut, insert), Convention::Reference);
        let _ = contexts::parse("f", &mutate(VALID_JSONL, at, cut, insert), None);
        let _ = utilities_tsv::parse("f", &mutate(VALID_TSV, at, cut, insert));
        if let Ok(o) = erag_outcomes::parse("f", &mutate(VALID_ERAG, at, cut, insert)) {
            for q in o.questions.values() {
                for d in q.passages.keys() {
                    for m in [DownstreamMetric::Substring, DownstreamMetric::ExactMatch, DownstreamMetric::RougeL] {
                        if let Some(s) = q.score(d, m) {
                            prop_assert!((0.0..=1.0).contains(&s));
                        }
                    }
                }
            }
        }
    }
}
