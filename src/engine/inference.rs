//! "Compute locally": a GGUF model the user picked, loaded into the worker once and reused, and
//! p(NO-RESPONSE | question, passage) for every passage of a loaded UDCG JSON file, one passage
//! per step so the worker can report progress and obey pause/cancel between passages. The
//! result becomes the loaded utilities file, so the RAG views use it at once.
//!
//! Plain Rust over crates/infer's CPU engine (single-threaded in wasm32); the browser side
//! (Blob from an object URL, the WebGPU probe, the async loop) is in `web.rs`.

use super::{Loader, Workspace};
use crate::protocol::compute::{ComputeEvent, ComputeProgress, ComputeRequest, ModelInfo};
use crate::protocol::{FileId, FileKind, Response};
use ragscope_infer::utility::{NoResponseScorer, PromptTemplate};
use ragscope_infer::{ByteSource, GgufFile, Model, Tokenizer};
use serde_json::Value;

#[cfg(target_arch = "wasm32")]
pub mod web;

/// A model opened in the worker: kept until another is opened or everything is forgotten.
pub struct LocalModel {
    pub info: ModelInfo,
    model: Model,
    tokenizer: Tokenizer,
    /// The model column of the utilities TSV (`general.name` without whitespace).
    key: String,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("info", &self.info)
            .finish()
    }
}

struct Item {
    qid: String,
    docno: String,
    relevant: bool,
    question: String,
    text: String,
}

/// Utilities being computed.
pub struct UtilityJob {
    source_name: String,
    result: FileId,
    items: Vec<Item>,
    p: Vec<f64>,
    tokens: u64,
    seconds: f64,
    pub paused: bool,
}

impl UtilityJob {
    pub fn progress(&self) -> ComputeProgress {
        ComputeProgress {
            done: self.p.len(),
            total: self.items.len(),
            tokens: self.tokens,
            seconds: self.seconds,
            paused: self.paused,
        }
    }

    pub fn is_done(&self) -> bool {
        self.p.len() >= self.items.len()
    }

    /// Adds compute time measured by the caller (the engine has no clock in wasm32).
    pub fn add_seconds(&mut self, s: f64) {
        self.seconds += s;
    }
}

/// Reads what the app shows about a model file and loads it (tensors copied out of `src`).
pub fn open_model(src: &dyn ByteSource, file_name: &str) -> Result<LocalModel, String> {
    let g = GgufFile::read(src, file_name).map_err(|e| e.to_string())?;
    let model = Model::load(&g, src).map_err(|e| e.to_string())?;
    let tokenizer = Tokenizer::from_gguf(&g).map_err(|e| e.to_string())?;
    if tokenizer.n_vocab() != model.n_vocab() {
        return Err(format!(
            "{file_name}: the tokenizer has {} tokens but token_embd.weight has {} rows",
            tokenizer.n_vocab(),
            model.n_vocab()
        ));
    }
    if tokenizer.chat_template().is_none() {
        return Err(format!(
            "{file_name}: no tokenizer.chat_template in the file; the paper's prompt needs the model's chat template"
        ));
    }
    let info = model_info(&g, &model, file_name);
    let key: String = info
        .name
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect();
    Ok(LocalModel {
        info,
        model,
        tokenizer,
        key,
    })
}

fn model_info(g: &GgufFile, model: &Model, file_name: &str) -> ModelInfo {
    let mut mix: Vec<(String, usize, u64)> = Vec::new();
    let mut parameters = 0u64;
    for t in &g.tensors {
        parameters += t.n_elements();
        match mix.iter_mut().find(|(n, _, _)| n == t.ty.name()) {
            Some(e) => {
                e.1 += 1;
                e.2 += t.n_bytes;
            }
            None => mix.push((t.ty.name().to_string(), 1, t.n_bytes)),
        }
    }
    mix.sort_by(|a, b| b.2.cmp(&a.2).then_with(|| a.0.cmp(&b.0)));
    let name = g
        .get_str("general.name")
        .ok()
        .flatten()
        .filter(|n| !n.trim().is_empty())
        .unwrap_or(file_name)
        .to_string();
    let c = &model.config;
    ModelInfo {
        file_name: file_name.to_string(),
        name,
        architecture: c.arch.clone(),
        file_bytes: g.file_len,
        parameters,
        layers: c.n_layer,
        embedding: c.n_embd,
        vocabulary: c.n_vocab,
        context_length: c.context_length,
        quant_mix: mix,
        load_seconds: 0.0,
    }
}

impl Workspace {
    /// Keeps an opened model (replacing the previous one and any job using it).
    pub fn set_model(&mut self, model: LocalModel) -> Response {
        let info = model.info.clone();
        self.job = None;
        self.local = Some(model);
        Response::Compute(ComputeEvent::ModelOpened(info))
    }

    /// Validates everything before the first forward pass: a model is open, `source` is a loaded
    /// UDCG JSON file, every passage has text, an id and a relevance label.
    pub fn start_compute(&mut self, source: FileId, result: FileId) -> Result<(), String> {
        if self.local.is_none() {
            return Err("pick a GGUF model first".into());
        }
        let (name, text) = self
            .udcg_sources
            .get(&source)
            .ok_or("that UDCG JSON file is no longer loaded")?;
        let items = udcg_items(name, text)?;
        if items.is_empty() {
            return Err(format!("{name}: no passages to score"));
        }
        self.job = Some(UtilityJob {
            source_name: name.clone(),
            result,
            p: Vec::with_capacity(items.len()),
            items,
            tokens: 0,
            seconds: 0.0,
            paused: false,
        });
        Ok(())
    }

    pub fn job(&mut self) -> Option<&mut UtilityJob> {
        self.job.as_mut()
    }

    /// Scores the next passage; the number of prompt tokens it had.
    pub fn compute_step(&mut self) -> Result<usize, String> {
        let (Some(local), Some(job)) = (&self.local, &mut self.job) else {
            return Err("nothing to compute".into());
        };
        let Some(item) = job.items.get(job.p.len()) else {
            return Ok(0);
        };
        let scorer =
            NoResponseScorer::new(&local.model, &local.tokenizer, PromptTemplate::default())
                .map_err(|e| e.to_string())?;
        let ids = scorer
            .prompt_tokens(&item.question, &item.text)
            .map_err(|e| format!("{} / {}: {e}", item.qid, item.docno))?;
        let p = scorer
            .score(&[(&item.question, &item.text)])
            .map_err(|e| format!("{} / {}: {e}", item.qid, item.docno))?;
        job.p.push(p[0]);
        job.tokens += ids.len() as u64;
        Ok(ids.len())
    }

    /// Keeps the finished job's utilities as the loaded utilities file.
    pub fn finish_compute(&mut self) -> Vec<Response> {
        let (Some(local), Some(job)) = (&self.local, self.job.take()) else {
            return vec![];
        };
        let mut tsv = String::from("qid\tdocno\trelevant\tno_res_prob\tmodel\n");
        for (item, p) in job.items.iter().zip(&job.p) {
            tsv.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\n",
                item.qid,
                item.docno,
                u8::from(item.relevant),
                p,
                local.key
            ));
        }
        let stem = job
            .source_name
            .rsplit_once('.')
            .map_or(job.source_name.as_str(), |(s, _)| s);
        let name = format!("utilities-{}-{stem}.tsv", local.key);
        let done = Response::Compute(ComputeEvent::Done {
            result: job.result,
            name: name.clone(),
            tsv: tsv.clone(),
            passages: job.p.len(),
            seconds: job.seconds,
        });
        let loaded = match self.keep(
            job.result,
            &name,
            Loader::Text(FileKind::Utilities, tsv.into_bytes()),
        ) {
            Ok((kind, summary)) => Response::Loaded {
                id: job.result,
                name,
                kind,
                summary,
            },
            Err(error) => Response::LoadFailed {
                id: job.result,
                name,
                error,
            },
        };
        vec![done, loaded]
    }

    pub fn cancel_compute(&mut self) -> Option<Response> {
        self.job
            .take()
            .map(|j| Response::Compute(ComputeEvent::Cancelled { done: j.p.len() }))
    }

    /// The synchronous path (native tests): a job runs to completion; models are opened with
    /// `set_model(open_model(..))` since there is no Blob natively.
    pub(super) fn handle_compute(&mut self, request: ComputeRequest) -> Vec<Response> {
        match request {
            ComputeRequest::OpenModel { name, .. } => vec![Response::Compute(
                ComputeEvent::ModelFailed(format!("{name}: opening a model needs the web worker")),
            )],
            ComputeRequest::ProbeGpu => vec![Response::Compute(ComputeEvent::Gpu(
                crate::protocol::compute::GpuInfo {
                    reason: "WebGPU is probed in the browser's worker only".into(),
                    ..Default::default()
                },
            ))],
            ComputeRequest::Start { source, result } => {
                if let Err(e) = self.start_compute(source, result) {
                    return vec![Response::Compute(ComputeEvent::Failed(e))];
                }
                let mut out = Vec::new();
                while self.job.as_ref().is_some_and(|j| !j.is_done()) {
                    if let Err(e) = self.compute_step() {
                        self.job = None;
                        out.push(Response::Compute(ComputeEvent::Failed(e)));
                        return out;
                    }
                    if let Some(j) = &self.job {
                        out.push(Response::Compute(ComputeEvent::Progress(j.progress())));
                    }
                }
                out.extend(self.finish_compute());
                out
            }
            ComputeRequest::Pause | ComputeRequest::Resume => vec![],
            ComputeRequest::Cancel => self.cancel_compute().into_iter().collect(),
        }
    }
}

/// The passages of a UDCG reference JSON (examples with `question`, `example_id` and passages
/// with `doc_id`, `text`, `is_relevant`), in file order; errors name the example and passage.
fn udcg_items(file: &str, text: &str) -> Result<Vec<Item>, String> {
    let data: Value = serde_json::from_str(text)
        .map_err(|e| format!("{file}: line {}, column {}: {e}", e.line(), e.column()))?;
    let examples = data
        .as_array()
        .ok_or_else(|| format!("{file}: expected a JSON list of examples"))?;
    let mut items = Vec::new();
    for (ei, ex) in examples.iter().enumerate() {
        let at = |what: String| format!("{file}: example {ei}: {what}");
        let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_string);
        let question =
            field(ex, "question").ok_or_else(|| at("missing string field \"question\"".into()))?;
        let qid = field(ex, "example_id").unwrap_or_else(|| ei.to_string());
        let passages = ex
            .get("passages")
            .and_then(Value::as_array)
            .ok_or_else(|| at("missing list field \"passages\"".into()))?;
        for (pi, p) in passages.iter().enumerate() {
            let text = field(p, "text")
                .ok_or_else(|| at(format!("passage {pi}: missing string field \"text\"")))?;
            let relevant = p
                .get("is_relevant")
                .and_then(Value::as_bool)
                .ok_or_else(|| at(format!("passage {pi}: missing boolean \"is_relevant\"")))?;
            items.push(Item {
                qid: qid.clone(),
                docno: field(p, "doc_id").unwrap_or_else(|| pi.to_string()),
                relevant,
                question: question.clone(),
                text,
            });
        }
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    //! The worker's compute path natively, on the UDCG anchor data with the tiny llama.cpp oracle
    //! model (crates/infer/tests/fixtures), against llama.cpp's p(NO-RESPONSE) for each passage.
    use super::*;
    use crate::protocol::compute::ComputeRequest;
    use crate::protocol::Request;
    use ragscope_infer::gguf::VecSource;

    const ROOT: &str = env!("CARGO_MANIFEST_DIR");

    fn fixture(name: &str) -> Vec<u8> {
        let p = format!("{ROOT}/crates/infer/tests/fixtures/{name}");
        std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    fn load_udcg(ws: &mut Workspace, id: FileId) {
        let p = format!("{ROOT}/../shared/data/udcg/dataset_with_scores.json");
        let bytes = std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"));
        ws.handle(Request::LoadStart {
            id,
            name: "dataset_with_scores.json".into(),
            size: bytes.len() as u64,
        });
        ws.handle(Request::LoadChunk { id, bytes });
        let r = ws.handle(Request::LoadEnd { id });
        assert!(
            matches!(
                r[..],
                [Response::Loaded {
                    kind: FileKind::UdcgJson,
                    ..
                }]
            ),
            "{r:?}"
        );
    }

    #[test]
    fn utilities_of_a_udcg_file_match_llama_cpp_and_load_as_utilities() {
        let mut ws = Workspace::default();
        load_udcg(&mut ws, 0);
        let m = open_model(&VecSource::new(fixture("llama-f32.gguf")), "llama-f32.gguf").unwrap();
        assert_eq!(m.info.architecture, "llama");
        assert_eq!(m.info.quant_mix[0].0, "F32");
        let opened = ws.set_model(m);
        assert!(matches!(
            opened,
            Response::Compute(ComputeEvent::ModelOpened(_))
        ));
        let out = ws.handle(Request::Compute(ComputeRequest::Start {
            source: 0,
            result: 1,
        }));
        let progress = out
            .iter()
            .filter(|r| matches!(r, Response::Compute(ComputeEvent::Progress(_))))
            .count();
        assert_eq!(progress, 15);
        let Some(Response::Compute(ComputeEvent::Done { tsv, passages, .. })) = out
            .iter()
            .find(|r| matches!(r, Response::Compute(ComputeEvent::Done { .. })))
        else {
            panic!("no Done in {out:?}");
        };
        assert_eq!(*passages, 15);
        assert!(matches!(
            out.last(),
            Some(Response::Loaded {
                id: 1,
                kind: FileKind::Utilities,
                ..
            })
        ));
        let oracle: Value =
            serde_json::from_slice(&fixture("llama-f32.json")).expect("fixture JSON");
        let mut checked = 0;
        for line in tsv.lines().skip(1) {
            let f: Vec<&str> = line.split('\t').collect();
            let want = oracle["udcg_anchor"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["example_id"] == f[0] && e["doc_id"] == f[1])
                .unwrap()["p_no_response"]
                .as_f64()
                .unwrap();
            let got: f64 = f[3].parse().unwrap();
            assert!(
                (got - want).abs() / want <= 2e-5,
                "{line}: llama.cpp {want}"
            );
            assert_eq!(f[4], "llama-f32");
            checked += 1;
        }
        assert_eq!(checked, 15);
    }

    #[test]
    fn starting_needs_a_model_and_a_loaded_udcg_file() {
        let mut ws = Workspace::default();
        load_udcg(&mut ws, 0);
        assert!(ws
            .start_compute(0, 1)
            .unwrap_err()
            .contains("pick a GGUF model"));
        let m = open_model(&VecSource::new(fixture("llama-f32.gguf")), "m.gguf").unwrap();
        ws.set_model(m);
        assert!(ws
            .start_compute(5, 1)
            .unwrap_err()
            .contains("no longer loaded"));
        // Cancelling keeps nothing.
        ws.start_compute(0, 1).unwrap();
        ws.compute_step().unwrap();
        assert!(matches!(
            ws.cancel_compute(),
            Some(Response::Compute(ComputeEvent::Cancelled { done: 1 }))
        ));
        assert!(ws.utilities.is_none());
    }

    #[test]
    fn a_file_that_is_not_a_model_is_refused_with_its_name() {
        let e = open_model(&VecSource::new(b"[{\"question\": 1}]".to_vec()), "x.json").unwrap_err();
        assert!(e.contains("x.json") && e.contains("not a GGUF file"), "{e}");
    }
}
