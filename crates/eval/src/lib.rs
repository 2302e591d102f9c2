//! ragscope-eval: file formats, evaluation measures and statistics.
//!
//! No web dependencies: this crate compiles for native targets and for wasm32, and is
//! shared by the CLI, the web worker and the JS package.

pub mod rag;
pub mod stats;
