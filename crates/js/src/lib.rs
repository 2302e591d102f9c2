//! The JS face of ragscope: the eval engine as plain functions for web pages and Node.
//!
//! Built into `pkg/` by `cargo xtask pkg` (wasm-bindgen `--target web`, TypeScript types included).
//! The pure-Rust halves (`*_impl`) are tested natively; the wasm-bindgen wrappers only convert.

use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeMap;
use wasm_bindgen::prelude::*;

mod input;
use input::{Input, FEED_BYTES};

#[wasm_bindgen(typescript_custom_section)]
const TS_TYPES: &'static str = r#"
/** One run's scores: the mean of each measure, and per query when asked. */
export interface RunScores {
  run: string;
  num_queries: number;
  means: Record<string, number>;
  per_query?: Record<string, Record<string, number>>;
}

/** UDCG of every example of a UDCG reference JSON file, per model (model name → score). */
export type UdcgScores = Array<Record<string, number>>;
"#;

/// Scores of each run (a map from run name to the run file's contents) against the qrels.
/// Contents are strings or `Uint8Array`s (bytes avoid a UTF-16 round trip for large files).
/// `measures` are names such as `nDCG@10`, `P@5`, `MAP`, `MRR`.
#[wasm_bindgen(unchecked_return_type = "RunScores[]")]
pub fn evaluate(
    #[wasm_bindgen(unchecked_param_type = "string | Uint8Array")] qrels: JsValue,
    #[wasm_bindgen(unchecked_param_type = "Record<string, string | Uint8Array>")] runs: JsValue,
    measures: Vec<String>,
    per_query: Option<bool>,
) -> Result<JsValue, JsError> {
    let qrels =
        input_of(&qrels).ok_or_else(|| JsError::new("qrels must be a string or a Uint8Array"))?;
    let runs = runs_of(&runs)?;
    let scores = evaluate_inputs(
        &qrels,
        &runs,
        &measures,
        per_query.unwrap_or(false),
        FEED_BYTES,
    )
    .map_err(|e| JsError::new(&e))?;
    let json = serde_json::to_string(&scores).map_err(|e| JsError::new(&e.to_string()))?;
    js_sys_json_parse(&json)
}

/// Exactly what `trec_eval ARGS qrels run` prints (args without the two file names).
#[wasm_bindgen(js_name = trecEval)]
pub fn trec_eval(args: Vec<String>, qrels_text: &str, run_text: &str) -> Result<String, JsError> {
    trec_eval_impl(&args, qrels_text, run_text).map_err(|e| JsError::new(&e))
}

/// UDCG@k of one context from its passages' signed utilities u = R·(1 − p(NO-RESPONSE)) in
/// context order (Trappolini et al. 2025, Eq. 4): σ((1/k)·Σu⁺ + (γ/k)·Σu⁻). `gamma` defaults to
/// the paper's 1/3.
#[wasm_bindgen]
pub fn udcg(utilities: Vec<f64>, k: usize, gamma: Option<f64>) -> f64 {
    ragscope_eval::rag::udcg::udcg_at_k(
        &utilities,
        k,
        gamma.unwrap_or(ragscope_eval::rag::UdcgParams::default().gamma),
    )
}

/// A passage's utility u = R·(1 − p): R = +1 when relevant, −1 otherwise.
#[wasm_bindgen]
pub fn utility(relevant: bool, p_no_response: f64) -> Result<f64, JsError> {
    ragscope_eval::rag::utility::check_probability(p_no_response).map_err(|e| JsError::new(&e))?;
    Ok(ragscope_eval::rag::utility::utility(
        relevant,
        p_no_response,
    ))
}

/// UDCG of every example of a UDCG reference JSON text (the format of GiovanniTRA/UDCG), per
/// model, as the reference code computes it (γ = 0.333; passages lacking a label or probability
/// skipped but counted).
#[wasm_bindgen(js_name = udcgReference, unchecked_return_type = "UdcgScores")]
pub fn udcg_reference(json_text: &str) -> Result<JsValue, JsError> {
    let scores = udcg_reference_impl(json_text).map_err(|e| JsError::new(&e))?;
    let json = serde_json::to_string(&scores).map_err(|e| JsError::new(&e.to_string()))?;
    js_sys_json_parse(&json)
}

pub fn udcg_reference_impl(json_text: &str) -> Result<Vec<BTreeMap<String, f64>>, String> {
    use ragscope_eval::rag::{reference_json, Convention, UdcgParams};
    let data = reference_json::parse("input.json", json_text, Convention::Reference)
        .map_err(|e| e.to_string())?;
    Ok(data
        .scores(&UdcgParams::reference())
        .into_iter()
        .map(|m| m.into_iter().collect())
        .collect())
}

#[derive(Serialize, Debug, PartialEq)]
pub struct RunScores {
    pub run: String,
    pub num_queries: usize,
    pub means: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub per_query: Option<BTreeMap<String, BTreeMap<String, f64>>>,
}

pub fn evaluate_impl<R: AsRef<[u8]>>(
    qrels: &[u8],
    runs: &[(String, R)],
    measures: &[String],
    per_query: bool,
) -> Result<Vec<RunScores>, String> {
    evaluate_in_slices(qrels, runs, measures, per_query, FEED_BYTES)
}

/// [`evaluate_impl`] feeding the parsers `slice` bytes at a time (tests: any slicing gives the
/// same scores and errors).
pub fn evaluate_in_slices<R: AsRef<[u8]>>(
    qrels: &[u8],
    runs: &[(String, R)],
    measures: &[String],
    per_query: bool,
    slice: usize,
) -> Result<Vec<RunScores>, String> {
    let runs: Vec<(String, Input)> = runs
        .iter()
        .map(|(name, r)| (name.clone(), Input::Bytes(Cow::Borrowed(r.as_ref()))))
        .collect();
    evaluate_inputs(
        &Input::Bytes(Cow::Borrowed(qrels)),
        &runs,
        measures,
        per_query,
        slice,
    )
}

fn evaluate_inputs(
    qrels: &Input,
    runs: &[(String, Input)],
    measures: &[String],
    per_query: bool,
    slice: usize,
) -> Result<Vec<RunScores>, String> {
    let largest = runs.iter().map(|(_, r)| r.len()).max().unwrap_or(0);
    ragscope_eval::formats::reserve_wasm_heap(2 * largest + 4 * qrels.len(), 0);
    let mut parser = ragscope_eval::formats::QrelsParser::new("qrels");
    qrels.feed_slices(slice, |s| parser.feed(s).map_err(|e| e.to_string()))?;
    let qrels = parser.finish().map_err(|e| e.to_string())?;
    let measures = measures
        .iter()
        .map(|m| {
            m.parse::<ragscope_eval::Measure>()
                .map_err(|e| format!("measure `{m}`: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    runs.iter()
        .map(|(name, text)| {
            let results = evaluate_run(&qrels, (name, text), &measures, slice)?;
            let means = measures
                .iter()
                .map(|m| (m.to_string(), results.mean(m).unwrap_or(f64::NAN)))
                .collect();
            let per_query = per_query.then(|| {
                let mut table: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
                for m in &measures {
                    for (qid, v) in results.per_query(m) {
                        table
                            .entry(qid.to_string())
                            .or_default()
                            .insert(m.to_string(), v);
                    }
                }
                table
            });
            Ok(RunScores {
                run: name.clone(),
                num_queries: results.topics.len(),
                means,
                per_query,
            })
        })
        .collect()
}

/// Evaluates one run, scoring its topics as the parser hands them out
/// (`RunParser::feed_and_score`): their memory is reused for the next ones, so a run written
/// topic by topic is never held whole (in wasm, fresh memory is touched for the first time
/// by the first call). A run whose topics interleave is parsed again and scored whole; the
/// results are `evaluate`'s either way.
fn evaluate_run(
    qrels: &ragscope_eval::Qrels,
    (name, text): (&str, &Input),
    measures: &[ragscope_eval::Measure],
    slice: usize,
) -> Result<ragscope_eval::Results, String> {
    let opts = ragscope_eval::EvalOptions::default();
    let expect = slice.min(text.len());
    let mut scored = ragscope_eval::ScoredParse::new(name, qrels, measures, &opts, expect);
    // `None`: a handed-out topic came back, so the rest is not worth parsing this way
    let fed = text.feed_slices(slice, |s| match scored.feed(qrels, s, |_| {}) {
        Ok(true) => Ok(()),
        Ok(false) => Err(None),
        Err(e) => Err(Some(e.to_string())),
    });
    match fed {
        Err(Some(e)) => return Err(e),
        Err(None) => {}
        Ok(()) => {
            return scored
                .finish(qrels)
                .map(|(results, ..)| results)
                .map_err(|e| e.to_string())
        }
    }
    let mut parser = ragscope_eval::formats::RunParser::new(name);
    parser.expect_bytes(text.len());
    text.feed_slices(slice, |s| parser.feed(s).map_err(|e| e.to_string()))?;
    let run = parser.finish().map_err(|e| e.to_string())?;
    Ok(ragscope_eval::evaluate(qrels, &run, measures))
}

pub fn trec_eval_impl(args: &[String], qrels_text: &str, run_text: &str) -> Result<String, String> {
    let mut argv = args.to_vec();
    argv.push("qrels".into());
    argv.push("run".into());
    let mut read = |name: &str| match name {
        "qrels" => Ok(qrels_text.as_bytes().to_vec()),
        _ => Ok(run_text.as_bytes().to_vec()),
    };
    ragscope_eval::trec_eval::run(&argv, &mut read).map_err(|e| e.to_string())
}

/// A string (as UTF-8) or a Uint8Array (left in JS memory, copied in slices as it is parsed).
fn input_of(v: &JsValue) -> Option<Input<'static>> {
    if let Some(s) = v.as_string() {
        return Some(Input::Bytes(Cow::Owned(s.into_bytes())));
    }
    v.dyn_ref::<js_sys::Uint8Array>()
        .map(|a| Input::Array(a.clone()))
}

fn runs_of(v: &JsValue) -> Result<Vec<(String, Input<'static>)>, JsError> {
    let object = v
        .dyn_ref::<js_sys::Object>()
        .ok_or_else(|| JsError::new("runs must be an object mapping run names to contents"))?;
    js_sys::Object::entries(object)
        .iter()
        .map(|entry| {
            let pair = js_sys::Array::from(&entry);
            let name = pair.get(0).as_string().unwrap_or_default();
            let bytes = input_of(&pair.get(1)).ok_or_else(|| {
                JsError::new(&format!("run `{name}` must be a string or a Uint8Array"))
            })?;
            Ok((name, bytes))
        })
        .collect()
}

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = JSON, js_name = parse, catch)]
    fn json_parse(s: &str) -> Result<JsValue, JsValue>;
}

fn js_sys_json_parse(s: &str) -> Result<JsValue, JsError> {
    json_parse(s).map_err(|_| JsError::new("internal: JSON.parse failed"))
}
