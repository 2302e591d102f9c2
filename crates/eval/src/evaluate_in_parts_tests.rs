//! A run scored in parts while it is parsed ([`read_and_evaluate`]) must give what
//! [`evaluate_with`] gives on the whole run, value for value, and the same parse errors.

use super::*;
use crate::formats::handing_out::{TEST_COUNTS, TEST_ONE_THREAD, TEST_SLICE};
use crate::formats::test_runs::*;
use crate::formats::{open_input, parse_qrels, parse_run, Input, ReadError};
use proptest::prelude::*;

pub(super) const MEASURES: &[&str] = &[
    "MAP",
    "MRR",
    "nDCG@3",
    "nDCG",
    "P@2",
    "R@5",
    "bpref",
    "Rprec",
    "infAP",
    "Judged@5",
    "NumRet",
    "NumRelRet",
    "Success@1",
    "SetF",
    "P(rel=2)@3",
];

type Outcome = Result<Option<(Results, usize)>, ReadError>;

/// Whole-run evaluation and scoring in parts with `slice`-byte slices, as debug text (NaN
/// equals NaN there), with the topics handed out.
fn both(
    qrels: &[u8],
    run: &[u8],
    opts: &EvalOptions,
    (slice, one_thread): (usize, bool),
) -> (String, String, usize) {
    let measures: Vec<Measure> = MEASURES.iter().map(|m| m.parse().unwrap()).collect();
    let qrels_parsed = parse_qrels("qrels", qrels);
    let whole: Outcome = match (&qrels_parsed, parse_run("run", run)) {
        (Err(_), _) => Ok(None),
        (Ok(_), Err(e)) => Err(ReadError::Parse(e)),
        (Ok(q), Ok(run)) => Ok(Some((
            evaluate_with(q, &run, &measures, opts),
            missing_topics(q, &run),
        ))),
    };
    let file = TempFile::new("run", run);
    let Ok(Input::Whole(bytes)) = open_input(&file.name()) else {
        panic!("a non-empty file is mapped")
    };
    TEST_SLICE.with(|s| s.set(Some(slice)));
    TEST_ONE_THREAD.with(|o| o.set(one_thread));
    TEST_COUNTS.with(|c| c.set((0, 0)));
    let (_, parts) = read_and_evaluate(
        "run",
        bytes,
        || parse_qrels("qrels", qrels),
        &measures,
        opts,
    );
    TEST_SLICE.with(|s| s.set(None));
    TEST_ONE_THREAD.with(|o| o.set(false));
    let handed_out = TEST_COUNTS.with(std::cell::Cell::get).0;
    (format!("{whole:?}"), format!("{parts:?}"), handed_out)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn scored_in_parts_equals_scored_whole(
        blocks in blocks(),
        judged in judged(),
        complete in any::<bool>(),
        max_docs in prop_oneof![Just(usize::MAX), 0usize..6],
        slice in prop_oneof![1usize..64, 64usize..4096],
        one_thread in any::<bool>(),
    ) {
        let opts = EvalOptions { complete, max_docs, ..EvalOptions::default() };
        let run = run_text(&blocks);
        // an empty file is read as a stream, never mapped
        prop_assume!(!run.is_empty());
        let (whole, parts, _) = both(&qrels_text(&judged), &run, &opts, (slice, one_thread));
        prop_assert_eq!(parts, whole);
    }
}

#[test]
fn a_run_written_topic_by_topic_is_scored_in_parts() {
    // on one thread (the batches wait for the scorer) under `complete`
    for complete in [false, true] {
        let opts = EvalOptions {
            complete,
            ..EvalOptions::default()
        };
        let (whole, parts, handed_out) = both(
            &qrels_of(14),
            &contiguous_run(12, 8),
            &opts,
            (200, complete),
        );
        assert!(whole.starts_with("Ok(Some("), "{whole}");
        assert_eq!(parts, whole);
        assert_eq!(handed_out, 11);
        // two qrels topics have no results (scored as empty rankings under `complete`)
        assert!(whole.ends_with(", 2)))"), "{whole}");
        let topics = if complete { 14 } else { 12 };
        assert_eq!(whole.matches("\"q").count(), topics, "{whole}");
    }
}

/// Scored on this thread, each 300 KiB slice is parsed on two threads (above `MIN_CHUNK`).
#[test]
fn large_slices_split_between_threads_are_scored_in_parts() {
    let run = contiguous_run(200, 200);
    let opts = EvalOptions::default();
    let (whole, parts, handed_out) = both(&qrels_of(200), &run, &opts, (300 << 10, true));
    assert!(
        whole.starts_with("Ok(Some("),
        "{}",
        &whole[..200.min(whole.len())]
    );
    assert_eq!(parts, whole);
    assert!(handed_out > 150, "{handed_out} topics handed out");
}
