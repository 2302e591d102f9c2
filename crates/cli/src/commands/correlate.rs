//! `ragscope correlate`: the correlation study of the UDCG paper (§7.2, Table 3; Fig. 2 with
//! `--sensitivity`), and `ragscope udcg-train`: learn UDCGθ weights to JSON.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use ragscope_eval::rag::contexts::{self, ContextSet};
use ragscope_eval::rag::correlation::{
    resolve_k, sensitivity, study, Coefficient, Metric, StudyConfig,
};
use ragscope_eval::rag::report::{self, Format};
use ragscope_eval::rag::svm_rank::SvmOptions;
use ragscope_eval::rag::theta::{self, ThetaModel};
use ragscope_eval::rag::udcg::UdcgParams;
use ragscope_eval::rag::utilities_tsv;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum OutputFormat {
    Text,
    Csv,
    Json,
    Latex,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum CoefficientArg {
    Spearman,
    Kendall,
    Pearson,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Context sets (JSON Lines: qid, dataset, model, passages, contexts[{passages, outcome}])
    pub contexts: PathBuf,
    /// Judgments `qid docno relevant no_res_prob [model]` or `qid docno utility`
    #[arg(long)]
    pub utilities: Option<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Coefficient shown in text and LaTeX (CSV and JSON hold all three)
    #[arg(long, value_enum, default_value_t = CoefficientArg::Spearman)]
    pub coefficient: CoefficientArg,
    /// UDCGθ weights from `ragscope udcg-train`
    #[arg(long)]
    pub theta: Option<PathBuf>,
    /// Context size to study (required when the input mixes sizes)
    #[arg(long)]
    pub k: Option<usize>,
    /// Weight γ of distracting passages in UDCG
    #[arg(long, default_value_t = 1.0 / 3.0)]
    pub gamma: f64,
    /// Report correlation by context size instead (e.g. 1,2,3,5,10; empty = 1..10)
    #[arg(long, num_args = 0..=1, value_delimiter = ',', default_missing_value = "")]
    pub sensitivity: Option<Vec<String>>,
    /// Bootstrap resamples for the intervals and the paired tests
    #[arg(long, value_parser = super::common::parse_resamples, default_value_t = 1000)]
    pub resamples: usize,
    /// Seed of the bootstrap
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Metric tested against every other one ("correlates better than")
    #[arg(long, default_value = "UDCG")]
    pub reference: String,
    /// Output file (stdout when absent)
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
}

#[derive(clap::Args, Debug)]
pub struct TrainArgs {
    /// Training context sets (same format as `correlate`)
    pub contexts: PathBuf,
    /// Judgments file, as for `correlate`
    #[arg(long)]
    pub utilities: Option<PathBuf>,
    /// Context size to learn weights for (required when the input mixes sizes)
    #[arg(long)]
    pub k: Option<usize>,
    /// SVM regularisation trade-off C
    #[arg(long, default_value_t = 1.0)]
    pub c: f64,
    /// Seed of the coordinate order (results are deterministic for a seed)
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Stopping tolerance on the projected gradient
    #[arg(long, default_value_t = 1e-6)]
    pub tolerance: f64,
    /// Maximum passes over the training pairs
    #[arg(long, default_value_t = 10_000)]
    pub max_epochs: usize,
    /// Output model JSON (stdout when absent)
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
}

pub fn run(args: Args) -> ExitCode {
    finish("correlate", execute(&args))
}

pub fn train(args: TrainArgs) -> ExitCode {
    finish("udcg-train", execute_train(&args))
}

fn finish(command: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("ragscope {command}: {message}");
            ExitCode::FAILURE
        }
    }
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))
}

fn load_sets(contexts_path: &Path, utilities: Option<&Path>) -> Result<Vec<ContextSet>, String> {
    let utilities = match utilities {
        Some(p) => Some(
            utilities_tsv::parse(&p.display().to_string(), &read(p)?).map_err(|e| e.to_string())?,
        ),
        None => None,
    };
    contexts::parse(
        &contexts_path.display().to_string(),
        &read(contexts_path)?,
        utilities.as_ref(),
    )
    .map_err(|e| e.to_string())
}

fn write_out(output: Option<&Path>, text: &str) -> Result<(), String> {
    match output {
        Some(p) => std::fs::write(p, text).map_err(|e| format!("{}: {e}", p.display())),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

fn execute(args: &Args) -> Result<(), String> {
    if !(0.0..=1.0).contains(&args.gamma) {
        return Err(format!("--gamma {} is outside [0, 1]", args.gamma));
    }
    let reference = Metric::ALL
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(&args.reference))
        .ok_or_else(|| {
            let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
            format!(
                "--reference {:?}: expected one of {}",
                args.reference,
                names.join(", ")
            )
        })?;
    let sets = load_sets(&args.contexts, args.utilities.as_deref())?;
    let theta = match &args.theta {
        Some(p) => {
            Some(ThetaModel::from_json(&read(p)?).map_err(|e| format!("{}: {e}", p.display()))?)
        }
        None => None,
    };
    let config = StudyConfig {
        k: args.k,
        udcg: UdcgParams {
            gamma: args.gamma,
            ..UdcgParams::default()
        },
        theta,
        resamples: args.resamples,
        seed: args.seed,
        reference,
    };
    let format = match args.format {
        OutputFormat::Text => Format::Text,
        OutputFormat::Csv => Format::Csv,
        OutputFormat::Json => Format::Json,
        OutputFormat::Latex => Format::Latex,
    };
    let coefficient = match args.coefficient {
        CoefficientArg::Spearman => Coefficient::Spearman,
        CoefficientArg::Kendall => Coefficient::KendallTauB,
        CoefficientArg::Pearson => Coefficient::Pearson,
    };
    let text = match &args.sensitivity {
        Some(list) => {
            let ks = parse_ks(list)?;
            let results = sensitivity(&sets, &ks, &config);
            if results.is_empty() {
                return Err(format!(
                    "no context size in {ks:?} has questions with differing outcomes"
                ));
            }
            report::sensitivity(&results, format, coefficient)
        }
        None => {
            let result =
                study(&sets, &config).map_err(|e| format!("{}: {e}", args.contexts.display()))?;
            report::table3(&result, format, coefficient)
        }
    };
    write_out(args.output.as_deref(), &text)
}

fn parse_ks(list: &[String]) -> Result<Vec<usize>, String> {
    let items: Vec<&String> = list.iter().filter(|s| !s.trim().is_empty()).collect();
    if items.is_empty() {
        return Ok((1..=10).collect());
    }
    items
        .iter()
        .map(|s| match s.trim().parse::<usize>() {
            Ok(k) if k > 0 => Ok(k),
            _ => Err(format!("--sensitivity: {s:?} is not a positive integer")),
        })
        .collect()
}

fn execute_train(args: &TrainArgs) -> Result<(), String> {
    if !(args.c > 0.0 && args.c.is_finite()) {
        return Err(format!("--c {} must be a positive number", args.c));
    }
    let sets = load_sets(&args.contexts, args.utilities.as_deref())?;
    let k = resolve_k(&sets, args.k).map_err(|e| format!("{}: {e}", args.contexts.display()))?;
    let options = SvmOptions {
        c: args.c,
        tolerance: args.tolerance,
        max_epochs: args.max_epochs,
        seed: args.seed,
    };
    let model = theta::train(&sets, k, &options)
        .map_err(|e| format!("{}: {e}", args.contexts.display()))?;
    if !model.converged {
        eprintln!(
            "ragscope udcg-train: warning: not converged after {} epochs (raise --max-epochs or --tolerance)",
            args.max_epochs
        );
    }
    write_out(args.output.as_deref(), &(model.to_json() + "\n"))
}
