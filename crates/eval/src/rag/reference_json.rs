//! The UDCG reference JSON (GiovanniTRA/UDCG `data/*.json`): a list of
//! `{example_id, question, passages: [{doc_id, text, is_relevant, models_info: {MODEL:
//! {no_res_prob}}}], udcg: {MODEL: value}}`. Reading validates every field with its position;
//! writing fills `udcg` for every model and keeps all other fields in their order.

use std::collections::HashSet;
use std::fmt;

use indexmap::IndexMap;
use serde::de::{self, DeserializeSeed, SeqAccess, Visitor};
use serde::Deserialize;
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
struct RawExample {
    #[serde(default)]
    example_id: Option<String>,
    passages: Vec<RawPassage>,
    // Declared only so that a non-object `udcg` is reported instead of overwritten.
    #[serde(default)]
    #[allow(dead_code)]
    udcg: Option<Map<String, Value>>,
}

/// Carries the file-wide model list into the sequence visitor so that per-example problems are
/// reported while the parser still knows the line.
struct ExamplesSeed<'a> {
    models: &'a [String],
    convention: Convention,
    warnings: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for ExamplesSeed<'_> {
    type Value = Vec<Example>;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
        d.deserialize_seq(self)
    }
}

impl<'de> Visitor<'de> for ExamplesSeed<'_> {
    type Value = Vec<Example>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a list of examples")
    }

    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut examples = Vec::new();
        let mut seen_ids = HashSet::new();
        while let Some(raw) = seq.next_element::<RawExample>()? {
            let index = examples.len();
            let label = match &raw.example_id {
                Some(id) => format!("example {:?} (item {index})", excerpt(id)),
                None => format!("item {index}"),
            };
            if let Some(id) = &raw.example_id {
                if !seen_ids.insert(id.clone()) {
                    return Err(de::Error::custom(format!(
                        "field `example_id`: duplicate example_id {:?} in item {index}",
                        excerpt(id)
                    )));
                }
            }
            let mut doc_ids = HashSet::new();
            let mut passages = Vec::with_capacity(raw.passages.len());
            for (pi, rp) in raw.passages.into_iter().enumerate() {
                let who = match &rp.doc_id {
                    Some(d) => format!("{label}, passage {:?}", excerpt(d)),
                    None => format!("{label}, passage {pi}"),
                };
                if let Some(d) = &rp.doc_id {
                    if !doc_ids.insert(d.clone()) {
                        return Err(de::Error::custom(format!(
                            "field `passages[{pi}].doc_id`: duplicate doc_id in {who}"
                        )));
                    }
                }
                if rp.is_relevant.is_none() {
                    self.problem(format!(
                        "field `passages[{pi}].is_relevant`: missing in {who}"
                    ))
                    .map_err(de::Error::custom)?;
                }
                let models = self.models;
                for model in models {
                    let has = rp
                        .models_info
                        .0
                        .get(model)
                        .is_some_and(|m| m.no_res_prob.is_some());
                    if !has {
                        self.problem(format!(
                            "field `passages[{pi}].models_info.{model}.no_res_prob`: missing in {who} \
                             (the model appears elsewhere in the file)"
                        ))
                        .map_err(de::Error::custom)?;
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
            examples.push(Example {
                example_id: raw.example_id,
                passages,
            });
        }
        Ok(examples)
    }
}

impl ExamplesSeed<'_> {
    /// The paper convention refuses incomplete judgments; the reference convention skips the
    /// passage like `compute_udcg_score` does, and the skip is reported.
    fn problem(&mut self, message: String) -> Result<(), String> {
        match self.convention {
            Convention::Paper => Err(message),
            Convention::Reference => {
                self.warnings.push(message);
                Ok(())
            }
        }
    }
}

/// Reads a UDCG reference JSON file. Under [`Convention::Paper`] a passage without `is_relevant`
/// or without a probability for a model present in the file is an error; under
/// [`Convention::Reference`] it is skipped (and listed in `warnings`), as the reference does.
pub fn parse(file: &str, text: &str, convention: Convention) -> Result<UdcgDataset, InputError> {
    let raw: Value = serde_json::from_str(text).map_err(|e| json_error(file, "", &e))?;
    let models = collect_models(&raw);
    let mut warnings = Vec::new();
    let examples = parse_typed(file, text, &models, convention, &mut warnings)?;
    Ok(UdcgDataset {
        file: file.to_string(),
        examples,
        models,
        warnings,
        raw,
    })
}

fn parse_typed(
    file: &str,
    text: &str,
    models: &[String],
    convention: Convention,
    warnings: &mut Vec<String>,
) -> Result<Vec<Example>, InputError> {
    let mut de = serde_json::Deserializer::from_str(text);
    let mut track = serde_path_to_error::Track::new();
    let seed = ExamplesSeed {
        models,
        convention,
        warnings,
    };
    let result = seed.deserialize(serde_path_to_error::Deserializer::new(&mut de, &mut track));
    match result {
        Ok(examples) => Ok(examples),
        Err(e) => {
            let path = track.path().to_string();
            let path = if path == "." { String::new() } else { path };
            Err(json_error(file, &path, &e))
        }
    }
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

/// Splits serde_json's "msg at line L column C" into our positioned error.
fn json_error(file: &str, path: &str, e: &serde_json::Error) -> InputError {
    let text = e.to_string();
    let message = match text.rfind(" at line ") {
        Some(i) => text[..i].to_string(),
        None => text,
    };
    let (field, message) = match message.strip_prefix("field `") {
        Some(rest) => match rest.split_once("`: ") {
            Some((f, m)) => (f.to_string(), m.to_string()),
            None => (path.to_string(), message),
        },
        None => (path.to_string(), message),
    };
    InputError::new(file, e.line(), e.column(), field, message)
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
