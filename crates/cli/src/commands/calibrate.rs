//! `ragscope calibrate`: prediction-powered estimates of a run's mean measure from an LLM
//! judge's qrels and a random sample of human labels, with confidence intervals (classical,
//! PPI, PPI++; formulas in `ragscope_eval::calibration::mean`, docs/calibration.md).
//!
//! JSON: `{"alpha":A,"unit":U,"measure":M,"runs":[{"run":R,"units":N,"labelled":n,"judge":x,
//! "classical":{"estimate","low","high"},"ppi":{"estimate","low","high","lambda"},
//! "ppi++":{…},"more_labels_needed":k}]}`, runs in command-line order, R the run file's tag;
//! only the methods asked for; `more_labels_needed` with `--target-width` (null: no number of
//! labels reaches the width).

use std::collections::HashMap;
use std::process::ExitCode;

use ragscope_eval::calibration::planner::{more_labels_needed, Plan};
use ragscope_eval::calibration::units::{item_units, query_units, Units};
use ragscope_eval::calibration::{classical, ppi, Estimate, Sample};
use ragscope_eval::measures::MeasureKind;
use ragscope_eval::{Measure, Qrels};

use super::calibrate_agreement::{self, Resample, Settings};
use super::calibrate_answers;
use super::calibrate_inputs::{self, Design};
use super::common::{self, json_number, Format, Grid};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Unit {
    /// (topic, document) pairs of each run's top k; for P@k and P(rel=r)@k
    Item,
    /// Topics; labelled when the human graded every document of the run's top k
    Query,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Method {
    All,
    Classical,
    Ppi,
    #[value(name = "ppi++")]
    PpiPlusPlus,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "The human qrels are a uniform random sample unless a comment line says \
otherwise: `# ragscope-sample: stratified` (give --weights) or `# ragscope-sample: \
disagreements-first` (refused: no valid interval).\n\
Example: ragscope calibrate --judge umbrela.qrels --human human.qrels -m P@5 --unit item run.txt"
)]
pub struct Args {
    /// The LLM judge's qrels (every unit).
    #[arg(long)]
    pub judge: String,
    /// Human qrels on a random sample of the units.
    #[arg(long)]
    pub human: String,
    /// The measure (any `ragscope eval` measure with --unit query; P@k or P(rel=r)@k with
    /// --unit item).
    #[arg(long, short)]
    pub measure: String,
    #[arg(long, value_enum, default_value = "query")]
    pub unit: Unit,
    /// Depth of the top k (default: the measure's cutoff).
    #[arg(long)]
    pub k: Option<usize>,
    /// Error level: the intervals aim at coverage 1 − alpha.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    #[arg(long, value_enum, default_value = "all")]
    pub method: Method,
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Inverse inclusion probabilities of a stratified sample: `qid docno weight` lines
    /// (--unit item) or `qid weight` (--unit query), one for every labelled unit.
    #[arg(long)]
    pub weights: Option<String>,
    /// Also report how many more labels would bring the PPI++ interval to this total width.
    #[arg(long)]
    pub target_width: Option<f64>,
    /// Instead of estimates: judge–human agreement (κ, weighted κ, α, per-class precision and
    /// recall) with bootstrap 95% intervals, the items where they differ, and Kendall τ between
    /// the runs' rankings under judge and human labels (needs --unit query).
    #[arg(long)]
    pub agreement: bool,
    /// What --agreement resamples.
    #[arg(long, value_enum, default_value = "topics")]
    pub resample: Resample,
    /// Bootstrap resamples for --agreement.
    #[arg(long, default_value_t = 2000, value_parser = clap::value_parser!(u32).range(1..=100_000))]
    pub resamples: u32,
    /// Seed of the bootstrap for --agreement.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// How the human sample was drawn, for files that cannot say it in a comment line (nugget
    /// assignments); a `# ragscope-sample:` line in the human qrels must agree.
    #[arg(long, value_enum)]
    pub sample: Option<Design>,
    /// Nugget scores: --judge and --human are nuggetizer assignment files (JSONL with run_id
    /// fields), -m one of V_strict, V, W_strict, W, A_strict, A, L; the units are topics; RUN
    /// arguments, if any, pick run ids.
    #[arg(long)]
    pub nuggets: bool,
    /// Pairwise win rates: --judge and --human are RAGElo pairwise evaluations (CSV
    /// qid,agent_a,agent_b,answer or answers_eval JSONL), -m win_rate; one estimate per pair of
    /// agents (the first-named agent's win rate, ties half), the units are games.
    #[arg(long, conflicts_with = "nuggets")]
    pub pairwise: bool,
    /// Run files (TREC format), or with --nuggets the run ids to report (default: all).
    #[arg(required_unless_present_any = ["nuggets", "pairwise"])]
    pub runs: Vec<String>,
}

pub fn run(args: Args) -> ExitCode {
    match execute(&args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("ragscope calibrate: {message}");
            ExitCode::FAILURE
        }
    }
}

pub(super) struct RunResult {
    run: String,
    units: usize,
    labelled: usize,
    judge: f64,
    estimates: Vec<(&'static str, Estimate)>,
    plan: Option<Plan>,
}

fn execute(args: &Args) -> Result<String, String> {
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err(format!("--alpha {} is outside (0, 1)", args.alpha));
    }
    let design = sample_design(args)?;
    match (design, &args.weights) {
        (Design::DisagreementsFirst, _) => {
            return Err(format!(
                "'{}' is marked as a disagreements-first sample: items put first because \
                 judges disagreed on them are not a random sample, so no estimate or interval \
                 from them is valid; label a uniform random (or stratified, with --weights) \
                 sample instead",
                args.human
            ))
        }
        (Design::Stratified, None) => {
            return Err(format!(
                "'{}' is marked as a stratified sample: give the inclusion weights with \
                 --weights FILE",
                args.human
            ))
        }
        _ => {}
    }
    let weights = match &args.weights {
        Some(path) => {
            let text =
                std::fs::read_to_string(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
            let item = args.unit == Unit::Item && !args.nuggets;
            Some(calibrate_inputs::weights(path, &text, item)?)
        }
        None => None,
    };
    if args.nuggets {
        return calibrate_answers::nuggets(args, weights.as_ref());
    }
    if args.pairwise {
        return calibrate_answers::pairwise(args, weights.as_ref());
    }
    let measure: Measure = args.measure.parse().map_err(|e| format!("{e}"))?;
    let k = match (args.k, measure.cutoff) {
        (Some(k), _) => k,
        (None, Some(c)) => c as usize,
        (None, None) => {
            return Err(format!(
                "{measure} has no cutoff: give --k, the depth the human must have graded"
            ))
        }
    };
    if args.unit == Unit::Item && (measure.kind != MeasureKind::P || measure.cutoff.is_none()) {
        return Err(format!(
            "--unit item averages (topic, document) labels, which is P@k or P(rel=r)@k; for \
             {measure} use --unit query"
        ));
    }
    let judge = common::read_qrels(&args.judge)?;
    let human = common::read_qrels(&args.human)?;
    if args.agreement {
        return agreement(args, &measure, k, &judge, &human);
    }
    let mut results = Vec::new();
    for path in &args.runs {
        let run = common::read_run(path)?;
        let units = match args.unit {
            Unit::Item => item_units(&run, &judge, &human, k, measure.level()),
            Unit::Query => query_units(&run, &judge, &human, &measure, k),
        };
        results.push(estimate_run(
            args,
            path,
            run.run_id(),
            &units,
            weights.as_ref(),
        )?);
    }
    Ok(match args.format {
        Format::Json => json(args, &measure.to_string(), &results),
        other => grid(&results).render(other),
    })
}

/// The sample design: the human qrels' `# ragscope-sample:` line, else `--sample`, else random.
fn sample_design(args: &Args) -> Result<Design, String> {
    let marked = if args.nuggets {
        None
    } else {
        let text = std::fs::read_to_string(&args.human)
            .map_err(|e| format!("cannot read '{}': {e}", args.human))?;
        calibrate_inputs::design(&args.human, &text)?
    };
    match (marked, args.sample) {
        (Some(m), Some(f)) if m != f => Err(format!(
            "'{}' says `# ragscope-sample: {}` but --sample says {}",
            args.human,
            m.name(),
            f.name()
        )),
        (m, f) => Ok(m.or(f).unwrap_or(Design::Random)),
    }
}

fn agreement(
    args: &Args,
    measure: &Measure,
    k: usize,
    judge: &Qrels,
    human: &Qrels,
) -> Result<String, String> {
    if args.unit != Unit::Query {
        return Err("--agreement ranks the runs by per-topic values: use --unit query".into());
    }
    let mut per_run = Vec::new();
    for path in &args.runs {
        let run = common::read_run(path)?;
        per_run.push(query_units(&run, judge, human, measure, k));
    }
    let settings = Settings {
        resample: args.resample,
        resamples: args.resamples as usize,
        seed: args.seed,
        format: args.format,
    };
    calibrate_agreement::report(judge, human, &per_run, &settings)
}

pub(super) fn estimate_run(
    args: &Args,
    path: &str,
    run_id: &str,
    units: &Units,
    weights: Option<&HashMap<String, f64>>,
) -> Result<RunResult, String> {
    if units.judge.is_empty() {
        return Err(format!(
            "{path}: no topic of the run is in the judge's file '{}'",
            args.judge
        ));
    }
    if units.judge_missing > 0 {
        eprintln!(
            "ragscope calibrate: warning: {path}: {} item(s) in the top k have no judge grade \
             in '{}' (counted as not relevant)",
            units.judge_missing, args.judge
        );
    }
    let (y, yhat) = units.labelled();
    if y.len() < 2 {
        return Err(format!(
            "{path}: {} labelled unit(s): an interval needs at least 2 units the human qrels \
             '{}' label{}",
            y.len(),
            args.human,
            if args.unit == Unit::Query {
                " (a topic counts when every document of the run's top k has a human grade)"
            } else {
                ""
            }
        ));
    }
    let w = match weights {
        Some(table) => {
            let labelled_ids = units
                .ids
                .iter()
                .zip(&units.human)
                .filter_map(|(id, h)| h.map(|_| id));
            let mut w = Vec::with_capacity(y.len());
            for id in labelled_ids {
                w.push(*table.get(id).ok_or_else(|| {
                    format!(
                        "{}: no weight for the labelled unit {id:?}",
                        args.weights.as_deref().unwrap_or("")
                    )
                })?);
            }
            Some(w)
        }
        None => None,
    };
    let sample = Sample {
        y: &y,
        yhat: &yhat,
        yhat_unlabelled: &units.judge,
        w: w.as_deref(),
        w_unlabelled: None,
    };
    let failed = |e: ragscope_eval::calibration::CalibrationError| format!("{path}: {e}");
    let mut estimates = Vec::new();
    let want = |m: Method| args.method == Method::All || args.method == m;
    if want(Method::Classical) {
        estimates.push((
            "classical",
            classical(&y, w.as_deref(), args.alpha).map_err(failed)?,
        ));
    }
    if want(Method::Ppi) {
        estimates.push(("ppi", ppi(&sample, Some(1.0), args.alpha).map_err(failed)?));
    }
    if want(Method::PpiPlusPlus) {
        estimates.push(("ppi++", ppi(&sample, None, args.alpha).map_err(failed)?));
    }
    let plan = match args.target_width {
        Some(width) => Some(more_labels_needed(&sample, args.alpha, width).map_err(failed)?),
        None => None,
    };
    Ok(RunResult {
        run: run_id.to_string(),
        units: units.judge.len(),
        labelled: y.len(),
        judge: units.judge.iter().sum::<f64>() / units.judge.len() as f64,
        estimates,
        plan,
    })
}

pub(super) fn json(args: &Args, measure: &str, results: &[RunResult]) -> String {
    let runs: Vec<serde_json::Value> = results
        .iter()
        .map(|r| {
            let mut row = serde_json::json!({
                "run": r.run, "units": r.units, "labelled": r.labelled,
                "judge": json_number(Some(r.judge)),
            });
            for (name, e) in &r.estimates {
                let mut cell = serde_json::json!({
                    "estimate": json_number(Some(e.estimate)),
                    "low": json_number(Some(e.low)),
                    "high": json_number(Some(e.high)),
                });
                if *name != "classical" {
                    cell["lambda"] = json_number(Some(e.lambda));
                }
                row[*name] = cell;
            }
            if let Some(plan) = r.plan {
                row["more_labels_needed"] = match plan {
                    Plan::More(k) => k.into(),
                    Plan::Unreachable => serde_json::Value::Null,
                };
            }
            row
        })
        .collect();
    let unit = match args.unit {
        _ if args.pairwise => "game",
        Unit::Item if !args.nuggets => "item",
        _ => "query",
    };
    let value = serde_json::json!({
        "alpha": args.alpha, "unit": unit, "measure": measure, "runs": runs,
    });
    format!("{value}\n")
}

pub(super) fn grid(results: &[RunResult]) -> Grid {
    let planned = results.iter().any(|r| r.plan.is_some());
    let mut header: Vec<String> = ["run", "method", "units", "labelled", "estimate", "low"]
        .map(String::from)
        .to_vec();
    header.extend(["high", "lambda"].map(String::from));
    if planned {
        header.push("more_labels".into());
    }
    let mut cells = Vec::new();
    for r in results {
        let counts = [r.units.to_string(), r.labelled.to_string()];
        let mut judge_row = vec![r.run.clone(), "judge".into()];
        judge_row.extend(counts.clone());
        judge_row.extend([format!("{:.4}", r.judge), "".into(), "".into(), "".into()]);
        if planned {
            judge_row.push(String::new());
        }
        cells.push(judge_row);
        for (name, e) in &r.estimates {
            let mut row = vec![r.run.clone(), name.to_string()];
            row.extend(counts.clone());
            row.extend([
                format!("{:.4}", e.estimate),
                format!("{:.4}", e.low),
                format!("{:.4}", e.high),
                format!("{:.4}", e.lambda),
            ]);
            if planned {
                row.push(match (name, r.plan) {
                    // More than the units left unlabelled: the plan cannot be followed as is.
                    (&"ppi++", Some(Plan::More(k))) if k as usize > r.units - r.labelled => {
                        format!("{k} (> {} left)", r.units - r.labelled)
                    }
                    (&"ppi++", Some(Plan::More(k))) => k.to_string(),
                    (&"ppi++", Some(Plan::Unreachable)) => "unreachable".into(),
                    _ => String::new(),
                });
            }
            cells.push(row);
        }
    }
    Grid {
        header,
        cells,
        label_columns: 2,
        latex_cells: None,
        notes: Vec::new(),
    }
}
