//! TREC qrels files: `qid iter docno rel`, as trec_eval's get_qrels.c reads them.
//! Relevance may be graded (0, 1, 2, ...) or negative (pooled but not judged).
//!
//! Docnos of a topic live in one byte arena (no allocation per judgment: boxing every
//! docno was ~19% of a qrels parse, in malloc), found through a table keyed by the docno's
//! premixed hash that is built while parsing and doubles as the duplicate check.

use super::error::{ParseError, ParseErrorKind};
use super::hash::{bytes_eq, docno_hash, prefetch, push_bytes, DocnoIndex};
use super::lines::{
    block_fields, is_skippable, lossy, parse_plain_rel, parse_rel, quote, split_fields,
    LineSplitter,
};
use super::topic_index::TopicIndex;

/// One judgment: where its docno lies in the topic's arena, and its relevance.
#[derive(Debug, Clone, Copy)]
struct Judgment {
    start: u32,
    len: u32,
    rel: i32,
}

/// The judgments of one topic.
#[derive(Debug, Clone)]
pub struct QrelsTopic {
    qid: String,
    /// Every judged docno of the topic, back to back.
    arena: Vec<u8>,
    /// In file order.
    judgments: Vec<Judgment>,
    /// docno hash → index in `judgments`.
    by_hash: DocnoIndex,
    /// (level, number of docs at that level) for every level >= 0, ascending.
    levels: Vec<(i32, u64)>,
}

impl QrelsTopic {
    pub fn qid(&self) -> &str {
        &self.qid
    }

    /// The relevance of `docno`, or `None` if it is not in the qrels (not pooled): one
    /// integer probe, plus a byte comparison only when the docno may be judged.
    #[inline]
    pub fn rel(&self, docno: &[u8]) -> Option<i32> {
        self.position(docno_hash(docno), docno)
            .map(|i| self.judgments[i as usize].rel)
    }

    /// [`rel`](Self::rel) of a docno whose [`docno_hash`] the caller already has.
    #[inline]
    pub(crate) fn rel_hashed(&self, hash: u64, docno: &[u8]) -> Option<i32> {
        self.position(hash, docno)
            .map(|i| self.judgments[i as usize].rel)
    }

    /// Starts bringing the topic's table, judgments and docnos into the cache, for a caller
    /// about to look many docnos up after some other work (ranking): the table is cold by
    /// then, and its first probes were a quarter of the lookups' time.
    #[inline]
    pub fn prefetch(&self) {
        self.by_hash.prefetch();
        prefetch(&self.judgments);
        prefetch(&self.arena);
    }

    /// The index in `judgments` of `docno` (whose hash is `hash`).
    #[inline]
    fn position(&self, hash: u64, docno: &[u8]) -> Option<u32> {
        self.by_hash.find(hash, |i| {
            self.judgments
                .get(i as usize)
                .is_some_and(|j| bytes_eq(self.docno(j), docno))
        })
    }

    #[inline]
    fn docno(&self, j: &Judgment) -> &[u8] {
        &self.arena[j.start as usize..j.start as usize + j.len as usize]
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

    /// `(docno, relevance)` in file order.
    pub fn judgments(&self) -> impl Iterator<Item = (&[u8], i32)> {
        self.judgments.iter().map(|j| (self.docno(j), j.rel))
    }

    /// A topic with room for what `like` (the topic before it) holds: qrels topics are
    /// mostly of one size, and growing the lists and the index by doubling was ~3 % of a
    /// qrels parse (`count_levels` gives back what is not used).
    fn new(qid: String, like: Option<&QrelsTopic>) -> Self {
        let (judgments, bytes) = like.map_or((0, 0), |t| (t.judgments.len(), t.arena.len()));
        let mut by_hash = DocnoIndex::sparse();
        if judgments > 0 {
            by_hash.reset(judgments);
        }
        QrelsTopic {
            qid,
            arena: Vec::with_capacity(bytes),
            judgments: Vec::with_capacity(judgments),
            by_hash,
            levels: Vec::new(),
        }
    }

    /// Adds a judgment, or returns the index of the earlier judgment of the same docno.
    fn add(&mut self, docno: &[u8], rel: i32) -> Result<(), usize> {
        let index = self.judgments.len();
        // u32 offsets keep a judgment at 12 bytes; a topic with 4 GiB of docnos (or 4 billion
        // judgments) is far beyond any qrels, and is refused by the caller rather than wrapped.
        let (Ok(start), Ok(len), Some(i)) = (
            u32::try_from(self.arena.len()),
            u32::try_from(docno.len()),
            u32::try_from(index).ok().filter(|&i| i < u32::MAX - 1),
        ) else {
            return Err(usize::MAX);
        };
        let (judgments, arena) = (&self.judgments, &self.arena);
        let docno_of = |p: u32| {
            judgments
                .get(p as usize)
                .map(|j| &arena[j.start as usize..j.start as usize + j.len as usize])
        };
        let earlier = self.by_hash.find_or_insert(
            docno_hash(docno),
            i,
            |p| docno_of(p).is_some_and(|d| bytes_eq(d, docno)),
            |p| docno_of(p).map_or(0, docno_hash),
        );
        if let Some(earlier) = earlier {
            return Err(earlier as usize);
        }
        push_bytes(&mut self.arena, docno);
        self.judgments.push(Judgment { start, len, rel });
        Ok(())
    }

    /// Counts the levels once every judgment is in.
    fn count_levels(&mut self) {
        let mut levels: Vec<(i32, u64)> = Vec::new();
        for j in &self.judgments {
            if j.rel < 0 {
                continue;
            }
            match levels.iter_mut().find(|(l, _)| *l == j.rel) {
                Some((_, c)) => *c += 1,
                None => levels.push((j.rel, 1)),
            }
        }
        levels.sort_unstable();
        self.levels = levels;
        self.arena.shrink_to_fit();
        self.judgments.shrink_to_fit();
        self.by_hash.shrink_to_fit();
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

    /// The topics, owned (no copy of their judgments).
    pub fn into_topics(self) -> Vec<QrelsTopic> {
        self.topics
    }

    pub fn topic(&self, qid: &str) -> Option<&QrelsTopic> {
        self.topics
            .binary_search_by(|t| t.qid.as_bytes().cmp(qid.as_bytes()))
            .ok()
            .map(|i| &self.topics[i])
    }
}

/// The line of each judgment of a topic, kept as stretches of consecutive lines: qrels are
/// written topic by topic, so a topic mostly has one stretch, where a line number per
/// judgment took 8 bytes each (2 MB for the benchmark's 250,000 judgments, written once and
/// read only for an error message).
#[derive(Default)]
struct JudgmentLines {
    /// `(first judgment, its line)`, ascending.
    stretches: Vec<(usize, u64)>,
    /// Judgments so far.
    len: usize,
    /// The line the next judgment continues the last stretch from.
    next_line: u64,
}

impl JudgmentLines {
    fn push(&mut self, line: u64) {
        if self.stretches.is_empty() || line != self.next_line {
            self.stretches.push((self.len, line));
        }
        self.len += 1;
        self.next_line = line + 1;
    }

    /// The line of judgment `index`, if there is one.
    fn get(&self, index: usize) -> Option<u64> {
        if index >= self.len {
            return None;
        }
        let after = self.stretches.partition_point(|&(first, _)| first <= index);
        let (first, line) = self.stretches[after.checked_sub(1)?];
        Some(line + (index - first) as u64)
    }
}

/// Streaming qrels parser: `feed` byte chunks of any size, then `finish`.
pub struct QrelsParser {
    name: String,
    /// Key topics by (qid, second column) for trec_eval's qrels_jg format.
    judgment_groups: bool,
    key: Vec<u8>,
    lines: LineSplitter,
    topics: Vec<QrelsTopic>,
    /// `lines_of[t]`: the lines of topic `t`'s judgments, for duplicate messages only.
    lines_of: Vec<JudgmentLines>,
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
            lines_of: Vec::new(),
            topic_index: TopicIndex::default(),
            count: 0,
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), ParseError> {
        let mut lines = std::mem::take(&mut self.lines);
        let result = lines.feed_block(chunk, self, Self::line, Self::block);
        self.lines = lines;
        result
    }

    /// The complete lines of `block` (see `RunParser::block`): `qid iter docno rel` lines
    /// with a plain integer relevance in one pass over their bytes, without copying the qid;
    /// every other line, and judgment-group keys, through [`line`](Self::line).
    fn block(&mut self, first_line: u64, block: &[u8]) -> Result<u64, ParseError> {
        let mut at = 0;
        let mut line_no = first_line;
        while at < block.len() {
            let fast = match self.judgment_groups {
                true => None,
                false => block_fields::<4>(block, at, true).and_then(|(fields, next)| {
                    let (start, end) = fields[3];
                    Some((fields, next, parse_plain_rel(&block[start..end])?))
                }),
            };
            match fast {
                Some((fields, next, rel)) => {
                    let (qid, (docno_start, docno_end)) = (fields[0], fields[2]);
                    self.add_judgment(
                        line_no,
                        &block[qid.0..qid.1],
                        (docno_start - at, &block[docno_start..docno_end]),
                        rel,
                    )?;
                    at = next;
                }
                None => {
                    let end = memchr::memchr(b'\n', &block[at..]).map_or(block.len(), |i| at + i);
                    self.line(line_no, &block[at..end])?;
                    at = end + 1;
                }
            }
            line_no += 1;
        }
        Ok(line_no - first_line)
    }

    /// Adds one judgment held in memory rather than as a line (callers with judgments as data,
    /// such as the Python package's dicts: writing TREC text to parse it back cost more than
    /// the judgments themselves). `row` (1-based) stands for the line in error messages; a
    /// docno judged twice in a topic is the same [`ParseErrorKind::DuplicateDocno`] error.
    /// `qid` and `docno` are taken as they are: the caller checks what a line could not hold.
    pub fn push_judgment(
        &mut self,
        row: u64,
        qid: &str,
        docno: &[u8],
        rel: i32,
    ) -> Result<(), ParseError> {
        self.add_judgment(row, qid.as_bytes(), (0, docno), rel)
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
        drop(self.lines_of);
        let mut topics = self.topics;
        topics.iter_mut().for_each(QrelsTopic::count_levels);
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
        self.add_judgment(line_no, qid, (docno_at, docno), rel)
    }

    fn add_judgment(
        &mut self,
        line_no: u64,
        qid: &[u8],
        (docno_at, docno): (usize, &[u8]),
        rel: i32,
    ) -> Result<(), ParseError> {
        let topic = self.topic_for(qid);
        match self.topics[topic].add(docno, rel) {
            Ok(()) => {
                self.lines_of[topic].push(line_no);
                self.count += 1;
                Ok(())
            }
            Err(earlier) => {
                let qid = self.topics[topic].qid.clone();
                let Some(first_line) = self.lines_of[topic].get(earlier) else {
                    return Err(self.error(
                        line_no,
                        docno_at,
                        docno,
                        ParseErrorKind::TooLarge {
                            what: format!("the judgments of topic {qid}"),
                        },
                    ));
                };
                Err(self.error(
                    line_no,
                    docno_at,
                    docno,
                    ParseErrorKind::DuplicateDocno { qid, first_line },
                ))
            }
        }
    }

    fn topic_for(&mut self, qid: &[u8]) -> usize {
        let topics = &mut self.topics;
        let lines_of = &mut self.lines_of;
        self.topic_index.get_or_add(qid, || {
            let topic = QrelsTopic::new(lossy(qid), topics.last());
            lines_of.push(JudgmentLines::default());
            topics.push(topic);
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
