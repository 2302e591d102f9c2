//! Inputs that used to abort the process (a failed allocation sized by the user's number, a
//! quadratic preference matrix) or flood the terminal (raw binary quoted in an error): each now
//! ends in a clear message and a non-zero exit, without a crash.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn study_fixture(name: &str) -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../eval/tests/fixtures/rag/"
    ))
    .join(name)
}

fn scratch(test: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("bad_input_{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

fn ragscope(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ragscope"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run ragscope")
}

/// Exited with an error status (not a signal: an abort on a failed allocation has no code) and
/// said `needle` on stderr.
fn refused(o: &Output, needle: &str) -> String {
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(
        o.status.code().is_some_and(|c| c != 0),
        "expected an error exit, got {:?}; stderr: {err}",
        o.status
    );
    assert!(err.contains(needle), "stderr lacks {needle:?}: {err}");
    err
}

#[test]
fn huge_numbers_in_correlate_and_udcg_train_are_refused() {
    let dir = scratch("huge");
    let contexts = study_fixture("study_contexts.jsonl");
    let c = contexts.to_str().expect("path");
    refused(
        &ragscope(&dir, &["correlate", c, "--resamples", "1000000000000"]),
        "outside 1..=10000000",
    );
    refused(
        &ragscope(&dir, &["correlate", c, "--k", "100000000000"]),
        "no context has 100000000000 passages",
    );
    refused(
        &ragscope(&dir, &["correlate", c, "--sensitivity", "100000000000"]),
        "no context size in [100000000000]",
    );
    refused(
        &ragscope(&dir, &["udcg-train", c, "--k", "100000000000"]),
        "no context has 100000000000 passages",
    );
    refused(
        &ragscope(&dir, &["correlate", c, "--resamples", "0"]),
        "outside 1..=10000000",
    );
}

#[test]
fn compare_refuses_huge_resamples() {
    let dir = scratch("compare");
    std::fs::write(dir.join("q"), "1 0 a 1\n").expect("write");
    std::fs::write(dir.join("r"), "1 Q0 a 1 1.0 t\n").expect("write");
    refused(
        &ragscope(
            &dir,
            &[
                "compare",
                "--qrels",
                "q",
                "-m",
                "MAP",
                "--baseline",
                "r",
                "r",
                "--test",
                "bootstrap",
                "--resamples",
                "1000000000000",
            ],
        ),
        "outside 1..=10000000",
    );
}

#[test]
fn binary_bytes_in_an_error_are_escaped_and_cut() {
    let dir = scratch("binary");
    std::fs::write(dir.join("q"), "1 0 a 1\n").expect("write");
    // A run line with an escape sequence, a bell, invalid UTF-8 and a very long tail.
    let mut line = b"1 Q0 a 1 \x1b[31m\x07\xff\xfe".to_vec();
    line.extend(std::iter::repeat_n(b'x', 5000));
    line.extend(b" tag\n");
    std::fs::write(dir.join("r"), &line).expect("write");
    let o = ragscope(&dir, &["eval", "--qrels", "q", "-m", "MAP", "r"]);
    let err = refused(&o, "r:1:");
    assert!(
        !err.contains('\x1b') && !err.contains('\x07'),
        "raw control bytes: {err:?}"
    );
    assert!(err.contains("\\u{1b}[31m\\u{7}\\xff\\xfe"), "{err}");
    assert!(err.contains('…'), "long quote not cut: {err}");
    assert!(err.len() < 1000, "error of {} bytes", err.len());
}

#[test]
fn preference_matrix_over_the_limit_is_refused() {
    let dir = scratch("prefs");
    // One topic with more judged documents than the count matrix may hold.
    let n = ragscope_eval::measures::prefs::MAX_PREFS_JUDGED + 1;
    let mut qrels = String::new();
    for i in 0..n {
        qrels.push_str(&format!("1 0 d{i} {}\n", i % 2));
    }
    std::fs::write(dir.join("q"), qrels).expect("write");
    std::fs::write(dir.join("r"), "1 Q0 d0 1 1.0 t\n").expect("write");
    let o = ragscope(
        &dir,
        &[
            "trec-eval",
            "-m",
            "all_prefs",
            "-R",
            "qrels_prefs",
            "q",
            "r",
        ],
    );
    refused(&o, "judged documents per topic");
}
