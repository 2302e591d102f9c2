//! UDCG against the stored values of the authors' reference implementation
//! (GiovanniTRA/UDCG data/dataset_with_udcg.json, copied to ../shared/data/udcg).

use ragscope_eval::rag::reference_json::parse;
use ragscope_eval::rag::udcg::{Convention, UdcgParams};

fn shared(path: &str) -> String {
    let full = concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/data/").to_string() + path;
    std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("anchor data missing: {full}: {e}"))
}

#[test]
fn compat_mode_reproduces_every_stored_value() {
    let text = shared("udcg/dataset_with_udcg.json");
    let data = parse("dataset_with_udcg.json", &text, Convention::Reference).unwrap();
    let ours = data.scores(&UdcgParams::reference());
    let stored = data.stored_scores();
    let mut compared = 0;
    for (o, s) in ours.iter().zip(&stored) {
        assert_eq!(o.len(), s.len());
        for (model, value) in s {
            let got = o[model];
            assert!(
                (got - value).abs() <= 1e-9,
                "{model}: {got} vs stored {value}"
            );
            compared += 1;
        }
    }
    assert_eq!(compared, 3);
    assert!(data.warnings.is_empty());
}

#[test]
fn paper_mode_differs_from_stored_values_by_the_gamma_rounding() {
    // γ = 1/3 instead of 0.333: REFERENCE §3 says the difference is about 4e-5.
    let text = shared("udcg/dataset_with_udcg.json");
    let data = parse("dataset_with_udcg.json", &text, Convention::Paper).unwrap();
    let ours = data.scores(&UdcgParams::default());
    for (o, s) in ours.iter().zip(data.stored_scores()) {
        for (model, value) in s {
            let d = (o[&model] - value).abs();
            assert!(d > 1e-6 && d < 1e-4, "difference {d}");
        }
    }
}

#[test]
fn writing_keeps_fields_and_order_and_fills_udcg() {
    let text = shared("udcg/dataset_with_scores.json");
    let data = parse("dataset_with_scores.json", &text, Convention::Reference).unwrap();
    let out = data.to_json_with(&data.scores(&UdcgParams::reference()));
    let expected: serde_json::Value =
        serde_json::from_str(&shared("udcg/dataset_with_udcg.json")).unwrap();
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    // Same keys in the same order as the reference output, values equal up to 1e-9.
    assert_eq!(
        serde_json::to_string(&strip_udcg(&got)).unwrap(),
        serde_json::to_string(&strip_udcg(&expected)).unwrap()
    );
    let items = got.as_array().unwrap();
    for (g, e) in items.iter().zip(expected.as_array().unwrap()) {
        let keys: Vec<_> = g.as_object().unwrap().keys().collect();
        let ekeys: Vec<_> = e.as_object().unwrap().keys().collect();
        assert_eq!(keys, ekeys);
        for (m, v) in e["udcg"].as_object().unwrap() {
            assert!((g["udcg"][m].as_f64().unwrap() - v.as_f64().unwrap()).abs() < 1e-9);
        }
    }
}

fn strip_udcg(v: &serde_json::Value) -> serde_json::Value {
    let mut v = v.clone();
    for item in v.as_array_mut().unwrap() {
        item.as_object_mut().unwrap().shift_remove("udcg");
    }
    v
}

#[test]
fn bad_inputs_name_file_line_and_field() {
    let cases = [
        (
            r#"[{"example_id":"a","passages":[{"doc_id":"d","is_relevant":true,
"models_info":{"m":{"no_res_prob":1.5}}}]}]"#,
            2,
            "no_res_prob",
        ),
        (
            r#"[{"example_id":"a","passages":[
{"doc_id":"d","is_relevant":"yes","models_info":{"m":{"no_res_prob":0.5}}}]}]"#,
            2,
            "is_relevant",
        ),
        (
            r#"[{"example_id":"a","passages":[]},
{"example_id":"a","passages":[]}]"#,
            2,
            "example_id",
        ),
        (
            r#"[{"example_id":"a","passages":[
{"doc_id":"d","is_relevant":true,"models_info":{"m":{"no_res_prob":0.5}}},
{"doc_id":"d","is_relevant":true,"models_info":{"m":{"no_res_prob":0.5}}}]}]"#,
            3,
            "doc_id",
        ),
        (
            r#"[{"example_id":"a","passages":[
{"doc_id":"d","is_relevant":true,"models_info":{"m":{"no_res_prob":0.5}}},
{"doc_id":"e","is_relevant":true,"models_info":{"x":{"no_res_prob":0.5}}}]}]"#,
            2, // passage "d" (line 2) lacks model "x", which passage "e" has
            "models_info.x.no_res_prob",
        ),
        ("[{\"example_id\": \"a\",\n \"passages\": [NaN]}]", 2, ""),
        (
            "[{\"example_id\": \"a\"},\n{\"example_id\": \"b\"}]",
            1,
            "[0].passages",
        ),
    ];
    for (text, line, field) in cases {
        let err = parse("in.json", text, Convention::Paper).unwrap_err();
        assert_eq!(err.file, "in.json");
        assert_eq!(err.line, line, "{err}");
        assert!(err.field.contains(field), "{err}");
        assert!(err.to_string().starts_with("in.json:"), "{err}");
    }
}

#[test]
fn reference_mode_skips_and_reports_missing_probabilities() {
    let text = r#"[{"example_id":"a","passages":[
{"doc_id":"d","is_relevant":true,"models_info":{"m":{"no_res_prob":0.5}}},
{"doc_id":"e","is_relevant":true,"models_info":{}}]}]"#;
    let data = parse("in.json", text, Convention::Reference).unwrap();
    assert_eq!(data.warnings.len(), 1);
    let s = data.scores(&UdcgParams::reference());
    // The skipped passage still counts in the denominator: σ(0.5/2).
    assert!((s[0]["m"] - 1.0 / (1.0 + (-0.25f64).exp())).abs() < 1e-15);
    // A missing passage list is an empty one there, scored 0.0 like `compute_udcg_score`.
    let text = r#"[{"example_id":"a","passages":[{"doc_id":"d","is_relevant":true,"models_info":{"m":{"no_res_prob":0.5}}}]},{"example_id":"b"}]"#;
    let data = parse("in.json", text, Convention::Reference).unwrap();
    assert_eq!(data.scores(&UdcgParams::reference())[1]["m"], 0.0);
    assert_eq!(data.warnings.len(), 1);
}

#[test]
fn utilities_view_of_the_reference_file_round_trips() {
    use ragscope_eval::rag::utilities_tsv;
    let text = shared("udcg/dataset_with_udcg.json");
    let data = parse("dataset_with_udcg.json", &text, Convention::Paper).unwrap();
    let rows = data.utility_rows();
    assert_eq!(rows.len(), 15);
    let back = utilities_tsv::parse("u.tsv", &utilities_tsv::write(&rows)).unwrap();
    let q = back
        .question("meta-llama/Llama-3.2-3B-Instruct", "example_1")
        .unwrap();
    assert_eq!(q["doc_3"].judgment.p_no_response, 0.1318359375);
    assert!(!q["doc_3"].judgment.relevant);
}
