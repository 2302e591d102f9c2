//! One file per subcommand, each exposing `Args` (clap) and `run`.

pub mod common;
pub mod compare;
pub mod correlate;
pub mod eval;
pub mod judge;
pub mod judge_answers;
pub mod trec_eval;
pub mod udcg;
pub mod utility;
