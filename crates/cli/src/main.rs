//! Minimal entry point wiring only `ragscope utility` (the full CLI lives on another branch).

use clap::{Parser, Subcommand};
use std::process::ExitCode;

mod commands;

#[derive(Parser)]
#[command(name = "ragscope", about = "Evaluation for IR and RAG systems")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Passage utilities u = R·(1 − p(NO-RESPONSE)) for UDCG, computed with a local GGUF model.
    Utility(commands::utility::Args),
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Utility(args) => commands::utility::run(args),
    }
}
