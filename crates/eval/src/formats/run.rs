//! TREC run files: `qid Q0 docno rank score tag`, as trec_eval's get_trec_results.c
//! reads them (rank ignored, fields after the tag ignored, tag of the last line kept).

use super::error::{ParseError, ParseErrorKind};
use super::hash::{bytes_eq, docno_hash, push_bytes, DocnoIndex, TagSet};
use super::lines::{
    block_fields, is_skippable, lossy, parse_plain_decimal_at, parse_score, quote, split_fields,
    LineSplitter,
};
use super::topic_index::TopicIndex;

/// One retrieved document: its score and where its docno lives in the run's arena.
///
/// 16 bytes: the docno's offset in the arena and its length share one word (`place`), and
/// its line is kept in the topic's [`Stretch`]es (only error messages need it). At 24 bytes
/// (offset, length, line) the entries were 40 % of a `trec-eval` call's peak memory; 16 took
/// its peak RSS from 1.70 to 1.47 times the run file and its page faults down 15 %. The docno's
/// hash is not in here (it was, as 8 more bytes a line); its low 32 bits are kept beside, in
/// [`RunTopic`]'s `hashes`, since runs are scored topic by topic as they are parsed (natively
/// and in the browser's two workers), so the 4 bytes a line of a topic are written and read
/// back while in cache. Hashing each docno once instead of twice: the wasm engine's warm
/// `evaluate()` 72-81 -> 67-68.5 ms (Node, a scratch script not kept, 6 alternating pairs, 2026-11-25; wasm has no
/// 64x64->128-bit multiply, so its hash costs more), natively no change (farm-bench, CPU
/// ratio 0.9995).
#[derive(Debug, Clone, Copy)]
pub struct RankedDoc {
    pub score: f64,
    /// `offset << LEN_BITS | length`; a length of `LONG_DOCNO` or more is `LONG_DOCNO`
    /// here and written in full (8 bytes) before the docno in the arena. Offsets have 48 bits:
    /// an arena of 256 TiB is beyond any machine's memory (and wasm32's 4 GiB).
    place: u64,
}

/// Writes `docno` at the end of `arena` (a long one after its 8-byte length) and returns its
/// place, as [`docno_at`] reads it.
#[inline(always)]
fn put_docno(arena: &mut Vec<u8>, docno: &[u8]) -> u64 {
    let len = docno.len() as u64;
    let place = (arena.len() as u64) << LEN_BITS | len.min(LONG_DOCNO);
    if len >= LONG_DOCNO {
        arena.extend_from_slice(&len.to_le_bytes());
    }
    push_bytes(arena, docno);
    place
}

/// The docno that [`put_docno`] wrote at `place` in `arena`.
#[inline]
fn docno_at(arena: &[u8], place: u64) -> &[u8] {
    let at = (place >> LEN_BITS) as usize;
    let short = place & LONG_DOCNO;
    if short != LONG_DOCNO {
        return &arena[at..at + short as usize];
    }
    let mut len = [0u8; 8];
    len.copy_from_slice(&arena[at..at + 8]);
    let len = u64::from_le_bytes(len) as usize;
    &arena[at + 8..at + 8 + len]
}

/// Results of a topic read from consecutive lines: `docs[first]` was read from `line`
/// (saturating at `u32::MAX`), the next result from the next line, and so on. A run written
/// topic by topic has one per topic (one per stretch of lines between comments or blank
/// lines), so keeping lines this way costs nothing where a line number per result cost 4
/// bytes each; a run whose topics alternate line by line has one per result (8 bytes).
#[derive(Debug, Clone, Copy)]
struct Stretch {
    first: u32,
    line: u32,
}

const LEN_BITS: u32 = 16;
const LONG_DOCNO: u64 = (1 << LEN_BITS) - 1;

/// All results of one topic, in file order (ranking happens at evaluation time).
#[derive(Debug, Clone)]
pub struct RunTopic {
    qid: String,
    docs: Vec<RankedDoc>,
    /// The low 32 bits of each result's [`docno_hash`], beside `docs`: computed once while
    /// parsing (the duplicate check hashes every docno) and used again where the topic is
    /// ranked to look its documents up in the qrels (`measures::topic::ranked_rels`), which
    /// recomputed them. Every table that takes a docno hash keeps only these bits.
    hashes: Vec<u32>,
    /// Where the lines of `docs` start, ascending by `first` (the first at 0 when any).
    stretches: Vec<Stretch>,
    /// Whether the duplicate check at the end must look at this topic: its results were not
    /// all read in one stretch (see `RunParser::track`), or two of them may share a docno.
    unchecked: bool,
    /// Handed out by [`RunParser::drain`]: only its qid is left here.
    drained: bool,
}

impl RunTopic {
    pub fn qid(&self) -> &str {
        &self.qid
    }

    pub fn docs(&self) -> &[RankedDoc] {
        &self.docs
    }

    /// The docno hash of `docs()[index]` (its low 32 bits, all that the qrels' tables use).
    #[inline]
    pub(crate) fn hash(&self, index: usize) -> u64 {
        u64::from(self.hashes[index])
    }

    /// The 1-based line of the file `docs()[index]` was read from (saturating at `u32::MAX`).
    pub fn line(&self, index: usize) -> u64 {
        let after = self
            .stretches
            .partition_point(|s| s.first as usize <= index);
        match after.checked_sub(1).map(|k| self.stretches[k]) {
            Some(s) => {
                (u64::from(s.line) + (index - s.first as usize) as u64).min(u64::from(u32::MAX))
            }
            None => 0,
        }
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

/// Runs are equal when they hold what a parse of the same lines gives: the name, the last
/// line's tag, and topic by topic (in order) each result's docno, score (by its bits) and line.
/// Not how they lie in memory: where docnos sit in the arena, or where a stretch of lines
/// starts, differ with how the bytes were fed (a native parse of a large slice on two threads
/// starts a stretch where the second thread's part begins).
impl PartialEq for Run {
    fn eq(&self, other: &Run) -> bool {
        let same_topic = |a: &RunTopic, b: &RunTopic| {
            a.qid == b.qid
                && a.docs.len() == b.docs.len()
                && a.docs.iter().zip(&b.docs).enumerate().all(|(i, (x, y))| {
                    x.score.to_bits() == y.score.to_bits()
                        && self.docno(x) == other.docno(y)
                        && a.line(i) == b.line(i)
                })
        };
        self.name == other.name
            && self.run_id == other.run_id
            && self.topics.len() == other.topics.len()
            && self
                .topics
                .iter()
                .zip(&other.topics)
                .all(|(a, b)| same_topic(a, b))
    }
}

impl Run {
    /// A run with no results, named `name` (no parse gives one: an empty file is an error):
    /// what the app's worker holds for a run it scored in two places, until it has parsed the
    /// file whole.
    pub fn empty(name: &str) -> Run {
        Run {
            name: name.to_string(),
            run_id: String::new(),
            topics: Vec::new(),
            arena: Vec::new(),
        }
    }

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

    #[inline]
    pub fn docno(&self, doc: &RankedDoc) -> &[u8] {
        docno_at(&self.arena, doc.place)
    }

    pub fn num_results(&self) -> usize {
        self.topics.iter().map(|t| t.docs.len()).sum()
    }

    /// The docno bytes, for a parser to reuse (see [`RunParser::drain`]).
    pub fn into_arena(self) -> Vec<u8> {
        self.arena
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
    /// Room for results a first topic gets (see `topic_for`).
    depth_hint: usize,
    /// The topic whose results are being read in one stretch, and the hashes of its docnos.
    stretch: Option<usize>,
    stretch_docnos: TagSet,
    /// The topic of the last result and the line after it: a result of another topic, or
    /// after a skipped line, starts a new [`Stretch`].
    line_topic: usize,
    next_line: u64,
    /// The topic of the last result read (after a split parse too), which [`drain`] keeps:
    /// its next line may add to it.
    ///
    /// [`drain`]: Self::drain
    current: Option<usize>,
    /// Topics before this one were all drained, or are `current`.
    undrained_from: usize,
    /// A drained topic got another result (a run whose topics interleave).
    came_back: bool,
    /// Of the repeated docnos found in drained topics, the one of the topic first in qid
    /// order, with that qid; `finish` reports it unless a topic left has a smaller qid.
    first_duplicate: Option<Box<(String, ParseError)>>,
    /// The arena of the topics [`feed_and_score`](Self::feed_and_score) scored last, reused.
    spare_arena: Vec<u8>,
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
            depth_hint: 0,
            stretch: None,
            stretch_docnos: TagSet::default(),
            line_topic: usize::MAX,
            next_line: 0,
            current: None,
            undrained_from: 0,
            came_back: false,
            first_duplicate: None,
            spare_arena: Vec::new(),
        }
    }

    /// Makes room for the docnos of a run file of `bytes` bytes, when its size is known: a
    /// third of it (docnos are 18–26 % of the lines of typical runs; a quarter was too little
    /// for the benchmark's, and the one doubling past it cost 11 MB of peak memory). Growing
    /// the arena by doubling copied it and touched twice its memory (the `memmove` and zeroed
    /// pages were 8 % of a `trec-eval` profile); room never written costs no memory.
    pub fn expect_bytes(&mut self, bytes: usize) {
        // a size too large to reserve (wasm32's 4 GiB) is no error: the arena then grows
        let _ = self.arena.try_reserve(bytes / 3);
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

    /// [`feed`](Self::feed) on this thread whatever the chunk's size.
    pub(crate) fn feed_serial(&mut self, chunk: &[u8]) -> Result<(), ParseError> {
        let mut lines = std::mem::take(&mut self.lines);
        let result = lines.feed_block(chunk, self, Self::line, Self::block);
        self.lines = lines;
        result
    }

    /// The complete lines of `block`, the first numbered `first_line`; returns how many. A
    /// line of the common shape (six or more fields, a plain decimal score) is split in one
    /// pass over its bytes, without finding its end first, and its tag is copied only if it is
    /// the block's last: this was 35 % of a `trec-eval` profile as separate newline search,
    /// field split, score parse and per-line tag copy. Every other line (comments, blank
    /// lines, exponents, errors) goes through [`line`](Self::line), so what is accepted and
    /// every error message are the general path's.
    fn block(&mut self, first_line: u64, block: &[u8]) -> Result<u64, ParseError> {
        let mut at = 0;
        let mut line_no = first_line;
        let mut tag: Option<(usize, usize)> = None;
        while at < block.len() {
            let fast = block_fields::<6>(block, at, false).and_then(|(fields, next)| {
                let (start, end) = fields[4];
                Some((fields, next, parse_plain_decimal_at(block, start, end)?))
            });
            match fast {
                Some((fields, next, score)) => {
                    let topic = self.topic_for(&block[fields[0].0..fields[0].1]);
                    let docno = &block[fields[2].0..fields[2].1];
                    self.push(topic, docno, score, line_no);
                    tag = Some(fields[5]);
                    at = next;
                }
                None => {
                    if let Some((start, end)) = tag.take() {
                        self.set_run_id(&block[start..end]);
                    }
                    at = self.other_line(line_no, block, at)?;
                }
            }
            line_no += 1;
        }
        if let Some((start, end)) = tag {
            self.set_run_id(&block[start..end]);
        }
        Ok(line_no - first_line)
    }

    /// The line of `block` at `at` that the fast path did not take, through
    /// [`line`](Self::line); returns where the next line starts. Out of line (see
    /// [`last_newline`](super::lines::last_newline)): rare in runs.
    #[cold]
    #[inline(never)]
    fn other_line(&mut self, line_no: u64, block: &[u8], at: usize) -> Result<usize, ParseError> {
        let end = memchr::memchr(b'\n', &block[at..]).map_or(block.len(), |i| at + i);
        self.line(line_no, &block[at..end])?;
        Ok(end + 1)
    }

    /// The duplicate check of a topic read in one stretch (as runs are written), done here while
    /// its docno is in cache: as a separate pass over all results at the end it was 8–10 % of a
    /// `trec-eval` profile, mostly waiting for memory. A topic whose results come in several
    /// stretches (interleaved topics, or one split between two parsing threads), or whose
    /// docno hashes meet, is left to that pass (`unchecked`), which reports what it finds in
    /// the same order and words as before; for every other topic it has nothing to find.
    #[inline]
    fn track(&mut self, topic: usize, hash: u32) {
        let results = self.topics[topic].docs.len();
        if self.stretch != Some(topic) {
            if results > 0 {
                self.topics[topic].unchecked = true;
                self.stretch = None;
                return;
            }
            self.stretch = Some(topic);
            // sized like the topic's list: the length of the topic before it
            self.stretch_docnos
                .reset(self.topics[topic].docs.capacity());
        }
        let fits = u32::try_from(results).is_ok_and(|i| i < u32::MAX - 1);
        // equal 32-bit tags are enough to hand the topic to the exact check
        if !fits || self.stretch_docnos.insert(u64::from(hash)) {
            self.topics[topic].unchecked = true;
        }
    }

    #[inline(always)]
    fn push(&mut self, topic: usize, docno: &[u8], score: f64, line_no: u64) {
        let hash = docno_hash(docno) as u32;
        self.track(topic, hash);
        let place = put_docno(&mut self.arena, docno);
        let list = &mut self.topics[topic];
        if topic != self.line_topic || line_no != self.next_line {
            self.came_back |= list.drained;
            self.current = Some(topic);
            // past u32::MAX results (an error at the end) the last stretch goes on
            if let Ok(first) = u32::try_from(list.docs.len()) {
                list.stretches.push(Stretch {
                    first,
                    line: u32::try_from(line_no).unwrap_or(u32::MAX),
                });
            }
        }
        self.line_topic = topic;
        self.next_line = line_no + 1;
        list.docs.push(RankedDoc { score, place });
        list.hashes.push(hash);
        self.num_results += 1;
    }

    fn set_run_id(&mut self, tag: &[u8]) {
        self.run_id.clear();
        self.run_id.extend_from_slice(tag);
    }

    /// Parses `first` here and `second` (which starts at a line boundary) on another thread
    /// with a fresh parser, then appends its topics in file order. Ranking sorts by score
    /// and docno, so the result is the same as a serial parse; errors keep file order.
    #[cfg(not(target_arch = "wasm32"))]
    fn feed_split(&mut self, (first, second): (&[u8], &[u8])) -> Result<(), ParseError> {
        let name = self.name.clone();
        let depth_hint = self.topics.last().map_or(self.depth_hint, |t| t.docs.len());
        let (first_result, (other, second_result)) = std::thread::scope(|scope| {
            let worker = scope.spawn(move || {
                let mut other = RunParser::new(&name);
                other.depth_hint = depth_hint;
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
        let arena_offset = self.arena.len() as u64;
        self.arena.extend_from_slice(&other.arena);
        for (k, mut topic) in other.topics.into_iter().enumerate() {
            for d in &mut topic.docs {
                d.place += arena_offset << LEN_BITS;
            }
            for s in &mut topic.stretches {
                s.line = u32::try_from(u64::from(s.line) + line_offset).unwrap_or(u32::MAX);
            }
            // a topic new here takes the other parser's list as it is, without a copy
            let index = self.topic_with_room(topic.qid.as_bytes(), Some(0));
            if other.current == Some(k) {
                self.current = Some(index);
            }
            let mine = &mut self.topics[index];
            self.came_back |= mine.drained;
            if mine.docs.is_empty() {
                mine.docs = topic.docs;
                mine.hashes = topic.hashes;
                mine.stretches = topic.stretches;
                mine.unchecked = topic.unchecked;
            } else {
                let shift = mine.docs.len();
                mine.stretches
                    .extend(topic.stretches.iter().filter_map(|s| {
                        Some(Stretch {
                            first: u32::try_from(s.first as usize + shift).ok()?,
                            line: s.line,
                        })
                    }));
                mine.docs.extend_from_slice(&topic.docs);
                mine.hashes.extend_from_slice(&topic.hashes);
                mine.unchecked = true;
            }
        }
        self.stretch = None;
        self.line_topic = usize::MAX;
        if other.num_results > 0 {
            self.run_id = other.run_id;
        }
        self.num_results += other.num_results;
        self.lines.absorb(other.lines, line_offset);
    }

    /// Hands out every topic read so far but the one the last line added to, as a [`Run`] (in
    /// the order their first lines came; `run_id` empty), so that a caller can score them while
    /// the rest is parsed and their memory is reused: a run written topic by topic is then never
    /// held whole. Their docnos stay in the returned run's arena; this parser goes on in
    /// `arena` (emptied first), with the kept topic's docnos copied there. `None` when there is
    /// nothing to hand out (`arena` is dropped).
    ///
    /// A drained topic with a repeated docno is checked here and reported by [`finish`] as
    /// it would have been without draining. A drained topic that gets another result later
    /// (its lines interleave with another topic's) cannot be scored this way: [`came_back`]
    /// then says so, and the caller must parse the file again without draining; [`finish`]
    /// refuses such a parser.
    ///
    /// [`finish`]: Self::finish
    /// [`came_back`]: Self::came_back
    pub fn drain(&mut self, mut arena: Vec<u8>) -> Option<Run> {
        let keep = self.current;
        let mut done = Vec::new();
        let mut depth = None;
        for (i, t) in self.topics.iter_mut().enumerate().skip(self.undrained_from) {
            if t.drained || keep == Some(i) || t.docs.is_empty() {
                continue;
            }
            depth = Some(t.docs.len());
            done.push(RunTopic {
                qid: t.qid.clone(),
                docs: std::mem::take(&mut t.docs),
                hashes: std::mem::take(&mut t.hashes),
                stretches: std::mem::take(&mut t.stretches),
                unchecked: t.unchecked,
                drained: false,
            });
            t.drained = true;
            t.unchecked = false;
        }
        self.undrained_from = keep.map_or(self.topics.len(), |k| k.min(self.topics.len()));
        if done.is_empty() {
            return None;
        }
        self.depth_hint = depth.unwrap_or(self.depth_hint);
        // the kept topic's docnos move to the front of the new arena
        arena.clear();
        let old = std::mem::replace(&mut self.arena, arena);
        if let Some(k) = keep {
            let mut docs = std::mem::take(&mut self.topics[k].docs);
            for d in &mut docs {
                d.place = put_docno(&mut self.arena, docno_at(&old, d.place));
            }
            self.topics[k].docs = docs;
        }
        let run = Run {
            name: self.name.clone(),
            run_id: String::new(),
            topics: done,
            arena: old,
        };
        let mut seen = DocnoIndex::default();
        for topic in run.topics.iter().filter(|t| t.unchecked) {
            if let Err(e) = check_topic_duplicates(&run, topic, &mut seen) {
                hold_first(&mut self.first_duplicate, &topic.qid, e);
            }
        }
        Some(run)
    }

    /// [`feed`](Self::feed) on this thread only, then the topics that `chunk` completed go to
    /// `score` (as [`drain`](Self::drain) hands them out) and their memory is reused for the
    /// next ones: scoring as the parse goes, on this thread. Once [`came_back`](Self::came_back)
    /// says so, nothing more is scored, and the caller must parse the run again without this.
    pub fn feed_and_score(
        &mut self,
        chunk: &[u8],
        score: impl FnOnce(&Run),
    ) -> Result<(), ParseError> {
        self.feed_serial(chunk)?;
        if !self.came_back {
            let spare = std::mem::take(&mut self.spare_arena);
            if let Some(part) = self.drain(spare) {
                score(&part);
                self.spare_arena = part.into_arena();
            }
        }
        Ok(())
    }

    /// Whether a drained topic got more results (see [`drain`](Self::drain)).
    pub fn came_back(&self) -> bool {
        self.came_back
    }

    pub fn finish(mut self) -> Result<Run, ParseError> {
        assert!(
            !self.came_back,
            "a run whose drained topics came back must be parsed again without draining"
        );
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
        self.topics.retain(|t| !t.drained);
        self.topics
            .sort_unstable_by(|a, b| a.qid.as_bytes().cmp(b.qid.as_bytes()));
        let run = Run {
            name: self.name,
            run_id: lossy(&self.run_id),
            topics: self.topics,
            arena: self.arena,
        };
        // the first in qid order, drained or not, as one check of all topics would find
        let mut seen = DocnoIndex::default();
        let left = run
            .topics
            .iter()
            .filter(|t| t.unchecked)
            .find_map(|t| Some((&t.qid, check_topic_duplicates(&run, t, &mut seen).err()?)));
        if let Some((qid, e)) = left {
            hold_first(&mut self.first_duplicate, qid, e);
        }
        match self.first_duplicate {
            Some(held) => Err(held.1),
            None => Ok(run),
        }
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
        self.push(topic, docno, score, line_no);
        self.set_run_id(tag);
        Ok(())
    }

    /// Results of one topic are usually contiguous, so the previous qid is checked first.
    ///
    /// A new topic's list starts with room for as many results as the topic before it had:
    /// runs are mostly of one depth, and growing each list by doubling copied every result
    /// about once more (reallocations were ~2 % of a profile, plus their page faults).
    ///
    /// Inlined (its check against the previous qid in the line loop): as a call per line it
    /// was 2.7 % of a `trec-eval` profile and 2.3 % of the wasm engine's.
    #[inline(always)]
    fn topic_for(&mut self, qid: &[u8]) -> usize {
        self.topic_with_room(qid, None)
    }

    /// [`topic_for`](Self::topic_for); a new topic gets room for `room` results if given.
    #[inline(always)]
    fn topic_with_room(&mut self, qid: &[u8], room: Option<usize>) -> usize {
        let (topics, hint) = (&mut self.topics, self.depth_hint);
        self.topic_index.get_or_add(qid, || {
            let room = room.unwrap_or_else(|| {
                topics
                    .last()
                    .filter(|t| !t.drained)
                    .map_or(hint, |t| t.docs.len())
            });
            topics.push(RunTopic {
                qid: lossy(qid),
                docs: Vec::with_capacity(room),
                hashes: Vec::with_capacity(room),
                stretches: Vec::new(),
                unchecked: false,
                drained: false,
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

/// Keeps in `held` the repeated docno of the topic first in qid order: `e`, found in `qid`,
/// or what it holds already.
fn hold_first(held: &mut Option<Box<(String, ParseError)>>, qid: &str, e: ParseError) {
    if held
        .as_ref()
        .is_none_or(|first| qid.as_bytes() < first.0.as_bytes())
    {
        *held = Some(Box::new((qid.to_string(), e)));
    }
}

/// trec_eval refuses a docno twice in one topic. Topics read in one stretch were checked while
/// parsing (`RunParser::track`); the others get one probe per document in an index reused
/// from topic to topic (`seen`, small enough to stay in cache); equal hashes are confirmed
/// byte for byte, so the first repeat in file order is reported with the line of its first
/// occurrence.
fn check_topic_duplicates(
    run: &Run,
    topic: &RunTopic,
    seen: &mut DocnoIndex,
) -> Result<(), ParseError> {
    seen.reset(topic.docs.len());
    for (i, doc) in topic.docs.iter().enumerate() {
        let docno = run.docno(doc);
        let hash = topic.hash(i);
        let Some(i) = u32::try_from(i).ok().filter(|&i| i < u32::MAX - 1) else {
            return Err(ParseError {
                file: run.name.clone(),
                line: topic.line(i),
                column: 1,
                text: quote(docno),
                kind: ParseErrorKind::TooLarge {
                    what: format!("the results of topic {}", topic.qid),
                },
            });
        };
        let docno_of = |p: u32| topic.docs.get(p as usize).map(|d| run.docno(d));
        let earlier = seen.find_or_insert(
            hash,
            i,
            |p| docno_of(p).is_some_and(|d| bytes_eq(d, docno)),
            |p| topic.hashes.get(p as usize).map_or(0, |&h| u64::from(h)),
        );
        match earlier.filter(|&p| (p as usize) < topic.docs.len()) {
            None => {}
            Some(earlier) => {
                return Err(ParseError {
                    file: run.name.clone(),
                    line: topic.line(i as usize),
                    column: 1,
                    text: quote(docno),
                    kind: ParseErrorKind::DuplicateDocno {
                        qid: topic.qid.clone(),
                        first_line: topic.line(earlier as usize),
                    },
                })
            }
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

/// Where a run file may be cut in two, looking at `window`, its bytes from some offset on: the
/// start of the first line (past `window`'s first newline) whose qid differs from that of
/// the first result line there. A run written topic by topic then has no topic on both sides,
/// so each side can be parsed and scored on its own and the scores joined with
/// [`Results::join_disjoint`](crate::Results::join_disjoint). `None` when `window` ends first
/// (or a line there is cut off).
pub fn topic_boundary(window: &[u8]) -> Option<usize> {
    let mut at = memchr::memchr(b'\n', window)? + 1;
    let mut first: Option<&[u8]> = None;
    while at < window.len() {
        let end = at + memchr::memchr(b'\n', &window[at..])?;
        let line = &window[at..end];
        if !is_skippable(line) {
            let qid = split_fields::<1>(line).0[0].1;
            match first {
                None => first = Some(qid),
                Some(q) if q != qid => return Some(at),
                Some(_) => {}
            }
        }
        at = end + 1;
    }
    None
}
