//! RAG retrieval measures (UDCG, UDCGθ, eRAG), their input formats, and the correlation study of
//! Trappolini et al., "Redefining Retrieval Evaluation in the Era of LLMs" (arXiv 2510.21440, §7.2).
//!
//! The measures are plain functions over slices so that the trec_eval-style registry, the CLI and
//! the web worker can all call the same kernels without allocating per query.

pub mod answer_jobs;
pub mod answer_match;
pub mod classic;
pub mod contexts;
pub mod correlation;
pub mod erag;
pub mod erag_outcomes;
pub mod error;
pub mod gamma;
pub mod measure;
pub mod reference_json;
pub mod report;
pub mod rouge_l;
pub mod spec;
pub mod svm_rank;
pub mod synth;
pub mod theta;
pub mod udcg;
pub mod unique_map;
pub mod utilities_tsv;
pub mod utility;

pub use error::InputError;
pub use gamma::Gamma;
pub use measure::{registry, UdcgVariant};
pub use spec::UdcgSpec;
pub use udcg::{Convention, Gain, UdcgParams};
pub use utility::Judgment;
