//! A run dict scored without TREC text: the docnos copied into one arena, each topic ranked
//! and looked up in the parsed qrels, then the engine's measure kernels.
//!
//! Why not through the run parser as files are: writing 1M lines and parsing them back cost
//! three times the scoring itself (`cargo xtask bench python`, 2026-11-29). The ranking below
//! is `ragscope_eval::measures::topic::ranked_rels` on in-memory pairs: score descending, ties
//! by docno descending (byte order, `strcmp`), rel lookups mapped as there.

use std::collections::HashMap;

use ragscope_eval::measures::topic::{NOT_POOLED, POOLED_UNJUDGED};
use ragscope_eval::measures::{RankingOptions, TopicEval};
use ragscope_eval::trec_eval::Selected;
use ragscope_eval::Qrels;

use crate::trec::{compute, TopicValues};

/// One run topic's documents: `(score, docno start, docno end)` into the arena.
pub struct RunTopicDocs {
    pub qrels_index: usize,
    pub qid: String,
    pub docs: Vec<(f64, usize, usize)>,
}

/// Run topics read from Python per batch (see `TrecEvaluator::score_dict`): small enough
/// that the workers start early, large enough that handing one over costs nothing.
pub const BATCH: usize = 32;

/// Up to [`BATCH`] run topics with their docnos, and the batch's place in the run.
pub struct Batch {
    pub index: usize,
    pub topics: Vec<RunTopicDocs>,
    pub arena: Vec<u8>,
}

impl Batch {
    pub fn new(index: usize) -> Self {
        Batch {
            index,
            topics: Vec::with_capacity(BATCH),
            arena: Vec::new(),
        }
    }
}

/// Scores one batch on this thread.
pub fn score_batch(
    qrels: &Qrels,
    batch: &Batch,
    selected: &[Selected],
    opts: &RankingOptions,
) -> Vec<TopicValues> {
    score_serial(qrels, &batch.topics, &batch.arena, selected, opts)
}

/// The qrels topics by qid, for picking the run topics worth reading.
pub fn topic_index(qrels: &Qrels) -> HashMap<String, usize> {
    qrels
        .topics()
        .iter()
        .enumerate()
        .map(|(i, t)| (t.qid().to_string(), i))
        .collect()
}

/// Scores each run topic (all are qrels topics); `arena` holds their docnos.
pub fn score(
    qrels: &Qrels,
    topics: &[RunTopicDocs],
    arena: &[u8],
    selected: &[Selected],
    opts: &RankingOptions,
) -> Vec<TopicValues> {
    // Topics are independent: many are scored on two threads, as the engine's evaluate does.
    if topics.len() >= 64 {
        let (first, second) = topics.split_at(topics.len() / 2);
        return std::thread::scope(|scope| {
            let worker = scope.spawn(|| score_serial(qrels, second, arena, selected, opts));
            let mut out = score_serial(qrels, first, arena, selected, opts);
            let rest = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            out.extend(rest);
            out
        });
    }
    score_serial(qrels, topics, arena, selected, opts)
}

fn score_serial(
    qrels: &Qrels,
    topics: &[RunTopicDocs],
    arena: &[u8],
    selected: &[Selected],
    opts: &RankingOptions,
) -> Vec<TopicValues> {
    let mut order: Vec<u32> = Vec::new();
    let mut rels: Vec<i32> = Vec::new();
    let docno = |d: &(f64, usize, usize)| &arena[d.1..d.2];
    topics
        .iter()
        .map(|topic| {
            let qt = &qrels.topics()[topic.qrels_index];
            let docs = &topic.docs;
            order.clear();
            order.extend(0..docs.len() as u32);
            // scores are finite (checked when read), so partial_cmp never fails; 0.0 == -0.0
            // as in C
            order.sort_unstable_by(|&a, &b| {
                let (a, b) = (&docs[a as usize], &docs[b as usize]);
                b.0.partial_cmp(&a.0)
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then_with(|| docno(b).cmp(docno(a)))
            });
            order.truncate(opts.max_docs);
            rels.clear();
            for &i in &order {
                let rel = match qt.rel(docno(&docs[i as usize])) {
                    None => NOT_POOLED,
                    Some(r) if r < 0 => POOLED_UNJUDGED,
                    Some(r) => r,
                };
                if opts.judged_only && rel < 0 {
                    continue;
                }
                rels.push(rel);
            }
            let t = TopicEval::new(
                &rels,
                qt.levels(),
                opts.relevance_level,
                opts.judged_only,
                opts.num_docs_in_coll,
            );
            TopicValues {
                qid: topic.qid.clone(),
                values: compute(&t, selected),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragscope_eval::trec_eval::init_measures;

    /// The direct ranking equals the run parser's path on ties, unjudged and negative rels.
    #[test]
    fn equals_the_parsed_path() {
        let qrels =
            ragscope_eval::parse_qrels("q", b"1 0 a 1\n1 0 b 0\n1 0 c -1\n1 0 e 2\n").unwrap();
        let lines = b"1 Q0 a 0 1 r\n1 Q0 b 0 2 r\n1 Q0 c 0 2 r\n1 Q0 d 0 1 r\n1 Q0 e 0 -0 r\n";
        let run = ragscope_eval::parse_run("r", lines).unwrap();
        let docs = [("a", 1.0), ("b", 2.0), ("c", 2.0), ("d", 1.0), ("e", -0.0)];
        let mut arena = Vec::new();
        let mut entries = Vec::new();
        for (d, s) in docs {
            entries.push((s, arena.len(), arena.len() + d.len()));
            arena.extend_from_slice(d.as_bytes());
        }
        let (marked, params) =
            ragscope_eval::trec_eval::mark_measures(&["all_trec".to_string()]).unwrap();
        let selected = init_measures(&marked, &params).unwrap();
        for judged_only in [false, true] {
            let opts = RankingOptions {
                judged_only,
                ..RankingOptions::default()
            };
            let topics = [RunTopicDocs {
                qrels_index: 0,
                qid: "1".into(),
                docs: entries.clone(),
            }];
            let direct = score(&qrels, &topics, &arena, &selected, &opts);
            let parsed = crate::trec::score(&qrels, Some(&run), &[], &selected, &opts);
            assert_eq!(direct[0].values.len(), parsed[0].values.len());
            for (a, b) in direct[0].values.iter().zip(&parsed[0].values) {
                assert!(a == b || (a.is_nan() && b.is_nan()), "{a} != {b}");
            }
        }
    }

    /// Qrels built from judgments (the dict path) equal the same qrels parsed from text, and
    /// a docno judged twice is the parser's duplicate error, naming the first row.
    #[test]
    fn pushed_judgments_equal_parsed_qrels() {
        let judgments = [("2", "b", 0), ("1", "a", 3), ("1", "c", -1), ("2", "a", 1)];
        let mut parser = ragscope_eval::QrelsParser::new("<qrels dict>");
        let mut text = String::new();
        for (row, (q, d, r)) in judgments.iter().enumerate() {
            parser
                .push_judgment(row as u64 + 1, q, d.as_bytes(), *r)
                .unwrap();
            text += &format!("{q} 0 {d} {r}\n");
        }
        let built = parser.finish().unwrap();
        let parsed = ragscope_eval::parse_qrels("t", text.as_bytes()).unwrap();
        assert_eq!(built.topics().len(), parsed.topics().len());
        for (b, p) in built.topics().iter().zip(parsed.topics()) {
            assert_eq!(b.qid(), p.qid());
            assert_eq!(b.levels(), p.levels());
            let (jb, jp): (Vec<_>, Vec<_>) = (b.judgments().collect(), p.judgments().collect());
            assert_eq!(jb, jp);
            for d in ["a", "b", "c", "z"] {
                assert_eq!(b.rel(d.as_bytes()), p.rel(d.as_bytes()));
            }
        }
        let mut parser = ragscope_eval::QrelsParser::new("<qrels dict>");
        parser.push_judgment(1, "1", b"a", 1).unwrap();
        parser.push_judgment(2, "1", b"b", 1).unwrap();
        let err = parser.push_judgment(3, "1", b"a", 0).unwrap_err();
        assert_eq!(
            err.kind,
            ragscope_eval::formats::ParseErrorKind::DuplicateDocno {
                qid: "1".into(),
                first_line: 1
            }
        );
        assert_eq!(err.line, 3);
    }
}
