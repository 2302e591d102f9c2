//! `ragscope trec-eval`: trec_eval 10.0's command line, parsed by hand like its getopt
//! (so `-l2`, `-M100`, `-mP.5,10`, `--measure=ndcg_cut.10` and permuted flags all work).

use std::io::{Read, Write};
use std::process::ExitCode;

/// Everything after `trec-eval` is handed to the trec_eval argument parser untouched.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// trec_eval flags followed by QRELS RUN (`ragscope trec-eval -h` explains them).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub argv: Vec<String>,
}

pub fn run(args: Args) -> ExitCode {
    // Files are streamed: a large run is never held in memory as text and parsed at once.
    let mut open = |name: &str| -> Result<Box<dyn Read>, String> {
        if name == "-" {
            return Ok(Box::new(std::io::stdin()));
        }
        std::fs::File::open(name)
            .map(|f| Box::new(f) as Box<dyn Read>)
            .map_err(|e| e.to_string())
    };
    match ragscope_eval::trec_eval::run_streaming(&args.argv, &mut open) {
        Ok(stdout) => {
            let mut out = std::io::stdout().lock();
            if out
                .write_all(stdout.as_bytes())
                .and_then(|_| out.flush())
                .is_err()
            {
                return ExitCode::from(1);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprint!("{}", e.message);
            ExitCode::from(e.exit_code.clamp(0, 255) as u8)
        }
    }
}
