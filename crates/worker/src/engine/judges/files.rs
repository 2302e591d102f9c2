//! The judges' input files in the worker: topics (`qid<TAB>question`) and passages
//! (`{"docno","text"}` JSON Lines), the same formats `ragscope utility` and `ragscope judge`
//! read. Errors carry `file:line` (and the column for JSON), never panic.

use ragscope_judge::task::answer_jobs::Loaded;
use ragscope_protocol::{FileId, FileKind};
use serde::Deserialize;
use std::collections::HashMap;

#[derive(Default)]
pub struct JudgeFiles {
    pub topics: Option<(FileId, String, HashMap<String, String>)>,
    pub passages: Option<(FileId, String, HashMap<String, String>)>,
    /// The text of the files the answer-side judges read (nuggets, TREC RAG answers, RAGElo
    /// queries/answers/documents), kept as loaded: crates/judge's readers take the text, and the
    /// Answers and Tournament views keep only their own parsed forms.
    pub sources: Vec<Source>,
    /// The GGUF read for the utility task (id, file name, metadata only).
    pub gguf: Option<(u32, String, ragscope_infer::gguf::GgufFile)>,
}

/// A loaded file a judge task may read, with its text.
pub struct Source {
    pub id: FileId,
    pub name: String,
    pub kind: FileKind,
    pub text: String,
}

impl Source {
    /// The file name without its extension (the run id of an answer file without `run_id`, as
    /// the CLI does).
    pub fn stem(&self) -> &str {
        crate::engine::inference::file_stem(&self.name)
    }

    /// The file for crates/judge's shared readers (answer_jobs).
    pub fn loaded(&self) -> Loaded<'_> {
        Loaded {
            name: self.name.as_str().into(),
            text: self.text.as_str().into(),
            stem: self.stem().into(),
        }
    }
}

impl JudgeFiles {
    pub fn is_empty(&self) -> bool {
        self.topics.is_none()
            && self.passages.is_none()
            && self.sources.is_empty()
            && self.gguf.is_none()
    }

    /// Parses and keeps a topics or passages file (a second one replaces the first); returns
    /// its kind and a one-line summary.
    pub fn keep(
        &mut self,
        id: FileId,
        name: &str,
        kind: FileKind,
        text: &str,
    ) -> Result<(FileKind, String), String> {
        match kind {
            FileKind::Topics => {
                let topics = parse_topics(name, text)?;
                let summary = format!("{} questions", topics.len());
                self.topics = Some((id, name.to_string(), topics));
                Ok((kind, summary))
            }
            FileKind::Passages => {
                let passages = parse_passages(name, text)?;
                let summary = format!("{} passages", passages.len());
                self.passages = Some((id, name.to_string(), passages));
                Ok((kind, summary))
            }
            other => Err(format!(
                "{name}: internal: {} is not a judge input",
                other.label()
            )),
        }
    }

    /// Keeps the text of an answer-side file a judge task reads (others are not kept).
    pub fn keep_source(&mut self, id: FileId, name: &str, kind: FileKind, bytes: &[u8]) {
        use ragscope_protocol::answer_files::AnswerFile;
        let wanted = matches!(
            kind,
            FileKind::Answers(AnswerFile::Nuggets | AnswerFile::RagAnswers) | FileKind::RageloTable
        );
        if let (true, Ok(text)) = (wanted, std::str::from_utf8(bytes)) {
            self.sources.retain(|s| s.id != id);
            self.sources.push(Source {
                id,
                name: name.to_string(),
                kind,
                text: text.to_string(),
            });
        }
    }

    /// A kept file by id, or why it cannot be used.
    pub fn source(&self, id: FileId, what: &str) -> Result<&Source, String> {
        self.sources
            .iter()
            .find(|s| s.id == id)
            .ok_or_else(|| format!("the {what} file is no longer loaded"))
    }

    pub fn remove(&mut self, id: FileId) {
        self.sources.retain(|s| s.id != id);
        if self.topics.as_ref().is_some_and(|(t, _, _)| *t == id) {
            self.topics = None;
        }
        if self.passages.as_ref().is_some_and(|(p, _, _)| *p == id) {
            self.passages = None;
        }
    }
}

/// `qid<TAB>question` per line; blank lines are skipped; a repeated qid keeps its last question.
pub fn parse_topics(name: &str, text: &str) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let (qid, question) = line
            .split_once('\t')
            .filter(|(q, text)| !q.trim().is_empty() && !text.trim().is_empty())
            .ok_or_else(|| {
                format!(
                    "{name}:{}: expected `qid<TAB>question`, got {:?}",
                    i + 1,
                    truncate(line)
                )
            })?;
        out.insert(qid.trim().to_string(), question.trim().to_string());
    }
    if out.is_empty() {
        return Err(format!(
            "{name}: no topics (expected `qid<TAB>question` lines)"
        ));
    }
    Ok(out)
}

#[derive(Deserialize)]
struct PassageLine {
    docno: serde_json::Value,
    text: String,
}

/// One `{"docno": "...", "text": "..."}` object per line (a numeric docno is read as its text).
pub fn parse_passages(name: &str, text: &str) -> Result<HashMap<String, String>, String> {
    let mut out = HashMap::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let p: PassageLine = serde_json::from_str(line)
            .map_err(|e| format!("{name}:{}:{}: {e}", i + 1, e.column()))?;
        let docno = match p.docno {
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            other => {
                return Err(format!(
                    "{name}:{}: \"docno\" must be a string or a number, got {other}",
                    i + 1
                ))
            }
        };
        out.insert(docno, p.text);
    }
    if out.is_empty() {
        return Err(format!(
            "{name}: no passages (expected {{\"docno\",\"text\"}} lines)"
        ));
    }
    Ok(out)
}

fn truncate(line: &str) -> String {
    line.chars().take(60).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topics_and_passages_parse_with_places_in_errors() {
        let t = parse_topics("t.tsv", "q1\tWhat is Python?\n\n2\t who wrote it \n").unwrap();
        assert_eq!(t["q1"], "What is Python?");
        assert_eq!(t["2"], "who wrote it");
        assert_eq!(
            parse_topics("t.tsv", "q1\tok\nq2 no tab\n").unwrap_err(),
            "t.tsv:2: expected `qid<TAB>question`, got \"q2 no tab\""
        );
        let p = parse_passages(
            "p.jsonl",
            "{\"docno\":\"d1\",\"text\":\"a\"}\n{\"docno\":7,\"text\":\"b\"}\n",
        )
        .unwrap();
        assert_eq!((p["d1"].as_str(), p["7"].as_str()), ("a", "b"));
        let e = parse_passages(
            "p.jsonl",
            "{\"docno\":\"d1\",\"text\":\"a\"}\n{\"docno\":\"d2\"}\n",
        )
        .unwrap_err();
        assert!(e.starts_with("p.jsonl:2:"), "{e}");
        assert!(e.contains("text"), "{e}");
        assert!(parse_passages("p.jsonl", "{\"docno\":[1],\"text\":\"a\"}")
            .unwrap_err()
            .starts_with("p.jsonl:1: \"docno\""));
    }
}
