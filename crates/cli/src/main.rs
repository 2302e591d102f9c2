//! `ragscope`: evaluate retrieval and RAG runs from the command line.

mod commands;
mod heap;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "ragscope", version, about = "Evaluate IR and RAG systems", long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// A byte-identical drop-in for trec_eval 10.0 (takes trec_eval's own flags).
    #[command(
        name = "trec-eval",
        disable_help_flag = true,
        disable_version_flag = true
    )]
    TrecEval(commands::trec_eval::Args),
    /// Score one or more runs side by side on named measures (nDCG@10, MAP, ...).
    Eval(commands::eval::Args),
    /// UDCG of runs (with --qrels and --utilities), or fill the `udcg` field of a UDCG
    /// reference JSON file for every model present
    Udcg(commands::udcg::Args),
    /// Compare runs with a baseline on named measures, with corrected significance tests
    Compare(commands::compare::Args),
    /// Correlate retrieval metrics with end-to-end RAG outcomes (paper §7.2, Table 3)
    Correlate(commands::correlate::Args),
    /// Learn UDCGθ weights (linear pairwise ranking SVM) from context sets with outcomes
    UdcgTrain(commands::correlate::TrainArgs),
    /// Passage utilities u = R·(1 − p(NO-RESPONSE)) for UDCG, computed with a local GGUF model.
    Utility(commands::utility::Args),
    /// LLM judges over HTTP (Anthropic, Gemini, OpenAI, OpenAI-compatible servers): UMBRELA
    /// relevance grades, nuggets, pairwise battles, answer grades and citation support, with
    /// retries, a cache that resumes, and a budget.
    Judge(commands::judge::Args),
    /// Nugget scores (TREC 2024 RAG AutoNuggetizer) of nuggetizer assignment files
    Nuggets(commands::nuggets::Args),
    /// Citation precision, recall, F1 and no-answer rate from Open RAG Eval results CSVs
    Citations(commands::citations::Args),
    /// P@k, AP@k and MRR against UMBRELA-graded qrels (relevant: grade >= 2)
    Graded(commands::graded::Args),
    /// Elo or Bradley–Terry ratings of RAG agents from RAGElo pairwise evaluations
    Elo(commands::elo::Args),
    /// Agreement between two judgments: kappa/alpha for two qrels, Kendall tau for run scores
    Agreement(commands::agreement::Args),
    /// Prediction-powered estimates of a run's mean measure from judge qrels and a random
    /// sample of human labels, with confidence intervals (classical, PPI, PPI++)
    Calibrate(commands::calibrate::Args),
    /// Greedy answers and end-to-end outcomes of context sets with a local GGUF model (for correlate)
    Answer(commands::answer::Args),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::TrecEval(args) => commands::trec_eval::run(args),
        Command::Eval(args) => commands::eval::run(args),
        Command::Udcg(args) => commands::udcg::run(args),
        Command::Compare(args) => commands::compare::run(args),
        Command::Correlate(args) => commands::correlate::run(args),
        Command::UdcgTrain(args) => commands::correlate::train(args),
        Command::Utility(args) => commands::utility::run(args),
        Command::Judge(args) => commands::judge::run(args),
        Command::Nuggets(args) => commands::nuggets::run(args),
        Command::Citations(args) => commands::citations::run(args),
        Command::Graded(args) => commands::graded::run(args),
        Command::Elo(args) => commands::elo::run(args),
        Command::Agreement(args) => commands::agreement::run(args),
        Command::Answer(args) => commands::answer::run(args),
        Command::Calibrate(args) => commands::calibrate::run(args),
    }
}
