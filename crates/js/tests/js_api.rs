//! The JS API's Rust halves, natively, against trec_eval's expected outputs.

use std::collections::BTreeMap;

fn data(name: &str) -> String {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/trec_eval/"
    );
    std::fs::read_to_string(format!("{path}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// trec_eval's `all` lines as name → printed value.
fn summary(out: &str) -> BTreeMap<String, String> {
    out.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f.len() == 3 && f[1] == "all").then(|| (f[0].trim().to_string(), f[2].to_string()))
        })
        .collect()
}

#[test]
fn trec_eval_text_is_byte_identical() {
    let out = ragscope_js::trec_eval_impl(
        &["-m".into(), "all_trec".into()],
        &data("qrels.test"),
        &data("results.test"),
    )
    .unwrap();
    assert_eq!(out, data("out.test.a"));
}

#[test]
fn evaluate_means_agree_with_trec_eval() {
    let runs = [("results.test".to_string(), data("results.test"))];
    let measures: Vec<String> = ["nDCG@10", "MAP", "MRR", "P@10", "R@100", "Rprec", "bpref"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let scores =
        ragscope_js::evaluate_impl(data("qrels.test").as_bytes(), &runs, &measures, true).unwrap();
    let expected = summary(&data("out.test.a"));
    let trec = [
        "ndcg_cut_10",
        "map",
        "recip_rank",
        "P_10",
        "recall_100",
        "Rprec",
        "bpref",
    ];
    assert_eq!(scores.len(), 1);
    assert_eq!(scores[0].num_queries, 3);
    for (m, t) in measures.iter().zip(trec) {
        assert_eq!(
            format!("{:.4}", scores[0].means[m]),
            expected[t],
            "{m} vs {t}"
        );
    }
    let per_query = scores[0].per_query.as_ref().unwrap();
    assert_eq!(per_query.keys().collect::<Vec<_>>(), ["301", "302", "303"]);
}

#[test]
fn bad_input_is_an_error_naming_the_line() {
    let runs = [("bad.run".to_string(), "301 Q0 d 1 x tag\n")];
    let err =
        ragscope_js::evaluate_impl(data("qrels.test").as_bytes(), &runs, &["MAP".into()], false)
            .unwrap_err();
    assert!(err.contains("bad.run") && err.contains('1'), "{err}");
}

/// The reference implementation's stored UDCG values (GiovanniTRA/UDCG data/dataset_with_udcg.json).
#[test]
fn udcg_reference_reproduces_the_stored_scores() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/udcg/dataset_with_udcg.json"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let stored: serde_json::Value = serde_json::from_str(&text).unwrap();
    let scores = ragscope_js::udcg_reference_impl(&text).unwrap();
    let examples = stored.as_array().unwrap();
    assert_eq!(scores.len(), examples.len());
    for (got, ex) in scores.iter().zip(examples) {
        for (model, want) in ex["udcg"].as_object().unwrap() {
            assert!(
                (got[model] - want.as_f64().unwrap()).abs() < 1e-12,
                "{model}"
            );
        }
    }
}

/// σ((0.9 + 0.5 + (1/3)(−0.8))/3) computed by hand from the paper's formula.
#[test]
fn udcg_of_utilities_follows_the_paper() {
    let want = 1.0 / (1.0 + (-((0.9 + 0.5 - 0.8 / 3.0) / 3.0f64)).exp());
    assert!((ragscope_js::udcg(vec![0.9, -0.8, 0.5], 3, None) - want).abs() < 1e-15);
    assert_eq!(ragscope_js::udcg(vec![], 0, None), 0.5);
}

/// `evaluate()` feeds its parsers in slices (1 MiB in wasm): any slicing, lines cut anywhere,
/// gives trec_eval's values and the same error as the whole file.
#[test]
fn slices_of_any_size_give_the_same_scores_and_errors() {
    let runs = [("results.test".to_string(), data("results.test"))];
    let measures: Vec<String> = ["nDCG@10", "MAP", "P@10", "bpref"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let expected = summary(&data("out.test.a"));
    let trec = ["ndcg_cut_10", "map", "P_10", "bpref"];
    let qrels = data("qrels.test");
    let bad = [(
        "bad.run".to_string(),
        format!("{}301 Q0 d 1 x tag\n", data("results.test")),
    )];
    let whole_error =
        ragscope_js::evaluate_impl(qrels.as_bytes(), &bad, &measures, false).unwrap_err();
    assert!(whole_error.contains("bad.run"), "{whole_error}");
    for slice in [1, 2, 7, 64, 4096] {
        let scores =
            ragscope_js::evaluate_in_slices(qrels.as_bytes(), &runs, &measures, true, slice)
                .unwrap();
        assert_eq!(scores[0].num_queries, 3, "slices of {slice}");
        for (m, t) in measures.iter().zip(trec) {
            assert_eq!(
                format!("{:.4}", scores[0].means[m]),
                expected[t],
                "{m} vs {t}, slices of {slice}"
            );
        }
        let error =
            ragscope_js::evaluate_in_slices(qrels.as_bytes(), &bad, &measures, false, slice)
                .unwrap_err();
        assert_eq!(error, whole_error, "slices of {slice}");
    }
}

/// A run whose topics interleave (its first line moved to the end, so that topic comes back
/// after others were handed out and scored) is parsed again and scored whole: the scores of the
/// run as written, and a bad line after the topic came back is reported as for the whole file.
#[test]
fn a_topic_that_comes_back_is_scored_from_the_whole_run() {
    let measures: Vec<String> = ["nDCG@10", "MAP", "P@10", "bpref"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let qrels = data("qrels.test");
    let results = data("results.test");
    let (first, rest) = results.split_once('\n').unwrap();
    let moved = format!("{rest}{first}\n");
    let runs = [("results.test".to_string(), results.clone())];
    let interleaved = [("moved.run".to_string(), moved.clone())];
    let bad = [("bad.run".to_string(), format!("{moved}301 Q0 d 1 x tag\n"))];
    let want = ragscope_js::evaluate_impl(qrels.as_bytes(), &runs, &measures, true).unwrap();
    let whole_error =
        ragscope_js::evaluate_impl(qrels.as_bytes(), &bad, &measures, false).unwrap_err();
    for slice in [64, 4096] {
        let got =
            ragscope_js::evaluate_in_slices(qrels.as_bytes(), &interleaved, &measures, true, slice)
                .unwrap();
        assert_eq!(got[0].means, want[0].means, "slices of {slice}");
        assert_eq!(got[0].per_query, want[0].per_query, "slices of {slice}");
        let error =
            ragscope_js::evaluate_in_slices(qrels.as_bytes(), &bad, &measures, false, slice)
                .unwrap_err();
        assert_eq!(error, whole_error, "slices of {slice}");
    }
}
