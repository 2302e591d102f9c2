//! A run scored while it is parsed must print what the stored path prints, byte for byte, errors
//! and exit codes included: the stored path (files streamed, the run kept whole) is the oracle,
//! itself checked against trec_eval 10.0 by the oracle tests.

use super::{TEST_COUNTS, TEST_SLICE};
use crate::formats::{open_input, Input};
use crate::trec_eval::{run_inputs, TrecEvalError};
use proptest::prelude::*;

/// A file in the temporary folder, removed when dropped.
struct TempFile(std::path::PathBuf);

impl TempFile {
    fn new(tag: &str, bytes: &[u8]) -> TempFile {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("ragscope-stream-{}-{n}-{tag}", std::process::id()));
        std::fs::write(&path, bytes).expect("temporary file");
        TempFile(path)
    }

    fn name(&self) -> String {
        self.0.to_string_lossy().into_owned()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// What the stored path prints, and what the streaming one prints with `slice`-byte slices,
/// with the topics it handed out and the runs it parsed again.
type Both = (
    Result<String, TrecEvalError>,
    Result<String, TrecEvalError>,
    (usize, usize),
);

fn both(flags: &[&str], qrels: &[u8], run: &[u8], slice: usize) -> Both {
    let (qrels, run) = (TempFile::new("qrels", qrels), TempFile::new("run", run));
    let mut args: Vec<String> = flags.iter().map(|f| f.to_string()).collect();
    args.extend([qrels.name(), run.name()]);
    let stored = run_inputs(&args, &mut |name: &str| {
        std::fs::File::open(name)
            .map(|f| Input::Stream(Box::new(f)))
            .map_err(|e| e.to_string())
    });
    TEST_SLICE.with(|s| s.set(Some(slice)));
    TEST_COUNTS.with(|c| c.set((0, 0)));
    let streamed = run_inputs(&args, &mut |name: &str| {
        open_input(name).map_err(|e| e.to_string())
    });
    TEST_SLICE.with(|s| s.set(None));
    (stored, streamed, TEST_COUNTS.with(std::cell::Cell::get))
}

/// One block of consecutive result lines of a topic.
#[derive(Debug, Clone)]
struct Block {
    topic: u8,
    docs: Vec<(u8, u8)>,
    repeat_a_docno: bool,
    long_docno: bool,
}

/// What goes between blocks.
#[derive(Debug, Clone, Copy)]
enum Between {
    Nothing,
    Blank,
    Comment,
    BadFields,
    BadScore,
}

const SCORES: [&str; 7] = ["1", "2.5", "2.5", "3", "-1", "0", "-0.0"];

/// The run's lines. A topic's later blocks (its lines interleave with another topic's) take
/// other docnos, so that they repeat none (repeats come from `repeat_a_docno`).
fn run_text(blocks: &[(Block, Between)]) -> Vec<u8> {
    let mut text = String::new();
    let mut seen = [0usize; 256];
    for (b, between) in blocks {
        let later = seen[b.topic as usize] * 40;
        seen[b.topic as usize] += 1;
        for (i, &(doc, score)) in b.docs.iter().enumerate() {
            let docno = if b.long_docno && i == 0 {
                long_docno()
            } else {
                format!("d{}", doc as usize + later)
            };
            let score = SCORES[score as usize % SCORES.len()];
            text.push_str(&format!(
                "q{} Q0 {docno} {i} {score} tag{}\n",
                b.topic, b.topic
            ));
        }
        if b.repeat_a_docno {
            if let Some(&(doc, _)) = b.docs.last() {
                let doc = doc as usize + later;
                text.push_str(&format!("q{} Q0 d{doc} 99 0.5 tag\n", b.topic));
            }
        }
        text.push_str(match between {
            Between::Nothing => "",
            Between::Blank => "\n",
            Between::Comment => "# a comment\n",
            Between::BadFields => "q1 Q0 d1 1\n",
            Between::BadScore => "q1 Q0 d1 1 high tag\n",
        });
    }
    text.into_bytes()
}

/// Past 65,535 bytes a docno's length is kept in the arena (`LONG_DOCNO`).
fn long_docno() -> String {
    format!("L{}", "x".repeat(66_000))
}

fn qrels_text(judged: &[(u8, Vec<(u8, i8)>)]) -> Vec<u8> {
    let mut text = String::new();
    for (topic, docs) in judged {
        for (doc, rel) in docs {
            text.push_str(&format!("q{topic} 0 d{doc} {rel}\n"));
        }
    }
    text.into_bytes()
}

fn block() -> impl Strategy<Value = Block> {
    (
        0u8..12,
        // distinct docnos: a repeat comes only from `repeat_a_docno`
        proptest::sample::subsequence((0u8..40).collect::<Vec<_>>(), 0..9),
        proptest::collection::vec(0u8..7, 9),
        proptest::bool::weighted(0.08),
        proptest::bool::weighted(0.03),
    )
        .prop_map(|(topic, docs, scores, repeat_a_docno, long_docno)| Block {
            topic,
            docs: docs.into_iter().zip(scores).collect(),
            repeat_a_docno,
            long_docno,
        })
}

fn between() -> impl Strategy<Value = Between> {
    prop_oneof![
        50 => Just(Between::Nothing),
        3 => Just(Between::Blank),
        3 => Just(Between::Comment),
        1 => Just(Between::BadFields),
        1 => Just(Between::BadScore),
    ]
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
        // a topic comes back in about one case in four
        blocks in proptest::collection::vec((block(), between()), 1..14).prop_map(|blocks| {
            let mut seen = [false; 256];
            blocks
                .into_iter()
                .filter(|(b, _)| !std::mem::replace(&mut seen[b.topic as usize], true) || b.docs.len() == 8)
                .collect::<Vec<_>>()
        }),
        judged in proptest::sample::subsequence((0u8..14).collect::<Vec<_>>(), 1..10)
            .prop_flat_map(|topics| {
                let n = topics.len();
                (
                    Just(topics),
                    proptest::collection::vec(
                        (
                            proptest::sample::subsequence((0u8..40).collect::<Vec<_>>(), 0..12),
                            proptest::collection::vec(-1i8..4, 12),
                        ),
                        n,
                    ),
                )
            })
            .prop_map(|(topics, docs)| {
                topics
                    .into_iter()
                    .zip(docs)
                    .map(|(t, (docs, rels))| (t, docs.into_iter().zip(rels).collect()))
                    .collect::<Vec<(u8, Vec<(u8, i8)>)>>()
            }),
        flags in 0..FLAG_SETS.len(),
        slice in prop_oneof![1usize..64, 64usize..4096],
    ) {
        let (stored, streamed, _) = both(
            FLAG_SETS[flags],
            &qrels_text(&judged),
            &run_text(&blocks),
            slice,
        );
        prop_assert_eq!(streamed, stored);
    }
}

fn contiguous_run(topics: usize, docs: usize) -> Vec<u8> {
    let blocks: Vec<(Block, Between)> = (0..topics)
        .map(|t| {
            let block = Block {
                topic: t as u8,
                docs: (0..docs as u8).map(|d| (d, d % 5)).collect(),
                repeat_a_docno: false,
                long_docno: t == 2,
            };
            (block, Between::Nothing)
        })
        .collect();
    run_text(&blocks)
}

/// Judgments of topics `0..topics`, and of q2's long docno (relevant).
fn qrels_of(topics: usize) -> Vec<u8> {
    let judged: Vec<(u8, Vec<(u8, i8)>)> = (0..topics as u8)
        .map(|t| {
            (
                t,
                (0..12).map(|d| (d * 3 % 40, (d % 4) as i8 - 1)).collect(),
            )
        })
        .collect();
    let mut text = qrels_text(&judged);
    text.extend_from_slice(format!("q2 0 {} 3\n", long_docno()).as_bytes());
    text
}

#[test]
fn a_run_written_topic_by_topic_is_scored_while_parsed() {
    let (stored, streamed, (handed_out, reparsed)) = both(
        &["-q", "-m", "all_trec"],
        &qrels_of(12),
        &contiguous_run(12, 8),
        200,
    );
    assert!(stored.is_ok(), "{stored:?}");
    assert_eq!(streamed, stored);
    // every topic but the last goes to the scorer before the end
    assert_eq!((handed_out, reparsed), (11, 0));
}

#[test]
fn a_run_whose_topics_come_back_is_parsed_again() {
    let mut run = contiguous_run(6, 5);
    run.extend_from_slice(b"q0 Q0 late 9 0.1 tag\n");
    let (stored, streamed, (_, reparsed)) = both(&["-q", "-m", "all_trec"], &qrels_of(6), &run, 64);
    assert!(stored.is_ok(), "{stored:?}");
    assert_eq!(streamed, stored);
    assert_eq!(reparsed, 1);
}

/// q3 and q10 both repeat a docno: q10 is reported, first in qid order, whether each was
/// handed out (checked when drained) or read last (checked by `finish`).
#[test]
fn a_repeated_docno_in_a_drained_topic_is_reported_in_qid_order() {
    for order in [[3u8, 1, 10, 4], [10, 1, 3, 4], [3, 1, 4, 10], [10, 1, 4, 3]] {
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
        let (stored, streamed, (handed_out, _)) = both(&[], &qrels_of(12), &run, 30);
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

/// Slices of 300 KiB are each parsed on two threads (above `MIN_CHUNK`): a topic split
/// between the threads, or between slices, is drained whole.
#[test]
fn large_slices_split_between_threads_drain_whole_topics() {
    let run = contiguous_run(200, 200);
    assert!(run.len() > 1 << 20, "{} bytes", run.len());
    let qrels = qrels_of(200);
    for flags in [&["-q", "-m", "all_trec"][..], &["-c", "-M50"][..]] {
        let (stored, streamed, (handed_out, reparsed)) = both(flags, &qrels, &run, 300 << 10);
        assert!(stored.is_ok(), "{stored:?}");
        assert_eq!(streamed, stored);
        assert!(handed_out > 150, "{handed_out} topics handed out");
        assert_eq!(reparsed, 0);
    }
}
