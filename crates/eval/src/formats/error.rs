use serde::Serialize;

/// What went wrong on a line of a run or qrels file.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ParseErrorKind {
    /// A run line needs `qid Q0 docno rank score tag`; a qrels line `qid iter docno rel`.
    WrongFieldCount { expected: String, found: usize },
    /// The score field is not a number (trec_eval would silently read 0 here).
    BadScore,
    /// The relevance field is not an integer.
    BadRelevance,
    /// The same docno appears twice for one topic; trec_eval refuses such files.
    DuplicateDocno { qid: String, first_line: u64 },
    /// The file holds no judgments or no results at all.
    Empty,
    /// A graded qrels file (UMBRELA) holds a grade outside `0..=max`.
    BadGrade { max: i32 },
    /// A limit of the in-memory layout was passed (e.g. 4 GiB of docnos in one topic).
    TooLarge { what: String },
}

/// A parse error that points at the offending bytes: file, 1-based line and column, text.
#[derive(Debug, Clone, PartialEq, Serialize, thiserror::Error)]
#[error("{file}:{line}:{column}: {}", describe(kind, text))]
pub struct ParseError {
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub text: String,
    pub kind: ParseErrorKind,
}

fn describe(kind: &ParseErrorKind, text: &str) -> String {
    match kind {
        ParseErrorKind::WrongFieldCount { expected, found } => {
            format!("expected {expected}, found {found} field(s) in line '{text}'")
        }
        ParseErrorKind::BadScore => format!("score '{text}' is not a number"),
        ParseErrorKind::BadRelevance => format!("relevance '{text}' is not an integer"),
        ParseErrorKind::DuplicateDocno { qid, first_line } => {
            format!("duplicate docno '{text}' for topic '{qid}' (first seen on line {first_line})")
        }
        ParseErrorKind::Empty => "file is empty (no judgments or results)".to_string(),
        ParseErrorKind::BadGrade { max } => {
            format!("grade '{text}' is not an integer from 0 to {max}")
        }
        ParseErrorKind::TooLarge { what } => {
            format!("{what} exceed what one topic can hold (4 GiB of docnos, 4 billion lines) at '{text}'")
        }
    }
}
