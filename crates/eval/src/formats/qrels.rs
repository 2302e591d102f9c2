//! TREC qrels files: `qid iter docno rel`, as trec_eval's get_qrels.c reads them.
//! Relevance may be graded (0, 1, 2, ...) or negative (pooled but not judged).

use rustc_hash::FxHashMap;

use super::error::{ParseError, ParseErrorKind};
use super::hash::{docno_hash, PremixedMap};
use super::lines::{is_skippable, lossy, parse_rel, quote, split_fields, LineSplitter};
use super::topic_index::TopicIndex;

const COLLISION: u32 = u32::MAX;

/// The judgments of one topic.
#[derive(Debug, Clone)]
pub struct QrelsTopic {
    qid: String,
    judgments: Vec<(Box<[u8]>, i32)>,
    /// docno hash → index in `judgments`, or `COLLISION` when judged docnos share a hash.
    by_hash: PremixedMap<u32>,
    /// (level, number of docs at that level) for every level >= 0, ascending.
    levels: Vec<(i32, u64)>,
}

impl QrelsTopic {
    pub fn qid(&self) -> &str {
        &self.qid
    }

    /// The relevance of `docno`, or `None` if it is not in the qrels (not pooled).
    #[inline]
    pub fn rel(&self, docno: &[u8]) -> Option<i32> {
        self.rel_hashed(docno_hash(docno), docno)
    }

    /// [`rel`](Self::rel) given `docno`'s precomputed hash: one integer probe, plus a
    /// byte comparison only when the docno may be judged.
    #[inline]
    pub(crate) fn rel_hashed(&self, hash: u64, docno: &[u8]) -> Option<i32> {
        match *self.by_hash.get(&hash)? {
            COLLISION => self
                .judgments
                .iter()
                .find(|(d, _)| &**d == docno)
                .map(|(_, r)| *r),
            i => {
                let (d, r) = &self.judgments[i as usize];
                (&**d == docno).then_some(*r)
            }
        }
    }

    /// Number of judged documents (any relevance, negative included).
    pub fn num_judgments(&self) -> usize {
        self.judgments.len()
    }

    /// `(level, count)` for each non-negative relevance level present, ascending.
    pub fn levels(&self) -> &[(i32, u64)] {
        &self.levels
    }

    /// Number of documents with relevance >= `level` (trec_eval's num_rel for `-l level`).
    pub fn num_rel(&self, level: i32) -> u64 {
        self.levels
            .iter()
            .filter(|(l, _)| *l >= level)
            .map(|(_, c)| c)
            .sum()
    }

    pub fn judgments(&self) -> impl Iterator<Item = (&[u8], i32)> {
        self.judgments.iter().map(|(d, r)| (&**d, *r))
    }
}

/// Parsed qrels, topics sorted by qid in `strcmp` order.
#[derive(Debug, Clone)]
pub struct Qrels {
    name: String,
    topics: Vec<QrelsTopic>,
}

impl Qrels {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn topics(&self) -> &[QrelsTopic] {
        &self.topics
    }

    pub fn topic(&self, qid: &str) -> Option<&QrelsTopic> {
        self.topics
            .binary_search_by(|t| t.qid.as_bytes().cmp(qid.as_bytes()))
            .ok()
            .map(|i| &self.topics[i])
    }
}

struct TopicBuilder {
    qid: String,
    judgments: FxHashMap<Box<[u8]>, (i32, u64)>,
}

/// Streaming qrels parser: `feed` byte chunks of any size, then `finish`.
pub struct QrelsParser {
    name: String,
    /// Key topics by (qid, second column) for trec_eval's qrels_jg format.
    judgment_groups: bool,
    key: Vec<u8>,
    lines: LineSplitter,
    topics: Vec<TopicBuilder>,
    topic_index: TopicIndex,
    count: usize,
}

impl QrelsParser {
    pub fn new(name: &str) -> Self {
        QrelsParser {
            name: name.to_string(),
            judgment_groups: false,
            key: Vec::new(),
            lines: LineSplitter::default(),
            topics: Vec::new(),
            topic_index: TopicIndex::default(),
            count: 0,
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), ParseError> {
        let mut lines = std::mem::take(&mut self.lines);
        let result = lines.feed(chunk, |no, line| self.line(no, line));
        self.lines = lines;
        result
    }

    pub fn finish(mut self) -> Result<Qrels, ParseError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.finish(|no, line| self.line(no, line))?;
        if self.count == 0 {
            return Err(ParseError {
                file: self.name,
                line: lines.lines_seen().max(1),
                column: 1,
                text: String::new(),
                kind: ParseErrorKind::Empty,
            });
        }
        let mut topics: Vec<QrelsTopic> = self
            .topics
            .into_iter()
            .map(|t| {
                let mut counts: FxHashMap<i32, u64> = FxHashMap::default();
                for &(rel, _) in t.judgments.values() {
                    if rel >= 0 {
                        *counts.entry(rel).or_default() += 1;
                    }
                }
                let mut levels: Vec<(i32, u64)> = counts.into_iter().collect();
                levels.sort_unstable();
                let judgments: Vec<(Box<[u8]>, i32)> =
                    t.judgments.into_iter().map(|(d, (r, _))| (d, r)).collect();
                let mut by_hash: PremixedMap<u32> = PremixedMap::default();
                for (i, (docno, _)) in judgments.iter().enumerate() {
                    by_hash
                        .entry(docno_hash(docno))
                        .and_modify(|e| *e = COLLISION)
                        .or_insert(u32::try_from(i).unwrap_or(COLLISION));
                }
                QrelsTopic {
                    qid: t.qid,
                    judgments,
                    by_hash,
                    levels,
                }
            })
            .collect();
        topics.sort_unstable_by(|a, b| a.qid.as_bytes().cmp(b.qid.as_bytes()));
        Ok(Qrels {
            name: self.name,
            topics,
        })
    }

    fn line(&mut self, line_no: u64, line: &[u8]) -> Result<(), ParseError> {
        if is_skippable(line) {
            return Ok(());
        }
        let (fields, count) = split_fields::<4>(line);
        if count != 4 {
            return Err(self.error(
                line_no,
                0,
                line,
                ParseErrorKind::WrongFieldCount {
                    expected: "4 fields (qid iter docno rel)".to_string(),
                    found: count,
                },
            ));
        }
        let (qid, (docno_at, docno), (rel_at, rel_text)) = (fields[0].1, fields[2], fields[3]);
        let mut key = std::mem::take(&mut self.key);
        key.clear();
        key.extend_from_slice(qid);
        if self.judgment_groups {
            // NUL sorts first, so "qid\0group" orders by qid, then group
            key.push(0);
            key.extend_from_slice(fields[1].1);
        }
        let result = self.judgment(line_no, &key, (docno_at, docno), (rel_at, rel_text));
        self.key = key;
        result
    }

    fn judgment(
        &mut self,
        line_no: u64,
        qid: &[u8],
        (docno_at, docno): (usize, &[u8]),
        (rel_at, rel_text): (usize, &[u8]),
    ) -> Result<(), ParseError> {
        let rel = parse_rel(rel_text)
            .ok_or_else(|| self.error(line_no, rel_at, rel_text, ParseErrorKind::BadRelevance))?;
        let topic = self.topic_for(qid);
        let builder = &mut self.topics[topic];
        if let Some(&(_, first_line)) = builder.judgments.get(docno) {
            let qid = builder.qid.clone();
            return Err(self.error(
                line_no,
                docno_at,
                docno,
                ParseErrorKind::DuplicateDocno { qid, first_line },
            ));
        }
        builder.judgments.insert(docno.into(), (rel, line_no));
        self.count += 1;
        Ok(())
    }

    fn topic_for(&mut self, qid: &[u8]) -> usize {
        let topics = &mut self.topics;
        self.topic_index.get_or_add(qid, || {
            topics.push(TopicBuilder {
                qid: lossy(qid),
                judgments: FxHashMap::default(),
            });
            topics.len() - 1
        })
    }

    fn error(&self, line: u64, at: usize, text: &[u8], kind: ParseErrorKind) -> ParseError {
        ParseError {
            file: self.name.clone(),
            line,
            column: at as u64 + 1,
            text: quote(text),
            kind,
        }
    }
}

/// Judgments from several judgment groups (assessors) per topic: trec_eval's `qrels_jg`
/// format, where the second column names the group instead of being ignored.
#[derive(Debug, Clone)]
pub struct QrelsJg {
    /// `(qid, one QrelsTopic per group in strcmp order)`, topics in strcmp order.
    pub topics: Vec<(String, Vec<QrelsTopic>)>,
}

/// Parses `qid group docno rel` lines held in memory.
pub fn parse_qrels_jg(name: &str, bytes: &[u8]) -> Result<QrelsJg, ParseError> {
    let mut parser = QrelsParser::new(name);
    parser.judgment_groups = true;
    parser.feed(bytes)?;
    let qrels = parser.finish()?;
    let mut topics: Vec<(String, Vec<QrelsTopic>)> = Vec::new();
    for mut t in qrels.topics {
        let qid = t.qid.split('\0').next().unwrap_or_default().to_string();
        t.qid = qid.clone();
        match topics.last_mut() {
            Some((last, groups)) if *last == qid => groups.push(t),
            _ => topics.push((qid, vec![t])),
        }
    }
    Ok(QrelsJg { topics })
}

/// Parses whole qrels held in memory.
pub fn parse_qrels(name: &str, bytes: &[u8]) -> Result<Qrels, ParseError> {
    let mut parser = QrelsParser::new(name);
    parser.feed(bytes)?;
    parser.finish()
}
