//! `ragscope trec-eval`: trec_eval 10.0's command line, parsed by hand like its getopt
//! (so `-l2`, `-M100`, `-mP.5,10`, `--measure=ndcg_cut.10` and permuted flags all work).

use std::io::Write;

use ragscope_eval::formats::{open_input, Input};
use std::process::ExitCode;

/// Everything after `trec-eval` is handed to the trec_eval argument parser untouched.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// trec_eval flags followed by QRELS RUN (`ragscope trec-eval -h` explains them).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub argv: Vec<String>,
}

pub fn run(args: Args) -> ExitCode {
    // Regular files are mapped (the run parsed in place); stdin and pipes are streamed, so a
    // large run is never copied whole into memory as text.
    let mut open = |name: &str| -> Result<Input, String> {
        if name == "-" {
            return Ok(Input::Stream(Box::new(std::io::stdin())));
        }
        open_input(name).map_err(|e| e.to_string())
    };
    // The qrels and the run are among the arguments (the other arguments are no files).
    crate::heap::prepare_for(|| crate::heap::file_sizes(args.argv.iter().map(String::as_str)));
    match ragscope_eval::trec_eval::run_inputs(&args.argv, &mut open) {
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
