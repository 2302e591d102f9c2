//! `ragscope correlate` and `ragscope udcg-train` (in progress).

use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct Args {}

#[derive(clap::Args, Debug)]
pub struct TrainArgs {}

pub fn run(_args: Args) -> ExitCode {
    eprintln!("ragscope correlate: not implemented yet");
    ExitCode::FAILURE
}

pub fn train(_args: TrainArgs) -> ExitCode {
    eprintln!("ragscope udcg-train: not implemented yet");
    ExitCode::FAILURE
}
