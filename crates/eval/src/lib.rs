//! ragscope-eval: file formats, evaluation measures and statistics.
//!
//! No web dependencies: this crate compiles for native targets and for wasm32, and is
//! shared by the CLI, the web worker and the JS package.

pub mod answers;
pub mod calibration;
mod evaluate;
pub mod formats;
pub mod measures;
pub mod rag;
pub mod runs_json;
pub mod stats;
pub mod trec_eval;

#[cfg(not(target_arch = "wasm32"))]
pub use evaluate::read_and_evaluate;
pub use evaluate::{
    evaluate, evaluate_with, missing_topics, try_evaluate, EvalError, EvalOptions,
    EvaluationInParts, Results, ScoredParse, DEFAULT_MEASURES,
};
pub use formats::{parse_qrels, parse_run, ParseError, Qrels, QrelsParser, Run, RunParser};
pub use measures::{registry, Measure};
