//! TREC file formats, read exactly as trec_eval 10.0 reads them.
//!
//! Both parsers are streaming: feed byte chunks of any size (a chunk boundary may fall
//! anywhere, even inside a UTF-8 character) and call `finish`. Whitespace is any ASCII
//! whitespace (spaces or tabs); lines whose first non-blank byte is `#` are comments.

mod error;
mod hash;
mod lines;
#[cfg(not(target_arch = "wasm32"))]
pub(crate) mod parallel;
mod prefs;
mod qrels;
mod run;

pub use error::{ParseError, ParseErrorKind};
pub use prefs::{parse_prefs, PrefLine, Prefs, PrefsTopic};
pub use qrels::{parse_qrels, parse_qrels_jg, Qrels, QrelsJg, QrelsParser, QrelsTopic};
pub use run::{parse_run, RankedDoc, Run, RunParser, RunTopic};
