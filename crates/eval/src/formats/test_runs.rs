//! Tests: TREC runs and qrels generated as text, with what makes parsing them hard (topics
//! that come back, repeated docnos, bad lines, docnos past 65,535 bytes), and files to hold them.

use proptest::prelude::*;

/// A file in the temporary folder, removed when dropped.
pub(crate) struct TempFile(std::path::PathBuf);

impl TempFile {
    pub(crate) fn new(tag: &str, bytes: &[u8]) -> TempFile {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("ragscope-stream-{}-{n}-{tag}", std::process::id()));
        std::fs::write(&path, bytes).expect("temporary file");
        TempFile(path)
    }

    pub(crate) fn name(&self) -> String {
        self.0.to_string_lossy().into_owned()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// One block of consecutive result lines of a topic.
#[derive(Debug, Clone)]
pub(crate) struct Block {
    pub topic: u8,
    pub docs: Vec<(u8, u8)>,
    pub repeat_a_docno: bool,
    pub long_docno: bool,
}

/// What goes between blocks.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Between {
    Nothing,
    Blank,
    Comment,
    BadFields,
    BadScore,
}

const SCORES: [&str; 7] = ["1", "2.5", "2.5", "3", "-1", "0", "-0.0"];

/// The run's lines. A topic's later blocks (its lines interleave with another topic's) take
/// other docnos, so that they repeat none (repeats come from `repeat_a_docno`).
pub(crate) fn run_text(blocks: &[(Block, Between)]) -> Vec<u8> {
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
pub(crate) fn long_docno() -> String {
    format!("L{}", "x".repeat(66_000))
}

pub(crate) fn qrels_text(judged: &[(u8, Vec<(u8, i8)>)]) -> Vec<u8> {
    let mut text = String::new();
    for (topic, docs) in judged {
        for (doc, rel) in docs {
            text.push_str(&format!("q{topic} 0 d{doc} {rel}\n"));
        }
    }
    text.into_bytes()
}

pub(crate) fn block() -> impl Strategy<Value = Block> {
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

pub(crate) fn between() -> impl Strategy<Value = Between> {
    prop_oneof![
        50 => Just(Between::Nothing),
        3 => Just(Between::Blank),
        3 => Just(Between::Comment),
        1 => Just(Between::BadFields),
        1 => Just(Between::BadScore),
    ]
}

/// Blocks of up to 14 topics; a topic comes back in about one case in four.
pub(crate) fn blocks() -> impl Strategy<Value = Vec<(Block, Between)>> {
    proptest::collection::vec((block(), between()), 1..14).prop_map(|blocks| {
        let mut seen = [false; 256];
        blocks
            .into_iter()
            .filter(|(b, _)| {
                !std::mem::replace(&mut seen[b.topic as usize], true) || b.docs.len() == 8
            })
            .collect::<Vec<_>>()
    })
}

/// Judgments of up to 10 of the topics q0..q13.
pub(crate) fn judged() -> impl Strategy<Value = Vec<(u8, Vec<(u8, i8)>)>> {
    proptest::sample::subsequence((0u8..14).collect::<Vec<_>>(), 1..10)
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
        })
}

/// `topics` topics of `docs` results each, written topic by topic; q2 has a long docno.
pub(crate) fn contiguous_run(topics: usize, docs: usize) -> Vec<u8> {
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
pub(crate) fn qrels_of(topics: usize) -> Vec<u8> {
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
