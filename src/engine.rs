//! What the worker does with requests: detect, parse and keep files; evaluate runs.
//!
//! Plain Rust over crates/eval, with no browser types, so it is tested natively too.

use crate::protocol::{FileId, FileKind, MeasureInfo, Report, Request, Response, RunRow};
use ragscope_eval::formats::{parse_qrels, parse_run, Qrels, Run};
use ragscope_eval::Measure;

#[derive(Default)]
pub struct Workspace {
    qrels: Option<(FileId, String, Qrels)>,
    runs: Vec<(FileId, String, Run)>,
}

impl Workspace {
    pub fn handle(&mut self, request: Request) -> Option<Response> {
        match request {
            Request::Load { id, name, bytes } => Some(match self.load(id, &name, &bytes) {
                Ok((kind, summary)) => Response::Loaded {
                    id,
                    name,
                    kind,
                    summary,
                },
                Err(error) => Response::LoadFailed { id, name, error },
            }),
            Request::Remove { id } => {
                if self.qrels.as_ref().is_some_and(|(q, _, _)| *q == id) {
                    self.qrels = None;
                }
                self.runs.retain(|(r, _, _)| *r != id);
                None
            }
            Request::Evaluate { measures } => Some(match self.evaluate(&measures) {
                Ok(report) => Response::Report(report),
                Err(error) => Response::EvalFailed { error },
            }),
        }
    }

    /// Parses a file whose kind is detected from its content; on error nothing changes.
    pub fn load(
        &mut self,
        id: FileId,
        name: &str,
        bytes: &[u8],
    ) -> Result<(FileKind, String), String> {
        match detect_kind(bytes) {
            Some(FileKind::Qrels) => {
                let qrels = parse_qrels(name, bytes).map_err(|e| e.to_string())?;
                let summary = format!(
                    "{} topics, {} judgments",
                    qrels.topics().len(),
                    qrels.topics().iter().map(|t| t.num_judgments()).sum::<usize>()
                );
                self.qrels = Some((id, name.to_string(), qrels));
                Ok((FileKind::Qrels, summary))
            }
            Some(FileKind::Run) => {
                let run = parse_run(name, bytes).map_err(|e| e.to_string())?;
                let summary = format!("{} topics, {} results", run.topics().len(), run.num_results());
                self.runs.push((id, name.to_string(), run));
                Ok((FileKind::Run, summary))
            }
            None => Err(format!(
                "{name}: not a TREC run (qid Q0 docno rank score tag) or qrels (qid iter docno rel) \
                 file; other formats are not supported yet"
            )),
        }
    }

    pub fn evaluate(&self, measure_names: &[String]) -> Result<Report, String> {
        let (_, qrels_name, qrels) = self
            .qrels
            .as_ref()
            .ok_or("load a qrels file to evaluate runs")?;
        if self.runs.is_empty() {
            return Err("load at least one run to evaluate".into());
        }
        let measures = measure_names
            .iter()
            .map(|m| {
                m.parse::<Measure>()
                    .map_err(|e| format!("measure `{m}`: {e}"))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let runs = self
            .runs
            .iter()
            .map(|(_, name, run)| {
                let results = ragscope_eval::evaluate(qrels, run, &measures);
                RunRow {
                    name: name.clone(),
                    num_queries: results.topics.len(),
                    means: measures
                        .iter()
                        .map(|m| results.mean(m).unwrap_or(f64::NAN))
                        .collect(),
                }
            })
            .collect();
        Ok(Report {
            qrels: qrels_name.clone(),
            measures: measures
                .iter()
                .map(|m| MeasureInfo {
                    name: m.to_string(),
                    trec_name: m.trec_eval_equivalent().map(|(name, _level)| name),
                    explanation: explanation(m),
                })
                .collect(),
            runs,
        })
    }
}

/// Tells a run from qrels by the first line that is not a comment: six or more fields is a
/// run, exactly four a qrels file.
pub fn detect_kind(bytes: &[u8]) -> Option<FileKind> {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(64 * 1024)]);
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))?;
    match line.split_whitespace().count() {
        4 => Some(FileKind::Qrels),
        n if n >= 6 => Some(FileKind::Run),
        _ => None,
    }
}

/// The registry's one-line explanation of a measure's family (shown as a tooltip).
fn explanation(m: &Measure) -> String {
    m.trec_eval_equivalent()
        .and_then(|(name, _)| {
            ragscope_eval::measures::registry()
                .iter()
                .filter(|f| name == f.name || name.starts_with(&format!("{}_", f.name)))
                .max_by_key(|f| f.name.len())
                .map(|f| f.explanation.to_string())
        })
        .unwrap_or_default()
}
