//! The UDCG reference JSON (GiovanniTRA/UDCG `data/*.json`): a list of
//! `{example_id, question, passages: [{doc_id, text, is_relevant, models_info: {MODEL:
//! {no_res_prob}}}], udcg: {MODEL: value}}`. Reading validates every field with its position;
//! writing fills `udcg` for every model and keeps all other fields in their order.

use std::collections::HashSet;

use indexmap::IndexMap;
use serde::de;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::error::{excerpt, InputError};
use super::udcg::{udcg_of_context, Convention, UdcgParams};
use super::unique_map::UniqueMap;
use super::utilities_tsv::UtilityRow;
use super::utility::{check_probability, Judgment};

/// One passage as read: fields the reference code may skip are optional here and judged later.
#[derive(Debug, Clone, PartialEq)]
pub struct Passage {
    pub doc_id: Option<String>,
    pub is_relevant: Option<bool>,
    /// p(NO-RESPONSE) per model, in file order; `None` for an explicit JSON `null`.
    pub no_res_prob: IndexMap<String, Option<f64>>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Example {
    pub example_id: Option<String>,
    pub passages: Vec<Passage>,
}

/// A parsed file: the typed view used for scoring, and the raw JSON kept for writing back.
#[derive(Debug, Clone)]
pub struct UdcgDataset {
    pub file: String,
    pub examples: Vec<Example>,
    /// Every model named in any passage's `models_info`, in order of first appearance.
    pub models: Vec<String>,
    /// Passages skipped under the reference convention (missing label or probability).
    pub warnings: Vec<String>,
    raw: Value,
}

#[derive(Deserialize)]
struct RawModelInfo {
    #[serde(default)]
    no_res_prob: Option<Probability>,
}

struct Probability(f64);

impl<'de> Deserialize<'de> for Probability {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let p = f64::deserialize(d)?;
        check_probability(p)
            .map(Probability)
            .map_err(de::Error::custom)
    }
}

#[derive(Deserialize)]
struct RawPassage {
    #[serde(default)]
    doc_id: Option<String>,
    #[serde(default)]
    is_relevant: Option<bool>,
    #[serde(default)]
    models_info: UniqueMap<RawModelInfo>,
}

#[derive(Deserialize)]
struct RawExample<'a> {
    #[serde(default)]
    example_id: Option<String>,
    // Optional so the reference convention can treat a missing list as empty, like
    // `item.get('passages', [])`; the paper convention refuses it. Kept raw so that each
    // passage is parsed from its own slice and its problems are reported at its own line.
    #[serde(default, borrow)]
    passages: Option<Vec<&'a RawValue>>,
    // Declared only so that a non-object `udcg` is reported instead of overwritten.
    #[serde(default)]
    #[allow(dead_code)]
    udcg: Option<Map<String, Value>>,
}

/// Checks one example against the file-wide model list. Under the paper convention an
/// incomplete passage is an error; under the reference one it is recorded in `warnings` and
/// skipped when scoring, as `compute_udcg_score` does.
struct ExampleChecker<'a> {
    file: &'a str,
    text: &'a str,
    models: &'a [String],
    convention: Convention,
    warnings: &'a mut Vec<String>,
    seen_ids: HashSet<String>,
}

impl ExampleChecker<'_> {
    fn problem(
        &mut self,
        at: (usize, usize),
        field: String,
        message: String,
    ) -> Result<(), InputError> {
        match self.convention {
            Convention::Paper => Err(InputError::new(self.file, at.0, at.1, field, message)),
            Convention::Reference => {
                self.warnings.push(format!(
                    "{}:{}:{}: field `{field}`: {message}",
                    self.file, at.0, at.1
                ));
                Ok(())
            }
        }
    }

    fn parse_slice<'de, T: Deserialize<'de>>(
        &self,
        slice: &'de str,
        prefix: &str,
    ) -> Result<T, InputError> {
        let start = position_of(self.text, slice);
        let mut de = serde_json::Deserializer::from_str(slice);
        let mut track = serde_path_to_error::Track::new();
        T::deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track)).map_err(|e| {
            let path = track.path().to_string();
            let path = if path == "." {
                prefix.to_string()
            } else {
                format!("{prefix}.{path}")
            };
            json_error(self.file, &path, &e, start)
        })
    }

    fn example(&mut self, index: usize, item: &str) -> Result<Example, InputError> {
        let start = position_of(self.text, item);
        let raw: RawExample = self.parse_slice(item, &format!("[{index}]"))?;
        let label = match &raw.example_id {
            Some(id) => format!("example {:?} (item {index})", excerpt(id)),
            None => format!("item {index}"),
        };
        if let Some(id) = &raw.example_id {
            if !self.seen_ids.insert(id.clone()) {
                return Err(InputError::new(
                    self.file,
                    start.0,
                    start.1,
                    format!("[{index}].example_id"),
                    format!("duplicate example_id {:?}", excerpt(id)),
                ));
            }
        }
        let raw_passages = match raw.passages {
            Some(p) => p,
            None => {
                self.problem(
                    start,
                    format!("[{index}].passages"),
                    format!("missing in {label}"),
                )?;
                Vec::new()
            }
        };
        let mut doc_ids = HashSet::new();
        let mut passages = Vec::with_capacity(raw_passages.len());
        for (pi, slice) in raw_passages.into_iter().enumerate() {
            let here = format!("[{index}].passages[{pi}]");
            let at = position_of(self.text, slice.get());
            let rp: RawPassage = self.parse_slice(slice.get(), &here)?;
            let who = match &rp.doc_id {
                Some(d) => format!("{label}, passage {:?}", excerpt(d)),
                None => format!("{label}, passage {pi}"),
            };
            if let Some(d) = &rp.doc_id {
                if !doc_ids.insert(d.clone()) {
                    return Err(InputError::new(
                        self.file,
                        at.0,
                        at.1,
                        format!("{here}.doc_id"),
                        format!("duplicate doc_id in {who}"),
                    ));
                }
            }
            if rp.is_relevant.is_none() {
                self.problem(
                    at,
                    format!("{here}.is_relevant"),
                    format!("missing in {who}"),
                )?;
            }
            let models = self.models;
            for model in models {
                let has = rp
                    .models_info
                    .0
                    .get(model)
                    .is_some_and(|m| m.no_res_prob.is_some());
                if !has {
                    self.problem(
                        at,
                        format!("{here}.models_info.{model}.no_res_prob"),
                        format!("missing in {who} (the model appears elsewhere in the file)"),
                    )?;
                }
            }
            passages.push(Passage {
                doc_id: rp.doc_id,
                is_relevant: rp.is_relevant,
                no_res_prob: rp
                    .models_info
                    .0
                    .into_iter()
                    .map(|(m, info)| (m, info.no_res_prob.map(|p| p.0)))
                    .collect(),
            });
        }
        Ok(Example {
            example_id: raw.example_id,
            passages,
        })
    }
}

/// Reads a UDCG reference JSON file. Under [`Convention::Paper`] a passage without `is_relevant`
/// or without a probability for a model present in the file is an error; under
/// [`Convention::Reference`] it is skipped (and listed in `warnings`), as the reference does.
///
/// Each example and passage is parsed from its own slice of the text, so every error —
/// including checks across fields — carries the line and column where that record starts.
pub fn parse(file: &str, text: &str, convention: Convention) -> Result<UdcgDataset, InputError> {
    let raw: Value = serde_json::from_str(text).map_err(|e| json_error(file, "", &e, (1, 1)))?;
    let items: Vec<&RawValue> =
        serde_json::from_str(text).map_err(|e| json_error(file, "", &e, (1, 1)))?;
    let models = collect_models(&raw);
    let mut warnings = Vec::new();
    let mut checker = ExampleChecker {
        file,
        text,
        models: &models,
        convention,
        warnings: &mut warnings,
        seen_ids: HashSet::new(),
    };
    let examples = items
        .iter()
        .enumerate()
        .map(|(index, item)| checker.example(index, item.get()))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(UdcgDataset {
        file: file.to_string(),
        examples,
        models,
        warnings,
        raw,
    })
}

/// 1-based (line, column) of `part`, a slice of `text`.
fn position_of(text: &str, part: &str) -> (usize, usize) {
    let offset = (part.as_ptr() as usize).saturating_sub(text.as_ptr() as usize);
    let before = &text.as_bytes()[..offset.min(text.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let column = match before.iter().rposition(|b| *b == b'\n') {
        Some(nl) => offset - nl,
        None => offset + 1,
    };
    (line, column)
}

fn collect_models(raw: &Value) -> Vec<String> {
    let mut models: Vec<String> = Vec::new();
    let items = raw.as_array().map(Vec::as_slice).unwrap_or_default();
    for item in items {
        let passages = item.get("passages").and_then(Value::as_array);
        for passage in passages.map(Vec::as_slice).unwrap_or_default() {
            if let Some(info) = passage.get("models_info").and_then(Value::as_object) {
                for model in info.keys() {
                    if !models.contains(model) {
                        models.push(model.clone());
                    }
                }
            }
        }
    }
    models
}

/// Splits serde_json's "msg at line L column C" into our positioned error; `base` is where the
/// parsed slice starts in the file.
fn json_error(file: &str, path: &str, e: &serde_json::Error, base: (usize, usize)) -> InputError {
    let text = e.to_string();
    let message = match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    let (line, column) = if e.line() <= 1 {
        (base.0, base.1 + e.column().saturating_sub(1))
    } else {
        (base.0 + e.line() - 1, e.column())
    };
    InputError::new(file, line, column, path, message)
}

impl UdcgDataset {
    /// UDCG of every example for every model, in example order.
    pub fn scores(&self, params: &UdcgParams) -> Vec<IndexMap<String, f64>> {
        self.scores_at(params, None)
    }

    /// UDCG@k of every example for every model (`None`: all passages of the example).
    pub fn scores_at(&self, params: &UdcgParams, k: Option<usize>) -> Vec<IndexMap<String, f64>> {
        self.examples
            .iter()
            .map(|example| {
                self.models
                    .iter()
                    .map(|model| {
                        let judged: Vec<Option<Judgment>> = example
                            .passages
                            .iter()
                            .map(|p| {
                                let prob = p.no_res_prob.get(model).copied().flatten()?;
                                Some(Judgment {
                                    relevant: p.is_relevant?,
                                    p_no_response: prob,
                                })
                            })
                            .collect();
                        (model.clone(), udcg_of_context(&judged, k, params))
                    })
                    .collect()
            })
            .collect()
    }

    /// One utilities row per passage and model with both a label and a probability (the
    /// utilities-TSV view of the file). Examples without `example_id` are named by their
    /// 0-based item index, passages without `doc_id` by theirs.
    pub fn utility_rows(&self) -> Vec<UtilityRow> {
        let mut rows = Vec::new();
        for (ei, example) in self.examples.iter().enumerate() {
            let qid = example.example_id.clone().unwrap_or_else(|| ei.to_string());
            for (pi, passage) in example.passages.iter().enumerate() {
                let Some(relevant) = passage.is_relevant else {
                    continue;
                };
                for (model, p) in &passage.no_res_prob {
                    if let Some(p) = p {
                        rows.push(UtilityRow {
                            qid: qid.clone(),
                            docno: passage.doc_id.clone().unwrap_or_else(|| pi.to_string()),
                            model: model.clone(),
                            judgment: Judgment {
                                relevant,
                                p_no_response: *p,
                            },
                        });
                    }
                }
            }
        }
        rows
    }

    /// The stored `udcg` values of the input, per example (absent entries omitted).
    pub fn stored_scores(&self) -> Vec<IndexMap<String, f64>> {
        let items = self.raw.as_array().map(Vec::as_slice).unwrap_or_default();
        items
            .iter()
            .map(|item| {
                item.get("udcg")
                    .and_then(Value::as_object)
                    .map(|m| {
                        m.iter()
                            .filter_map(|(k, v)| Some((k.clone(), v.as_f64()?)))
                            .collect()
                    })
                    .unwrap_or_default()
            })
            .collect()
    }

    /// The input JSON with `udcg[MODEL]` set for every model (existing entries replaced in
    /// place, new ones appended; a missing `udcg` object is added at the end of the item).
    pub fn to_json_with(&self, scores: &[IndexMap<String, f64>]) -> String {
        let mut out = self.raw.clone();
        if let Some(items) = out.as_array_mut() {
            for (item, score) in items.iter_mut().zip(scores) {
                let Some(obj) = item.as_object_mut() else {
                    continue;
                };
                let entry = obj
                    .entry("udcg")
                    .or_insert_with(|| Value::Object(Map::new()));
                if !entry.is_object() {
                    *entry = Value::Object(Map::new());
                }
                if let Some(udcg) = entry.as_object_mut() {
                    for (model, value) in score {
                        let number = serde_json::Number::from_f64(*value)
                            .map(Value::Number)
                            .unwrap_or(Value::Null);
                        udcg.insert(model.clone(), number);
                    }
                }
            }
        }
        // Same layout as the reference's json.dump(indent=2).
        let mut text = serde_json::to_string_pretty(&out).unwrap_or_default();
        text.push('\n');
        text
    }
}
