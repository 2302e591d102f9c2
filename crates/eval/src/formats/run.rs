//! TREC run files: `qid Q0 docno rank score tag`, as trec_eval's get_trec_results.c
//! reads them (rank ignored, fields after the tag ignored, tag of the last line kept).

use super::error::{ParseError, ParseErrorKind};
use super::hash::{docno_hash, PremixedMap};
use super::lines::{is_skippable, lossy, parse_score, quote, split_fields, LineSplitter};
use super::topic_index::TopicIndex;

/// One retrieved document: its score and where its docno lives in the run's arena.
///
/// 24 bytes: a run is held as about 1.2 times its file size. The docno's hash is not kept
/// (it was, as 8 more bytes a line): it is recomputed where needed, which costs less than the
/// memory traffic of storing it.
#[derive(Debug, Clone, Copy)]
pub struct RankedDoc {
    pub score: f64,
    start: usize,
    len: u32,
    line: u32,
}

/// All results of one topic, in file order (ranking happens at evaluation time).
#[derive(Debug, Clone)]
pub struct RunTopic {
    qid: String,
    docs: Vec<RankedDoc>,
}

impl RunTopic {
    pub fn qid(&self) -> &str {
        &self.qid
    }

    pub fn docs(&self) -> &[RankedDoc] {
        &self.docs
    }
}

/// A parsed run. Docnos are kept as bytes in one arena: no allocation per line.
#[derive(Debug, Clone)]
pub struct Run {
    name: String,
    run_id: String,
    topics: Vec<RunTopic>,
    arena: Vec<u8>,
}

impl Run {
    /// The file name given to the parser (used in messages).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tag of the last result line, which is what trec_eval prints as `runid`.
    pub fn run_id(&self) -> &str {
        &self.run_id
    }

    /// Topics sorted by qid with `strcmp` order (so "10" < "2"), as trec_eval does.
    pub fn topics(&self) -> &[RunTopic] {
        &self.topics
    }

    pub fn topic(&self, qid: &str) -> Option<&RunTopic> {
        self.topics
            .binary_search_by(|t| t.qid.as_bytes().cmp(qid.as_bytes()))
            .ok()
            .map(|i| &self.topics[i])
    }

    pub fn docno(&self, doc: &RankedDoc) -> &[u8] {
        &self.arena[doc.start..doc.start + doc.len as usize]
    }

    pub fn num_results(&self) -> usize {
        self.topics.iter().map(|t| t.docs.len()).sum()
    }
}

/// Streaming run parser: `feed` byte chunks of any size, then `finish`.
pub struct RunParser {
    name: String,
    lines: LineSplitter,
    arena: Vec<u8>,
    topics: Vec<RunTopic>,
    topic_index: TopicIndex,
    run_id: Vec<u8>,
    num_results: usize,
}

impl RunParser {
    pub fn new(name: &str) -> Self {
        RunParser {
            name: name.to_string(),
            lines: LineSplitter::default(),
            arena: Vec::new(),
            topics: Vec::new(),
            topic_index: TopicIndex::default(),
            run_id: Vec::new(),
            num_results: 0,
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), ParseError> {
        #[cfg(not(target_arch = "wasm32"))]
        if chunk.len() >= super::parallel::MIN_CHUNK && super::parallel::threads() > 1 {
            if let Some(cut) = super::parallel::line_aligned_middle(chunk) {
                return self.feed_split(chunk.split_at(cut));
            }
        }
        self.feed_serial(chunk)
    }

    fn feed_serial(&mut self, chunk: &[u8]) -> Result<(), ParseError> {
        let mut lines = std::mem::take(&mut self.lines);
        let result = lines.feed(chunk, |no, line| self.line(no, line));
        self.lines = lines;
        result
    }

    /// Parses `first` here and `second` (which starts at a line boundary) on another thread
    /// with a fresh parser, then appends its topics in file order. Ranking sorts by score
    /// and docno, so the result is the same as a serial parse; errors keep file order.
    #[cfg(not(target_arch = "wasm32"))]
    fn feed_split(&mut self, (first, second): (&[u8], &[u8])) -> Result<(), ParseError> {
        let name = self.name.clone();
        let (first_result, (other, second_result)) = std::thread::scope(|scope| {
            let worker = scope.spawn(move || {
                let mut other = RunParser::new(&name);
                let result = other.feed_serial(second);
                (other, result)
            });
            let first_result = self.feed_serial(first);
            let joined = worker
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            (first_result, joined)
        });
        first_result?;
        // `first` ends with a newline, so every line of it is counted by now.
        let offset = self.lines.lines_seen();
        second_result.map_err(|mut e| {
            e.line += offset;
            e
        })?;
        self.absorb(other, offset);
        Ok(())
    }

    /// Appends the results of a parser that read the lines right after this one's.
    #[cfg(not(target_arch = "wasm32"))]
    fn absorb(&mut self, other: RunParser, line_offset: u64) {
        let arena_offset = self.arena.len();
        self.arena.extend_from_slice(&other.arena);
        for topic in other.topics {
            let index = self.topic_for(topic.qid.as_bytes());
            let docs = &mut self.topics[index].docs;
            docs.reserve(topic.docs.len());
            docs.extend(topic.docs.into_iter().map(|mut d| {
                d.start += arena_offset;
                d.line = u32::try_from(d.line as u64 + line_offset).unwrap_or(u32::MAX);
                d
            }));
        }
        if other.num_results > 0 {
            self.run_id = other.run_id;
        }
        self.num_results += other.num_results;
        self.lines.absorb(other.lines, line_offset);
    }

    pub fn finish(mut self) -> Result<Run, ParseError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.finish(|no, line| self.line(no, line))?;
        if self.num_results == 0 {
            return Err(ParseError {
                file: self.name,
                line: lines.lines_seen().max(1),
                column: 1,
                text: String::new(),
                kind: ParseErrorKind::Empty,
            });
        }
        self.topics
            .sort_unstable_by(|a, b| a.qid.as_bytes().cmp(b.qid.as_bytes()));
        let run = Run {
            name: self.name,
            run_id: lossy(&self.run_id),
            topics: self.topics,
            arena: self.arena,
        };
        check_duplicates(&run)?;
        Ok(run)
    }

    fn line(&mut self, line_no: u64, line: &[u8]) -> Result<(), ParseError> {
        if is_skippable(line) {
            return Ok(());
        }
        let (fields, count) = split_fields::<6>(line);
        if count < 6 {
            return Err(self.error(
                line_no,
                1,
                line,
                ParseErrorKind::WrongFieldCount {
                    expected: "6 fields (qid Q0 docno rank score tag)".to_string(),
                    found: count,
                },
            ));
        }
        let (qid, docno, (score_at, score_text), tag) =
            (fields[0].1, fields[2].1, fields[4], fields[5].1);
        let score = parse_score(score_text)
            .ok_or_else(|| self.error(line_no, score_at, score_text, ParseErrorKind::BadScore))?;
        let topic = self.topic_for(qid);
        let start = self.arena.len();
        self.arena.extend_from_slice(docno);
        self.topics[topic].docs.push(RankedDoc {
            score,
            start,
            len: docno.len() as u32,
            line: u32::try_from(line_no).unwrap_or(u32::MAX),
        });
        self.num_results += 1;
        self.run_id.clear();
        self.run_id.extend_from_slice(tag);
        Ok(())
    }

    /// Results of one topic are usually contiguous, so the previous qid is checked first.
    fn topic_for(&mut self, qid: &[u8]) -> usize {
        let topics = &mut self.topics;
        self.topic_index.get_or_add(qid, || {
            topics.push(RunTopic {
                qid: lossy(qid),
                docs: Vec::new(),
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

/// trec_eval refuses a docno twice in one topic. Hashes were computed while parsing, so
/// this is one probe per document in a table small enough to stay in cache; equal hashes
/// are confirmed byte for byte.
fn check_duplicates(run: &Run) -> Result<(), ParseError> {
    let mut seen: PremixedMap<usize> = PremixedMap::default();
    let mut hashes: Vec<u64> = Vec::new();
    for topic in &run.topics {
        seen.clear();
        seen.reserve(topic.docs.len());
        hashes.clear();
        hashes.extend(topic.docs.iter().map(|d| docno_hash(run.docno(d))));
        for (i, (doc, &hash)) in topic.docs.iter().zip(&hashes).enumerate() {
            let Some(&first) = seen.get(&hash) else {
                seen.insert(hash, i);
                continue;
            };
            let docno = run.docno(doc);
            let earlier = topic.docs[..i]
                .iter()
                .zip(&hashes)
                .filter(|(_, &h)| h == hash)
                .map(|(d, _)| d)
                .find(|d| run.docno(d) == docno);
            if let Some(earlier) = earlier {
                return Err(ParseError {
                    file: run.name.clone(),
                    line: doc.line as u64,
                    column: 1,
                    text: quote(docno),
                    kind: ParseErrorKind::DuplicateDocno {
                        qid: topic.qid.clone(),
                        first_line: earlier.line as u64,
                    },
                });
            }
            // a true hash collision between different docnos: keep the first entry
            let _ = first;
        }
    }
    Ok(())
}

/// Parses a whole run held in memory.
pub fn parse_run(name: &str, bytes: &[u8]) -> Result<Run, ParseError> {
    let mut parser = RunParser::new(name);
    parser.feed(bytes)?;
    parser.finish()
}
