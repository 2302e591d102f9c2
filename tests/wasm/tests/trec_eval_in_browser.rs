//! trec_eval-exactness of the wasm32 build, in headless Chromium: the same byte-identical
//! checks as the native suite, on the files embedded at compile time (no fs in a browser).
#![cfg(target_arch = "wasm32")]

use wasm_bindgen_test::*;
wasm_bindgen_test_configure!(run_in_browser);

macro_rules! data {
    ($f:literal) => {
        include_bytes!(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/data/trec_eval/",
            $f
        ))
    };
}

fn trec_eval(args: &[&str], files: &[(&str, &[u8])]) -> String {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut read = |name: &str| {
        files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| b.to_vec())
            .ok_or_else(|| format!("no such file {name}"))
    };
    match ragscope_eval::trec_eval::run(&args, &mut read) {
        Ok(out) => out,
        Err(e) => panic!("trec_eval failed: {e}"),
    }
}

#[wasm_bindgen_test]
fn default_measures_match_out_test() {
    let out = trec_eval(
        &["qrels.test", "results.test"],
        &[
            ("qrels.test", data!("qrels.test")),
            ("results.test", data!("results.test")),
        ],
    );
    assert_eq!(out.as_bytes(), data!("out.test"));
}

#[wasm_bindgen_test]
fn all_trec_per_query_matches_out_test_aq() {
    let out = trec_eval(
        &["-m", "all_trec", "-q", "qrels.test", "results.test"],
        &[
            ("qrels.test", data!("qrels.test")),
            ("results.test", data!("results.test")),
        ],
    );
    assert_eq!(out.as_bytes(), data!("out.test.aq"));
}

#[wasm_bindgen_test]
fn graded_rag_track_run_with_ties_matches_out_comment_test() {
    let out = trec_eval(
        &["qrels.comment.test", "results.comment.test"],
        &[
            ("qrels.comment.test", data!("qrels.comment.test")),
            ("results.comment.test", data!("results.comment.test")),
        ],
    );
    assert_eq!(out.as_bytes(), data!("out.comment.test"));
}
