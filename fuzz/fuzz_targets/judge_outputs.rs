//! The files the answer judges write, read back (crates/eval: `pointwise_grades` for `judge
//! pointwise`, `citation_judgments` for `judge citations`), and the pairwise judge's queries
//! and CSV reader (crates/judge) never panic. The first byte picks the reader.
//!
//! Contract checked: an error names the file (`file[:line[:column]]: reason`); a pointwise grade
//! read is a whole 0–2; a citation score read is in [0, 1].
#![no_main]

use libfuzzer_sys::fuzz_target;
use ragscope_eval::answers::{citation_judgments, pointwise_grades};
use ragscope_judge::task::pairwise;

fuzz_target!(|data: &[u8]| {
    let Some((&which, rest)) = data.split_first() else {
        return;
    };
    match which % 4 {
        0 => match pointwise_grades::parse("g.csv", &String::from_utf8_lossy(rest)) {
            Ok(grades) => {
                for g in grades.iter().filter_map(|g| g.grade) {
                    assert!([0.0, 1.0, 2.0].contains(&g), "{g}");
                }
            }
            Err(e) => named(&e.to_string(), "g.csv"),
        },
        1 => match citation_judgments::parse("c.jsonl", rest) {
            Ok(rows) => {
                for s in rows.iter().filter_map(|r| r.score) {
                    assert!((0.0..=1.0).contains(&s), "{s}");
                }
            }
            Err(e) => named(&e.to_string(), "c.jsonl"),
        },
        2 => {
            if let Err(e) = pairwise::read_queries(&String::from_utf8_lossy(rest), "q.csv") {
                named(&e, "q.csv");
            }
        }
        _ => {
            let text = String::from_utf8_lossy(rest);
            let columns = ["qid", "agent", "answer"];
            let n = usize::from(which / 4 % 4);
            if let Ok(rows) = pairwise::read_csv(&text, "a.csv", &columns[..n]) {
                assert!(rows.iter().all(|r| r.len() == n), "{rows:?}");
            }
        }
    }
});

/// The error starts with the file name, then `:` (a line number or the reason).
fn named(e: &str, file: &str) {
    assert!(
        e.strip_prefix(file).is_some_and(|r| r.starts_with(':')),
        "an error without its file: {e}"
    );
}
