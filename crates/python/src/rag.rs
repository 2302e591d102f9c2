//! The RAG half of `ragscope._native`: the computations of `ragscope udcg`, `eval` with eRAG
//! measures, `correlate`, `nuggets score`, `elo`, `agreement`, `citations` and `graded`, over
//! the same files, with the CLI's parameters and compat switches. Each returns the CLI's
//! `--format json` document as text, built by the same crates/eval functions
//! (`answers::json_report`, `runs_json`, `rag::report`), which the Python half parses into
//! dicts; so the values are the CLI's by construction and the tests check it against the binary.

use std::sync::Arc;

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use ragscope_eval::answers::agreement_report::{default_kind, labels_report, runs_report, Kind};
use ragscope_eval::answers::elo::{EloCompat, EloParams};
use ragscope_eval::answers::graded::{self, GradedCompat};
use ragscope_eval::answers::leaderboard::leaderboard;
use ragscope_eval::answers::nugget_scores::{self, Compat};
use ragscope_eval::answers::{files, json_report, umbrela_qrels};
use ragscope_eval::formats::{open_input, read_qrels_input, read_run_input, ReadError};
use ragscope_eval::measures::MeasureKind;
use ragscope_eval::rag::contexts::{self, ContextSet};
use ragscope_eval::rag::correlation::{self, Coefficient, Metric, StudyConfig};
use ragscope_eval::rag::report::{self, Format};
use ragscope_eval::rag::theta::ThetaModel;
use ragscope_eval::rag::udcg::{Convention, Gain, UdcgParams};
use ragscope_eval::rag::{erag_outcomes, reference_json, utilities_tsv, Gamma, UdcgVariant};
use ragscope_eval::{try_evaluate, EvalOptions, Measure, Qrels, Results, Run};

use crate::FormatError;

/// A file that cannot be read or parsed (the message names it): `ragscope.FormatError`.
fn bad_file(message: String) -> PyErr {
    FormatError::new_err(message)
}

fn bad_value(message: String) -> PyErr {
    PyValueError::new_err(message)
}

fn read_text(path: &str) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read '{path}': {e}"))
}

fn described(path: &str, e: ReadError) -> String {
    match e {
        ReadError::Io(e) => format!("cannot read '{path}': {e}"),
        ReadError::Parse(e) => e.to_string(),
    }
}

fn read_qrels(path: &str) -> Result<Qrels, String> {
    let file = open_input(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
    read_qrels_input(path, file).map_err(|e| described(path, e))
}

fn read_run(path: &str) -> Result<Run, String> {
    let file = open_input(path).map_err(|e| format!("cannot read '{path}': {e}"))?;
    read_run_input(path, file).map_err(|e| described(path, e))
}

fn compact(doc: &serde_json::Value) -> String {
    serde_json::to_string(doc).unwrap_or_default()
}

/// What `eval_json` reads besides the runs (the CLI's `--utilities`, `--model`,
/// `--erag-outcomes`, `--complete`).
struct Setup<'a> {
    qrels: &'a str,
    utilities: Option<&'a str>,
    model: Option<&'a str>,
    erag_outcomes: Option<&'a str>,
    complete: bool,
}

/// `ragscope eval --format json` over run files: as the CLI's `evaluate_runs`, a run with no
/// topic in the qrels is an error.
fn eval_json(
    setup: &Setup,
    runs: &[String],
    measures: &[Measure],
    per_query: bool,
) -> Result<String, String> {
    let qrels = read_qrels(setup.qrels)?;
    let mut opts = EvalOptions {
        complete: setup.complete,
        ..EvalOptions::default()
    };
    if let Some(path) = setup.utilities {
        let utilities = utilities_tsv::parse(path, &read_text(path)?).map_err(|e| e.to_string())?;
        opts.utility_model = utilities_tsv::choose_model(path, &utilities, setup.model)?;
        opts.utilities = Some(Arc::new(utilities));
    }
    if let Some(path) = setup.erag_outcomes {
        let outcomes = erag_outcomes::parse(path, &read_text(path)?).map_err(|e| e.to_string())?;
        opts.erag = Some(Arc::new(outcomes));
    }
    let mut out: Vec<(String, Results)> = Vec::new();
    for path in runs {
        let run = read_run(path)?;
        let results = try_evaluate(&qrels, &run, measures, &opts).map_err(|e| e.to_string())?;
        if results.topics.is_empty() {
            return Err(format!(
                "no topic of '{path}' is in the qrels '{}'",
                setup.qrels
            ));
        }
        out.push((path.clone(), results));
    }
    let doc = ragscope_eval::runs_json::eval_runs(setup.qrels, per_query, measures, &out);
    Ok(compact(&doc))
}

/// The UDCG measure of `ragscope udcg`'s flags (`--gamma`, `--k`, `--binary`, `--compat`).
fn udcg_measure(
    gamma: Option<&str>,
    k: Option<usize>,
    binary: bool,
    compat: &str,
) -> PyResult<Measure> {
    let convention = match compat {
        "paper" => Convention::Paper,
        "udcg-ref" => Convention::Reference,
        other => {
            return Err(bad_value(format!(
                "compat {other:?}: expected \"paper\" or \"udcg-ref\""
            )))
        }
    };
    let gamma = match gamma {
        Some(text) => text
            .parse::<Gamma>()
            .map_err(|e| bad_value(format!("gamma: {e}")))?,
        None => UdcgVariant::default_gamma(convention),
    };
    if k == Some(0) {
        return Err(bad_value("k must be at least 1".into()));
    }
    let variant = UdcgVariant {
        gamma,
        gain: if binary { Gain::Binary } else { Gain::Utility },
        convention,
    };
    let mut m = Measure::new(MeasureKind::UDCG(variant));
    m.cutoff = k
        .map(|k| u32::try_from(k).map_err(|_| bad_value(format!("k {k} is too large"))))
        .transpose()?;
    Ok(m)
}

/// `ragscope udcg --qrels Q --utilities U RUN... --format json`.
#[pyfunction]
#[pyo3(signature = (qrels, runs, utilities, model=None, gamma=None, k=None, binary=false, compat="paper", complete=false, per_query=false))]
#[allow(clippy::too_many_arguments)]
pub fn udcg_runs_json(
    py: Python<'_>,
    qrels: String,
    runs: Vec<String>,
    utilities: String,
    model: Option<String>,
    gamma: Option<String>,
    k: Option<usize>,
    binary: bool,
    compat: &str,
    complete: bool,
    per_query: bool,
) -> PyResult<String> {
    let m = udcg_measure(gamma.as_deref(), k, binary, compat)?;
    let setup = Setup {
        qrels: &qrels,
        utilities: Some(&utilities),
        model: model.as_deref(),
        erag_outcomes: None,
        complete,
    };
    py.detach(|| eval_json(&setup, &runs, &[m], per_query))
        .map_err(bad_file)
}

/// `ragscope udcg INPUT.json`: the reference JSON with its `udcg` field filled, and the
/// warnings of the incomplete examples skipped (udcg-ref convention).
#[pyfunction]
#[pyo3(signature = (input, gamma=None, k=None, binary=false, compat="paper"))]
pub fn udcg_reference_json(
    py: Python<'_>,
    input: String,
    gamma: Option<String>,
    k: Option<usize>,
    binary: bool,
    compat: &str,
) -> PyResult<(String, Vec<String>)> {
    let m = udcg_measure(gamma.as_deref(), k, binary, compat)?;
    py.detach(|| {
        let text = read_text(&input)?;
        let variant = m.udcg().unwrap_or_default();
        let data =
            reference_json::parse(&input, &text, variant.convention).map_err(|e| e.to_string())?;
        let params: UdcgParams = variant.params();
        let scores = data.scores_at(&params, k);
        let warnings = data.warnings.iter().map(|w| w.to_string()).collect();
        Ok((data.to_json_with(&scores), warnings))
    })
    .map_err(bad_file)
}

/// `ragscope eval --qrels Q --erag-outcomes O --measures M RUN... --format json`.
#[pyfunction]
#[pyo3(signature = (qrels, runs, outcomes, measures, complete=false, per_query=false))]
pub fn erag_json(
    py: Python<'_>,
    qrels: String,
    runs: Vec<String>,
    outcomes: String,
    measures: Vec<String>,
    complete: bool,
    per_query: bool,
) -> PyResult<String> {
    let measures: Vec<Measure> = measures
        .iter()
        .map(|t| {
            t.trim()
                .parse::<Measure>()
                .map_err(|e| bad_value(e.to_string()))
        })
        .collect::<PyResult<_>>()?;
    let setup = Setup {
        qrels: &qrels,
        utilities: None,
        model: None,
        erag_outcomes: Some(&outcomes),
        complete,
    };
    py.detach(|| eval_json(&setup, &runs, &measures, per_query))
        .map_err(bad_file)
}

fn load_sets(contexts: &str, utilities: Option<&str>) -> Result<Vec<ContextSet>, String> {
    let utilities = match utilities {
        Some(p) => Some(utilities_tsv::parse(p, &read_text(p)?).map_err(|e| e.to_string())?),
        None => None,
    };
    contexts::parse(contexts, &read_text(contexts)?, utilities.as_ref()).map_err(|e| e.to_string())
}

/// `ragscope correlate CONTEXTS --format json` (with `--sensitivity` when `sensitivity` is a
/// list; an empty list means 1..=10, as the CLI's bare flag).
#[pyfunction]
#[pyo3(signature = (contexts, utilities=None, theta=None, k=None, gamma=1.0/3.0, sensitivity=None, resamples=1000, seed=0, reference="UDCG"))]
#[allow(clippy::too_many_arguments)]
pub fn correlate_json(
    py: Python<'_>,
    contexts: String,
    utilities: Option<String>,
    theta: Option<String>,
    k: Option<usize>,
    gamma: f64,
    sensitivity: Option<Vec<usize>>,
    resamples: usize,
    seed: u64,
    reference: &str,
) -> PyResult<String> {
    if !(0.0..=1.0).contains(&gamma) {
        return Err(bad_value(format!("gamma {gamma} is outside [0, 1]")));
    }
    let max = correlation::MAX_RESAMPLES;
    if !(1..=max).contains(&resamples) {
        return Err(bad_value(format!(
            "resamples {resamples} is outside 1..={max}"
        )));
    }
    let reference = Metric::ALL
        .into_iter()
        .find(|m| m.name().eq_ignore_ascii_case(reference))
        .ok_or_else(|| {
            let names: Vec<&str> = Metric::ALL.iter().map(|m| m.name()).collect();
            bad_value(format!(
                "reference {reference:?}: expected one of {}",
                names.join(", ")
            ))
        })?;
    if let Some(&0) = sensitivity.iter().flatten().find(|&&k| k == 0) {
        return Err(bad_value("sensitivity: sizes must be positive".into()));
    }
    py.detach(|| {
        let sets = load_sets(&contexts, utilities.as_deref())?;
        let theta = match &theta {
            Some(p) => {
                Some(ThetaModel::from_json(&read_text(p)?).map_err(|e| format!("{p}: {e}"))?)
            }
            None => None,
        };
        let config = StudyConfig {
            k,
            udcg: UdcgParams {
                gamma,
                ..UdcgParams::default()
            },
            theta,
            resamples,
            seed,
            reference,
        };
        // JSON holds all three coefficients; the one named here only picks text columns.
        match &sensitivity {
            Some(ks) => {
                let ks: Vec<usize> = if ks.is_empty() {
                    (1..=10).collect()
                } else {
                    ks.clone()
                };
                let results = correlation::sensitivity(&sets, &ks, &config);
                if results.is_empty() {
                    return Err(format!(
                        "no context size in {ks:?} has questions with differing outcomes"
                    ));
                }
                Ok(report::sensitivity(
                    &results,
                    Format::Json,
                    Coefficient::Spearman,
                ))
            }
            None => {
                let result =
                    correlation::study(&sets, &config).map_err(|e| format!("{contexts}: {e}"))?;
                Ok(report::table3(&result, Format::Json, Coefficient::Spearman))
            }
        }
    })
    .map_err(bad_file)
}

/// `ragscope nuggets score --format json [--per-topic]`.
#[pyfunction]
#[pyo3(signature = (paths, compat="paper", per_topic=false))]
pub fn nugget_scores_json(
    py: Python<'_>,
    paths: Vec<String>,
    compat: &str,
    per_topic: bool,
) -> PyResult<String> {
    let compat: Compat = compat.parse().map_err(bad_value)?;
    py.detach(|| {
        let mut results = Vec::new();
        for path in &paths {
            let runs = files::read_nugget_runs(path)?;
            results.extend(runs.iter().map(|r| nugget_scores::score_run(r, compat)));
        }
        Ok(compact(&json_report::nugget_runs(&results, per_topic)))
    })
    .map_err(bad_file)
}

/// `ragscope elo GAMES --format json` (`model` "elo" or "bradley-terry").
#[pyfunction]
#[pyo3(signature = (games, model="elo", k=32.0, initial=1000.0, tournaments=10, seed=0, shuffle=true, compat=None, resamples=1000))]
#[allow(clippy::too_many_arguments)]
pub fn elo_json(
    py: Python<'_>,
    games: String,
    model: &str,
    k: f64,
    initial: f64,
    tournaments: usize,
    seed: u64,
    shuffle: bool,
    compat: Option<&str>,
    resamples: usize,
) -> PyResult<String> {
    let bradley_terry = match model {
        "elo" => false,
        "bradley-terry" => true,
        other => {
            return Err(bad_value(format!(
                "model {other:?}: expected \"elo\" or \"bradley-terry\""
            )))
        }
    };
    if !(k.is_finite() && initial.is_finite()) {
        return Err(bad_value("k and initial must be finite numbers".into()));
    }
    if tournaments == 0 {
        return Err(bad_value("tournaments must be at least 1".into()));
    }
    let compat = match compat {
        None => EloCompat::Exact,
        Some("ragelo") if !bradley_terry => EloCompat::Ragelo,
        Some("ragelo") => return Err(bad_value("compat=\"ragelo\" applies to elo only".into())),
        Some(other) => return Err(bad_value(format!("compat {other:?}: expected \"ragelo\""))),
    };
    let params = EloParams {
        k,
        initial,
        tournaments,
        seed,
        shuffle,
        compat,
    };
    py.detach(|| {
        let games_read = files::read_games(&games)?;
        let board = leaderboard(
            &games_read,
            &params,
            if bradley_terry { resamples } else { 0 },
        );
        if bradley_terry {
            if let Some(e) = &board.bt_error {
                return Err(format!("{games}: {e}"));
            }
        }
        Ok(compact(&json_report::ratings(&board, bradley_terry)))
    })
    .map_err(bad_file)
}

/// `ragscope agreement A B --format json` (`kind` "labels", "grades", "runs" or None to guess).
#[pyfunction]
#[pyo3(signature = (a, b, kind=None, measure=None))]
pub fn agreement_json(
    py: Python<'_>,
    a: String,
    b: String,
    kind: Option<&str>,
    measure: Option<String>,
) -> PyResult<String> {
    let kind = match kind {
        None => None,
        Some("labels") => Some(Kind::Labels),
        Some("grades") => Some(Kind::Grades),
        Some("runs") => Some(Kind::Runs),
        Some(other) => {
            return Err(bad_value(format!(
                "kind {other:?}: expected \"labels\", \"grades\" or \"runs\""
            )))
        }
    };
    py.detach(|| {
        let runs = match kind {
            Some(k) => k == Kind::Runs,
            None => files::looks_like_scores(&a)?,
        };
        let report = if runs {
            let sa = files::read_topic_scores(&a, measure.as_deref())?;
            let measure = measure.clone().unwrap_or_else(|| sa.measure.clone());
            let sb = files::read_topic_scores(&b, Some(&measure))?;
            runs_report(&sa, &sb)
        } else {
            let (qa, qb) = (read_qrels(&a)?, read_qrels(&b)?);
            labels_report(&qa, &qb, kind.unwrap_or_else(|| default_kind(&qa, &qb)))
        };
        if report.rows.iter().all(|r| r.items == 0) {
            return Err(format!(
                "'{a}' and '{b}' share no items (same qid and docno, or same run and topic)"
            ));
        }
        Ok(compact(&json_report::agreement(&report)))
    })
    .map_err(bad_file)
}

/// `ragscope citations --format json [--per-answer]`.
#[pyfunction]
#[pyo3(signature = (paths, per_answer=false))]
pub fn citations_json(py: Python<'_>, paths: Vec<String>, per_answer: bool) -> PyResult<String> {
    py.detach(|| {
        let mut results = Vec::new();
        for path in &paths {
            results.extend(files::read_citation_runs(path)?);
        }
        Ok(compact(&json_report::citation_runs(&results, per_answer)))
    })
    .map_err(bad_file)
}

/// `ragscope graded --qrels Q --k K --format json [--per-topic] RUN...`.
#[pyfunction]
#[pyo3(signature = (qrels, runs, k=10, compat="trec-eval", per_topic=false))]
pub fn graded_json(
    py: Python<'_>,
    qrels: String,
    runs: Vec<String>,
    k: usize,
    compat: &str,
    per_topic: bool,
) -> PyResult<String> {
    let compat = match compat {
        "trec-eval" => GradedCompat::TrecEval,
        "open-rag-eval" => GradedCompat::OpenRagEval,
        other => {
            return Err(bad_value(format!(
                "compat {other:?}: expected \"trec-eval\" or \"open-rag-eval\""
            )))
        }
    };
    py.detach(|| {
        let bytes = std::fs::read(&qrels).map_err(|e| format!("cannot read '{qrels}': {e}"))?;
        let q = umbrela_qrels::parse(&qrels, &bytes).map_err(|e| e.to_string())?;
        let mut results = Vec::new();
        for path in &runs {
            results.push(graded::score_run(&read_run(path)?, &q, k, compat));
        }
        Ok(compact(&json_report::graded_runs(
            &results, k, compat, per_topic,
        )))
    })
    .map_err(bad_file)
}
