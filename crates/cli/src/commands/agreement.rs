//! `ragscope agreement A B`: agreement between two judgments of the same items — two qrels files
//! (labels or grades: Cohen's κ, weighted κ, Krippendorff's α) or two per-topic score files of
//! the same runs (Kendall τ over run means, over topic/run pairs, per topic averaged).

use std::process::ExitCode;

use ragscope_eval::answers::agreement_report::{
    default_kind, labels_report, runs_report, Kind, Report,
};
use ragscope_eval::answers::{files, json_report};

use super::common::{read_qrels, Format, Grid};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum KindArg {
    /// Two qrels files, labels compared as categories
    Labels,
    /// Two qrels files with ordered grades (e.g. UMBRELA 0–3 against human qrels)
    Grades,
    /// Two per-topic score files (nugget score JSON with --per-topic, or trec_eval -q output)
    Runs,
}

#[derive(clap::Args, Debug)]
pub struct Args {
    /// First judgment
    pub a: String,
    /// Second judgment
    pub b: String,
    /// What the files hold (default: runs for score files; grades for qrels with a label
    /// outside 0/1, else labels)
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// Measure compared with --kind runs (default: V_strict in nugget JSON, else the only one)
    #[arg(long)]
    pub measure: Option<String>,
    /// Output format
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

pub fn run(args: Args) -> ExitCode {
    match execute(&args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("ragscope agreement: {message}");
            ExitCode::FAILURE
        }
    }
}

fn execute(args: &Args) -> Result<String, String> {
    let runs = match args.kind {
        Some(KindArg::Runs) => true,
        Some(_) => false,
        None => files::looks_like_scores(&args.a)?,
    };
    let report = if runs {
        let a = files::read_topic_scores(&args.a, args.measure.as_deref())?;
        let measure = args.measure.clone().unwrap_or_else(|| a.measure.clone());
        let b = files::read_topic_scores(&args.b, Some(&measure))?;
        runs_report(&a, &b)
    } else {
        let a = read_qrels(&args.a)?;
        let b = read_qrels(&args.b)?;
        let kind = match args.kind {
            Some(KindArg::Labels) => Kind::Labels,
            Some(KindArg::Grades) => Kind::Grades,
            _ => default_kind(&a, &b),
        };
        labels_report(&a, &b, kind)
    };
    if report.rows.iter().all(|r| r.items == 0) {
        return Err(format!(
            "'{}' and '{}' share no items (same qid and docno, or same run and topic)",
            args.a, args.b
        ));
    }
    Ok(match args.format {
        Format::Json => json(&report),
        other => grid(&report).render(other),
    })
}

fn json(report: &Report) -> String {
    format!("{}\n", json_report::agreement(report))
}

fn grid(report: &Report) -> Grid {
    let cells = report
        .rows
        .iter()
        .map(|r| {
            vec![
                r.statistic.to_string(),
                r.value.map_or("n/a".to_string(), |v| format!("{v:.4}")),
                r.items.to_string(),
            ]
        })
        .collect();
    let mut notes = Vec::new();
    if report.only_a + report.only_b > 0 {
        notes.push(format!(
            "left out: {} items only in the first file, {} only in the second",
            report.only_a, report.only_b
        ));
    }
    Grid {
        header: ["statistic", "value", "items"].map(String::from).to_vec(),
        cells,
        label_columns: 1,
        latex_cells: None,
        notes,
    }
}
