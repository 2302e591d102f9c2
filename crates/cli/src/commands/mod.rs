//! One file per subcommand, each exposing `Args` (clap) and `run`.

pub mod agreement;
pub mod answer;
pub mod answer_judge;
pub mod calibrate;
pub mod calibrate_agreement;
pub mod calibrate_answers;
pub mod calibrate_inputs;
pub mod citations;
pub mod common;
pub mod compare;
pub mod correlate;
pub mod elo;
pub mod eval;
pub mod graded;
pub mod judge;
pub mod judge_answers;
pub mod judge_batch;
pub mod judge_utility;
pub mod nuggets;
pub mod trec_eval;
pub mod udcg;
pub mod utility;
pub mod utility_backend;
