//! `ragscope graded`: P@k, AP@k and MRR of runs against UMBRELA-graded qrels (grades 0–3,
//! relevant iff grade ≥ 2), trec_eval's formulas by default or open-rag-eval 0.3.0's.
//!
//! JSON: `{"k":K,"compat":C,"runs":[{"run_id":R,"mean":{"P@K","AP@K","MRR"},"topics":{QID:{…}}}]}`
//! (`topics` with `--per-topic`; `null` where open-rag-eval skips P@k/AP@k because k exceeds
//! the list).

use std::process::ExitCode;

use ragscope_eval::answers::graded::{self, GradedCompat, GradedRun, GradedScores};
use ragscope_eval::answers::{json_report, umbrela_qrels};

use super::common::{self, Format, Grid};

#[derive(clap::Args, Debug)]
#[command(after_help = "Example: ragscope graded --qrels umbrela.qrels --k 10 run1.txt run2.txt")]
pub struct Args {
    /// UMBRELA-graded qrels (qid iter docno grade, grades 0–3).
    #[arg(long)]
    pub qrels: String,
    /// Cutoff for P@k and AP@k.
    #[arg(long, default_value_t = 10)]
    pub k: usize,
    /// trec-eval (default: AP@k over all judged relevant passages) or open-rag-eval (AP@k over
    /// the relevant passages in the top k; P@k skipped when k exceeds the list).
    #[arg(long, default_value = "trec-eval", value_parser = ["trec-eval", "open-rag-eval"])]
    pub compat: String,
    #[arg(long)]
    pub per_topic: bool,
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Run files (TREC format).
    #[arg(required = true)]
    pub runs: Vec<String>,
}

pub fn run(args: Args) -> ExitCode {
    let compat = if args.compat == "open-rag-eval" {
        GradedCompat::OpenRagEval
    } else {
        GradedCompat::TrecEval
    };
    let qrels = std::fs::read(&args.qrels)
        .map_err(|e| format!("cannot read '{}': {e}", args.qrels))
        .and_then(|b| umbrela_qrels::parse(&args.qrels, &b).map_err(|e| e.to_string()));
    let qrels = match qrels {
        Ok(q) => q,
        Err(e) => {
            eprintln!("ragscope graded: {e}");
            return ExitCode::from(2);
        }
    };
    let mut results = Vec::new();
    for path in &args.runs {
        match common::read_run(path) {
            Ok(run) => results.push(graded::score_run(&run, &qrels, args.k, compat)),
            Err(e) => {
                eprintln!("ragscope graded: {e}");
                return ExitCode::from(2);
            }
        }
    }
    print!("{}", render(&results, &args, compat));
    ExitCode::SUCCESS
}

fn render(results: &[GradedRun], args: &Args, compat: GradedCompat) -> String {
    let k = args.k;
    if args.format == Format::Json {
        let doc = json_report::graded_runs(results, k, compat, args.per_topic);
        return format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    }
    let mut header = vec!["run".to_string()];
    if args.per_topic {
        header.push("topic".to_string());
    }
    header.extend([format!("P@{k}"), format!("AP@{k}"), "MRR".to_string()]);
    let num = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.4}"));
    let row = |run: &str, topic: Option<&str>, s: &GradedScores| {
        let mut cells = vec![run.to_string()];
        cells.extend(topic.map(str::to_string));
        cells.extend([
            num(s.precision),
            num(s.average_precision),
            num(Some(s.reciprocal_rank)),
        ]);
        cells
    };
    let mut cells = Vec::new();
    for r in results {
        if args.per_topic {
            for t in &r.topics {
                cells.push(row(&r.run_id, Some(&t.qid), &t.scores));
            }
        }
        cells.push(row(&r.run_id, args.per_topic.then_some("all"), &r.mean));
    }
    Grid {
        header,
        cells,
        label_columns: if args.per_topic { 2 } else { 1 },
        latex_cells: None,
        notes: vec!["relevant: grade >= 2".to_string()],
    }
    .render(args.format)
}
