//! UMBRELA-graded qrels: ordinary TREC qrels (`qid iter docno grade`) whose grades are 0–3
//! (castorini/umbrela writes them as `qid 0 docid grade`). Read by the trec_eval qrels parser;
//! this wrapper only refuses grades outside 0–3, with their line and column.

use crate::formats::lines::{is_skippable, split_fields, LineSplitter};
use crate::formats::{ParseError, ParseErrorKind, Qrels, QrelsParser};

pub const MAX_GRADE: i32 = 3;

/// Streaming parser: `feed` chunks of any size, then `finish`.
pub struct UmbrelaQrelsParser {
    name: String,
    qrels: QrelsParser,
    lines: LineSplitter,
}

impl UmbrelaQrelsParser {
    pub fn new(name: &str) -> Self {
        UmbrelaQrelsParser {
            name: name.to_string(),
            qrels: QrelsParser::new(name),
            lines: LineSplitter::default(),
        }
    }

    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), ParseError> {
        self.qrels.feed(chunk)?;
        let name = &self.name;
        self.lines
            .feed(chunk, |no, line| check_line(name, no, line))
    }

    pub fn finish(mut self) -> Result<Qrels, ParseError> {
        let qrels = self.qrels.finish()?;
        let name = &self.name;
        self.lines.finish(|no, line| check_line(name, no, line))?;
        Ok(qrels)
    }
}

fn check_line(name: &str, no: u64, line: &[u8]) -> Result<(), ParseError> {
    if is_skippable(line) {
        return Ok(());
    }
    let (fields, count) = split_fields::<4>(line);
    if count < 4 {
        return Ok(()); // the qrels parser reports it
    }
    let (at, text) = fields[3];
    let grade = std::str::from_utf8(text)
        .ok()
        .and_then(|t| t.parse::<i32>().ok());
    match grade {
        Some(g) if (0..=MAX_GRADE).contains(&g) => Ok(()),
        _ => Err(ParseError {
            file: name.to_string(),
            line: no,
            column: at as u64 + 1,
            text: String::from_utf8_lossy(text).into_owned(),
            kind: ParseErrorKind::BadGrade { max: MAX_GRADE },
        }),
    }
}

pub fn parse(name: &str, bytes: &[u8]) -> Result<Qrels, ParseError> {
    let mut p = UmbrelaQrelsParser::new(name);
    p.feed(bytes)?;
    p.finish()
}

/// True when every judgment is a grade 0–3 (for telling UMBRELA qrels from other qrels).
pub fn is_umbrela_graded(qrels: &Qrels) -> bool {
    qrels
        .topics()
        .iter()
        .all(|t| t.judgments().all(|(_, g)| (0..=MAX_GRADE).contains(&g)))
}
