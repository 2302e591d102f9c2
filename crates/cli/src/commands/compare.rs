//! `ragscope compare`: runs × measures against a baseline, with paired significance tests
//! corrected for multiple comparisons across every (run, measure) cell.
//!
//! Every run is scored with trec_eval `-c` semantics: each qrels topic counts, a topic a run
//! lacks is an empty ranking (0 for the IR measures; for UDCG 0.5 in the paper convention and
//! 0 in the reference one). All runs therefore share the same topic list and the tests pair
//! them topic by topic over every qrels topic, as ranx and trec_eval `-c` do.

use std::process::ExitCode;

use ragscope_eval::stats::wilcoxon::WilcoxonOptions;
use ragscope_eval::stats::{self, Test, TestResult};
use ragscope_eval::{Measure, Results};

use super::common::{self, json_number, latex_escape, number, Format, Grid};
use super::eval::{evaluate_runs, Setup};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum TestKind {
    /// Paired Student's t-test (scipy.stats.ttest_rel).
    T,
    /// Wilcoxon signed-rank test (scipy.stats.wilcoxon defaults).
    Wilcoxon,
    /// Fisher's randomization test (sign flips; exact when 2^n ≤ --resamples).
    Randomization,
    /// Paired bootstrap test (Sakai 2006).
    Bootstrap,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Correction {
    /// Holm's step-down (family-wise error rate).
    Holm,
    /// Bonferroni (family-wise error rate).
    Bonferroni,
    /// No correction.
    None,
}

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Every run is scored on every qrels topic (trec_eval -c): a topic a run \
lacks counts as an empty ranking, so all runs are paired over the same topics.\n\
Example: ragscope compare --qrels qrels.txt --measures nDCG@10,MAP --baseline bm25.run dense.run hybrid.run"
)]
pub struct Args {
    /// Relevance judgments (TREC qrels: qid iter docno rel).
    #[arg(long)]
    pub qrels: String,
    /// Passage utilities, needed for UDCG measures.
    #[arg(long)]
    pub utilities: Option<String>,
    /// Reader model whose p(NO-RESPONSE) to use when the utilities name several.
    #[arg(long)]
    pub model: Option<String>,
    /// Per-passage answers for eRAG measures: the JSON Lines `ragscope answer --erag` writes.
    #[arg(long)]
    pub erag_outcomes: Option<String>,
    /// Comma-separated measures.
    #[arg(long, short, default_value = "MAP,nDCG@10")]
    pub measures: Vec<String>,
    /// The run every other run is compared with.
    #[arg(long)]
    pub baseline: String,
    /// Runs compared with the baseline.
    #[arg(required = true)]
    pub runs: Vec<String>,
    /// Significance test (two-sided).
    #[arg(long, value_enum, default_value = "t")]
    pub test: TestKind,
    /// Correction over all (run, measure) comparisons.
    #[arg(long, value_enum, default_value = "holm")]
    pub correction: Correction,
    /// Significance level for the markers.
    #[arg(long, default_value_t = 0.05)]
    pub alpha: f64,
    /// Seed of the randomization/bootstrap tests and of the bootstrap intervals.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Resamples of the randomization and bootstrap tests.
    #[arg(long, value_parser = super::common::parse_resamples, default_value_t = 10_000)]
    pub resamples: usize,
    /// Keep only the top N results per topic (trec_eval -M).
    #[arg(long)]
    pub max_docs: Option<usize>,
    #[arg(long, value_enum, default_value = "table")]
    pub format: Format,
}

/// One non-baseline cell: the test outcome (or why there is none) and its adjusted p-value.
struct Cell {
    run: usize,
    measure: usize,
    tested: Result<TestResult, String>,
    p_adjusted: Option<f64>,
}

impl Cell {
    /// +1 significantly better than the baseline, −1 worse, 0 neither.
    fn direction(&self, alpha: f64) -> i8 {
        match (&self.tested, self.p_adjusted) {
            (Ok(t), Some(p)) if p < alpha && t.mean_difference > 0.0 => 1,
            (Ok(t), Some(p)) if p < alpha && t.mean_difference < 0.0 => -1,
            _ => 0,
        }
    }
}

pub fn run(args: Args) -> ExitCode {
    match execute(&args) {
        Ok(text) => {
            print!("{text}");
            ExitCode::SUCCESS
        }
        Err((code, message)) => {
            eprintln!("{message}");
            ExitCode::from(code)
        }
    }
}

fn execute(args: &Args) -> Result<String, (u8, String)> {
    let measures = common::parse_measures(&args.measures)
        .and_then(|m| common::check_utilities(&m, args.utilities.as_deref()).map(|()| m))
        .and_then(|m| common::check_erag_outcomes(&m, args.erag_outcomes.as_deref()).map(|()| m))
        .map_err(|e| (2, format!("ragscope compare: {e}")))?;
    if !(args.alpha > 0.0 && args.alpha < 1.0) {
        return Err((
            2,
            format!("ragscope compare: --alpha {} is not in (0, 1)", args.alpha),
        ));
    }
    let setup = Setup {
        command: "compare",
        qrels: &args.qrels,
        utilities: args.utilities.as_deref(),
        model: args.model.as_deref(),
        erag_outcomes: args.erag_outcomes.as_deref(),
        complete: true,
        max_docs: args.max_docs,
    };
    let mut paths = vec![args.baseline.clone()];
    paths.extend(args.runs.iter().cloned());
    let results = evaluate_runs(&setup, &paths, &measures).map_err(|e| (1, e))?;
    let cells = test_all(args, &measures, &results);
    Ok(match args.format {
        Format::Json => render_json(args, &measures, &results, &cells),
        Format::Csv => render_csv(args, &measures, &results, &cells),
        f => render_grid(args, &measures, &results, &cells).render(f),
    })
}

fn test_of(args: &Args) -> Test {
    match args.test {
        TestKind::T => Test::PairedT,
        TestKind::Wilcoxon => Test::Wilcoxon(WilcoxonOptions::default()),
        TestKind::Randomization => Test::Randomization {
            resamples: args.resamples,
        },
        TestKind::Bootstrap => Test::Bootstrap {
            resamples: args.resamples,
        },
    }
}

/// Tests every non-baseline (run, measure) cell, then corrects the p-values of the tests that
/// could run as one family. A test that cannot run (e.g. every difference equal under the
/// t-test) has no p-value, is left out of the family and is never marked.
fn test_all(args: &Args, measures: &[Measure], results: &[(String, Results)]) -> Vec<Cell> {
    let (_, baseline) = &results[0];
    let mut cells = Vec::new();
    for (r, (_, other)) in results.iter().enumerate().skip(1) {
        for (m, _) in measures.iter().enumerate() {
            let tested = stats::compare(
                &baseline.values[m],
                &other.values[m],
                test_of(args),
                args.seed,
            )
            .map_err(|e| e.to_string());
            cells.push(Cell {
                run: r,
                measure: m,
                tested,
                p_adjusted: None,
            });
        }
    }
    let raw: Vec<f64> = cells
        .iter()
        .filter_map(|c| c.tested.as_ref().ok().map(|t| t.p_value))
        .collect();
    let adjusted = match args.correction {
        Correction::Holm => stats::holm(&raw),
        Correction::Bonferroni => stats::bonferroni(&raw),
        Correction::None => raw,
    };
    let mut adjusted = adjusted.into_iter();
    for c in cells.iter_mut().filter(|c| c.tested.is_ok()) {
        c.p_adjusted = adjusted.next();
    }
    cells
}

fn test_name(args: &Args) -> &'static str {
    match args.test {
        TestKind::T => "paired t-test",
        TestKind::Wilcoxon => "Wilcoxon signed-rank test",
        TestKind::Randomization => "randomization test",
        TestKind::Bootstrap => "paired bootstrap test",
    }
}

fn correction_name(args: &Args) -> &'static str {
    match args.correction {
        Correction::Holm => "Holm",
        Correction::Bonferroni => "Bonferroni",
        Correction::None => "no",
    }
}

fn family_size(cells: &[Cell]) -> usize {
    cells.iter().filter(|c| c.tested.is_ok()).count()
}

/// Means with † (significantly better than the baseline) or ‡ (worse) after correction.
fn render_grid(
    args: &Args,
    measures: &[Measure],
    results: &[(String, Results)],
    cells: &[Cell],
) -> Grid {
    let mut header = vec!["run".to_string()];
    header.extend(measures.iter().map(|m| m.to_string()));
    let mut text_rows = Vec::new();
    let mut latex_rows = Vec::new();
    for (r, (name, res)) in results.iter().enumerate() {
        let label = if r == 0 {
            format!("{name} (baseline)")
        } else {
            name.clone()
        };
        let mut text = vec![label.clone()];
        let mut latex = vec![latex_escape(&label)];
        for (m, measure) in measures.iter().enumerate() {
            let v = number(measure, res.summary(measure).unwrap_or(f64::NAN));
            let dir = cells
                .iter()
                .find(|c| c.run == r && c.measure == m)
                .map_or(0, |c| c.direction(args.alpha));
            let (mark, tex) = match dir {
                1 => ("†", "$^{\\dagger}$"),
                -1 => ("‡", "$^{\\ddagger}$"),
                // Keeps the decimal points of marked and unmarked cells aligned in the text table.
                _ if args.format == Format::Table => (" ", ""),
                _ => ("", ""),
            };
            text.push(format!("{v}{mark}"));
            latex.push(format!("{v}{tex}"));
        }
        text_rows.push(text);
        latex_rows.push(latex);
    }
    let n_topics = results[0].1.topics.len();
    let family = family_size(cells);
    let mut notes = Vec::new();
    let note = |better: &str, worse: &str| {
        format!(
            "{better} / {worse}: significantly better / worse than the baseline ({}), two-sided \
             {} over {n_topics} topics, p < {} after {} correction over {family} comparison{}.",
            results[0].0,
            test_name(args),
            args.alpha,
            correction_name(args),
            if family == 1 { "" } else { "s" },
        )
    };
    let skipped: Vec<String> = cells
        .iter()
        .filter_map(|c| {
            c.tested.as_ref().err().map(|e| {
                format!(
                    "{} on {}: no test ({e})",
                    results[c.run].0, measures[c.measure]
                )
            })
        })
        .collect();
    let latex = args.format == Format::Latex;
    notes.push(if latex {
        latex_escape(&note("@D", "@DD"))
            .replace("@DD", "$^{\\ddagger}$")
            .replace("@D", "$^{\\dagger}$")
    } else {
        note("†", "‡")
    });
    for s in skipped {
        notes.push(if latex { latex_escape(&s) } else { s });
    }
    Grid {
        header,
        cells: text_rows,
        label_columns: 1,
        latex_cells: Some(latex_rows),
        notes,
    }
}

struct Row<'a> {
    run: &'a str,
    measure: String,
    mean: Option<f64>,
    baseline_mean: Option<f64>,
    cell: Option<&'a Cell>,
}

fn detail_rows<'a>(
    measures: &[Measure],
    results: &'a [(String, Results)],
    cells: &'a [Cell],
) -> Vec<Row<'a>> {
    let mut rows = Vec::new();
    for (r, (name, res)) in results.iter().enumerate() {
        for (m, measure) in measures.iter().enumerate() {
            rows.push(Row {
                run: name,
                measure: measure.to_string(),
                mean: res.summary(measure),
                baseline_mean: results[0].1.summary(measure),
                cell: cells.iter().find(|c| c.run == r && c.measure == m),
            });
        }
    }
    rows
}

fn render_json(
    args: &Args,
    measures: &[Measure],
    results: &[(String, Results)],
    cells: &[Cell],
) -> String {
    let rows: Vec<serde_json::Value> = detail_rows(measures, results, cells)
        .into_iter()
        .map(|row| {
            let mut v = serde_json::json!({
                "run": row.run,
                "measure": row.measure,
                "mean": json_number(row.mean),
                "baseline_mean": json_number(row.baseline_mean),
            });
            match row.cell {
                None => v["baseline"] = true.into(),
                Some(c) => match &c.tested {
                    Ok(t) => {
                        v["n"] = t.n.into();
                        v["difference"] = json_number(Some(t.mean_difference));
                        v["ci_low"] = json_number(Some(t.ci_low));
                        v["ci_high"] = json_number(Some(t.ci_high));
                        v["bootstrap_ci_low"] = json_number(Some(t.bootstrap_ci_low));
                        v["bootstrap_ci_high"] = json_number(Some(t.bootstrap_ci_high));
                        v["cohens_d"] = json_number(Some(t.cohens_d));
                        v["statistic"] = json_number(Some(t.statistic));
                        v["p_value"] = json_number(Some(t.p_value));
                        v["p_adjusted"] = json_number(c.p_adjusted);
                        v["significant"] = (c.direction(args.alpha) != 0).into();
                        v["direction"] = match c.direction(args.alpha) {
                            1 => "better",
                            -1 => "worse",
                            _ => "none",
                        }
                        .into();
                    }
                    Err(e) => {
                        v["error"] = e.clone().into();
                        v["significant"] = false.into();
                    }
                },
            }
            v
        })
        .collect();
    let doc = serde_json::json!({
        "qrels": args.qrels,
        "baseline": args.baseline,
        "runs": results.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>(),
        "measures": measures.iter().map(|m| m.to_string()).collect::<Vec<_>>(),
        "num_topics": results[0].1.topics.len(),
        "test": format!("{:?}", args.test).to_lowercase(),
        "correction": format!("{:?}", args.correction).to_lowercase(),
        "alpha": args.alpha,
        "seed": args.seed,
        "comparisons": family_size(cells),
        "rows": rows,
    });
    format!(
        "{}\n",
        serde_json::to_string_pretty(&doc).unwrap_or_default()
    )
}

fn render_csv(
    args: &Args,
    measures: &[Measure],
    results: &[(String, Results)],
    cells: &[Cell],
) -> String {
    let header = [
        "run",
        "measure",
        "mean",
        "baseline_mean",
        "difference",
        "ci_low",
        "ci_high",
        "bootstrap_ci_low",
        "bootstrap_ci_high",
        "cohens_d",
        "statistic",
        "p_value",
        "p_adjusted",
        "significant",
    ];
    let num = |v: Option<f64>| v.map(|x| format!("{x}")).unwrap_or_default();
    let mut out = header.join(",") + "\n";
    for row in detail_rows(measures, results, cells) {
        let mut fields = vec![
            common::csv_field(row.run),
            common::csv_field(&row.measure),
            num(row.mean),
            num(row.baseline_mean),
        ];
        match row.cell.map(|c| (c, &c.tested)) {
            Some((c, Ok(t))) => {
                fields.extend(
                    [
                        t.mean_difference,
                        t.ci_low,
                        t.ci_high,
                        t.bootstrap_ci_low,
                        t.bootstrap_ci_high,
                        t.cohens_d,
                        t.statistic,
                        t.p_value,
                    ]
                    .map(|x| num(Some(x))),
                );
                fields.push(num(c.p_adjusted));
                fields.push(
                    match c.direction(args.alpha) {
                        1 => "better",
                        -1 => "worse",
                        _ => "no",
                    }
                    .to_string(),
                );
            }
            Some((_, Err(_))) => {
                fields.extend(std::iter::repeat_n(String::new(), 9));
                fields.push("no".to_string());
            }
            None => fields.extend(std::iter::repeat_n(String::new(), 10)),
        }
        out += &fields.join(",");
        out.push('\n');
    }
    out
}
