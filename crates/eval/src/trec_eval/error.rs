//! trec_eval's failure: its stderr message and exit code.

/// A failed trec_eval invocation: what trec_eval would print on stderr, and its exit code.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, thiserror::Error)]
#[error("{message}")]
pub struct TrecEvalError {
    pub message: String,
    pub exit_code: i32,
}

impl TrecEvalError {
    pub fn new(message: impl Into<String>, exit_code: i32) -> Self {
        TrecEvalError {
            message: message.into(),
            exit_code,
        }
    }

    /// The run's outcome when the qrels failed: never shown, since the qrels' error is
    /// reported first and the run is not read for its own.
    pub(crate) fn after_qrels_error() -> Self {
        TrecEvalError::new("", 2)
    }
}
