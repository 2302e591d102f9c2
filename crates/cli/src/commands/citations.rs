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

use ragscope_eval::answers::citation_judgments;
use ragscope_eval::answers::citations::{self, AnswerCitations, RunCitations};
use ragscope_eval::answers::nuggetizer::file_stem;
use ragscope_eval::answers::open_rag_eval;

use super::common::{json_number, Format, Grid};

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

fn read(path: &str) -> Result<Vec<RunCitations>, String> {
    let bytes = std::fs::read(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
    let head = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if head == Some(&b'{') || bytes.starts_with("\u{feff}{".as_bytes()) {
        let judgments = citation_judgments::parse(path, &bytes).map_err(|e| e.to_string())?;
        return Ok(citation_judgments::score_runs(&judgments));
    }
    let file = bytes.as_slice();
    let scored = open_rag_eval::read_results(path, file).map_err(|e| e.to_string())?;
    let stem = file_stem(path);
    let mut runs: Vec<(u32, Vec<AnswerCitations>)> = Vec::new();
    for s in scored {
        let answer = AnswerCitations {
            qid: s.query_id.clone(),
            scores: s
                .citation_averages
                .as_ref()
                .map(|(c, p)| citations::from_averages(c, p)),
            answered: s.answered,
        };
        match runs.iter_mut().find(|(n, _)| *n == s.run) {
            Some((_, v)) => v.push(answer),
            None => runs.push((s.run, vec![answer])),
        }
    }
    runs.sort_by_key(|(n, _)| *n);
    Ok(runs
        .into_iter()
        .map(|(n, answers)| citations::aggregate(&format!("{stem}#run_{n}"), answers))
        .collect())
}

pub fn run(args: Args) -> ExitCode {
    let mut results = Vec::new();
    for path in &args.results {
        match read(path) {
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
        let runs: Vec<serde_json::Value> = results
            .iter()
            .map(|r| {
                let mut run = serde_json::json!({
                    "run_id": r.run_id,
                    "precision": json_number(Some(r.mean.precision)),
                    "recall": json_number(Some(r.mean.recall)),
                    "f1": json_number(Some(r.mean.f1)),
                    "answers_scored": r.scored,
                    "no_answer_rate": json_number(r.no_answer_rate),
                });
                if per_answer {
                    let answers: serde_json::Map<String, serde_json::Value> = r
                        .answers
                        .iter()
                        .map(|a| {
                            (
                                a.qid.clone(),
                                serde_json::json!({
                                    "precision": json_number(a.scores.map(|s| s.precision)),
                                    "recall": json_number(a.scores.map(|s| s.recall)),
                                    "f1": json_number(a.scores.map(|s| s.f1)),
                                    "answered": a.answered,
                                }),
                            )
                        })
                        .collect();
                    run["answers"] = serde_json::Value::Object(answers);
                }
                run
            })
            .collect();
        let doc = serde_json::json!({ "runs": runs });
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
