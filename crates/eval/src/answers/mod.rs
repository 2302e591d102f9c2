//! Generation-side evaluation: answer, nugget and judgment files of the TREC 2024 RAG track,
//! nuggetizer, Open RAG Eval, UMBRELA and RAGElo, and the scores computed from them: nugget
//! scores, citations, graded retrieval, tournaments between agents and agreement.

pub mod agreement_report;
pub mod bradley_terry;
pub mod citation_judgments;
pub mod citations;
pub mod elo;
pub mod exact_mean;
pub mod files;
pub mod games;
pub mod graded;
pub mod json_report;
pub mod json_stream;
pub mod leaderboard;
pub mod nugget_scores;
pub mod nuggetizer;
pub mod open_rag_eval;
pub mod pointwise_grades;
pub mod ragelo_csv;
pub mod ragelo_jsonl;
pub mod topic_scores;
pub mod trec_rag;
pub mod umbrela_qrels;
