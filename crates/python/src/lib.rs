//! `ragscope._native`: the Rust half of the `ragscope` Python package (python/ragscope holds
//! the Python half: the pytrec_eval drop-in, input normalisation, reports).
//!
//! Every computation runs with the GIL released (`Python::detach`); only reading Python
//! objects and building the results holds it.

mod direct;
mod rag;
mod text;
mod trec;
mod utf8;

use pyo3::create_exception;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

use ragscope_eval::formats::{open_input, read_run_input, Input, ParseErrorKind, ReadError};
use ragscope_eval::measures::{Params, RankingOptions};
use ragscope_eval::stats::compare::{compare, Test};
use ragscope_eval::stats::correction::{bonferroni, holm};
use ragscope_eval::trec_eval::Selected;
use ragscope_eval::{
    parse_qrels, parse_run, EvalOptions, Measure, ParseError, Qrels, QrelsParser, Run,
};

create_exception!(
    _native,
    FormatError,
    PyValueError,
    "A qrels or run file (or dict) that cannot be read: the message names the file:line:column and the reason."
);

fn format_error(e: impl std::fmt::Display) -> PyErr {
    FormatError::new_err(e.to_string())
}

/// Qrels from `{qid: {docno: int}}`, built without TREC text (`QrelsParser::push_judgment`:
/// writing and parsing back 250,000 lines was a fifth of a `RelevanceEvaluator` call); `None`
/// when there is no judgment. Topics with no judgments are left out (as pytrec_eval does since
/// CV#57, where an empty one corrupted later topics). Errors name `<qrels dict>:row`.
fn qrels_built(qrels: &Bound<'_, PyDict>) -> PyResult<Option<Qrels>> {
    let fast = utf8::fast_available(qrels.py());
    let mut parser = QrelsParser::new("<qrels dict>");
    let mut row = 0u64;
    for (qid, docs) in qrels.iter() {
        let qid = qid
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("query ids must be str"))?;
        let qid = utf8::text(qid, fast)?;
        let docs = docs
            .cast::<PyDict>()
            .map_err(|_| PyTypeError::new_err(format!("qrels['{qid}'] must be a dict")))?;
        if docs.is_empty() {
            continue;
        }
        text::check_qid(&qid).map_err(|e| format_error(e.0))?;
        for (doc, rel) in docs.iter() {
            let doc = doc
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("document ids must be str"))?;
            let doc = utf8::text(doc, fast)?;
            let rel: i64 = match rel.cast::<PyInt>() {
                Ok(i) => i.extract()?,
                Err(_) => {
                    return Err(PyTypeError::new_err(format!(
                        "relevance of document '{doc}' in topic '{qid}' must be an int"
                    )))
                }
            };
            let rel = text::check_judgment(&qid, &doc, rel).map_err(|e| format_error(e.0))?;
            row += 1;
            parser
                .push_judgment(row, &qid, doc.as_bytes(), rel)
                .map_err(format_error)?;
        }
    }
    none_if_empty(parser.finish()).map_err(format_error)
}

/// TREC run text from `{qid: {docno: score}}`, and the topics listed with no documents
/// (sorted): pytrec_eval scores those as empty rankings.
fn run_text(run: &Bound<'_, PyDict>) -> PyResult<(Vec<u8>, Vec<String>)> {
    let mut out = Vec::new();
    let mut empty = Vec::new();
    for (qid, docs) in run.iter() {
        let qid = qid
            .cast::<PyString>()
            .map_err(|_| PyTypeError::new_err("query ids must be str"))?
            .to_cow()?;
        let docs = docs
            .cast::<PyDict>()
            .map_err(|_| PyTypeError::new_err(format!("run['{qid}'] must be a dict")))?;
        text::check_qid(&qid).map_err(|e| format_error(e.0))?;
        if docs.is_empty() {
            empty.push(qid.into_owned());
            continue;
        }
        for (doc, score) in docs.iter() {
            let doc = doc
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("document ids must be str"))?
                .to_cow()?;
            let score: f64 = match score.cast::<PyFloat>() {
                Ok(f) => f.value(),
                Err(_) => score.extract().map_err(|_| {
                    PyTypeError::new_err(format!(
                        "score of document '{doc}' in topic '{qid}' must be a number"
                    ))
                })?,
            };
            text::push_run_line(&mut out, &qid, &doc, score).map_err(|e| format_error(e.0))?;
        }
    }
    empty.sort_unstable_by(|a, b| a.as_bytes().cmp(b.as_bytes()));
    Ok((out, empty))
}

/// A qrels or run given as a dict or `(name, bytes)` (TREC text), or a plain file's path.
enum Source {
    /// A qrels dict, built already (`None`: no judgments).
    Qrels(Option<Qrels>),
    Text(String, Vec<u8>),
    /// Mapped and parsed in place (ragscope_eval::formats::open_input), as the CLI reads files.
    File(String),
}

fn source(obj: &Bound<'_, PyAny>, qrels: bool) -> PyResult<(Source, Vec<String>)> {
    if let Ok(d) = obj.cast::<PyDict>() {
        return Ok(if qrels {
            (Source::Qrels(qrels_built(d)?), Vec::new())
        } else {
            let (text, empty) = run_text(d)?;
            (Source::Text("<run dict>".into(), text), empty)
        });
    }
    if let Ok(path) = obj.cast::<PyString>() {
        return Ok((Source::File(path.to_cow()?.into_owned()), Vec::new()));
    }
    if let Ok(t) = obj.cast::<PyTuple>() {
        let (name, bytes): (String, Bound<'_, PyBytes>) = t.extract()?;
        return Ok((Source::Text(name, bytes.as_bytes().to_vec()), Vec::new()));
    }
    Err(PyTypeError::new_err(
        "expected a dict of dicts, a path or (file name, bytes)",
    ))
}

/// `None` for a file with no lines: no topics, as an empty dict (not an error, as pytrec_eval).
fn none_if_empty<T>(r: Result<T, ParseError>) -> Result<Option<T>, String> {
    match r {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.kind == ParseErrorKind::Empty => Ok(None),
        Err(e) => Err(e.to_string()),
    }
}

fn parsed_qrels(s: Source) -> Result<Option<Qrels>, String> {
    match s {
        Source::Qrels(q) => Ok(q),
        Source::Text(name, bytes) => none_if_empty(parse_qrels(&name, &bytes)),
        Source::File(path) => {
            let bytes = match open_input(&path).map_err(|e| format!("{path}: {e}"))? {
                Input::Whole(mapped) => return none_if_empty(parse_qrels(&path, &mapped)),
                Input::Stream(mut reader) => {
                    let mut all = Vec::new();
                    std::io::Read::read_to_end(&mut reader, &mut all)
                        .map_err(|e| format!("{path}: {e}"))?;
                    all
                }
            };
            none_if_empty(parse_qrels(&path, &bytes))
        }
    }
}

fn parsed_run(s: Source) -> Result<Option<Run>, String> {
    match s {
        Source::Qrels(_) => Err("a qrels dict where a run was expected".into()),
        Source::Text(name, bytes) => none_if_empty(parse_run(&name, &bytes)),
        Source::File(path) => {
            let input = open_input(&path).map_err(|e| format!("{path}: {e}"))?;
            match read_run_input(&path, input) {
                Ok(run) => Ok(Some(run)),
                Err(ReadError::Parse(e)) => none_if_empty(Err(e)),
                Err(ReadError::Io(e)) => Err(format!("{path}: {e}")),
            }
        }
    }
}

/// pytrec_eval's RelevanceEvaluator core: the qrels parsed once, the measures selected once.
#[pyclass(module = "ragscope._native", frozen)]
struct TrecEvaluator {
    qrels: Option<Qrels>,
    index: std::collections::HashMap<String, usize>,
    selected: Vec<Selected>,
    opts: RankingOptions,
    names: Vec<Py<PyString>>,
}

#[pymethods]
impl TrecEvaluator {
    #[new]
    #[pyo3(signature = (qrels, requests, relevance_level=1, judged_only=false))]
    fn new(
        py: Python<'_>,
        qrels: &Bound<'_, PyAny>,
        requests: Vec<String>,
        relevance_level: i32,
        judged_only: bool,
    ) -> PyResult<Self> {
        let selected = trec::select(&requests).map_err(PyValueError::new_err)?;
        let (src, _) = source(qrels, true)?;
        let qrels = py.detach(|| parsed_qrels(src)).map_err(format_error)?;
        // pytrec_eval's keys: one per cutoff (`P_5`), else the family's name, whatever the
        // parameters (`utility`, not trec_eval's `utility_1,-1,0,0`)
        let names = selected
            .iter()
            .flat_map(|s| {
                let one = matches!(
                    s.params,
                    Params::None | Params::Values(_) | Params::Pairs(_)
                );
                s.names
                    .iter()
                    .map(move |n| if one { s.family.name } else { n.as_str() })
            })
            .map(|n| PyString::intern(py, n).unbind())
            .collect();
        Ok(TrecEvaluator {
            index: qrels.as_ref().map(direct::topic_index).unwrap_or_default(),
            qrels,
            selected,
            opts: RankingOptions {
                relevance_level,
                judged_only,
                ..RankingOptions::default()
            },
            names,
        })
    }

    /// `{qid: {measure key: value}}` for the topics both in the qrels and in `run`.
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        run: &Bound<'py, PyAny>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new(py);
        let Some(qrels) = &self.qrels else {
            return Ok(out);
        };
        let scored = if let Ok(run) = run.cast::<PyDict>() {
            self.score_dict(py, qrels, run)?
        } else {
            let (src, empty) = source(run, false)?;
            py.detach(|| {
                let run = parsed_run(src)?;
                Ok::<_, String>(trec::score(
                    qrels,
                    run.as_ref(),
                    &empty,
                    &self.selected,
                    &self.opts,
                ))
            })
            .map_err(format_error)?
        };
        for topic in scored {
            let values = PyDict::new(py);
            for (name, v) in self.names.iter().zip(&topic.values) {
                values.set_item(name.bind(py), *v)?;
            }
            out.set_item(topic.qid, values)?;
        }
        Ok(out)
    }
}

/// Run dicts with fewer topics are read whole, then scored: threads would cost more than they
/// save.
const PIPELINE_TOPICS: usize = 64;

impl TrecEvaluator {
    /// Scores a run dict. Reading it needs the GIL and was half of a call (perf, 2026-11-29),
    /// so a large one is read in batches that two workers score, without the GIL, while the
    /// next batch is read; the results come back in the dict's order.
    fn score_dict(
        &self,
        py: Python<'_>,
        qrels: &Qrels,
        run: &Bound<'_, PyDict>,
    ) -> PyResult<Vec<trec::TopicValues>> {
        let (selected, opts) = (&self.selected, &self.opts);
        if run.len() < PIPELINE_TOPICS {
            let mut batches = Vec::new();
            self.read_run(run, |b| batches.push(b))?;
            return Ok(py.detach(|| {
                batches
                    .iter()
                    .flat_map(|b| direct::score(qrels, &b.topics, &b.arena, selected, opts))
                    .collect()
            }));
        }
        let (tx, rx) = std::sync::mpsc::sync_channel::<direct::Batch>(8);
        let rx = std::sync::Mutex::new(rx);
        std::thread::scope(|scope| {
            let work = || {
                let mut done = Vec::new();
                loop {
                    // a poisoned lock means the other worker panicked: its join reports it
                    let next = rx.lock().unwrap_or_else(|e| e.into_inner()).recv();
                    let Ok(batch) = next else { break };
                    done.push((
                        batch.index,
                        direct::score_batch(qrels, &batch, selected, opts),
                    ));
                }
                done
            };
            let workers = [scope.spawn(work), scope.spawn(work)];
            // A send blocks only while both workers are busy; they never need the GIL.
            let read = self.read_run(run, |b| {
                let _ = tx.send(b);
            });
            drop(tx);
            let scored = py.detach(|| {
                workers.map(|w| {
                    w.join()
                        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
                })
            });
            read?;
            let mut scored: Vec<_> = scored.into_iter().flatten().collect();
            scored.sort_unstable_by_key(|(index, _)| *index);
            Ok(scored.into_iter().flat_map(|(_, values)| values).collect())
        })
    }

    /// Reads the run topics that are qrels topics into batches of [`direct::BATCH`] topics,
    /// docnos copied into each batch's arena, handing each to `emit` (topics the qrels lack are
    /// skipped unread, as pytrec_eval drops them).
    fn read_run(
        &self,
        run: &Bound<'_, PyDict>,
        mut emit: impl FnMut(direct::Batch),
    ) -> PyResult<()> {
        let py = run.py();
        let fast = utf8::fast_available(py);
        let mut batch = direct::Batch::new(0);
        for (qid, docs) in run.iter() {
            let qid = qid
                .cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("query ids must be str"))?;
            let qid = utf8::text(qid, fast)?;
            let Some(&qrels_index) = self.index.get(qid.as_ref()) else {
                continue;
            };
            let docs = docs
                .cast::<PyDict>()
                .map_err(|_| PyTypeError::new_err(format!("run['{qid}'] must be a dict")))?;
            let arena = &mut batch.arena;
            let mut entries = Vec::with_capacity(docs.len());
            for (doc, score) in docs.iter() {
                let doc = doc
                    .cast::<PyString>()
                    .map_err(|_| PyTypeError::new_err("document ids must be str"))?;
                let score: f64 = match score.cast::<PyFloat>() {
                    Ok(f) => f.value(),
                    Err(_) => score.extract().map_err(|_| {
                        PyTypeError::new_err(format!(
                            "score of a document in topic '{qid}' must be a number"
                        ))
                    })?,
                };
                if !score.is_finite() {
                    return Err(format_error(format!(
                        "score {score} of document '{doc}' in topic '{qid}' is not a finite number"
                    )));
                }
                let start = arena.len();
                arena.extend_from_slice(utf8::text(doc, fast)?.as_bytes());
                entries.push((score, start, arena.len()));
            }
            batch.topics.push(direct::RunTopicDocs {
                qrels_index,
                qid: qid.into_owned(),
                docs: entries,
            });
            if batch.topics.len() == direct::BATCH {
                let next = direct::Batch::new(batch.index + 1);
                emit(std::mem::replace(&mut batch, next));
            }
        }
        if !batch.topics.is_empty() {
            emit(batch);
        }
        Ok(())
    }
}

/// `(run id, topics, values per measure, canonical measure names, whether each is a count)`.
type Evaluated = (String, Vec<String>, Vec<Vec<f64>>, Vec<String>, Vec<bool>);

/// Scores with ragscope's measure names (`nDCG@10`, `AP`, `P(rel=2)@5`): returns
/// [`Evaluated`]. `complete` scores every qrels topic
/// (a missing one as an empty ranking), like `trec_eval -c`.
#[pyfunction]
#[pyo3(signature = (qrels, run, measures, complete=false))]
fn evaluate<'py>(
    py: Python<'py>,
    qrels: &Bound<'py, PyAny>,
    run: &Bound<'py, PyAny>,
    measures: Vec<String>,
    complete: bool,
) -> PyResult<Evaluated> {
    let measures = measures
        .iter()
        .map(|m| m.parse::<Measure>())
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let (qsrc, _) = source(qrels, true)?;
    let (rsrc, empty) = source(run, false)?;
    let results = py
        .detach(|| {
            let Some(qrels) = parsed_qrels(qsrc)? else {
                return Ok(None);
            };
            let run = parsed_run(rsrc)?.unwrap_or_else(|| Run::empty("<run>"));
            let opts = EvalOptions {
                complete,
                ..EvalOptions::default()
            };
            let mut results = ragscope_eval::try_evaluate(&qrels, &run, &measures, &opts)
                .map_err(|e| e.to_string())?;
            // a topic listed with no documents is a topic of the run: scored as empty
            if !complete && !empty.is_empty() {
                let all = EvalOptions {
                    complete: true,
                    ..EvalOptions::default()
                };
                let full = ragscope_eval::try_evaluate(&qrels, &run, &measures, &all)
                    .map_err(|e| e.to_string())?;
                let keep: Vec<bool> = full
                    .topics
                    .iter()
                    .map(|t| results.topics.contains(t) || empty.contains(t))
                    .collect();
                results.topics = keep_where(&full.topics, &keep);
                results.values = full.values.iter().map(|v| keep_where(v, &keep)).collect();
            }
            Ok::<_, String>(Some(results))
        })
        .map_err(format_error)?;
    let names = measures.iter().map(|m| m.to_string()).collect();
    let counts = measures.iter().map(|m| m.is_count()).collect();
    Ok(match results {
        None => (
            String::new(),
            Vec::new(),
            vec![Vec::new(); measures.len()],
            names,
            counts,
        ),
        Some(r) => (r.run, r.topics, r.values, names, counts),
    })
}

fn keep_where<T: Clone>(items: &[T], keep: &[bool]) -> Vec<T> {
    items
        .iter()
        .zip(keep)
        .filter(|(_, k)| **k)
        .map(|(t, _)| t.clone())
        .collect()
}

/// The canonical name of a measure (`"ndcg@10"` → `"nDCG@10"`), which parses back to itself.
#[pyfunction]
fn canonical_measure(text: &str) -> PyResult<String> {
    text.parse::<Measure>()
        .map(|m| m.to_string())
        .map_err(|e| PyValueError::new_err(e.to_string()))
}

/// TREC text from DataFrame columns (lists of query ids, document ids and relevance or
/// scores), one line per row, so that parse errors (a duplicate document) name the row as
/// line `row + 1`. Cheaper than building a dict of dicts in Python.
#[pyfunction]
fn columns_text<'py>(
    py: Python<'py>,
    qids: &Bound<'py, PyList>,
    docs: &Bound<'py, PyList>,
    values: &Bound<'py, PyList>,
    qrels: bool,
) -> PyResult<Bound<'py, PyBytes>> {
    if qids.len() != docs.len() || qids.len() != values.len() {
        return Err(PyValueError::new_err("the columns differ in length"));
    }
    let fast = utf8::fast_available(py);
    let mut out = Vec::new();
    for ((q, d), v) in qids.iter().zip(docs.iter()).zip(values.iter()) {
        let (q, d) = (
            q.cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("query ids must be str"))?,
            d.cast::<PyString>()
                .map_err(|_| PyTypeError::new_err("document ids must be str"))?,
        );
        let (q, d) = (utf8::text(q, fast)?, utf8::text(d, fast)?);
        text::check_qid(&q).map_err(|e| format_error(e.0))?;
        let written = if qrels {
            text::push_qrels_line(&mut out, &q, &d, v.extract()?)
        } else {
            text::push_run_line(&mut out, &q, &d, v.extract()?)
        };
        written.map_err(|e| format_error(e.0))?;
    }
    Ok(PyBytes::new(py, &out))
}

/// The paired test of `ragscope compare` on `other − baseline` (two-sided), as a dict.
#[pyfunction]
#[pyo3(signature = (baseline, other, test="t", resamples=10_000, seed=42))]
fn paired_test<'py>(
    py: Python<'py>,
    baseline: Vec<f64>,
    other: Vec<f64>,
    test: &str,
    resamples: usize,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let test = match test {
        "t" | "student" => Test::PairedT,
        "wilcoxon" => Test::Wilcoxon(Default::default()),
        "randomization" | "fisher" => Test::Randomization { resamples },
        "bootstrap" => Test::Bootstrap { resamples },
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown test '{other}': use t, wilcoxon, randomization or bootstrap"
            )))
        }
    };
    let r = py
        .detach(|| compare(&baseline, &other, test, seed))
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("n", r.n)?;
    d.set_item("mean_difference", r.mean_difference)?;
    d.set_item("ci_low", r.ci_low)?;
    d.set_item("ci_high", r.ci_high)?;
    d.set_item("cohens_d", r.cohens_d)?;
    d.set_item("statistic", r.statistic)?;
    d.set_item("p_value", r.p_value)?;
    Ok(d)
}

/// Multiple-comparison correction of p-values (`holm`, `bonferroni` or `none`).
#[pyfunction]
fn correct_p_values(p: Vec<f64>, method: &str) -> PyResult<Vec<f64>> {
    match method {
        "holm" => Ok(holm(&p)),
        "bonferroni" => Ok(bonferroni(&p)),
        "none" => Ok(p),
        other => Err(PyValueError::new_err(format!(
            "unknown correction '{other}': use holm, bonferroni or none"
        ))),
    }
}

/// The trec_eval families pytrec_eval can compute, in trec_eval's table order.
#[pyfunction]
fn trec_families(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let names: Vec<&str> = ragscope_eval::measures::registry()
        .iter()
        .filter(|f| f.input == ragscope_eval::measures::Input::Qrels)
        .map(|f| f.name)
        .collect();
    PyList::new(py, names)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("FormatError", m.py().get_type::<FormatError>())?;
    m.add_class::<TrecEvaluator>()?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_function(wrap_pyfunction!(rag::udcg_runs_json, m)?)?;
    m.add_function(wrap_pyfunction!(rag::udcg_reference_json, m)?)?;
    m.add_function(wrap_pyfunction!(rag::erag_json, m)?)?;
    m.add_function(wrap_pyfunction!(rag::correlate_json, m)?)?;
    m.add_function(wrap_pyfunction!(rag::nugget_scores_json, m)?)?;
    m.add_function(wrap_pyfunction!(rag::elo_json, m)?)?;
    m.add_function(wrap_pyfunction!(rag::agreement_json, m)?)?;
    m.add_function(wrap_pyfunction!(rag::citations_json, m)?)?;
    m.add_function(wrap_pyfunction!(rag::graded_json, m)?)?;
    m.add_function(wrap_pyfunction!(canonical_measure, m)?)?;
    m.add_function(wrap_pyfunction!(columns_text, m)?)?;
    m.add_function(wrap_pyfunction!(paired_test, m)?)?;
    m.add_function(wrap_pyfunction!(correct_p_values, m)?)?;
    m.add_function(wrap_pyfunction!(trec_families, m)?)?;
    Ok(())
}
