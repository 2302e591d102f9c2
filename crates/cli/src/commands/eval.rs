//! `ragscope eval`: several runs side by side on named measures.

use crate::heap;
use std::process::ExitCode;

use ragscope_eval::formats::Input;
use ragscope_eval::{
    evaluate_with, missing_topics, read_and_evaluate, try_evaluate, EvalOptions, Measure, Qrels,
    Results, Run,
};

use super::common::{self, number, Format, Grid};

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Measures: MAP, MAP@k, MRR, RR@k, nDCG, nDCG@k, nDCG(gain=exp)@k, P@k, \
P(rel=2)@k, R@k, Success@k, Rprec, bpref, infAP, Judged@k, NumRet, NumRel, NumRelRet, SetP, SetR, SetF, \
UDCG@k, UDCG(gamma=0)@k, UDCG(gain=binary)@k, UDCG(compat=udcg-ref)@k (UDCG needs --utilities), \
eRAG-P@k, eRAG-success@k, eRAG-P(metric=em|rouge_l)@k (eRAG needs --erag-outcomes).\n\
Example: ragscope eval --qrels qrels.txt --measures nDCG@10,MAP run1.txt run2.txt"
)]
pub struct Args {
    /// Relevance judgments (TREC qrels: qid iter docno rel).
    #[arg(long)]
    pub qrels: String,
    /// Comma-separated measures.
    #[arg(long, short, default_value = "MAP,MRR,nDCG@10,P@10,R@100,bpref,Rprec")]
    pub measures: Vec<String>,
    /// Passage utilities for UDCG (TSV: qid docno relevant no_res_prob [model], or qid docno
    /// utility). UDCG takes relevance from here; the qrels still choose the topics.
    #[arg(long)]
    pub utilities: Option<String>,
    /// Reader model whose p(NO-RESPONSE) to use when the utilities name several.
    #[arg(long)]
    pub model: Option<String>,
    /// Per-passage answers for eRAG measures: the JSON Lines `ragscope answer --erag` writes.
    #[arg(long)]
    pub erag_outcomes: Option<String>,
    /// One line per run and topic instead of one line per run.
    #[arg(long)]
    pub per_query: bool,
    /// Score every qrels topic; topics a run lacks count as empty rankings (trec_eval -c).
    #[arg(long, short)]
    pub complete: bool,
    /// Keep only the top N results per topic (trec_eval -M).
    #[arg(long)]
    pub max_docs: Option<usize>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
    /// Run files (TREC format: qid Q0 docno rank score tag).
    #[arg(required = true)]
    pub runs: Vec<String>,
}

/// What a scoring command needs besides the runs: shared by `eval`, `udcg` and `compare`.
pub struct Setup<'a> {
    pub command: &'a str,
    pub qrels: &'a str,
    pub utilities: Option<&'a str>,
    pub model: Option<&'a str>,
    /// eRAG outcomes file (`ragscope answer --erag`), for eRAG measures.
    pub erag_outcomes: Option<&'a str>,
    pub complete: bool,
    pub max_docs: Option<usize>,
}

/// Scores every run; the error names the file (and line) at fault, prefixed by the command.
/// Passages without a utility are reported on stderr, never silently scored.
pub fn evaluate_runs(
    setup: &Setup,
    runs: &[String],
    measures: &[Measure],
) -> Result<Vec<(String, Results)>, String> {
    let cmd = setup.command;
    // Runs are read one at a time: the heap is sized for the qrels and the largest.
    heap::prepare_for(|| {
        let largest_run = runs.iter().map(|r| heap::file_sizes([r.as_str()])).max();
        heap::file_sizes([setup.qrels]) + largest_run.unwrap_or(0)
    });
    let plain = setup.utilities.is_none()
        && setup.erag_outcomes.is_none()
        && !measures
            .iter()
            .any(|m| m.needs_utilities() || m.needs_erag_outcomes());
    if plain {
        return evaluate_plain_runs(setup, runs, measures);
    }
    let (qrels, first_run) = qrels_beside(setup.qrels, || {
        runs.first().map(|path| common::read_run(path))
    });
    let qrels = qrels.map_err(|e| format!("ragscope {cmd}: {e}"))?;
    let mut first_run = first_run;
    let mut opts = EvalOptions {
        complete: setup.complete,
        max_docs: setup.max_docs.unwrap_or(usize::MAX),
        ..EvalOptions::default()
    };
    if let Some(path) = setup.utilities {
        let (utilities, model) = common::read_utilities(path, setup.model)
            .map_err(|e| format!("ragscope {cmd}: {e}"))?;
        opts.utilities = Some(utilities);
        opts.utility_model = model;
    }
    if let Some(path) = setup.erag_outcomes {
        opts.erag =
            Some(common::read_erag_outcomes(path).map_err(|e| format!("ragscope {cmd}: {e}"))?);
    }
    let mut out = Vec::new();
    for path in runs {
        let run = match first_run.take() {
            Some(parsed) => parsed,
            None => common::read_run(path),
        }
        .map_err(|e| format!("ragscope {cmd}: {e}"))?;
        if setup.complete {
            note_missing(cmd, path, missing_topics(&qrels, &run), &qrels);
        }
        let results = try_evaluate(&qrels, &run, measures, &opts).map_err(|e| match e {
            ragscope_eval::EvalError::MissingEragOutcomes(_) => {
                format!("ragscope {cmd}: {e}; give it with --erag-outcomes FILE")
            }
            _ => format!("ragscope {cmd}: {e}; give it with --utilities FILE"),
        })?;
        if results.topics.is_empty() {
            return Err(format!(
                "ragscope {cmd}: no topic of '{path}' is in the qrels '{}'",
                setup.qrels
            ));
        }
        for m in measures {
            if let Some(n @ 1..) = results.unjudged(m) {
                if m.needs_erag_outcomes() {
                    eprintln!(
                        "ragscope {cmd}: warning: {path}: {m}: {n} retrieved passage(s) within \
                         the cutoff have no eRAG outcome in '{}' (counted as 0)",
                        setup.erag_outcomes.unwrap_or("")
                    );
                    continue;
                }
                eprintln!(
                    "ragscope {cmd}: warning: {path}: {m}: {n} retrieved passage(s) within the \
                     cutoff have no utility in '{}' (counted as utility 0)",
                    setup.utilities.unwrap_or("")
                );
            }
        }
        out.push((path.clone(), results));
    }
    Ok(out)
}

/// [`evaluate_runs`] without utilities or eRAG outcomes: a run held whole (a mapped file) is
/// scored while it is parsed, on the thread that parsed the qrels (for the first run, while
/// it was being parsed too), and never held whole (see `parse_handing_out`).
fn evaluate_plain_runs(
    setup: &Setup,
    runs: &[String],
    measures: &[Measure],
) -> Result<Vec<(String, Results)>, String> {
    let cmd = setup.command;
    let fail = |e: String| format!("ragscope {cmd}: {e}");
    let opts = EvalOptions {
        complete: setup.complete,
        max_docs: setup.max_docs.unwrap_or(usize::MAX),
        ..EvalOptions::default()
    };
    let score = |qrels: &Qrels, run: &Run| {
        Some((
            evaluate_with(qrels, run, measures, &opts),
            missing_topics(qrels, run),
        ))
    };
    let mut qrels: Option<Qrels> = None;
    let mut out = Vec::new();
    for path in runs {
        let had = qrels.take();
        let (got, scored) = match common::open(path) {
            Ok(Input::Whole(bytes)) => {
                let (got, scored) = read_and_evaluate(
                    path,
                    bytes,
                    || had.map_or_else(|| common::read_qrels(setup.qrels), Ok),
                    measures,
                    &opts,
                );
                (got, scored.map_err(|e| common::described(path, e)))
            }
            // stdin, a pipe, or an error to report after the qrels'
            file => {
                let (got, run) = match had {
                    Some(q) => (Ok(q), common::read_opened_run(path, file)),
                    None => qrels_beside(setup.qrels, || common::read_opened_run(path, file)),
                };
                let scored = run.map(|run| got.as_ref().ok().and_then(|q| score(q, &run)));
                (got, scored)
            }
        };
        let got = got.map_err(fail)?;
        let (results, missing) = scored
            .map_err(fail)?
            .ok_or_else(|| fail(format!("{path} was not scored")))?;
        if setup.complete {
            note_missing(cmd, path, missing, &got);
        }
        if results.topics.is_empty() {
            return Err(format!(
                "ragscope {cmd}: no topic of '{path}' is in the qrels '{}'",
                setup.qrels
            ));
        }
        qrels = Some(got);
        out.push((path.clone(), results));
    }
    Ok(out)
}

/// Parses the qrels at `path` on a second thread while `read_run` reads a run here (both are
/// independent).
fn qrels_beside<R>(path: &str, read_run: impl FnOnce() -> R) -> (Result<Qrels, String>, R) {
    std::thread::scope(|scope| {
        let qrels = scope.spawn(|| common::read_qrels(path));
        let run = read_run();
        let qrels = qrels
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (qrels, run)
    })
}

/// Under `--complete`, says how many qrels topics a run lacks (scored as empty rankings).
fn note_missing(cmd: &str, path: &str, missing: usize, qrels: &Qrels) {
    if missing > 0 {
        eprintln!(
            "ragscope {cmd}: note: {path} has no results for {missing} of the {} qrels topics; \
             they are scored as empty rankings (trec_eval -c)",
            qrels.topics().len()
        );
    }
}

pub fn run(args: Args) -> ExitCode {
    let measures = match common::parse_measures(&args.measures)
        .and_then(|m| common::check_utilities(&m, args.utilities.as_deref()).map(|()| m))
        .and_then(|m| common::check_erag_outcomes(&m, args.erag_outcomes.as_deref()).map(|()| m))
    {
        Ok(m) => m,
        Err(e) => {
            eprintln!("ragscope eval: {e}");
            return ExitCode::from(2);
        }
    };
    let setup = Setup {
        command: "eval",
        qrels: &args.qrels,
        utilities: args.utilities.as_deref(),
        model: args.model.as_deref(),
        erag_outcomes: args.erag_outcomes.as_deref(),
        complete: args.complete,
        max_docs: args.max_docs,
    };
    match evaluate_runs(&setup, &args.runs, &measures) {
        Ok(results) => {
            print!(
                "{}",
                render(
                    &args.qrels,
                    args.per_query,
                    args.format,
                    &measures,
                    &results
                )
            );
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

/// Rows of (run, topic or "all", values per measure).
fn rows(
    per_query: bool,
    measures: &[Measure],
    results: &[(String, Results)],
) -> Vec<(String, String, Vec<f64>)> {
    let mut rows = Vec::new();
    for (name, r) in results {
        if per_query {
            for (t, qid) in r.topics.iter().enumerate() {
                let values = (0..measures.len()).map(|m| r.values[m][t]).collect();
                rows.push((name.clone(), qid.clone(), values));
            }
        } else {
            let values = measures
                .iter()
                .map(|m| r.summary(m).unwrap_or(f64::NAN))
                .collect();
            rows.push((name.clone(), "all".to_string(), values));
        }
    }
    rows
}

/// The per-run (or per-topic) table in any format; JSON carries full-precision numbers.
pub fn render(
    qrels: &str,
    per_query: bool,
    format: Format,
    measures: &[Measure],
    results: &[(String, Results)],
) -> String {
    let names: Vec<String> = measures.iter().map(|m| m.to_string()).collect();
    if format == Format::Json {
        let doc = ragscope_eval::runs_json::eval_runs(qrels, per_query, measures, results);
        return format!(
            "{}\n",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    }
    let mut header = vec!["run".to_string()];
    if per_query {
        header.push("topic".to_string());
    }
    header.extend(names.iter().cloned());
    let cells = rows(per_query, measures, results)
        .iter()
        .map(|(run, topic, values)| {
            let mut row = vec![run.clone()];
            if per_query {
                row.push(topic.clone());
            }
            row.extend(measures.iter().zip(values).map(|(m, v)| number(m, *v)));
            row
        })
        .collect();
    Grid {
        header,
        cells,
        label_columns: if per_query { 2 } else { 1 },
        latex_cells: None,
        notes: Vec::new(),
    }
    .render(format)
}
