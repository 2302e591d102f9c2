//! The built `ragscope trec-eval` binary against trec_eval 10.0's regression outputs, plus
//! its argv handling and error exits.

use std::path::PathBuf;
use std::process::{Command, Output};

fn data_dir() -> PathBuf {
    let dir = PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/trec_eval"
    ));
    assert!(
        dir.is_dir(),
        "trec_eval oracle data missing at {}",
        dir.display()
    );
    dir
}

fn ragscope(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .current_dir(data_dir())
        .args(args)
        .output()
        .expect("run ragscope")
}

fn trec_eval(args: &[&str]) -> Output {
    let mut full = vec!["trec-eval"];
    full.extend_from_slice(args);
    ragscope(&full)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn binary_matches_every_supported_oracle_command_line() {
    let source = std::fs::read_to_string(data_dir().join("SOURCE.txt")).expect("SOURCE.txt");
    let mut checked = 0;
    for line in source.lines() {
        let Some((out, cmd)) = line.split_once(" trec_eval ") else {
            continue;
        };
        if !out.starts_with("out.") {
            continue;
        }
        let args: Vec<&str> = cmd.split_whitespace().collect();
        let expected = std::fs::read(data_dir().join(out.trim())).expect("expected output");
        let o = trec_eval(&args);
        assert!(o.status.success(), "{cmd}: {}", stderr(&o));
        assert!(o.stdout == expected, "{cmd}: output differs from {out}");
        checked += 1;
    }
    assert_eq!(checked, 15);
}

#[test]
fn glued_spaced_long_and_permuted_flags_are_equivalent() {
    let expected = std::fs::read(data_dir().join("out.test.aql")).expect("out.test.aql");
    for args in [
        vec![
            "-m",
            "all_trec",
            "-mrelstring.20",
            "-q",
            "-l2",
            "qrels.rel_level",
            "results.test",
        ],
        vec![
            "-m",
            "all_trec",
            "-m",
            "relstring.20",
            "-q",
            "-l",
            "2",
            "qrels.rel_level",
            "results.test",
        ],
        vec![
            "--measure=all_trec",
            "--measure",
            "relstring.20",
            "--query_eval_wanted",
            "--level_for_rel=2",
            "qrels.rel_level",
            "results.test",
        ],
        vec![
            "qrels.rel_level",
            "results.test",
            "-qmall_trec",
            "-mrelstring.20",
            "-l2",
        ],
        vec![
            "-m",
            "all_trec",
            "-mrelstring.20",
            "--query",
            "--level=2",
            "--",
            "qrels.rel_level",
            "results.test",
        ],
    ] {
        let o = trec_eval(&args);
        assert!(o.status.success(), "{args:?}: {}", stderr(&o));
        assert!(o.stdout == expected, "{args:?} differs from out.test.aql");
    }
}

#[test]
fn missing_topic_without_c_is_an_error_that_names_the_topic() {
    let o = trec_eval(&["qrels.test", "results.trunc"]);
    assert_eq!(o.status.code(), Some(4));
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).contains("topic '302'"), "{}", stderr(&o));
    assert!(stderr(&o).contains("-c"), "{}", stderr(&o));
}

#[test]
fn errors_exit_like_trec_eval() {
    let o = trec_eval(&["-m", "no_such_measure", "qrels.test", "results.test"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stderr(&o), "trec_eval: illegal measure 'no_such_measure'\n");

    let o = trec_eval(&["-m", "P.5,5", "qrels.test", "results.test"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("duplicate cutoffs"), "{}", stderr(&o));

    let o = trec_eval(&["-x", "qrels.test", "results.test"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("Usage: trec_eval"));

    let o = trec_eval(&["qrels.test"]);
    assert_eq!(o.status.code(), Some(1));

    let o = trec_eval(&["qrels.test", "no_such_file"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("trec_eval: Quit in file 'no_such_file'"));
}

#[test]
fn help_teaches_and_version_goes_to_stderr() {
    let o = trec_eval(&["-h"]);
    assert!(o.status.success());
    let text = stdout(&o);
    assert!(text.contains("-m, --measure"), "{text}");
    assert!(text.contains("ndcg_cut"), "{text}");
    let o = trec_eval(&["--version"]);
    assert!(o.status.success());
    assert!(o.stdout.is_empty());
    assert!(stderr(&o).starts_with("trec_eval version"));
}

#[test]
fn run_file_can_come_from_stdin() {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .current_dir(data_dir())
        .args(["trec-eval", "qrels.test", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("spawn");
    let run = std::fs::read(data_dir().join("results.test")).expect("results.test");
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(&run)
        .expect("write");
    let o = child.wait_with_output().expect("wait");
    let expected = std::fs::read(data_dir().join("out.test")).expect("out.test");
    assert!(o.stdout == expected);
}

#[test]
fn eval_reports_trec_eval_values_side_by_side() {
    let o = ragscope(&[
        "eval",
        "--qrels",
        "qrels.test",
        "--measures",
        "nDCG@10,MAP,MRR,P@5,NumRet",
        "--format",
        "csv",
        "results.test",
        "results.comment.test",
    ]);
    // results.comment.test shares no topic with qrels.test
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("no topic"));

    let o = ragscope(&[
        "eval",
        "--qrels",
        "qrels.test",
        "--measures",
        "nDCG@10,MAP,MRR,P@5,NumRet",
        "--format",
        "csv",
        "results.test",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // values from out.test.a (trec_eval -m all_trec qrels.test results.test)
    assert_eq!(
        stdout(&o),
        "run,nDCG@10,MAP,MRR,P@5,NumRet\nresults.test,0.3016,0.1785,0.4064,0.2667,1500\n"
    );

    let o = ragscope(&[
        "eval",
        "--qrels",
        "qrels.test",
        "-m",
        "nDCG@x",
        "results.test",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("nDCG@x"));

    let o = ragscope(&[
        "eval",
        "--qrels",
        "qrels.test",
        "-m",
        "MAP",
        "--format",
        "json",
        "--per-query",
        "results.test",
    ]);
    assert!(o.status.success());
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).expect("json");
    let map_302 = doc["runs"][0]["per_query"]["302"]["MAP"]
        .as_f64()
        .expect("number");
    // out.test.aq: map 302 0.4175
    assert_eq!(format!("{map_302:.4}"), "0.4175");
}
