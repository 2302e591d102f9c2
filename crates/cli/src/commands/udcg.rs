//! `ragscope udcg`: UDCG of runs against qrels + a utilities TSV (like `eval`), or, given one
//! UDCG reference JSON file, fill its `udcg` field for every model present.

use std::path::PathBuf;
use std::process::ExitCode;

use ragscope_eval::measures::{Measure, MeasureKind};
use ragscope_eval::rag::reference_json;
use ragscope_eval::rag::udcg::{Convention, Gain, UdcgParams};
use ragscope_eval::rag::{Gamma, UdcgVariant};

use super::common::Format;
use super::eval::{evaluate_runs, render, Setup};

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
#[command(after_help = "Two forms:\n  \
ragscope udcg --qrels Q --utilities U.tsv [--k 5] [--gamma G] [--per-query] [--format F] RUN...\n  \
ragscope udcg [--k 5] [--gamma G] [--compat udcg-ref] [-o OUT.json] INPUT.json")]
pub struct Args {
    /// One UDCG reference JSON (list of {example_id, question, passages, udcg}), or TREC run
    /// files when --qrels is given.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Qrels choosing the topics to score: switches to the run form.
    #[arg(long, requires = "utilities")]
    pub qrels: Option<String>,
    /// Passage utilities (TSV: qid docno relevant no_res_prob [model], or qid docno utility).
    #[arg(long, requires = "qrels")]
    pub utilities: Option<String>,
    /// Reader model whose p(NO-RESPONSE) to use when the utilities name several.
    #[arg(long, requires = "qrels")]
    pub model: Option<String>,
    /// Weight γ of distracting passages, a decimal or a fraction such as 1/3 (default 1/3;
    /// 0.333 with --compat udcg-ref)
    #[arg(long)]
    pub gamma: Option<String>,
    /// Score only the first K passages of each example or ranking
    #[arg(long)]
    pub k: Option<usize>,
    /// Utility ±1 from the relevance label alone (the paper's binary ablation)
    #[arg(long)]
    pub binary: bool,
    /// Convention to follow
    #[arg(long, value_enum, default_value_t = Compat::Paper)]
    pub compat: Compat,
    /// Run form: one line per run and topic
    #[arg(long, requires = "qrels")]
    pub per_query: bool,
    /// Run form: score every qrels topic, a missing one as an empty context (trec_eval -c)
    #[arg(long, short, requires = "qrels")]
    pub complete: bool,
    /// Run form: output format
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Output file (stdout when absent)
    #[arg(short = 'o', long = "output")]
    pub output: Option<PathBuf>,
    /// JSON form: also write the judgments as a utilities TSV (`qid docno relevant no_res_prob
    /// model`)
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

/// The measure the flags describe, e.g. `UDCG(gamma=0)@5`.
fn measure(args: &Args) -> Result<Measure, String> {
    let convention = match args.compat {
        Compat::Paper => Convention::Paper,
        Compat::UdcgRef => Convention::Reference,
    };
    let gamma = match &args.gamma {
        Some(text) => text.parse::<Gamma>().map_err(|e| format!("--gamma: {e}"))?,
        None => UdcgVariant::default_gamma(convention),
    };
    if args.k == Some(0) {
        return Err("--k must be at least 1".into());
    }
    let variant = UdcgVariant {
        gamma,
        gain: if args.binary {
            Gain::Binary
        } else {
            Gain::Utility
        },
        convention,
    };
    let mut m = Measure::new(MeasureKind::UDCG(variant));
    m.cutoff = args
        .k
        .map(|k| u32::try_from(k).map_err(|_| format!("--k {k} is too large")))
        .transpose()?;
    Ok(m)
}

fn execute(args: &Args) -> Result<(), String> {
    let m = measure(args)?;
    let text = match &args.qrels {
        Some(qrels) => score_runs(args, qrels, m)?,
        None => fill_reference_json(args, m)?,
    };
    match &args.output {
        Some(path) => std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display())),
        None => {
            print!("{text}");
            Ok(())
        }
    }
}

fn score_runs(args: &Args, qrels: &str, m: Measure) -> Result<String, String> {
    if args.utilities_out.is_some() {
        return Err("--utilities-out belongs to the JSON form (no --qrels)".into());
    }
    let runs: Vec<String> = args
        .inputs
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    let setup = Setup {
        command: "udcg",
        qrels,
        utilities: args.utilities.as_deref(),
        model: args.model.as_deref(),
        erag_outcomes: None,
        complete: args.complete,
        max_docs: None,
    };
    // evaluate_runs prefixes its messages with "ragscope udcg: " already.
    let results = evaluate_runs(&setup, &runs, &[m]).map_err(|e| {
        e.strip_prefix("ragscope udcg: ")
            .map(str::to_string)
            .unwrap_or(e)
    })?;
    Ok(render(qrels, args.per_query, args.format, &[m], &results))
}

fn fill_reference_json(args: &Args, m: Measure) -> Result<String, String> {
    let [input] = args.inputs.as_slice() else {
        return Err(format!(
            "the JSON form takes one INPUT.json, got {} files (score runs with --qrels and \
             --utilities)",
            args.inputs.len()
        ));
    };
    if args.per_query || args.complete || args.format != Format::Table {
        return Err("--per-query, --complete and --format belong to the run form (--qrels)".into());
    }
    let name = input.display().to_string();
    let text = std::fs::read_to_string(input).map_err(|e| format!("{name}: {e}"))?;
    let variant = m.udcg().unwrap_or_default();
    let data =
        reference_json::parse(&name, &text, variant.convention).map_err(|e| e.to_string())?;
    for warning in &data.warnings {
        eprintln!("ragscope udcg: warning: skipped (as the reference code does): {warning}");
    }
    let params: UdcgParams = variant.params();
    if let Some(path) = &args.utilities_out {
        let tsv = ragscope_eval::rag::utilities_tsv::write(&data.utility_rows());
        std::fs::write(path, tsv).map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let scores = data.scores_at(&params, args.k);
    Ok(data.to_json_with(&scores))
}
