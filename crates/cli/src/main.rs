//! `ragscope`: evaluate retrieval and RAG runs from the command line.

mod commands;

use clap::{Parser, Subcommand};

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
}

fn main() -> std::process::ExitCode {
    match Cli::parse().command {
        Command::TrecEval(args) => commands::trec_eval::run(args),
        Command::Eval(args) => commands::eval::run(args),
    }
}
