//! Preference judgments (trec_eval's `-R prefs`: `qid jg jsg docno rel_level`) and qrels
//! read as preferences (`-R qrels_prefs`: `qid jg docno rel`, one sub-group per group).

use rustc_hash::FxHashMap;

use super::error::{ParseError, ParseErrorKind};
use super::lines::{is_skippable, lossy, parse_score, quote, split_fields, LineSplitter};

/// One judgment line: within judgment group `jg` and sub-group `jsg`, documents with a
/// higher `rel_level` are preferred to documents with a lower one.
#[derive(Debug, Clone, PartialEq)]
pub struct PrefLine {
    pub jg: String,
    pub jsg: String,
    pub rel_level: f64,
    pub docno: Box<[u8]>,
}

/// The preference lines of one topic, in file order.
#[derive(Debug, Clone)]
pub struct PrefsTopic {
    pub qid: String,
    pub lines: Vec<PrefLine>,
}

/// Parsed preferences, topics in `strcmp` order.
#[derive(Debug, Clone)]
pub struct Prefs {
    pub topics: Vec<PrefsTopic>,
}

/// Parses preferences; `qrels_layout` reads 4-column qrels (`qid jg docno rel`) instead
/// of 5-column prefs (`qid jg jsg docno rel_level`).
pub fn parse_prefs(name: &str, bytes: &[u8], qrels_layout: bool) -> Result<Prefs, ParseError> {
    let mut topics: Vec<PrefsTopic> = Vec::new();
    let mut index: FxHashMap<Vec<u8>, usize> = FxHashMap::default();
    let mut lines = LineSplitter::default();
    let columns = if qrels_layout { 4 } else { 5 };
    let mut on_line = |line_no: u64, line: &[u8]| -> Result<(), ParseError> {
        if is_skippable(line) {
            return Ok(());
        }
        let (fields, count) = split_fields::<5>(line);
        let error = |at: usize, text: &[u8], kind| ParseError {
            file: name.to_string(),
            line: line_no,
            column: at as u64 + 1,
            text: quote(text),
            kind,
        };
        if count != columns {
            let expected = if qrels_layout {
                "4 fields (qid jg docno rel)"
            } else {
                "5 fields (qid jg jsg docno rel_level)"
            };
            return Err(error(
                0,
                line,
                ParseErrorKind::WrongFieldCount {
                    expected: expected.to_string(),
                    found: count,
                },
            ));
        }
        let (qid, jg) = (fields[0].1, fields[1].1);
        let (jsg, docno, (rel_at, rel_text)) = if qrels_layout {
            (&b"0"[..], fields[2].1, fields[3])
        } else {
            (fields[2].1, fields[3].1, fields[4])
        };
        let rel_level = parse_score(rel_text)
            .ok_or_else(|| error(rel_at, rel_text, ParseErrorKind::BadRelevance))?;
        let t = *index.entry(qid.to_vec()).or_insert_with(|| {
            topics.push(PrefsTopic {
                qid: lossy(qid),
                lines: Vec::new(),
            });
            topics.len() - 1
        });
        topics[t].lines.push(PrefLine {
            jg: lossy(jg),
            jsg: lossy(jsg),
            rel_level,
            docno: docno.into(),
        });
        Ok(())
    };
    lines.feed(bytes, &mut on_line)?;
    lines.finish(&mut on_line)?;
    if topics.is_empty() {
        return Err(ParseError {
            file: name.to_string(),
            line: lines.lines_seen().max(1),
            column: 1,
            text: String::new(),
            kind: ParseErrorKind::Empty,
        });
    }
    topics.sort_unstable_by(|a, b| a.qid.as_bytes().cmp(b.qid.as_bytes()));
    Ok(Prefs { topics })
}
