//! The qrels and the run are parsed concurrently natively; errors must still come in
//! trec_eval's order: anything wrong with the qrels first, then the results format, then the run.

use ragscope_eval::trec_eval::run;

fn trec_eval(args: &[&str], files: &[(&str, &str)]) -> Result<String, String> {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let mut read = |name: &str| {
        files
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, t)| t.as_bytes().to_vec())
            .ok_or_else(|| "No such file or directory".to_string())
    };
    run(&args, &mut read).map_err(|e| e.message)
}

const GOOD_QRELS: &str = "1 0 d1 1\n";
const BAD_QRELS: &str = "1 0 d1 x\n";
const GOOD_RUN: &str = "1 Q0 d1 1 1.0 t\n";
const BAD_RUN: &str = "1 Q0 d1 1 y t\n";

#[test]
fn a_bad_qrels_file_is_reported_before_a_bad_or_missing_run() {
    for files in [
        vec![("q", BAD_QRELS), ("r", BAD_RUN)],
        vec![("q", BAD_QRELS)],
    ] {
        let err = trec_eval(&["q", "r"], &files).unwrap_err();
        assert!(
            err.contains("get_qrels") && err.contains("Quit in file 'q'"),
            "{err}"
        );
    }
}

#[test]
fn the_results_format_is_checked_before_the_run() {
    let err = trec_eval(
        &["-T", "other", "q", "r"],
        &[("q", GOOD_QRELS), ("r", BAD_RUN)],
    )
    .unwrap_err();
    assert!(err.contains("Illegal retrieval results format"), "{err}");
}

#[test]
fn then_the_run() {
    let err = trec_eval(&["q", "r"], &[("q", GOOD_QRELS), ("r", BAD_RUN)]).unwrap_err();
    assert!(
        err.contains("get_results") && err.contains("Quit in file 'r'"),
        "{err}"
    );
    let err = trec_eval(&["q", "r"], &[("q", GOOD_QRELS)]).unwrap_err();
    assert!(err.contains("Cannot read results file 'r'"), "{err}");
    assert!(trec_eval(&["q", "r"], &[("q", GOOD_QRELS), ("r", GOOD_RUN)]).is_ok());
}
