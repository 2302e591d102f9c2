//! One error type for every RAG input format, so the CLI can always say where a problem is.

use std::fmt;

/// A problem in an input file: which file, where (1-based line and column; 0 when a position
/// cannot be known, e.g. a check across records), which field, and what is wrong with which text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputError {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub field: String,
    pub message: String,
}

impl InputError {
    pub fn new(
        file: &str,
        line: usize,
        column: usize,
        field: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            file: file.to_string(),
            line,
            column,
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file)?;
        if self.line > 0 {
            write!(f, ":{}", self.line)?;
            if self.column > 0 {
                write!(f, ":{}", self.column)?;
            }
        }
        if self.field.is_empty() {
            write!(f, ": {}", self.message)
        } else {
            write!(f, ": field `{}`: {}", self.field, self.message)
        }
    }
}

impl std::error::Error for InputError {}

/// Cuts user text quoted in error messages so a bad megabyte line does not flood the terminal.
pub(crate) fn excerpt(text: &str) -> String {
    // Escaped as well as cut: a binary file's bytes must not reach the terminal raw.
    crate::formats::quote_bytes_max(text.as_bytes(), 60)
}
