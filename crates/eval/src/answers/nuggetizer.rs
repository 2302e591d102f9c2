//! castorini/nuggetizer files (JSON Lines), as nuggetizer 0.0.5 writes them:
//!
//! - nuggets: `{"qid", "query", "nuggets": [{"text", "importance"}]}`
//! - assignments: `{"qid", "query", "answer_text", "response_length"?, "run_id"?,
//!   "nuggets": [{"text", "importance", "assignment"}]}`
//! - scores (`calculate_metrics.py` output): `{"qid", "strict_vital_score", "strict_all_score",
//!   "vital_score", "all_score"}`, the last line with `"qid": "all"`.
//!
//! Importance is `vital` or `okay` (nuggetizer writes `failed` when its scorer failed); a nugget
//! without importance (missing or null) is vital, as nuggetizer's loaders read it. Assignment is
//! `support`, `partial_support`, `not_support` or `failed` (the assigner failed). Other labels
//! are kept as written, so each scoring mode can treat them as its source does.

use serde::{Deserialize, Serialize};

use super::json_stream::{decode, invalid, read_chunks, RawValue, Records};
use super::trec_rag::id_string;
use crate::rag::InputError;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Importance {
    Vital,
    Okay,
    /// Anything else as written (nuggetizer's `failed`).
    Other(String),
}

impl Importance {
    fn from_label(label: Option<String>) -> Self {
        match label.as_deref() {
            None | Some("vital") => Importance::Vital,
            Some("okay") => Importance::Okay,
            Some(_) => Importance::Other(label.unwrap_or_default()),
        }
    }
    pub fn label(&self) -> &str {
        match self {
            Importance::Vital => "vital",
            Importance::Okay => "okay",
            Importance::Other(s) => s,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub enum Assignment {
    Support,
    PartialSupport,
    NotSupport,
    /// The assigner failed for this nugget (nuggetizer writes `failed`).
    Failed,
    /// Any other label as written; scored like a failure (0, counted).
    Other(String),
}

impl Assignment {
    fn from_label(label: String) -> Self {
        match label.as_str() {
            "support" => Assignment::Support,
            "partial_support" => Assignment::PartialSupport,
            "not_support" => Assignment::NotSupport,
            "failed" => Assignment::Failed,
            _ => Assignment::Other(label),
        }
    }
    pub fn label(&self) -> &str {
        match self {
            Assignment::Support => "support",
            Assignment::PartialSupport => "partial_support",
            Assignment::NotSupport => "not_support",
            Assignment::Failed => "failed",
            Assignment::Other(s) => s,
        }
    }
    pub fn is_failure(&self) -> bool {
        matches!(self, Assignment::Failed | Assignment::Other(_))
    }
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Nugget {
    pub text: String,
    pub importance: Importance,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AssignedNugget {
    pub text: String,
    pub importance: Importance,
    pub assignment: Assignment,
}

/// One topic's nuggets (a nuggets file line).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TopicNuggets {
    pub qid: String,
    pub query: String,
    pub nuggets: Vec<Nugget>,
    pub line: usize,
}

/// One answer with its nugget assignments (an assignments file line).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AssignedAnswer {
    pub qid: String,
    pub query: String,
    pub answer_text: String,
    pub response_length: Option<f64>,
    pub run_id: Option<String>,
    pub nuggets: Vec<AssignedNugget>,
    pub line: usize,
}

/// One line of nuggetizer's scores output.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ScoreLine {
    pub qid: String,
    pub strict_vital_score: f64,
    pub strict_all_score: f64,
    pub vital_score: f64,
    pub all_score: f64,
    pub line: usize,
}

#[derive(Deserialize)]
struct RawNugget {
    text: String,
    #[serde(default)]
    importance: Option<String>,
    #[serde(default)]
    assignment: Option<String>,
}

#[derive(Deserialize)]
struct RawRecord {
    #[serde(deserialize_with = "id_string")]
    qid: String,
    #[serde(default)]
    query: String,
    #[serde(default)]
    answer_text: Option<String>,
    #[serde(default)]
    response_length: Option<f64>,
    #[serde(default)]
    run_id: Option<String>,
    nuggets: Vec<RawNugget>,
}

#[derive(Deserialize)]
struct RawScore {
    #[serde(deserialize_with = "id_string")]
    qid: String,
    strict_vital_score: f64,
    strict_all_score: f64,
    vital_score: f64,
    all_score: f64,
}

fn convert_nuggets(file: &str, raw: &RawValue<'_>) -> Result<TopicNuggets, InputError> {
    let r: RawRecord = decode(file, raw)?;
    Ok(TopicNuggets {
        qid: r.qid,
        query: r.query,
        nuggets: r
            .nuggets
            .into_iter()
            .map(|n| Nugget {
                text: n.text,
                importance: Importance::from_label(n.importance),
            })
            .collect(),
        line: raw.line,
    })
}

fn convert_assigned(file: &str, raw: &RawValue<'_>) -> Result<AssignedAnswer, InputError> {
    let r: RawRecord = decode(file, raw)?;
    let mut nuggets = Vec::with_capacity(r.nuggets.len());
    for (i, n) in r.nuggets.into_iter().enumerate() {
        let Some(assignment) = n.assignment else {
            return Err(invalid(
                file,
                raw.line,
                raw.column,
                &format!("nuggets[{i}].assignment"),
                format!(
                    "nugget '{}' has no assignment (is this a nuggets file rather than assignments?)",
                    crate::rag::error::excerpt(&n.text)
                ),
            ));
        };
        nuggets.push(AssignedNugget {
            text: n.text,
            importance: Importance::from_label(n.importance),
            assignment: Assignment::from_label(assignment),
        });
    }
    Ok(AssignedAnswer {
        qid: r.qid,
        query: r.query,
        answer_text: r.answer_text.unwrap_or_default(),
        response_length: r.response_length,
        run_id: r.run_id,
        nuggets,
        line: raw.line,
    })
}

fn convert_score(file: &str, raw: &RawValue<'_>) -> Result<ScoreLine, InputError> {
    let r: RawScore = decode(file, raw)?;
    Ok(ScoreLine {
        qid: r.qid,
        strict_vital_score: r.strict_vital_score,
        strict_all_score: r.strict_all_score,
        vital_score: r.vital_score,
        all_score: r.all_score,
        line: raw.line,
    })
}

macro_rules! streaming_parser {
    ($name:ident, $item:ty, $convert:ident, $parse:ident, $read:ident) => {
        /// Streaming parser: `feed` chunks of any size, then `finish`.
        pub struct $name(Records<$item>);
        impl $name {
            pub fn new(file: &str) -> Self {
                $name(Records::new(file))
            }
            pub fn feed(&mut self, chunk: &[u8]) -> Result<(), InputError> {
                self.0.feed(chunk, $convert)
            }
            pub fn finish(self) -> Result<Vec<$item>, InputError> {
                self.0.finish($convert)
            }
        }
        pub fn $parse(file: &str, bytes: &[u8]) -> Result<Vec<$item>, InputError> {
            let mut p = $name::new(file);
            p.feed(bytes)?;
            p.finish()
        }
        pub fn $read(file: &str, reader: impl std::io::Read) -> Result<Vec<$item>, InputError> {
            let mut p = $name::new(file);
            read_chunks(file, reader, |c| p.feed(c))?;
            p.finish()
        }
    };
}

streaming_parser!(
    NuggetsParser,
    TopicNuggets,
    convert_nuggets,
    parse_nuggets,
    read_nuggets
);
streaming_parser!(
    AssignmentsParser,
    AssignedAnswer,
    convert_assigned,
    parse_assignments,
    read_assignments
);
streaming_parser!(
    ScoresParser,
    ScoreLine,
    convert_score,
    parse_scores,
    read_scores
);

/// The answers of one run, in file order.
#[derive(Debug, Clone, PartialEq)]
pub struct AssignedRun {
    pub run_id: String,
    pub answers: Vec<AssignedAnswer>,
}

/// Groups an assignments file by run: the `run_id` field, else `default_run_id` (the file name
/// without extension, nuggetizer's convention). Runs keep first-appearance order; a topic twice
/// in one run is an error.
pub fn group_runs(
    file: &str,
    default_run_id: &str,
    answers: Vec<AssignedAnswer>,
) -> Result<Vec<AssignedRun>, InputError> {
    let mut runs: Vec<AssignedRun> = Vec::new();
    let mut seen: std::collections::HashMap<(String, String), usize> = Default::default();
    for a in answers {
        let run_id = a
            .run_id
            .clone()
            .unwrap_or_else(|| default_run_id.to_string());
        if let Some(first) = seen.insert((run_id.clone(), a.qid.clone()), a.line) {
            return Err(InputError::new(
                file,
                a.line,
                0,
                "qid",
                format!(
                    "topic '{}' of run '{}' appears twice (first on line {first})",
                    crate::rag::error::excerpt(&a.qid),
                    run_id
                ),
            ));
        }
        match runs.iter_mut().find(|r| r.run_id == run_id) {
            Some(r) => r.answers.push(a),
            None => runs.push(AssignedRun {
                run_id,
                answers: vec![a],
            }),
        }
    }
    Ok(runs)
}

/// The file name without directories and extension (nuggetizer's run id for files without one).
pub fn file_stem(path: &str) -> &str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    match name.rfind('.') {
        Some(i) if i > 0 => &name[..i],
        _ => name,
    }
}
