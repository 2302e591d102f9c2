//! TREC 2024 RAG track answer files (JSON Lines, one answer per topic):
//!
//! ```json
//! {"run_id": "ragnarok", "topic_id": "2027497", "topic": "how often ...",
//!  "references": ["msmarco_v2.1_doc_51_766815931#2_1606878413", ...],
//!  "response_length": 192,
//!  "answer": [{"text": "The frequency ...", "citations": [0, 1, 12]}, ...]}
//! ```
//!
//! Source: the TREC 2024 RAG track guidelines and castorini/nuggetizer README ("TREC 2024 RAG
//! format"). Citations are 0-based indexes into `references`; an index out of range is an error
//! (when the record has no `references` at all, as in nuggetizer's tests, they stay unresolved).
//! The answer text that nuggets are assigned against is the sentences joined by one space
//! (nuggetizer's convention; citations are not part of the text).

use serde::Deserialize;

use super::json_stream::{decode, invalid, read_chunks, RawValue, Records};
use crate::rag::InputError;

#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
pub struct AnswerSentence {
    pub text: String,
    #[serde(default)]
    pub citations: Vec<usize>,
}

/// One run's answer to one topic.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RagAnswer {
    pub run_id: String,
    pub topic_id: String,
    pub topic: String,
    pub references: Vec<String>,
    pub response_length: Option<f64>,
    pub answer: Vec<AnswerSentence>,
    /// Line where the record starts, for messages.
    pub line: usize,
}

impl RagAnswer {
    /// The sentences joined by a space, as nuggetizer assigns nuggets against it.
    pub fn text(&self) -> String {
        let parts: Vec<&str> = self.answer.iter().map(|s| s.text.as_str()).collect();
        parts.join(" ")
    }

    /// The reference ids a sentence cites (indexes were checked at parse time).
    pub fn cited(&self, sentence: &AnswerSentence) -> Vec<&str> {
        sentence
            .citations
            .iter()
            .filter_map(|&i| self.references.get(i).map(String::as_str))
            .collect()
    }
}

#[derive(Deserialize)]
struct RawAnswer {
    run_id: String,
    #[serde(deserialize_with = "id_string")]
    topic_id: String,
    #[serde(default)]
    topic: String,
    #[serde(default)]
    references: Option<Vec<String>>,
    #[serde(default)]
    response_length: Option<f64>,
    answer: Vec<AnswerSentence>,
}

/// Topic ids are strings in the track's files, but some tools write numbers.
pub(crate) fn id_string<'de, D: serde::Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Id {
        S(String),
        N(serde_json::Number),
    }
    Ok(match Id::deserialize(d)? {
        Id::S(s) => s,
        Id::N(n) => n.to_string(),
    })
}

fn convert(file: &str, raw: &RawValue<'_>) -> Result<RagAnswer, InputError> {
    let r: RawAnswer = decode(file, raw)?;
    // Without `references` (nuggetizer's test files) citations cannot be resolved or checked.
    let checked = r.references.is_some();
    let references = r.references.unwrap_or_default();
    for (i, sentence) in r.answer.iter().enumerate().filter(|_| checked) {
        for (j, &c) in sentence.citations.iter().enumerate() {
            if c >= references.len() {
                return Err(invalid(
                    file,
                    raw.line,
                    raw.column,
                    &format!("answer[{i}].citations[{j}]"),
                    format!(
                        "citation {c} is not an index into `references` ({} reference(s)) in sentence '{}'",
                        references.len(),
                        crate::rag::error::excerpt(&sentence.text)
                    ),
                ));
            }
        }
    }
    Ok(RagAnswer {
        run_id: r.run_id,
        topic_id: r.topic_id,
        topic: r.topic,
        references,
        response_length: r.response_length,
        answer: r.answer,
        line: raw.line,
    })
}

/// Streaming parser: `feed` chunks of any size, then `finish`.
pub struct RagAnswerParser(Records<RagAnswer>);

impl RagAnswerParser {
    pub fn new(file: &str) -> Self {
        RagAnswerParser(Records::new(file))
    }
    pub fn feed(&mut self, chunk: &[u8]) -> Result<(), InputError> {
        self.0.feed(chunk, convert)
    }
    pub fn finish(self) -> Result<Vec<RagAnswer>, InputError> {
        self.0.finish(convert)
    }
}

pub fn parse(file: &str, bytes: &[u8]) -> Result<Vec<RagAnswer>, InputError> {
    let mut p = RagAnswerParser::new(file);
    p.feed(bytes)?;
    p.finish()
}

pub fn read(file: &str, reader: impl std::io::Read) -> Result<Vec<RagAnswer>, InputError> {
    let mut p = RagAnswerParser::new(file);
    read_chunks(file, reader, |c| p.feed(c))?;
    p.finish()
}
