//! ragscope-eval: file formats, evaluation measures and statistics.
//!
//! No web dependencies: this crate compiles for native targets and for wasm32, and is
//! shared by the CLI, the web worker and the JS package.

pub mod answers;
mod evaluate;
pub mod formats;
pub mod measures;
pub mod rag;
pub mod stats;
pub mod trec_eval;

pub use evaluate::{
    evaluate, evaluate_with, try_evaluate, EvalError, EvalOptions, Results, DEFAULT_MEASURES,
};
pub use formats::{parse_qrels, parse_run, ParseError, Qrels, QrelsParser, Run, RunParser};
pub use measures::{registry, Measure};
