//! Generation-side evaluation: answer, nugget and judgment files of the TREC 2024 RAG track,
//! nuggetizer, Open RAG Eval and UMBRELA, and the scores computed from them.

pub mod citations;
pub mod exact_mean;
pub mod graded;
pub mod json_stream;
pub mod nugget_scores;
pub mod nuggetizer;
pub mod open_rag_eval;
pub mod trec_rag;
pub mod umbrela_qrels;
