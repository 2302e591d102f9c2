//! What the worker sends the Answers view: nugget scores of the loaded answer files in every
//! scoring mode, the per-topic nugget matrix and the answers for the drill-down.

use serde::{Deserialize, Serialize};

use crate::RunRow;

/// Answer-side files the app reads (detected from content).
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AnswerFile {
    /// nuggetizer assignments (JSONL with `nuggets[].assignment`).
    Assignments,
    /// nuggetizer nuggets (JSONL with `nuggets[]`, no assignments).
    Nuggets,
    /// TREC 2024 RAG answers (JSONL with `answer[{text, citations}]`).
    RagAnswers,
    /// Open RAG Eval answers CSV (`query_id, query, query_run, passage_id, passage, generated_answer`).
    OpenRagEvalAnswers,
    /// Open RAG Eval results CSV (`run_N_…` columns).
    OpenRagEvalResults,
    /// Citation-support judgments (JSONL `run_id, qid, sentence, docid, support, score`).
    CitationJudgments,
    /// Pointwise answer grades (CSV `qid, agent, raw_answer, reasoning, score`).
    PointwiseGrades,
}

impl AnswerFile {
    pub fn label(self) -> &'static str {
        match self {
            AnswerFile::Assignments => "nugget-assignments",
            AnswerFile::Nuggets => "nuggets",
            AnswerFile::RagAnswers => "rag-answers",
            AnswerFile::OpenRagEvalAnswers => "ore-answers",
            AnswerFile::OpenRagEvalResults => "ore-results",
            AnswerFile::CitationJudgments => "citation-judgments",
            AnswerFile::PointwiseGrades => "pointwise-grades",
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct AnswersReport {
    /// Score names in column order (V_strict first).
    pub scores: Vec<String>,
    /// Every topic with an assignment, sorted.
    pub topics: Vec<String>,
    /// One table per scoring mode: paper, nuggetizer, open-rag-eval.
    pub modes: Vec<AnswersMode>,
    pub matrix: Vec<TopicNuggets>,
    pub answers: Vec<AnswerDetail>,
    pub notes: Vec<String>,
    /// Citation scores per run, from citation-support judgment files.
    #[serde(default)]
    pub citations: Vec<CitationRun>,
    /// Pointwise grades per agent, from grade files.
    #[serde(default)]
    pub grades: Vec<AgentGradeRow>,
}

/// One run's citation precision, recall and F1 (Open RAG Eval's CitationMetric, crates/eval's
/// `answers::citations`): means over its scored answers, and each topic's scores.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct CitationRun {
    pub run: String,
    /// The file it came from.
    pub file: String,
    pub precision: f64,
    pub recall: f64,
    pub f1: f64,
    pub scored: usize,
    /// (qid, precision, recall, f1).
    pub topics: Vec<(String, f64, f64, f64)>,
}

/// One agent's pointwise grades: the mean over graded queries, and each query's grade (None:
/// the judgment failed, never scored).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct AgentGradeRow {
    pub agent: String,
    pub file: String,
    pub mean: Option<f64>,
    pub graded: usize,
    pub failed: usize,
    pub queries: Vec<(String, Option<f64>)>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct AnswersMode {
    /// `paper`, `nuggetizer` or `open-rag-eval`.
    pub compat: String,
    /// Runs × scores (means over topics, per topic, significance against `baseline`).
    pub runs: Vec<RunRow>,
    /// Failed assignments per run (scored 0, kept in the denominators).
    pub failed: Vec<usize>,
    pub baseline: usize,
}

/// Cell codes of the nugget matrix.
pub const CELL_ABSENT: u8 = 0;
pub const CELL_SUPPORT: u8 = 1;
pub const CELL_PARTIAL: u8 = 2;
pub const CELL_NOT: u8 = 3;
pub const CELL_FAILED: u8 = 4;

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct TopicNuggets {
    pub qid: String,
    pub query: String,
    /// (nugget text, importance), vital first.
    pub nuggets: Vec<(String, String)>,
    /// Run names (columns).
    pub runs: Vec<String>,
    /// `cells[nugget][run]`, one of the `CELL_*` codes.
    pub cells: Vec<Vec<u8>>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct AnswerDetail {
    pub run: String,
    pub qid: String,
    pub text: String,
    /// Sentences with the references they cite, when a TREC RAG answer file gives them.
    pub sentences: Vec<(String, Vec<String>)>,
    /// (nugget, importance, assignment).
    pub nuggets: Vec<(String, String, String)>,
}
