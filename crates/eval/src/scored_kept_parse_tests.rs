//! A run scored topic by topic while it is parsed, and kept ([`ScoredKeptParse`]), must give
//! what one parse and [`evaluate_with`] give: the run (every result, its line, the last tag),
//! the scores value for value, the qrels topics it lacks, and the same parse error.

use super::in_parts_tests::MEASURES;
use super::*;
use crate::formats::test_runs::*;
use crate::formats::{parse_qrels, parse_run, RunParser};
use proptest::prelude::*;

fn measures() -> Vec<Measure> {
    MEASURES.iter().map(|m| m.parse().unwrap()).collect()
}

/// The run as text, its scores' debug text (NaN equals NaN there), the topics it lacks.
type Seen = (String, String, usize);

fn whole(qrels: &Qrels, run: &[u8], opts: &EvalOptions) -> Result<Seen, String> {
    let ms = measures();
    parse_run("run", run)
        .map(|r| {
            let results = evaluate_with(qrels, &r, &ms, opts);
            (
                render(&r),
                format!("{results:?}"),
                missing_topics(qrels, &r),
            )
        })
        .map_err(|e| e.to_string())
}

/// The kept parse fed `slice` bytes at a time, and how many times it scored; `None` when a
/// topic came back.
fn kept(
    qrels: &Qrels,
    run: &[u8],
    opts: &EvalOptions,
    slice: usize,
) -> (Option<Result<Seen, String>>, usize) {
    let ms = measures();
    let mut scored = ScoredKeptParse::new(RunParser::new("run"), qrels, &ms, opts);
    for piece in run.chunks(slice) {
        match scored.feed(qrels, piece) {
            Ok(true) => {}
            Ok(false) => return (None, scored.batches),
            Err(e) => return (Some(Err(e.to_string())), scored.batches),
        }
    }
    let batches = scored.batches;
    let finished = scored.finish(qrels).map(|r| {
        r.map(|(results, missing, run)| (render(&run), format!("{results:?}"), missing))
            .map_err(|e| e.to_string())
    });
    (finished, batches)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn scored_and_kept_equals_one_parse_scored_whole(
        blocks in blocks(),
        judged in judged(),
        complete in any::<bool>(),
        max_docs in prop_oneof![Just(usize::MAX), 0usize..6],
        slice in prop_oneof![1usize..64, 64usize..4096],
    ) {
        let opts = EvalOptions { complete, max_docs, ..EvalOptions::default() };
        let run = run_text(&blocks);
        let Ok(qrels) = parse_qrels("qrels", &qrels_text(&judged)) else {
            return Ok(());
        };
        let (kept, _) = kept(&qrels, &run, &opts, slice);
        // a topic that came back: the caller parses the file again whole
        prop_assume!(kept.is_some());
        prop_assert_eq!(kept.unwrap(), whole(&qrels, &run, &opts));
    }
}

/// A run written topic by topic, in slices of every size from one byte: topics are scored
/// as they are read, and the whole equals one parse, with and without `complete`.
#[test]
fn a_run_written_topic_by_topic_is_kept_whole() {
    let run = contiguous_run(12, 8);
    let qrels = parse_qrels("qrels", &qrels_of(14)).unwrap();
    for complete in [false, true] {
        let opts = EvalOptions {
            complete,
            ..EvalOptions::default()
        };
        let expected = whole(&qrels, &run, &opts);
        assert!(expected.is_ok(), "{expected:?}");
        for slice in (1..300).chain([4096, run.len()]) {
            let (got, batches) = kept(&qrels, &run, &opts, slice);
            assert_eq!(got, Some(expected.clone()), "slices of {slice} bytes");
            if slice < 200 {
                assert!(batches >= 5, "{batches} batches in slices of {slice}");
            }
        }
    }
}

/// trec_eval's own test run and qrels: the kept run and its scores are one parse's.
#[test]
fn trec_evals_test_run_is_kept_whole() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/data/trec_eval/"
    );
    let read = |name: &str| {
        std::fs::read(format!("{path}{name}")).unwrap_or_else(|e| panic!("{name}: {e}"))
    };
    let (run, qrels) = (read("results.test"), read("qrels.test"));
    let qrels = parse_qrels("qrels.test", &qrels).unwrap();
    let opts = EvalOptions::default();
    let expected = whole(&qrels, &run, &opts);
    assert!(expected.is_ok());
    for slice in [1, 7, 100, 1000, 1 << 16, 1 << 20] {
        let (got, batches) = kept(&qrels, &run, &opts, slice);
        assert_eq!(got, Some(expected.clone()), "slices of {slice} bytes");
        assert!(
            batches > usize::from(slice < run.len()),
            "{batches} batches"
        );
    }
}

/// A topic that comes back after it was scored: nothing more is read, and `finish` says
/// so instead of giving a run that lacks the first results.
#[test]
fn a_topic_that_comes_back_is_refused() {
    let run = b"q1 Q0 a 1 3 t\nq1 Q0 b 2 2 t\nq2 Q0 a 1 3 t\nq1 Q0 c 3 1 u\nq3 Q0 a 1 1 t\n";
    let qrels = parse_qrels("qrels", b"q1 0 a 1\nq2 0 a 1\n").unwrap();
    let ms = measures();
    let opts = EvalOptions::default();
    let mut scored = ScoredKeptParse::new(RunParser::new("run"), &qrels, &ms, &opts);
    let fed: Vec<bool> = run
        .split_inclusive(|&b| b == b'\n')
        .map(|line| scored.feed(&qrels, line).unwrap())
        .collect();
    assert_eq!(fed, [true, true, true, false, false]);
    assert!(scored.finish(&qrels).is_none());
}

/// A repeated docno in a topic scored early is the same error one parse gives.
#[test]
fn a_repeated_docno_in_a_scored_topic_is_one_parses_error() {
    let run = b"q1 Q0 a 1 3 t\nq1 Q0 a 2 2 t\nq2 Q0 a 1 3 t\nq3 Q0 b 1 1 t\n";
    let qrels = parse_qrels("qrels", b"q1 0 a 1\nq2 0 a 1\n").unwrap();
    let opts = EvalOptions::default();
    let expected = whole(&qrels, run, &opts);
    assert!(expected.is_err());
    let (got, batches) = kept(&qrels, run, &opts, 14);
    assert!(batches >= 1);
    assert_eq!(got, Some(expected));
}
