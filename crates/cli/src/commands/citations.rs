//! `ragscope citations`: citation precision, recall and F1 per answer and run, and the no-answer
//! rate, from Open RAG Eval results CSVs (its CitationMetric and NoAnswerMetric judgments) or
//! from the citation-support JSONL of `ragscope judge citations` (one run per `run_id`; no
//! no-answer judgments there).
//!
//! JSON: `{"runs":[{"run_id":R,"precision":p,"recall":r,"f1":f,"answers_scored":n,
//! "no_answer_rate":x|null,"answers":{QID:{"precision","recall","f1","answered"}}}]}`
//! (`answers` with `--per-answer`). Each repetition n of a file (`run_n_` columns) is a run
//! named `FILE_STEM#run_n`.

use std::process::ExitCode;

use ragscope_eval::answers::citations::RunCitations;
use ragscope_eval::answers::{files, json_report};

use super::common::{Format, Grid};

#[derive(clap::Args, Debug)]
#[command(after_help = "Example: ragscope citations --per-answer results.csv")]
pub struct Args {
    /// Also print every answer's scores.
    #[arg(long)]
    pub per_answer: bool,
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Open RAG Eval results CSVs (run_N_generation_score_citation_scores columns), or
    /// citation-support JSONL from `ragscope judge citations` (recognised by a leading `{`).
    #[arg(required = true)]
    pub results: Vec<String>,
}

pub fn run(args: Args) -> ExitCode {
    let mut results = Vec::new();
    for path in &args.results {
        match files::read_citation_runs(path) {
            Ok(r) => results.extend(r),
            Err(e) => {
                eprintln!("ragscope citations: {e}");
                return ExitCode::from(2);
            }
        }
    }
    print!("{}", render(&results, args.per_answer, args.format));
    ExitCode::SUCCESS
}

fn render(results: &[RunCitations], per_answer: bool, format: Format) -> String {
    if format == Format::Json {
        let doc = json_report::citation_runs(results, per_answer);
        return format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    }
    let num = |v: Option<f64>| v.map_or("n/a".to_string(), |v| format!("{v:.4}"));
    let mut header = vec!["run".to_string()];
    if per_answer {
        header.push("answer".to_string());
    }
    header.extend(["precision", "recall", "F1", "no-answer rate"].map(String::from));
    let mut cells = Vec::new();
    for r in results {
        if per_answer {
            for a in &r.answers {
                cells.push(vec![
                    r.run_id.clone(),
                    a.qid.clone(),
                    num(a.scores.map(|s| s.precision)),
                    num(a.scores.map(|s| s.recall)),
                    num(a.scores.map(|s| s.f1)),
                    match a.answered {
                        Some(true) => "answered".into(),
                        Some(false) => "no answer".into(),
                        None => "n/a".into(),
                    },
                ]);
            }
        }
        let mut row = vec![r.run_id.clone()];
        if per_answer {
            row.push("all".into());
        }
        row.extend([
            num(Some(r.mean.precision)),
            num(Some(r.mean.recall)),
            num(Some(r.mean.f1)),
            num(r.no_answer_rate),
        ]);
        cells.push(row);
    }
    Grid {
        header,
        cells,
        label_columns: if per_answer { 2 } else { 1 },
        latex_cells: None,
        notes: Vec::new(),
    }
    .render(format)
}
