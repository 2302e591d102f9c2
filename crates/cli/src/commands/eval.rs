//! `ragscope eval`: several runs side by side on named measures.

use std::fmt::Write as _;
use std::process::ExitCode;

use std::io::Read;

use ragscope_eval::{
    evaluate_with, EvalOptions, Measure, Qrels, QrelsParser, Results, Run, RunParser,
};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Csv,
    Json,
    Latex,
    Markdown,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Measures: MAP, MAP@k, MRR, RR@k, nDCG, nDCG@k, nDCG(gain=exp)@k, P@k, \
P(rel=2)@k, R@k, Success@k, Rprec, bpref, infAP, Judged@k, NumRet, NumRel, NumRelRet, SetP, SetR, SetF.\n\
Example: ragscope eval --qrels qrels.txt --measures nDCG@10,MAP run1.txt run2.txt"
)]
pub struct Args {
    /// Relevance judgments (TREC qrels: qid iter docno rel).
    #[arg(long)]
    pub qrels: String,
    /// Comma-separated measures.
    #[arg(
        long,
        short,
        value_delimiter = ',',
        default_value = "MAP,MRR,nDCG@10,P@10,R@100,bpref,Rprec"
    )]
    pub measures: Vec<String>,
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

/// Feeds a file to a streaming parser in 1 MiB chunks, so a run is never held twice.
fn stream<P>(
    path: &str,
    mut parser: P,
    feed: impl Fn(&mut P, &[u8]) -> Result<(), ragscope_eval::ParseError>,
) -> Result<P, String> {
    let cannot = |e: std::io::Error| format!("ragscope eval: cannot read '{path}': {e}");
    let mut file = std::fs::File::open(path).map_err(cannot)?;
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf).map_err(cannot)?;
        if n == 0 {
            return Ok(parser);
        }
        feed(&mut parser, &buf[..n]).map_err(|e| e.to_string())?;
    }
}

fn read_qrels(path: &str) -> Result<Qrels, String> {
    stream(path, QrelsParser::new(path), |p, c| p.feed(c))?
        .finish()
        .map_err(|e| e.to_string())
}

fn read_run(path: &str) -> Result<Run, String> {
    stream(path, RunParser::new(path), |p, c| p.feed(c))?
        .finish()
        .map_err(|e| e.to_string())
}

pub fn run(args: Args) -> ExitCode {
    let mut measures = Vec::new();
    for text in args.measures.iter().filter(|m| !m.trim().is_empty()) {
        match text.parse::<Measure>() {
            Ok(m) => measures.push(m),
            Err(e) => {
                eprintln!("ragscope eval: {e}");
                return ExitCode::from(2);
            }
        }
    }
    match evaluate_all(&args, &measures) {
        Ok(results) => {
            print!("{}", render(&args, &measures, &results));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("{message}");
            ExitCode::from(1)
        }
    }
}

fn evaluate_all(args: &Args, measures: &[Measure]) -> Result<Vec<(String, Results)>, String> {
    let qrels = read_qrels(&args.qrels)?;
    let opts = EvalOptions {
        complete: args.complete,
        max_docs: args.max_docs.unwrap_or(usize::MAX),
        ..EvalOptions::default()
    };
    let mut out = Vec::new();
    for path in &args.runs {
        let run = read_run(path)?;
        let results = evaluate_with(&qrels, &run, measures, &opts);
        if results.topics.is_empty() {
            return Err(format!(
                "ragscope eval: no topic of '{path}' is in the qrels '{}'",
                args.qrels
            ));
        }
        out.push((path.clone(), results));
    }
    Ok(out)
}

/// Rows of (run, topic or "all", values per measure).
fn rows(
    args: &Args,
    measures: &[Measure],
    results: &[(String, Results)],
) -> Vec<(String, String, Vec<f64>)> {
    let mut rows = Vec::new();
    for (name, r) in results {
        if args.per_query {
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

fn number(m: &Measure, v: f64) -> String {
    if m.is_count() {
        format!("{}", v as i64)
    } else {
        format!("{v:.4}")
    }
}

fn render(args: &Args, measures: &[Measure], results: &[(String, Results)]) -> String {
    let names: Vec<String> = measures.iter().map(|m| m.to_string()).collect();
    let rows = rows(args, measures, results);
    let mut out = String::new();
    let mut header = vec!["run".to_string()];
    if args.per_query {
        header.push("topic".to_string());
    }
    header.extend(names.iter().cloned());
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|(run, topic, values)| {
            let mut row = vec![run.clone()];
            if args.per_query {
                row.push(topic.clone());
            }
            row.extend(measures.iter().zip(values).map(|(m, v)| number(m, *v)));
            row
        })
        .collect();
    match args.format {
        Format::Table => {
            let widths: Vec<usize> = (0..header.len())
                .map(|c| {
                    cells
                        .iter()
                        .map(|r| r[c].len())
                        .chain([header[c].len()])
                        .max()
                        .unwrap_or(0)
                })
                .collect();
            for row in std::iter::once(&header).chain(&cells) {
                let line: Vec<String> = row
                    .iter()
                    .enumerate()
                    .map(|(c, s)| {
                        if c == 0 || (args.per_query && c == 1) {
                            format!("{s:<w$}", w = widths[c])
                        } else {
                            format!("{s:>w$}", w = widths[c])
                        }
                    })
                    .collect();
                let _ = writeln!(out, "{}", line.join("  ").trim_end());
            }
        }
        Format::Csv => {
            for row in std::iter::once(&header).chain(&cells) {
                let line: Vec<String> = row.iter().map(|s| csv_field(s)).collect();
                let _ = writeln!(out, "{}", line.join(","));
            }
        }
        Format::Markdown => {
            let _ = writeln!(out, "| {} |", header.join(" | "));
            let rule: Vec<&str> = header
                .iter()
                .enumerate()
                .map(|(c, _)| {
                    if c == 0 || (args.per_query && c == 1) {
                        "---"
                    } else {
                        "---:"
                    }
                })
                .collect();
            let _ = writeln!(out, "| {} |", rule.join(" | "));
            for row in &cells {
                let escaped: Vec<String> = row.iter().map(|s| s.replace('|', "\\|")).collect();
                let _ = writeln!(out, "| {} |", escaped.join(" | "));
            }
        }
        Format::Latex => {
            let cols = if args.per_query { "ll" } else { "l" };
            let _ = writeln!(
                out,
                "\\begin{{tabular}}{{{cols}{}}}\n\\toprule",
                "r".repeat(measures.len())
            );
            let head: Vec<String> = header.iter().map(|s| latex_escape(s)).collect();
            let _ = writeln!(out, "{} \\\\\n\\midrule", head.join(" & "));
            for row in &cells {
                let escaped: Vec<String> = row.iter().map(|s| latex_escape(s)).collect();
                let _ = writeln!(out, "{} \\\\", escaped.join(" & "));
            }
            let _ = writeln!(out, "\\bottomrule\n\\end{{tabular}}");
        }
        Format::Json => {
            let runs: Vec<serde_json::Value> = results
                .iter()
                .map(|(name, r)| {
                    let summary: serde_json::Map<String, serde_json::Value> = measures
                        .iter()
                        .zip(&names)
                        .map(|(m, n)| (n.clone(), json_number(r.summary(m))))
                        .collect();
                    let mut run = serde_json::json!({
                        "run": name,
                        "run_id": r.run,
                        "num_topics": r.topics.len(),
                        "summary": summary,
                    });
                    if args.per_query {
                        let per_query: serde_json::Map<String, serde_json::Value> = r
                            .topics
                            .iter()
                            .enumerate()
                            .map(|(t, qid)| {
                                let values: serde_json::Map<String, serde_json::Value> = names
                                    .iter()
                                    .enumerate()
                                    .map(|(m, n)| (n.clone(), json_number(Some(r.values[m][t]))))
                                    .collect();
                                (qid.clone(), serde_json::Value::Object(values))
                            })
                            .collect();
                        run["per_query"] = serde_json::Value::Object(per_query);
                    }
                    run
                })
                .collect();
            let doc = serde_json::json!({ "qrels": args.qrels, "measures": names, "runs": runs });
            let _ = writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&doc).unwrap_or_default()
            );
        }
    }
    out
}

fn json_number(v: Option<f64>) -> serde_json::Value {
    v.and_then(serde_json::Number::from_f64)
        .map(serde_json::Value::Number)
        .unwrap_or(serde_json::Value::Null)
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn latex_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '_' | '&' | '%' | '$' | '#' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '\\' => out.push_str("\\textbackslash{}"),
            '~' => out.push_str("\\textasciitilde{}"),
            '^' => out.push_str("\\textasciicircum{}"),
            _ => out.push(c),
        }
    }
    out
}
