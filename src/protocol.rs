//! Messages between the UI thread and the evaluation worker.
//!
//! Files are sent to the worker once and parsed and kept there; the UI holds only names and
//! summaries, so a large run is never copied back and forth.

use serde::{Deserialize, Serialize};

/// Identifies a loaded file for the lifetime of the page.
pub type FileId = u32;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum Request {
    /// Parse a file (its kind is detected from its content) and keep it.
    Load {
        id: FileId,
        name: String,
        bytes: Vec<u8>,
    },
    /// Forget a file.
    Remove { id: FileId },
    /// Evaluate every loaded run against the loaded qrels with these measures (names as the
    /// registry prints them, e.g. `nDCG@10`).
    Evaluate { measures: Vec<String> },
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub enum Response {
    Loaded {
        id: FileId,
        name: String,
        kind: FileKind,
        summary: String,
    },
    /// The file was not loaded; everything loaded before stays.
    LoadFailed {
        id: FileId,
        name: String,
        error: String,
    },
    Report(Report),
    EvalFailed {
        error: String,
    },
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Qrels,
    Run,
}

impl FileKind {
    pub fn label(self) -> &'static str {
        match self {
            FileKind::Qrels => "qrels",
            FileKind::Run => "run",
        }
    }
}

/// Runs × measures, with each measure's explanation for tooltips.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Report {
    pub qrels: String,
    pub measures: Vec<MeasureInfo>,
    pub runs: Vec<RunRow>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct MeasureInfo {
    pub name: String,
    /// The trec_eval name of the same number, when trec_eval has one (`ndcg_cut_10`).
    pub trec_name: Option<String>,
    pub explanation: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct RunRow {
    pub name: String,
    pub num_queries: usize,
    /// One mean per measure, in `Report::measures` order.
    pub means: Vec<f64>,
}
