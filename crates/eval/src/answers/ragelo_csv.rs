//! RAGElo's CSV files (zetaalphavector/RAGElo, `tests/data` and `docs/examples/notebooks`):
//!
//! ```text
//! queries.csv                       qid,query
//! documents.csv                     qid,did,document            (any column order)
//! answers.csv                       qid,agent,answer
//! pairwise_answers_evaluations.csv  qid,agent_a,agent_b,raw_answer,answer,relevance
//! ```
//!
//! RFC 4180 quoting (multi-line quoted fields, commas and doubled quotes inside, CRLF) is read by
//! the `csv` crate. Columns are found by name in the header; columns other than the known ones
//! are kept as metadata. Leading spaces of every field are stripped, as RAGElo's loaders do
//! (its test files write `0, agent1,...`). `query_id` is accepted for `qid`. In the pairwise
//! file `answer` holds the judge's verdict: `A`, `B` or `C` (tie), also written `[[A]]`.

use super::games::Verdict;
use crate::rag::error::{excerpt, InputError};

/// Extra columns of a row, as (header, value), in file order.
pub type Metadata = Vec<(String, String)>;

#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    pub qid: String,
    pub query: String,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Document {
    pub qid: String,
    pub did: String,
    pub document: String,
    pub metadata: Metadata,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub qid: String,
    pub agent: String,
    pub answer: String,
    pub metadata: Metadata,
}

/// One judged game: the judge compared `agent_a`'s answer (shown first) with `agent_b`'s.
#[derive(Debug, Clone, PartialEq)]
pub struct PairwiseEvaluation {
    pub qid: String,
    pub agent_a: String,
    pub agent_b: String,
    /// The judge's full reply (empty when the column is absent).
    pub raw_answer: String,
    pub verdict: Verdict,
    pub relevance: String,
    pub metadata: Metadata,
    /// 1-based line where the row starts.
    pub line: u64,
}

/// Which of RAGElo's CSV files a header describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RageloKind {
    Queries,
    Documents,
    Answers,
    PairwiseEvaluations,
}

impl RageloKind {
    pub fn label(self) -> &'static str {
        match self {
            Self::Queries => "RAGElo queries",
            Self::Documents => "RAGElo documents",
            Self::Answers => "RAGElo answers",
            Self::PairwiseEvaluations => "RAGElo pairwise evaluations",
        }
    }

    fn required(self) -> &'static [&'static str] {
        match self {
            Self::Queries => &["qid", "query"],
            Self::Documents => &["qid", "did", "document"],
            Self::Answers => &["qid", "agent", "answer"],
            Self::PairwiseEvaluations => &["qid", "agent_a", "agent_b", "answer"],
        }
    }
}

/// Recognises a RAGElo file from its header line (the first line of `text`), or `None`.
pub fn kind_of(text: &str) -> Option<RageloKind> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = text.lines().next()?;
    let names: Vec<String> = first.split(',').map(normalise_header).collect();
    let has = |n: &str| names.iter().any(|h| h == n);
    if !has("qid") {
        return None;
    }
    if has("agent_a") && has("agent_b") && has("answer") {
        Some(RageloKind::PairwiseEvaluations)
    } else if has("agent") && has("answer") {
        Some(RageloKind::Answers)
    } else if has("did") && has("document") {
        Some(RageloKind::Documents)
    } else if has("query") {
        Some(RageloKind::Queries)
    } else {
        None
    }
}

fn normalise_header(h: &str) -> String {
    let h = h.trim().trim_matches('"').trim();
    if h == "query_id" {
        "qid".to_string()
    } else {
        h.to_string()
    }
}

/// Any RAGElo CSV, its kind settled by the header.
#[derive(Debug, Clone, PartialEq)]
pub enum RageloFile {
    Queries(Vec<Query>),
    Documents(Vec<Document>),
    Answers(Vec<Answer>),
    PairwiseEvaluations(Vec<PairwiseEvaluation>),
}

pub fn parse(file: &str, text: &str) -> Result<RageloFile, InputError> {
    match kind_of(text) {
        Some(RageloKind::Queries) => parse_queries(file, text).map(RageloFile::Queries),
        Some(RageloKind::Documents) => parse_documents(file, text).map(RageloFile::Documents),
        Some(RageloKind::Answers) => parse_answers(file, text).map(RageloFile::Answers),
        Some(RageloKind::PairwiseEvaluations) => {
            parse_pairwise(file, text).map(RageloFile::PairwiseEvaluations)
        }
        None => Err(InputError::new(
            file,
            1,
            1,
            "",
            format!(
                "not a RAGElo CSV: the header '{}' has none of qid,query | qid,did,document | \
                 qid,agent,answer | qid,agent_a,agent_b,answer",
                excerpt(text.lines().next().unwrap_or(""))
            ),
        )),
    }
}

pub fn parse_queries(file: &str, text: &str) -> Result<Vec<Query>, InputError> {
    let mut out = Vec::new();
    read_rows(file, text, RageloKind::Queries, |row| {
        out.push(Query {
            qid: row.take(0),
            query: row.take(1),
            metadata: row.metadata(),
        });
        Ok(())
    })?;
    Ok(out)
}

pub fn parse_documents(file: &str, text: &str) -> Result<Vec<Document>, InputError> {
    let mut out = Vec::new();
    read_rows(file, text, RageloKind::Documents, |row| {
        out.push(Document {
            qid: row.take(0),
            did: row.take(1),
            document: row.take(2),
            metadata: row.metadata(),
        });
        Ok(())
    })?;
    Ok(out)
}

pub fn parse_answers(file: &str, text: &str) -> Result<Vec<Answer>, InputError> {
    let mut out = Vec::new();
    read_rows(file, text, RageloKind::Answers, |row| {
        out.push(Answer {
            qid: row.take(0),
            agent: row.take(1),
            answer: row.take(2),
            metadata: row.metadata(),
        });
        Ok(())
    })?;
    Ok(out)
}

pub fn parse_pairwise(file: &str, text: &str) -> Result<Vec<PairwiseEvaluation>, InputError> {
    let mut out = Vec::new();
    read_rows(file, text, RageloKind::PairwiseEvaluations, |row| {
        let verdict_text = row.value(3);
        let verdict = Verdict::parse(verdict_text).ok_or_else(|| {
            row.error(
                3,
                format!("verdict '{}' is not A, B or C (tie)", excerpt(verdict_text)),
            )
        })?;
        let (qid, agent_a, agent_b) = (row.take(0), row.take(1), row.take(2));
        if agent_a == agent_b {
            return Err(row.error(2, format!("agent '{agent_b}' plays against itself")));
        }
        for (i, name) in [(1, &agent_a), (2, &agent_b)] {
            if name.is_empty() {
                return Err(row.error(i, "empty agent name".to_string()));
            }
        }
        out.push(PairwiseEvaluation {
            qid,
            agent_a,
            agent_b,
            raw_answer: row.optional("raw_answer"),
            verdict,
            relevance: row.optional("relevance"),
            metadata: row.metadata(),
            line: row.line,
        });
        Ok(())
    })?;
    if out.is_empty() {
        return Err(InputError::new(file, 0, 0, "", "no games in the file"));
    }
    Ok(out)
}

/// One data row with its columns resolved: `required[i]` is the field index of the kind's
/// i-th required column.
struct Row<'a> {
    file: &'a str,
    text: &'a str,
    record: csv::StringRecord,
    byte: u64,
    line: u64,
    required: &'a [usize],
    header: &'a [String],
    taken: Vec<bool>,
}

impl Row<'_> {
    fn value(&self, i: usize) -> &str {
        strip(self.record.get(self.required[i]).unwrap_or(""))
    }

    fn take(&mut self, i: usize) -> String {
        self.value(i).to_string()
    }

    fn optional(&mut self, name: &str) -> String {
        match self.header.iter().position(|h| h == name) {
            Some(c) => {
                if let Some(t) = self.taken.get_mut(c) {
                    *t = true;
                }
                strip(self.record.get(c).unwrap_or("")).to_string()
            }
            None => String::new(),
        }
    }

    /// Every column that is neither required nor taken, in file order.
    fn metadata(&self) -> Metadata {
        self.header
            .iter()
            .enumerate()
            .filter(|(c, _)| !self.required.contains(c) && !self.taken[*c])
            .map(|(c, h)| {
                (
                    h.clone(),
                    strip(self.record.get(c).unwrap_or("")).to_string(),
                )
            })
            .collect()
    }

    fn error(&self, i: usize, message: String) -> InputError {
        let field_index = self.required[i];
        let (line, column) = field_position(self.text, self.byte as usize, self.line, field_index);
        InputError::new(
            self.file,
            line as usize,
            column,
            self.header[field_index].clone(),
            message,
        )
    }
}

/// RAGElo strips the spaces after a comma (`0, agent1`); the text itself is kept as written.
fn strip(s: &str) -> &str {
    s.trim_start_matches([' ', '\t'])
}

fn read_rows<F>(file: &str, text: &str, kind: RageloKind, mut each: F) -> Result<(), InputError>
where
    F: FnMut(&mut Row<'_>) -> Result<(), InputError>,
{
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(body.as_bytes());
    let mut record = csv::StringRecord::new();
    let read = |reader: &mut csv::Reader<&[u8]>, record: &mut csv::StringRecord| {
        reader.read_record(record).map_err(|e| csv_error(file, e))
    };
    if !read(&mut reader, &mut record)? {
        return Err(InputError::new(file, 0, 0, "", "the file is empty"));
    }
    let header: Vec<String> = record.iter().map(normalise_header).collect();
    let mut required = Vec::new();
    for name in kind.required() {
        match header.iter().position(|h| h == name) {
            Some(c) => required.push(c),
            None => {
                return Err(InputError::new(
                    file,
                    1,
                    1,
                    "",
                    format!(
                        "{} file needs a '{name}' column; the header is '{}'",
                        kind.label(),
                        excerpt(&header.join(","))
                    ),
                ))
            }
        }
    }
    let (mut counted_to, mut line_counted) = (0usize, 1u64);
    loop {
        if !read(&mut reader, &mut record)? {
            return Ok(());
        }
        let position = record
            .position()
            .cloned()
            .unwrap_or_else(csv::Position::new);
        // A blank line reads as one empty field: skip it like RAGElo's pandas loader does.
        if record.len() == 1 && record.get(0).is_some_and(|f| f.trim().is_empty()) {
            continue;
        }
        // The csv crate does not count skipped blank lines; count newlines up to the record.
        // With CRLF the reported offset can sit before the previous line's '\n'.
        let mut byte = (position.byte() as usize).min(body.len());
        while byte < body.len() && matches!(body.as_bytes()[byte], b'\r' | b'\n') {
            byte += 1;
        }
        line_counted +=
            memchr::memchr_iter(b'\n', &body.as_bytes()[counted_to..byte]).count() as u64;
        counted_to = byte;
        let line = line_counted;
        if record.len() != header.len() {
            return Err(InputError::new(
                file,
                line as usize,
                1,
                "",
                format!(
                    "{} field(s) where the header has {}",
                    record.len(),
                    header.len()
                ),
            ));
        }
        let mut row = Row {
            file,
            text: body,
            record: std::mem::take(&mut record),
            byte: byte as u64,
            line,
            required: &required,
            header: &header,
            taken: vec![false; header.len()],
        };
        each(&mut row)?;
        record = row.record;
    }
}

fn csv_error(file: &str, e: csv::Error) -> InputError {
    let line = e.position().map(|p| p.line()).unwrap_or(0) as usize;
    let message = match e.kind() {
        csv::ErrorKind::Utf8 { err, .. } => {
            format!("field {} is not valid UTF-8", err.field() + 1)
        }
        _ => e.to_string(),
    };
    InputError::new(file, line, 0, "", message)
}

/// 1-based (line, column) where field `index` of the record starting at `byte` begins,
/// found by walking the raw text with RFC 4180's quoting rules (the csv crate reports record
/// positions only).
fn field_position(text: &str, byte: usize, mut line: u64, index: usize) -> (u64, usize) {
    let bytes = text.as_bytes();
    let mut i = byte.min(bytes.len());
    let mut field = 0;
    let mut in_quotes = false;
    while field < index && i < bytes.len() {
        match bytes[i] {
            b'"' => in_quotes = !in_quotes,
            b',' if !in_quotes => field += 1,
            b'\n' => line += 1,
            _ => {}
        }
        i += 1;
    }
    let line_start = text[..i].rfind('\n').map_or(0, |p| p + 1);
    (line, text[line_start..i].chars().count() + 1)
}
