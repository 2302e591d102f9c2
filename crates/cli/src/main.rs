//! ragscope command line. This branch wires only the RAG subcommands; the lead merges the
//! trec_eval engine's commands into the same `Command` enum.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod commands;

#[derive(Parser)]
#[command(name = "ragscope", version, about = "Evaluate IR and RAG systems")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Fill the `udcg` field of a UDCG reference JSON file for every model present
    Udcg(commands::udcg::Args),
    /// Correlate retrieval metrics with end-to-end RAG outcomes (paper §7.2, Table 3)
    Correlate(commands::correlate::Args),
    /// Learn UDCGθ weights (linear pairwise ranking SVM) from context sets with outcomes
    UdcgTrain(commands::correlate::TrainArgs),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Udcg(args) => commands::udcg::run(args),
        Command::Correlate(args) => commands::correlate::run(args),
        Command::UdcgTrain(args) => commands::correlate::train(args),
    }
}
