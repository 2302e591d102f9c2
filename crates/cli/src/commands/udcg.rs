//! `ragscope udcg`: fill the `udcg` field of a UDCG reference JSON file for every model present.

use std::path::PathBuf;
use std::process::ExitCode;

use ragscope_eval::rag::reference_json;
use ragscope_eval::rag::udcg::{Convention, UdcgParams, PAPER_GAMMA, REFERENCE_GAMMA};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Compat {
    /// Paper Eq. 4 (γ = 1/3, denominator k, empty context → 0.5, incomplete input is an error).
    Paper,
    /// GiovanniTRA/UDCG's code as its pipeline runs it (γ = 0.333, denominator counts skipped
    /// passages, empty context → 0.0, incomplete passages skipped with a warning).
    #[value(name = "udcg-ref")]
    UdcgRef,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// UDCG reference JSON (list of {example_id, question, passages, udcg})
    pub input: PathBuf,
    /// Weight γ of distracting passages (default 1/3; 0.333 with --compat udcg-ref)
    #[arg(long)]
    pub gamma: Option<f64>,
    /// Score only the first K passages of each example
    #[arg(long)]
    pub k: Option<usize>,
    /// Convention to follow
    #[arg(long, value_enum, default_value_t = Compat::Paper)]
    pub compat: Compat,
    /// Output file (stdout when absent)
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// Also write the judgments as a utilities TSV (`qid docno relevant no_res_prob model`)
    #[arg(long)]
    pub utilities_out: Option<PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    match execute(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ragscope udcg: {message}");
            ExitCode::FAILURE
        }
    }
}

fn execute(args: &Args) -> Result<(), String> {
    let name = args.input.display().to_string();
    let text = std::fs::read_to_string(&args.input).map_err(|e| format!("{name}: {e}"))?;
    let convention = match args.compat {
        Compat::Paper => Convention::Paper,
        Compat::UdcgRef => Convention::Reference,
    };
    let default_gamma = match convention {
        Convention::Paper => PAPER_GAMMA,
        Convention::Reference => REFERENCE_GAMMA,
    };
    let gamma = args.gamma.unwrap_or(default_gamma);
    if !(0.0..=1.0).contains(&gamma) {
        return Err(format!("--gamma {gamma} is outside [0, 1]"));
    }
    if args.k == Some(0) {
        return Err("--k must be at least 1".into());
    }
    let data = reference_json::parse(&name, &text, convention).map_err(|e| e.to_string())?;
    for warning in &data.warnings {
        eprintln!("ragscope udcg: warning: skipped (as the reference code does): {warning}");
    }
    let params = UdcgParams {
        gamma,
        convention,
        ..UdcgParams::default()
    };
    if let Some(path) = &args.utilities_out {
        let tsv = ragscope_eval::rag::utilities_tsv::write(&data.utility_rows());
        std::fs::write(path, tsv).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let scores = data.scores_at(&params, args.k);
    let json = data.to_json_with(&scores);
    match &args.output {
        Some(path) => std::fs::write(path, json).map_err(|e| format!("{}: {e}", path.display())),
        None => {
            print!("{json}");
            Ok(())
        }
    }
}
