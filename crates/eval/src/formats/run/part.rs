//! A run parser's results for the tail of a file, as bytes: what a second browser worker
//! parsed, handed back to the worker that parsed the head (wasm has no shared threads without
//! cross-origin isolation, so `feed_split`'s scoped thread is not available there). The bytes
//! are this build's own and are read back by the same build on the same machine (so in its
//! byte order), but they cross a message boundary, so reading them checks every length and
//! every docno's place: a damaged part is an error, never a panic or a docno read out of
//! bounds.
//!
//! Layout: `MAGIC`, lines seen (u64), results (u64), run id (u32 length, bytes), arena (u64
//! length, bytes), topics (u32), and per topic: qid (u32 length, bytes), unchecked (u8),
//! results (u32, then the `RankedDoc`s as they lie in memory, 16 bytes each), stretches (u32,
//! then 8 bytes each). Result lists are written and read as whole slices (`bytemuck`): encoding
//! them field by field was a third of the helper's time in the browser (23 ms of 107 on the
//! 38 MB benchmark run, plus 20 ms to read them back).

use super::{RankedDoc, RunParser, RunTopic, Stretch, LEN_BITS, LONG_DOCNO};
use crate::formats::error::ParseError;
use crate::formats::lines::LineSplitter;

const MAGIC: &[u8; 8] = b"rsrpart2";

/// Why part bytes could not be read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartError(pub String);

impl std::fmt::Display for PartError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "a parsed part of a run could not be read back: {}",
            self.0
        )
    }
}

impl std::error::Error for PartError {}

/// A finished part: written as bytes by [`write`](Self::write) piece by piece (so a browser
/// worker copies each piece straight into the message's buffer) or by
/// [`to_bytes`](Self::to_bytes).
pub struct RunPart {
    parser: RunParser,
    lines_seen: u64,
}

impl std::fmt::Debug for RunPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunPart")
            .field("lines_seen", &self.lines_seen)
            .field("results", &self.parser.num_results)
            .field("topics", &self.parser.topics.len())
            .finish()
    }
}

impl RunPart {
    /// Hands the part's bytes to `out` in order, in pieces (large ones are whole result lists
    /// and the docno arena, borrowed as they are).
    pub fn write(&self, out: &mut dyn FnMut(&[u8])) {
        let p = &self.parser;
        out(MAGIC);
        out(&self.lines_seen.to_le_bytes());
        out(&(p.num_results as u64).to_le_bytes());
        out(&len32(p.run_id.len()).to_le_bytes());
        out(&p.run_id);
        out(&(p.arena.len() as u64).to_le_bytes());
        out(&p.arena);
        out(&len32(p.topics.len()).to_le_bytes());
        for t in &p.topics {
            out(&len32(t.qid.len()).to_le_bytes());
            out(t.qid.as_bytes());
            out(&[u8::from(t.unchecked)]);
            out(&len32(t.docs.len()).to_le_bytes());
            out(bytemuck::cast_slice(&t.docs));
            out(&len32(t.stretches.len()).to_le_bytes());
            out(bytemuck::cast_slice(&t.stretches));
        }
    }

    /// The number of bytes [`write`](Self::write) hands out.
    pub fn len(&self) -> usize {
        let mut n = 0;
        self.write(&mut |b| n += b.len());
        n
    }

    pub fn is_empty(&self) -> bool {
        false
    }

    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.len());
        self.write(&mut |b| out.extend_from_slice(b));
        out
    }
}

impl RunParser {
    /// Ends this parser's part (its last line may have no newline: the file's end), to be
    /// written as bytes for [`absorb_part`](Self::absorb_part). Errors are a serial parse's for
    /// the part alone, numbered from its first line.
    pub fn finish_part(mut self) -> Result<RunPart, ParseError> {
        let mut lines = std::mem::take(&mut self.lines);
        lines.finish(|no, line| self.line(no, line))?;
        Ok(RunPart {
            lines_seen: lines.lines_seen(),
            parser: self,
        })
    }

    /// Appends a part written by [`finish_part`](Self::finish_part) for the lines right after
    /// the ones fed here (which must end on a line boundary): the result is what feeding those
    /// lines here would have given, as natively after a split parse.
    pub fn absorb_part(&mut self, part: &[u8]) -> Result<(), PartError> {
        if !self.lines.at_line_start() {
            return Err(PartError(
                "the lines before it do not end with a newline".into(),
            ));
        }
        let (other, arena) = read_part(&self.name, part)?;
        let offset = self.lines.lines_seen();
        self.absorb_with_arena(other, arena, offset);
        Ok(())
    }
}

/// A count that does not fit 32 bits cannot come from a parser (topics and results per topic
/// are checked against u32 at the end); saturating keeps `finish_part` total.
fn len32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], PartError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| {
                PartError(format!(
                    "it ends inside {what} (byte {} of {})",
                    self.at,
                    self.bytes.len()
                ))
            })?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn u64(&mut self, what: &str) -> Result<u64, PartError> {
        let mut b = [0u8; 8];
        b.copy_from_slice(self.take(8, what)?);
        Ok(u64::from_le_bytes(b))
    }

    fn u32(&mut self, what: &str) -> Result<u32, PartError> {
        let mut b = [0u8; 4];
        b.copy_from_slice(self.take(4, what)?);
        Ok(u32::from_le_bytes(b))
    }

    fn count(&mut self, what: &str, item_bytes: usize) -> Result<usize, PartError> {
        let n = self.u32(what)? as usize;
        // a count larger than what is left is damage: refuse it before reserving room for it
        if n.saturating_mul(item_bytes) > self.bytes.len() - self.at {
            return Err(PartError(format!("{what}: {n} do not fit in what is left")));
        }
        Ok(n)
    }
}

/// The parser a part describes, and its docno arena (appended straight from `part`).
fn read_part<'a>(name: &str, part: &'a [u8]) -> Result<(RunParser, &'a [u8]), PartError> {
    let mut r = Reader { bytes: part, at: 0 };
    if r.take(MAGIC.len(), "the header")? != MAGIC {
        return Err(PartError(
            "it does not start with this build's header".into(),
        ));
    }
    let lines_seen = r.u64("the line count")?;
    let num_results = r.u64("the result count")?;
    let run_id_len = r.count("the run id", 1)?;
    let run_id = r.take(run_id_len, "the run id")?.to_vec();
    let arena_len = usize::try_from(r.u64("the docno arena's length")?)
        .map_err(|_| PartError("the docno arena is larger than this machine's memory".into()))?;
    let arena = r.take(arena_len, "the docno arena")?;
    let topic_count = r.count("topics", 13)?;
    let mut parser = RunParser::new(name);
    parser.run_id = run_id;
    parser.lines = LineSplitter::resumed_at(lines_seen);
    let mut total = 0u64;
    for _ in 0..topic_count {
        let qid_len = r.count("a qid", 1)?;
        let qid = r.take(qid_len, "a qid")?;
        let unchecked = r.take(1, "a topic's flag")?[0] != 0;
        let n = r.count("a topic's results", 16)?;
        // one copy into an aligned list (the part's bytes need not be aligned)
        let docs: Vec<RankedDoc> =
            bytemuck::pod_collect_to_vec(r.take(16 * n, "a topic's results")?);
        if let Some(bad) = docs.iter().find(|d| !docno_in(arena, d.place)) {
            return Err(PartError(format!(
                "a docno of topic {} lies outside the arena (place {:#x})",
                String::from_utf8_lossy(qid),
                bad.place
            )));
        }
        let m = r.count("a topic's stretches", 8)?;
        let stretches: Vec<Stretch> =
            bytemuck::pod_collect_to_vec(r.take(8 * m, "a topic's stretches")?);
        if stretches.first().is_some_and(|s| s.first != 0)
            || stretches.windows(2).any(|w| w[0].first > w[1].first)
        {
            return Err(PartError("a topic's line numbers are out of order".into()));
        }
        total += n as u64;
        let index = parser.topic_with_room(qid, Some(0));
        let topic: &mut RunTopic = &mut parser.topics[index];
        if !topic.docs.is_empty() {
            return Err(PartError(format!(
                "topic {} is written twice",
                String::from_utf8_lossy(qid)
            )));
        }
        topic.docs = docs;
        topic.stretches = stretches;
        topic.unchecked = unchecked;
    }
    if r.at != part.len() {
        return Err(PartError(format!(
            "{} bytes follow its end",
            part.len() - r.at
        )));
    }
    if total != num_results {
        return Err(PartError(format!(
            "it counts {num_results} results and holds {total}"
        )));
    }
    parser.num_results = total as usize;
    Ok((parser, arena))
}

/// Whether the docno `place` points at lies within `arena` (what `Run::docno` slices).
fn docno_in(arena: &[u8], place: u64) -> bool {
    let Ok(at) = usize::try_from(place >> LEN_BITS) else {
        return false;
    };
    let short = place & LONG_DOCNO;
    if short != LONG_DOCNO {
        return at
            .checked_add(short as usize)
            .is_some_and(|end| end <= arena.len());
    }
    let Some(len) = at
        .checked_add(8)
        .and_then(|end| arena.get(at..end))
        .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0xff; 8])))
    else {
        return false;
    };
    usize::try_from(len)
        .ok()
        .and_then(|len| at.checked_add(8)?.checked_add(len))
        .is_some_and(|end| end <= arena.len())
}
