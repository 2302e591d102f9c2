//! eRAG's downstream metrics against independent oracles (tests/oracle/rouge/generate.py →
//! fixtures/rag/erag_metrics.json): ROUGE-L F1 from the PyPI `rouge-score` package, and the
//! normalisation / substring match / exact match from the lost-in-the-middle repository's own
//! `metrics.py` (the `regex` package), on tricky strings.

use ragscope_eval::rag::answer_match::{first_line, normalize_answer, DownstreamMetric};
use ragscope_eval::rag::rouge_l::rouge_l_f1;
use serde_json::Value;

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|g| g.as_str().unwrap().to_string())
        .collect()
}

#[test]
fn metrics_match_rouge_score_and_lost_in_the_middle() {
    let path = format!(
        "{}/tests/fixtures/rag/erag_metrics.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let fx: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let cases = fx["cases"].as_array().unwrap();
    assert!(cases.len() >= 30);
    let mut partial_rouge = 0;
    for c in cases {
        let answer = c["answer"].as_str().unwrap();
        let golds = strings(&c["golds"]);
        assert_eq!(
            normalize_answer(first_line(answer)),
            c["normalized"].as_str().unwrap(),
            "{answer:?}"
        );
        for (g, want) in golds.iter().zip(strings(&c["normalized_golds"])) {
            assert_eq!(normalize_answer(g), want, "{g:?}");
        }
        for (metric, key) in [
            (DownstreamMetric::Substring, "substring"),
            (DownstreamMetric::ExactMatch, "exact_match"),
            (DownstreamMetric::RougeL, "rouge_l"),
        ] {
            let want = c[key].as_f64().unwrap();
            let got = metric.score(answer, &golds);
            // rouge-score divides in the same order (lcs/len, then 2pr/(p+r)): equal to the bit
            // up to the last rounding.
            assert!(
                (got - want).abs() <= 1e-15,
                "{key} {answer:?} {golds:?}: {got} vs {want}"
            );
        }
        let best = golds
            .iter()
            .map(|g| rouge_l_f1(first_line(answer), g))
            .fold(0.0, f64::max);
        let want = c["rouge_l"].as_f64().unwrap();
        assert!((best - want).abs() <= 1e-15);
        partial_rouge += usize::from(want > 0.0 && want < 1.0);
    }
    // The fixture must exercise fractional ROUGE-L values, not only 0/1.
    assert!(partial_rouge >= 10, "{partial_rouge}");
}

#[test]
fn erag_names_round_trip_and_document_themselves() {
    use ragscope_eval::Measure;
    for (name, metric) in [
        ("eRAG-P@5", DownstreamMetric::Substring),
        ("eRAG-success@10", DownstreamMetric::Substring),
        ("eRAG-P(metric=em)@3", DownstreamMetric::ExactMatch),
        ("eRAG-success(metric=rouge_l)@1", DownstreamMetric::RougeL),
    ] {
        let m: Measure = name.parse().unwrap();
        assert_eq!(m.to_string(), name);
        assert_eq!(m.erag_metric(), Some(metric));
        assert!(m.needs_erag_outcomes() && !m.needs_utilities());
        let f = m.family().unwrap();
        assert!(f.source.contains("Salemi & Zamani") && !f.formula.is_empty());
    }
    // The default metric is spelled out only when asked for; case-insensitive like the others.
    let m: Measure = "erag-p(metric=substring)@5".parse().unwrap();
    assert_eq!(m.to_string(), "eRAG-P@5");
    for bad in [
        "eRAG-P",
        "eRAG-P(metric=bleu)@5",
        "eRAG-P(k=1)@5",
        "eRAG-success@0",
    ] {
        assert!(bad.parse::<Measure>().is_err(), "{bad}");
    }
    assert!(!"P@5".parse::<Measure>().unwrap().needs_erag_outcomes());
}
