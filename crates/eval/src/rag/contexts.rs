//! Context sets for the correlation study of the paper (§7.2): JSON Lines, one question (for one
//! dataset and reader model) per line.
//!
//! ```json
//! {"qid": "q1", "dataset": "nq", "model": "llama-3.2-3b",
//!  "passages": {"d1": {"is_relevant": true, "no_res_prob": 0.01, "erag": 1.0},
//!               "d2": {"is_relevant": false, "utility": -0.8}},
//!  "contexts": [{"passages": ["d1", "d2"], "outcome": "correct"},
//!               {"passages": ["d2", "d1"], "outcome": "abstain"}]}
//! ```
//!
//! - `dataset` and `model` are optional (default ""); they name the columns of Table 3, and
//!   `model` (the reader LLM that produced the outcomes) selects rows of a utilities file.
//! - `passages` (judgments) is optional when a utilities file is given; a judgment has
//!   `is_relevant` and either `no_res_prob` ∈ [0,1] or `utility` ∈ [−1,1], and optionally `erag`
//!   ∈ [0,1] (eRAG's per-passage downstream score). Inline judgments win over the file.
//! - Each context is an ordered list of passage ids with its end-to-end outcome
//!   `correct | abstain | wrong`; other fields (question text, answers…) are ignored. An outcome
//!   `failed` (`ragscope answer --judge` when the judge gave no verdict) has no place in the
//!   correct > abstain > wrong order: the context is left out of the study, never guessed.

use std::collections::HashSet;

use serde::de::{self, Deserialize, Deserializer};
use serde::{Deserialize as DeriveDeserialize, Serialize};

use super::error::{excerpt, InputError};
use super::unique_map::UniqueMap;
use super::utilities_tsv::{PassageInfo, Utilities};
use super::utility::{check_probability, Judgment};

/// End-to-end outcome of generating an answer from one context; the study's ideal order is
/// correct > abstain > wrong (paper §7.2).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, DeriveDeserialize, Serialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Wrong,
    Abstain,
    Correct,
}

impl Outcome {
    /// Position in the ideal order (higher is better).
    pub fn level(self) -> f64 {
        match self {
            Outcome::Wrong => 0.0,
            Outcome::Abstain => 1.0,
            Outcome::Correct => 2.0,
        }
    }
}

/// One judged passage of a question's pool.
#[derive(Debug, Clone, PartialEq)]
pub struct PoolPassage {
    pub id: String,
    pub info: PassageInfo,
}

/// One context: indices into the question's pool, in context order.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub passages: Vec<u32>,
    pub outcome: Outcome,
}

/// All contexts of one question for one dataset and reader model.
#[derive(Debug, Clone, PartialEq)]
pub struct ContextSet {
    pub qid: String,
    pub dataset: String,
    pub model: String,
    /// Line of the input (0 for generated sets), for messages.
    pub line: usize,
    pub pool: Vec<PoolPassage>,
    pub contexts: Vec<Context>,
}

impl ContextSet {
    /// Number of relevant passages judged for the question (the nDCG/MAP normaliser).
    pub fn judged_relevant(&self) -> usize {
        self.pool
            .iter()
            .filter(|p| p.info.judgment.relevant)
            .count()
    }
}

#[derive(DeriveDeserialize)]
struct RawJudgment {
    is_relevant: bool,
    #[serde(default)]
    no_res_prob: Option<Checked<Probability>>,
    #[serde(default)]
    utility: Option<Checked<UtilityValue>>,
    #[serde(default)]
    erag: Option<Checked<Probability>>,
}

#[derive(DeriveDeserialize)]
struct RawContext {
    passages: Vec<String>,
    outcome: RawOutcome,
}

/// An outcome as written: the study's three, or a failed judgment (left out).
#[derive(DeriveDeserialize, Clone, Copy, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
enum RawOutcome {
    Wrong,
    Abstain,
    Correct,
    Failed,
}

#[derive(DeriveDeserialize)]
struct RawLine {
    qid: String,
    #[serde(default)]
    dataset: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    passages: Option<UniqueMap<RawJudgment>>,
    contexts: Vec<RawContext>,
}

/// A number validated while parsing, so that the error carries its line and column.
struct Checked<K>(f64, std::marker::PhantomData<K>);
struct Probability;
struct UtilityValue;

trait Range {
    fn check(v: f64) -> Result<f64, String>;
}
impl Range for Probability {
    fn check(v: f64) -> Result<f64, String> {
        check_probability(v)
    }
}
impl Range for UtilityValue {
    fn check(v: f64) -> Result<f64, String> {
        if v.is_finite() && (-1.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(format!("utility must be in [-1, 1], got {v}"))
        }
    }
}
impl<'de, K: Range> Deserialize<'de> for Checked<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = f64::deserialize(d)?;
        K::check(v)
            .map(|v| Checked(v, std::marker::PhantomData))
            .map_err(de::Error::custom)
    }
}

/// Reads a context-set file; judgments come from inline `passages` or from `utilities`.
pub fn parse(
    file: &str,
    text: &str,
    utilities: Option<&Utilities>,
) -> Result<Vec<ContextSet>, InputError> {
    let mut sets = Vec::new();
    let mut seen = HashSet::new();
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        if line.trim().is_empty() {
            continue;
        }
        let set = parse_line(file, line_no, line, utilities)?;
        let key = (set.dataset.clone(), set.model.clone(), set.qid.clone());
        if !seen.insert(key) {
            return Err(InputError::new(
                file,
                line_no,
                0,
                "qid",
                format!(
                    "duplicate question {:?} for dataset {:?} and model {:?}",
                    excerpt(&set.qid),
                    set.dataset,
                    set.model
                ),
            ));
        }
        sets.push(set);
    }
    Ok(sets)
}

fn parse_line(
    file: &str,
    line_no: usize,
    line: &str,
    utilities: Option<&Utilities>,
) -> Result<ContextSet, InputError> {
    let mut de = serde_json::Deserializer::from_str(line);
    let mut track = serde_path_to_error::Track::new();
    let raw = RawLine::deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track))
        .and_then(|raw| de.end().map(|()| raw))
        .map_err(|e| {
            let text = e.to_string();
            let message = match text.rfind(" at line ") {
                Some(i) => text[..i].to_string(),
                None => text,
            };
            let path = track.path().to_string();
            let path = if path == "." { String::new() } else { path };
            InputError::new(file, line_no, e.column(), path, message)
        })?;
    let err = |field: String, message: String| InputError::new(file, line_no, 0, field, message);
    let dataset = raw.dataset.unwrap_or_default();
    let model = raw.model.unwrap_or_default();
    let mut pool: Vec<PoolPassage> = Vec::new();
    let mut index_of = std::collections::HashMap::new();
    if let Some(passages) = raw.passages {
        for (id, j) in passages.0 {
            let p = match (j.no_res_prob, j.utility) {
                (Some(p), None) => p.0,
                (None, Some(u)) => {
                    if (u.0 > 0.0) != j.is_relevant && u.0 != 0.0 {
                        return Err(err(
                            format!("passages.{id}.utility"),
                            format!("sign of utility {} contradicts is_relevant", u.0),
                        ));
                    }
                    1.0 - u.0.abs()
                }
                (None, None) => {
                    return Err(err(
                        format!("passages.{id}"),
                        "needs no_res_prob or utility".into(),
                    ))
                }
                (Some(_), Some(_)) => {
                    return Err(err(
                        format!("passages.{id}"),
                        "give no_res_prob or utility, not both".into(),
                    ))
                }
            };
            index_of.insert(id.clone(), pool.len() as u32);
            pool.push(PoolPassage {
                id,
                info: PassageInfo {
                    judgment: Judgment {
                        relevant: j.is_relevant,
                        p_no_response: p,
                    },
                    erag: j.erag.map(|e| e.0),
                },
            });
        }
    }
    let external = utilities.and_then(|u| u.question(&model, &raw.qid));
    let mut contexts = Vec::with_capacity(raw.contexts.len());
    for (ci, rc) in raw.contexts.into_iter().enumerate() {
        if rc.passages.is_empty() {
            return Err(err(
                format!("contexts[{ci}].passages"),
                "a context needs at least one passage".into(),
            ));
        }
        let mut indices = Vec::with_capacity(rc.passages.len());
        for (pi, id) in rc.passages.iter().enumerate() {
            let index = match index_of.get(id) {
                Some(&i) => i,
                None => {
                    match external.and_then(|q| q.get(id)) {
                        Some(info) => {
                            let i = pool.len() as u32;
                            index_of.insert(id.clone(), i);
                            pool.push(PoolPassage {
                                id: id.clone(),
                                info: *info,
                            });
                            i
                        }
                        None => {
                            return Err(err(
                                format!("contexts[{ci}].passages[{pi}]"),
                                format!(
                                    "passage {:?} of question {:?} has no judgment{}",
                                    excerpt(id),
                                    excerpt(&raw.qid),
                                    if utilities.is_some() {
                                        format!(" (not inline, not in the utilities for model {model:?})")
                                    } else {
                                        " (not inline; pass a utilities file?)".to_string()
                                    }
                                ),
                            ))
                        }
                    }
                }
            };
            if indices.contains(&index) {
                return Err(err(
                    format!("contexts[{ci}].passages[{pi}]"),
                    format!("passage {:?} appears twice in the context", excerpt(id)),
                ));
            }
            indices.push(index);
        }
        let outcome = match rc.outcome {
            RawOutcome::Wrong => Outcome::Wrong,
            RawOutcome::Abstain => Outcome::Abstain,
            RawOutcome::Correct => Outcome::Correct,
            RawOutcome::Failed => continue,
        };
        contexts.push(Context {
            passages: indices,
            outcome,
        });
    }
    // Judgments of the question known only from the utilities file still count for the
    // nDCG/MAP normaliser.
    if let Some(q) = external {
        for (id, info) in q {
            if !index_of.contains_key(id) {
                index_of.insert(id.clone(), pool.len() as u32);
                pool.push(PoolPassage {
                    id: id.clone(),
                    info: *info,
                });
            }
        }
    }
    Ok(ContextSet {
        qid: raw.qid,
        dataset,
        model,
        line: line_no,
        pool,
        contexts,
    })
}

/// Writes context sets as JSON Lines in the format [`parse`] reads (judgments inline).
pub fn write_jsonl(sets: &[ContextSet]) -> String {
    use serde_json::{json, Map, Value};
    let mut out = String::new();
    for set in sets {
        let mut passages = Map::new();
        for p in &set.pool {
            let mut j = Map::new();
            j.insert("is_relevant".into(), Value::Bool(p.info.judgment.relevant));
            j.insert("no_res_prob".into(), json!(p.info.judgment.p_no_response));
            if let Some(e) = p.info.erag {
                j.insert("erag".into(), json!(e));
            }
            passages.insert(p.id.clone(), Value::Object(j));
        }
        let contexts: Vec<Value> = set
            .contexts
            .iter()
            .map(|c| {
                let ids: Vec<&str> = c
                    .passages
                    .iter()
                    .map(|&i| set.pool[i as usize].id.as_str())
                    .collect();
                json!({"passages": ids, "outcome": c.outcome})
            })
            .collect();
        let line = json!({
            "qid": set.qid,
            "dataset": set.dataset,
            "model": set.model,
            "passages": passages,
            "contexts": contexts,
        });
        out.push_str(&line.to_string());
        out.push('\n');
    }
    out
}
