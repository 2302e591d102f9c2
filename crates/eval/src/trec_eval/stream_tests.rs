//! A run scored while it is parsed must print what the stored path prints, byte for byte, errors
//! and exit codes included: the stored path (files streamed, the run kept whole) is the oracle,
//! itself checked against trec_eval 10.0 by the oracle tests.

use crate::formats::handing_out::{TEST_COUNTS, TEST_ONE_THREAD, TEST_SLICE};
use crate::formats::test_runs::*;
use crate::formats::{open_input, Input};
use crate::trec_eval::{run_inputs, TrecEvalError};
use proptest::prelude::*;

/// What the stored path prints, and what the streaming one prints with `slice`-byte slices,
/// with the topics it handed out and the runs it parsed again.
type Both = (
    Result<String, TrecEvalError>,
    Result<String, TrecEvalError>,
    (usize, usize),
);

/// `one_thread`: everything on this thread, as with `RAGSCOPE_THREADS=1`.
fn both(flags: &[&str], qrels: &[u8], run: &[u8], (slice, one_thread): (usize, bool)) -> Both {
    let (qrels, run) = (TempFile::new("qrels", qrels), TempFile::new("run", run));
    let mut args: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    args.extend([qrels.name(), run.name()]);
    let stored = run_inputs(&args, &mut |name: &str| {
        std::fs::File::open(name)
            .map(|f| Input::Stream(Box::new(f)))
            .map_err(|e| e.to_string())
    });
    TEST_SLICE.with(|s| s.set(Some(slice)));
    TEST_ONE_THREAD.with(|o| o.set(one_thread));
    TEST_COUNTS.with(|c| c.set((0, 0)));
    let streamed = run_inputs(&args, &mut |name: &str| {
        open_input(name).map_err(|e| e.to_string())
    });
    TEST_SLICE.with(|s| s.set(None));
    TEST_ONE_THREAD.with(|o| o.set(false));
    (stored, streamed, TEST_COUNTS.with(std::cell::Cell::get))
}

const FLAG_SETS: [&[&str]; 8] = [
    &[],
    &["-q"],
    &["-c", "-q", "-m", "all_trec"],
    &["-c", "-m", "all_trec", "-M3", "-J"],
    &["-c", "-l2", "-q", "-m", "relstring.5", "-m", "ndcg_cut.3"],
    &["-c", "-m", "map", "-m", "P.2", "-n"],
    &["-q", "-R", "qrels_jg", "-m", "map"],
    &["-m", "all_prefs"],
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn scored_while_parsed_prints_what_the_stored_run_prints(
        blocks in blocks(),
        judged in judged(),
        flags in 0..FLAG_SETS.len(),
        slice in prop_oneof![1usize..64, 64usize..4096],
        one_thread in any::<bool>(),
    ) {
        let (stored, streamed, _) = both(
            FLAG_SETS[flags],
            &qrels_text(&judged),
            &run_text(&blocks),
            (slice, one_thread),
        );
        prop_assert_eq!(streamed, stored);
    }
}

#[test]
fn a_run_written_topic_by_topic_is_scored_while_parsed() {
    for one_thread in [false, true] {
        let (stored, streamed, (handed_out, reparsed)) = both(
            &["-q", "-m", "all_trec"],
            &qrels_of(12),
            &contiguous_run(12, 8),
            (200, one_thread),
        );
        assert!(stored.is_ok(), "{stored:?}");
        assert_eq!(streamed, stored);
        // every topic but the last goes to the scorer before the end
        assert_eq!((handed_out, reparsed), (11, 0));
    }
}

#[test]
fn a_run_whose_topics_come_back_is_parsed_again() {
    let mut run = contiguous_run(6, 5);
    run.extend_from_slice(b"q0 Q0 late 9 0.1 tag\n");
    for one_thread in [false, true] {
        let flags = ["-q", "-m", "all_trec"];
        let (stored, streamed, (_, reparsed)) = both(&flags, &qrels_of(6), &run, (64, one_thread));
        assert!(stored.is_ok(), "{stored:?}");
        assert_eq!(streamed, stored);
        assert_eq!(reparsed, 1);
    }
}

/// q3 and q10 both repeat a docno: q10 is reported, first in qid order, whether each was
/// handed out (checked when drained) or read last (checked by `finish`).
#[test]
fn a_repeated_docno_in_a_drained_topic_is_reported_in_qid_order() {
    let orders = [[3u8, 1, 10, 4], [10, 1, 3, 4], [3, 1, 4, 10], [10, 1, 4, 3]];
    for (order, one_thread) in orders.into_iter().zip([false, true, false, true]) {
        let mut run = Vec::new();
        for topic in order {
            let block = Block {
                topic,
                docs: (0..5).map(|d| (d, d)).collect(),
                repeat_a_docno: topic == 3 || topic == 10,
                long_docno: false,
            };
            run.extend(run_text(&[(block, Between::Nothing)]));
        }
        let (stored, streamed, (handed_out, _)) = both(&[], &qrels_of(12), &run, (30, one_thread));
        let message = stored
            .as_ref()
            .expect_err("a repeated docno")
            .message
            .clone();
        assert!(message.contains("for topic 'q10'"), "{order:?}: {message}");
        assert_eq!(streamed, stored, "{order:?}");
        assert_eq!(handed_out, 3, "{order:?}");
    }
}

/// Slices of 300 KiB: scored on this thread, each is parsed on two threads (above
/// `MIN_CHUNK`), and a topic split between the threads, or between slices, is drained whole;
/// with a scoring thread, the parse takes them whole on one.
#[test]
fn large_slices_split_between_threads_drain_whole_topics() {
    let run = contiguous_run(200, 200);
    assert!(run.len() > 1 << 20, "{} bytes", run.len());
    let qrels = qrels_of(200);
    let cases = [&["-q", "-m", "all_trec"][..], &["-c", "-M50"][..]];
    for (flags, one_thread) in cases.into_iter().zip([true, false]) {
        let slice = (300 << 10, one_thread);
        let (stored, streamed, (handed_out, reparsed)) = both(flags, &qrels, &run, slice);
        assert!(stored.is_ok(), "{stored:?}");
        assert_eq!(streamed, stored);
        assert!(handed_out > 150, "{handed_out} topics handed out");
        assert_eq!(reparsed, 0);
    }
}
