//! Generation-side evaluation: answer and judgment files, tournaments between agents.

pub mod agreement_report;
pub mod bradley_terry;
pub mod elo;
pub mod games;
pub mod leaderboard;
pub mod ragelo_csv;
pub mod ragelo_jsonl;
pub mod topic_scores;
