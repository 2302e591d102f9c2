//! `ragscope nuggets score`: the TREC 2024 RAG AutoNuggetizer scores (A, A_strict, V, V_strict,
//! W, W_strict, L) of nuggetizer assignment files, per run and optionally per topic.
//!
//! JSON contract (other tools script against it): `{"runs":[{"run_id":R,"mean":{"A",
//! "A_strict","V","V_strict","W","W_strict","L"},"topics":{QID:{same keys}}}]}`, `topics` only
//! with `--per-topic`, runs in command-line order (a file holding several `run_id`s gives them
//! in first-appearance order), run id = the `run_id` field, else the file name without
//! extension; numbers in full f64 precision.

use std::process::ExitCode;

use ragscope_eval::answers::nugget_scores::{self, Compat, NuggetScores, RunScores};
use ragscope_eval::answers::nuggetizer::AssignedRun;
use ragscope_eval::answers::{files, json_report};

use super::common::{Format, Grid};

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub command: NuggetsCommand,
}

#[derive(clap::Subcommand, Debug)]
pub enum NuggetsCommand {
    /// Score nuggetizer assignment files (JSONL; or Open RAG Eval results CSVs).
    Score(ScoreArgs),
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Example: ragscope nuggets score --per-topic --format json run1.jsonl run2.jsonl"
)]
pub struct ScoreArgs {
    /// Whose conventions: the paper's (default), nuggetizer 0.0.5's, or open-rag-eval 0.3.0's
    /// (vital first, first 20 nuggets, max(n,1) denominators).
    #[arg(long, default_value = "paper", value_parser = ["paper", "nuggetizer", "open-rag-eval"])]
    pub compat: String,
    /// Also print every topic's scores.
    #[arg(long)]
    pub per_topic: bool,
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// nuggetizer assignment files (qid, query, answer_text, nuggets[{text, importance,
    /// assignment}]); a .csv file is read as an Open RAG Eval results file.
    #[arg(required = true)]
    pub assignments: Vec<String>,
}

pub fn run(args: Args) -> ExitCode {
    match args.command {
        NuggetsCommand::Score(a) => score(a),
    }
}

/// Reads one input file into its runs (crates/eval's reader, shared with the Python package).
pub fn read_runs(path: &str) -> Result<Vec<AssignedRun>, String> {
    files::read_nugget_runs(path)
}

fn score(args: ScoreArgs) -> ExitCode {
    let compat: Compat = match args.compat.parse() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("ragscope nuggets score: {e}");
            return ExitCode::from(2);
        }
    };
    let mut results = Vec::new();
    for path in &args.assignments {
        match read_runs(path) {
            Ok(runs) => results.extend(runs.iter().map(|r| nugget_scores::score_run(r, compat))),
            Err(e) => {
                eprintln!("ragscope nuggets score: {e}");
                return ExitCode::from(2);
            }
        }
    }
    // The table formats carry this as a note under the table.
    for r in results
        .iter()
        .filter(|_| matches!(args.format, Format::Json | Format::Csv))
    {
        if r.failed > 0 {
            eprintln!(
                "ragscope nuggets score: run '{}': {} failed assignment(s) scored 0 (kept in the denominators)",
                r.run_id, r.failed
            );
        }
    }
    print!("{}", render(&results, args.per_topic, args.format));
    ExitCode::SUCCESS
}

pub fn render(results: &[RunScores], per_topic: bool, format: Format) -> String {
    if format == Format::Json {
        let doc = json_report::nugget_runs(results, per_topic);
        return format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    }
    let mut header = vec!["run".to_string()];
    if per_topic {
        header.push("topic".to_string());
    }
    header.extend(nugget_scores::SCORE_NAMES.iter().map(|s| s.to_string()));
    let row = |run: &str, topic: Option<&str>, s: &NuggetScores| {
        let mut cells = vec![run.to_string()];
        if let Some(t) = topic {
            cells.push(t.to_string());
        }
        cells.extend(nugget_scores::SCORE_NAMES.iter().map(|n| {
            let v = s.get(n).unwrap_or(f64::NAN);
            if *n == "L" {
                format!("{v:.1}")
            } else {
                format!("{v:.4}")
            }
        }));
        cells
    };
    let mut cells = Vec::new();
    for r in results {
        if per_topic {
            for t in &r.topics {
                cells.push(row(&r.run_id, Some(&t.qid), &t.scores));
            }
        }
        cells.push(row(&r.run_id, per_topic.then_some("all"), &r.mean));
    }
    let notes = results
        .iter()
        .filter(|r| r.failed > 0)
        .map(|r| format!("{}: {} failed assignment(s) scored 0", r.run_id, r.failed))
        .collect();
    Grid {
        header,
        cells,
        label_columns: if per_topic { 2 } else { 1 },
        latex_cells: None,
        notes,
    }
    .render(format)
}
