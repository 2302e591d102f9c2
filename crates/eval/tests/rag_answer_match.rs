//! The lost-in-the-middle answer scorer, exact match and ROUGE-L against the Python definitions
//! (tests/oracle/stats/generate_answer_match.py → fixtures/rag/answer_match.json).

use ragscope_eval::rag::answer_match::{
    exact_match, first_line, normalize_answer, rouge_l, substring_match, DownstreamMetric,
};
use serde_json::Value;

#[test]
fn scores_match_the_python_reference() {
    let path = format!(
        "{}/tests/fixtures/rag/answer_match.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let fx: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cases = fx["cases"].as_array().unwrap();
    assert!(cases.len() >= 20);
    for c in cases {
        let answer = c["answer"].as_str().unwrap();
        let golds: Vec<String> = c["golds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            normalize_answer(first_line(answer)),
            c["normalized"].as_str().unwrap(),
            "{answer:?}"
        );
        let f = |b: bool| f64::from(u8::from(b));
        assert_eq!(
            f(substring_match(answer, &golds)),
            c["substring"].as_f64().unwrap(),
            "{answer:?} {golds:?}"
        );
        assert_eq!(
            f(exact_match(answer, &golds)),
            c["exact_match"].as_f64().unwrap(),
            "{answer:?} {golds:?}"
        );
        let r = c["rouge_l"].as_f64().unwrap();
        assert!(
            (rouge_l(answer, &golds) - r).abs() < 1e-12,
            "{answer:?} {golds:?}"
        );
        assert!((DownstreamMetric::RougeL.score(answer, &golds) - r).abs() < 1e-12);
    }
}
