//! "Compute locally": a GGUF model the user picked, loaded into the worker once and reused, and
//! p(NO-RESPONSE | question, passage) for every passage of a loaded UDCG JSON file, or for the
//! top k passages per query of a loaded run (with the loaded topics, passages and qrels: the
//! inputs of `ragscope utility`'s run mode), one step at a time so the worker can report
//! progress and obey pause/cancel between steps. The result becomes the loaded utilities file,
//! so the RAG views use it at once.
//!
//! Plain Rust over crates/infer's CPU engine (single-threaded in wasm32): one passage per CPU
//! step. The browser side (the picked file's Blob, the WebGPU probe, the async loop) is in
//! `web.rs`; the WebGPU backend (batches of passages per step) in `gpu.rs`.

use super::{Loader, Workspace};
use ragscope_infer::utility::{token_probability, NoResponseScorer, PromptTemplate};
use ragscope_infer::{ByteSource, GgufFile, Model, Tokenizer};
use ragscope_protocol::compute::{
    ComputeEvent, ComputeProgress, ComputeRequest, ComputeSource, MemoryReport, ModelInfo,
    ScoredPassages,
};
use ragscope_protocol::{FileId, FileKind, Response};
use serde_json::Value;

pub mod answering;
#[cfg(target_arch = "wasm32")]
pub mod answering_web;
#[cfg(target_arch = "wasm32")]
pub mod gpu;
#[cfg(target_arch = "wasm32")]
mod job_messages;
pub mod litm;
#[cfg(target_arch = "wasm32")]
pub mod litm_web;
#[cfg(target_arch = "wasm32")]
pub mod web;

/// The CPU backend as the panel names it.
pub const CPU_LABEL: &str = "CPU (in the worker, single-threaded)";

/// A file name without its extension (`run.trec` -> `run`), as the downloads' names use it.
pub(crate) fn file_stem(name: &str) -> &str {
    name.rsplit_once('.').map_or(name, |(s, _)| s)
}

/// A model name as one whitespace-free token: the model column of a utilities TSV and the
/// downloads' file names.
pub(crate) fn name_key(name: &str) -> String {
    name.chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect()
}

/// A model opened in the worker: kept until another is opened or everything is forgotten.
pub struct LocalModel {
    pub info: ModelInfo,
    model: Model,
    tokenizer: Tokenizer,
    /// The model column of the utilities TSV (`general.name` without whitespace).
    key: String,
    /// The model's weights on the worker's WebGPU device, uploaded once and reused by every run.
    #[cfg(target_arch = "wasm32")]
    gpu: gpu::GpuSlot,
    /// Passages per GPU batch the device had memory for (lowered when one ran out).
    #[cfg(target_arch = "wasm32")]
    gpu_room: gpu::GpuRoom,
}

impl std::fmt::Debug for LocalModel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalModel")
            .field("info", &self.info)
            .finish()
    }
}

pub(crate) struct Item {
    pub(crate) qid: String,
    pub(crate) docno: String,
    pub(crate) relevant: bool,
    pub(crate) question: String,
    pub(crate) text: String,
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
    /// Continue on the CPU when the GPU fails mid-run (else the run pauses).
    pub cpu_fallback: bool,
    /// Steps run on the GPU (else on the CPU).
    pub on_gpu: bool,
    /// The backends that computed, in order (for the result's description).
    backends: Vec<String>,
    /// Keep the result as the loaded utilities file (else it is only sent back, as
    /// `ComputeEvent::Scored`: the Learn page's passages).
    keep: bool,
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

    /// Notes that `label` computes from now on.
    pub fn use_backend(&mut self, label: &str, gpu: bool) {
        self.on_gpu = gpu;
        if self.backends.last().map(String::as_str) != Some(label) {
            self.backends.push(label.to_string());
        }
    }

    /// Token ids of the next passages to score (at least one while any is left): up to
    /// `max_prompts` prompts and `max_tokens` tokens in all. A prompt past the model's context
    /// window is an error naming the passage (never scored).
    fn next_prompts(
        &self,
        local: &LocalModel,
        max_prompts: usize,
        max_tokens: usize,
    ) -> Result<Vec<Vec<u32>>, String> {
        let scorer =
            NoResponseScorer::new(&local.model, &local.tokenizer, PromptTemplate::default())
                .map_err(|e| e.to_string())?;
        let mut out: Vec<Vec<u32>> = Vec::new();
        let mut tokens = 0;
        for item in self
            .items
            .iter()
            .skip(self.p.len())
            .take(max_prompts.max(1))
        {
            let ids = scorer
                .prompt_tokens(&item.question, &item.text)
                .map_err(|e| format!("{} / {}: {e}", item.qid, item.docno))?;
            let ctx = local.model.config.context_length;
            if ctx > 0 && ids.len() > ctx {
                return Err(format!(
                    "{} / {}: the prompt has {} tokens, more than the model's context length {ctx}; shorten the passage",
                    item.qid,
                    item.docno,
                    ids.len()
                ));
            }
            if !out.is_empty() && tokens + ids.len() > max_tokens {
                break;
            }
            tokens += ids.len();
            out.push(ids);
        }
        Ok(out)
    }

    /// Keeps p(NO-RESPONSE) for the next passages, in order.
    fn record(&mut self, ps: impl IntoIterator<Item = f64>, tokens: usize) {
        self.p.extend(ps);
        self.tokens += tokens as u64;
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
    let key = name_key(&info.name);
    Ok(LocalModel {
        info,
        model,
        tokenizer,
        key,
        #[cfg(target_arch = "wasm32")]
        gpu: gpu::GpuSlot::default(),
        #[cfg(target_arch = "wasm32")]
        gpu_room: gpu::GpuRoom::default(),
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

    /// Validates everything before the first forward pass: a model is open, the source is
    /// loaded, every passage has text, an id and a relevance label.
    pub fn start_compute(
        &mut self,
        source: &ComputeSource,
        result: FileId,
        cpu_fallback: bool,
    ) -> Result<(), String> {
        if self.local.is_none() {
            return Err("pick a GGUF model first".into());
        }
        let (name, items) = match source {
            ComputeSource::Udcg(id) => {
                let (name, text) = self
                    .udcg_sources
                    .get(id)
                    .ok_or("that UDCG JSON file is no longer loaded")?;
                (name.clone(), udcg_items(name, text)?)
            }
            ComputeSource::Run { run, k } => self.run_items(*run, *k)?,
            ComputeSource::Passages { name, passages } => (
                name.clone(),
                passages
                    .iter()
                    .map(|p| Item {
                        qid: p.qid.clone(),
                        docno: p.docno.clone(),
                        relevant: p.relevant,
                        question: p.question.clone(),
                        text: p.text.clone(),
                    })
                    .collect(),
            ),
        };
        let keep = !matches!(source, ComputeSource::Passages { .. });
        if items.is_empty() {
            return Err(format!("{name}: no passages to score"));
        }
        self.job = Some(UtilityJob {
            source_name: name,
            result,
            p: Vec::with_capacity(items.len()),
            items,
            tokens: 0,
            seconds: 0.0,
            paused: false,
            cpu_fallback,
            on_gpu: false,
            backends: Vec::new(),
            keep,
        });
        Ok(())
    }

    /// The top `k` passages per query of a loaded run, in trec_eval's order (score descending,
    /// ties by docno descending), with questions from the loaded topics, texts from the loaded
    /// passages and relevance from the loaded qrels, as `ragscope utility` reads them.
    pub(crate) fn run_items(
        &self,
        run_id: FileId,
        k: usize,
    ) -> Result<(String, Vec<Item>), String> {
        if k == 0 {
            return Err("k must be at least 1".into());
        }
        let (_, run_name, run) = self
            .runs
            .iter()
            .find(|(id, _, _)| *id == run_id)
            .ok_or("that run is no longer loaded")?;
        let (_, topics_name, topics) = self
            .judge_files
            .topics
            .as_ref()
            .ok_or("load the queries' texts too: a topics file, `qid<TAB>question` per line")?;
        let (_, passages_name, passages) = self.judge_files.passages.as_ref().ok_or(
            "load the passages' texts too: a JSON Lines file of {\"docno\", \"text\"} objects",
        )?;
        let (_, _, qrels) = self.qrels.as_ref().ok_or(
            "load the qrels too: utilities need each passage's relevance (`qid iter docno rel`)",
        )?;
        let mut items = Vec::new();
        let mut scratch = Vec::new();
        for topic in run.topics() {
            let qid = topic.qid();
            let question = topics.get(qid).ok_or_else(|| {
                format!("{topics_name}: query {qid} of the run {run_name} has no topic")
            })?;
            ragscope_eval::measures::topic::rank(run, topic, k, &mut scratch);
            for &(_, i) in &scratch {
                let docno_bytes = run.docno(&topic.docs()[i as usize]);
                let docno = String::from_utf8_lossy(docno_bytes).into_owned();
                let text = passages.get(&docno).ok_or_else(|| {
                    format!(
                        "{passages_name}: docno {docno} (query {qid}) is not in the passages file"
                    )
                })?;
                let relevant = qrels
                    .topic(qid)
                    .and_then(|t| t.rel(docno_bytes))
                    .is_some_and(|r| r > 0);
                items.push(Item {
                    qid: qid.to_string(),
                    docno,
                    relevant,
                    question: question.clone(),
                    text: text.clone(),
                });
            }
        }
        let stem = file_stem(run_name);
        Ok((format!("{stem}-top{k}"), items))
    }

    pub fn job(&mut self) -> Option<&mut UtilityJob> {
        self.job.as_mut()
    }

    /// Scores the next passage on the CPU; the number of prompt tokens it had.
    pub fn compute_step(&mut self) -> Result<usize, String> {
        let (Some(local), Some(job)) = (&self.local, &mut self.job) else {
            return Err("nothing to compute".into());
        };
        let prompts = job.next_prompts(local, 1, usize::MAX)?;
        let Some(ids) = prompts.first() else {
            return Ok(0);
        };
        let item = &job.items[job.p.len()];
        let out = local
            .model
            .prefill_cpu(&[ids])
            .map_err(|e| format!("{} / {}: {e}", item.qid, item.docno))?;
        let scorer =
            NoResponseScorer::new(&local.model, &local.tokenizer, PromptTemplate::default())
                .map_err(|e| e.to_string())?;
        let p = token_probability(&out.last_logits[0], scorer.target_token());
        let n = ids.len();
        job.record([p], n);
        Ok(n)
    }

    /// Keeps the finished job's utilities as the loaded utilities file.
    pub fn finish_compute(&mut self, memory: MemoryReport) -> Vec<Response> {
        let (Some(local), Some(job)) = (&self.local, self.job.take()) else {
            return vec![];
        };
        if !job.keep {
            return vec![Response::Compute(ComputeEvent::Scored(ScoredPassages {
                name: job.source_name,
                model: local.info.name.clone(),
                p_no_response: job.p,
                seconds: job.seconds,
                backend: job.backends.join(", then "),
            }))];
        }
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
        let stem = file_stem(&job.source_name);
        let name = format!("utilities-{}-{stem}.tsv", local.key);
        let done = Response::Compute(ComputeEvent::Done {
            result: job.result,
            name: name.clone(),
            tsv: tsv.clone(),
            passages: job.p.len(),
            seconds: job.seconds,
            backend: job.backends.join(", then "),
            memory,
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
                ragscope_protocol::compute::GpuInfo {
                    reason: "WebGPU is probed in the browser's worker only".into(),
                    ..Default::default()
                },
            ))],
            ComputeRequest::Start {
                source,
                result,
                cpu_fallback,
                ..
            } => {
                if let Err(e) = self.start_compute(&source, result, cpu_fallback) {
                    return vec![Response::Compute(ComputeEvent::Failed(e))];
                }
                if let Some(job) = &mut self.job {
                    job.use_backend(CPU_LABEL, false);
                }
                let mut out = vec![Response::Compute(ComputeEvent::Backend(
                    ragscope_protocol::compute::BackendInfo {
                        gpu: false,
                        label: CPU_LABEL.into(),
                        reason: "WebGPU is used in the browser's worker only".into(),
                    },
                ))];
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
                out.extend(self.finish_compute(MemoryReport::default()));
                out
            }
            ComputeRequest::Answer(start) => self.answer_now(start),
            ComputeRequest::Pause | ComputeRequest::Resume | ComputeRequest::LoseGpu => vec![],
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
    use ragscope_infer::gguf::VecSource;
    use ragscope_protocol::compute::ComputeRequest;
    use ragscope_protocol::Request;

    const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

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
            source: ComputeSource::Udcg(0),
            result: 1,
            backend: Default::default(),
            cpu_fallback: false,
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

    /// The Learn page's "recompute with your model": passages sent with the request are scored
    /// like a UDCG file's (llama.cpp's p for the same question and text), returned in order as
    /// `Scored`, and never replace the loaded utilities file.
    #[test]
    fn passages_sent_with_the_request_match_llama_cpp_and_are_not_kept() {
        use ragscope_protocol::compute::PassageToScore;
        let mut ws = Workspace::default();
        let p = format!("{ROOT}/../shared/data/udcg/dataset_with_scores.json");
        let data: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let ex = &data[0];
        let passages: Vec<PassageToScore> = ex["passages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| PassageToScore {
                qid: ex["example_id"].as_str().unwrap().into(),
                docno: p["doc_id"].as_str().unwrap().into(),
                relevant: p["is_relevant"].as_bool().unwrap(),
                question: ex["question"].as_str().unwrap().into(),
                text: p["text"].as_str().unwrap().into(),
            })
            .collect();
        let m = open_model(&VecSource::new(fixture("llama-f32.gguf")), "llama-f32.gguf").unwrap();
        ws.set_model(m);
        let out = ws.handle(Request::Compute(ComputeRequest::Start {
            source: ComputeSource::Passages {
                name: "learn-page-1".into(),
                passages: passages.clone(),
            },
            result: 7,
            backend: Default::default(),
            cpu_fallback: false,
        }));
        assert!(
            !out.iter().any(|r| matches!(
                r,
                Response::Loaded { .. } | Response::Compute(ComputeEvent::Done { .. })
            )),
            "{out:?}"
        );
        assert!(ws.utilities.is_none());
        let Some(Response::Compute(ComputeEvent::Scored(s))) = out.last() else {
            panic!("no Scored in {out:?}");
        };
        assert_eq!(s.name, "learn-page-1");
        assert_eq!(s.model, "llama-f32");
        assert_eq!(s.p_no_response.len(), passages.len());
        let oracle: Value =
            serde_json::from_slice(&fixture("llama-f32.json")).expect("fixture JSON");
        for (p, got) in passages.iter().zip(&s.p_no_response) {
            let want = oracle["udcg_anchor"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["example_id"] == p.qid.as_str() && e["doc_id"] == p.docno.as_str())
                .unwrap()["p_no_response"]
                .as_f64()
                .unwrap();
            assert!(
                (got - want).abs() / want <= 2e-5,
                "{}: llama.cpp {want}, got {got}",
                p.docno
            );
        }
    }

    #[test]
    fn starting_needs_a_model_and_a_loaded_udcg_file() {
        let mut ws = Workspace::default();
        load_udcg(&mut ws, 0);
        assert!(ws
            .start_compute(&ComputeSource::Udcg(0), 1, false)
            .unwrap_err()
            .contains("pick a GGUF model"));
        let m = open_model(&VecSource::new(fixture("llama-f32.gguf")), "m.gguf").unwrap();
        ws.set_model(m);
        assert!(ws
            .start_compute(&ComputeSource::Udcg(5), 1, false)
            .unwrap_err()
            .contains("no longer loaded"));
        // Cancelling keeps nothing.
        ws.start_compute(&ComputeSource::Udcg(0), 1, false).unwrap();
        ws.compute_step().unwrap();
        assert!(matches!(
            ws.cancel_compute(),
            Some(Response::Compute(ComputeEvent::Cancelled { done: 1 }))
        ));
        assert!(ws.utilities.is_none());
    }

    fn load_text(ws: &mut Workspace, id: FileId, name: &str, text: &str) -> Response {
        ws.load_whole(id, name, text.as_bytes()).remove(0)
    }

    /// The anchor's passages as `ragscope utility`'s run-mode inputs (as crates/cli/tests/
    /// utility.rs builds them): passage i of each question ranked i + 1 with score 10 − i.
    fn load_run_inputs(ws: &mut Workspace) {
        let p = format!("{ROOT}/../shared/data/udcg/dataset_with_scores.json");
        let data: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let (mut topics, mut passages, mut qrels, mut run) =
            (String::new(), String::new(), String::new(), String::new());
        for ex in data.as_array().unwrap() {
            let qid = ex["example_id"].as_str().unwrap();
            topics.push_str(&format!("{qid}\t{}\n", ex["question"].as_str().unwrap()));
            for (i, p) in ex["passages"].as_array().unwrap().iter().enumerate() {
                let d = p["doc_id"].as_str().unwrap();
                passages.push_str(&serde_json::json!({"docno": d, "text": p["text"]}).to_string());
                passages.push('\n');
                let rel = u8::from(p["is_relevant"].as_bool().unwrap());
                qrels.push_str(&format!("{qid} 0 {d} {rel}\n"));
                run.push_str(&format!("{qid} Q0 {d} {} {} tag\n", i + 1, 10 - i));
            }
        }
        for (id, name, text, kind) in [
            (10, "t.tsv", &topics, FileKind::Topics),
            (11, "p.jsonl", &passages, FileKind::Passages),
            (12, "q.txt", &qrels, FileKind::Qrels),
            (13, "r.txt", &run, FileKind::Run),
        ] {
            let r = load_text(ws, id, name, text);
            assert!(
                matches!(&r, Response::Loaded { kind: k, .. } if *k == kind),
                "{name}: {r:?}"
            );
        }
    }

    #[test]
    fn utilities_of_a_run_top_k_match_llama_cpp_with_relevance_from_the_qrels() {
        let mut ws = Workspace::default();
        let source = ComputeSource::Run { run: 13, k: 3 };
        let m = open_model(&VecSource::new(fixture("llama-f32.gguf")), "llama-f32.gguf").unwrap();
        ws.set_model(m);
        let e = ws.start_compute(&source, 1, false).unwrap_err();
        assert!(e.contains("no longer loaded"), "{e}");
        load_run_inputs(&mut ws);
        let out = ws.handle(Request::Compute(ComputeRequest::Start {
            source,
            result: 1,
            backend: Default::default(),
            cpu_fallback: false,
        }));
        let Some(Response::Compute(ComputeEvent::Done { tsv, name, .. })) = out
            .iter()
            .find(|r| matches!(r, Response::Compute(ComputeEvent::Done { .. })))
        else {
            panic!("no Done in {out:?}");
        };
        assert_eq!(name, "utilities-llama-f32-r-top3.tsv");
        let oracle: Value =
            serde_json::from_slice(&fixture("llama-f32.json")).expect("fixture JSON");
        let udcg: Value = serde_json::from_slice(
            &std::fs::read(format!(
                "{ROOT}/../shared/data/udcg/dataset_with_scores.json"
            ))
            .unwrap(),
        )
        .unwrap();
        let rows: Vec<Vec<&str>> = tsv
            .lines()
            .skip(1)
            .map(|l| l.split('\t').collect())
            .collect();
        assert_eq!(rows.len(), 3 * udcg.as_array().unwrap().len());
        for f in &rows {
            let want = oracle["udcg_anchor"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["example_id"] == f[0] && e["doc_id"] == f[1])
                .unwrap()["p_no_response"]
                .as_f64()
                .unwrap();
            let got: f64 = f[3].parse().unwrap();
            assert!((got - want).abs() / want <= 2e-5, "{f:?}: llama.cpp {want}");
            let ex = udcg
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["example_id"] == f[0])
                .unwrap();
            let rank = ex["passages"]
                .as_array()
                .unwrap()
                .iter()
                .position(|p| p["doc_id"] == f[1])
                .unwrap();
            assert!(rank < 3, "{f:?} is not in the top 3");
            let rel = ex["passages"][rank]["is_relevant"].as_bool().unwrap();
            assert_eq!(f[2], if rel { "1" } else { "0" });
        }
    }

    #[test]
    fn run_mode_names_what_is_missing() {
        let mut ws = Workspace::default();
        let m = open_model(&VecSource::new(fixture("llama-f32.gguf")), "m.gguf").unwrap();
        ws.set_model(m);
        let r = load_text(&mut ws, 13, "r.txt", "q1 Q0 d1 1 2.0 tag\n");
        assert!(
            matches!(
                r,
                Response::Loaded {
                    kind: FileKind::Run,
                    ..
                }
            ),
            "{r:?}"
        );
        let source = ComputeSource::Run { run: 13, k: 5 };
        let e = ws.start_compute(&source, 1, false).unwrap_err();
        assert!(e.contains("topics"), "{e}");
        load_text(&mut ws, 10, "t.tsv", "q1\twhat?\n");
        let e = ws.start_compute(&source, 1, false).unwrap_err();
        assert!(e.contains("passages"), "{e}");
        load_text(
            &mut ws,
            11,
            "p.jsonl",
            "{\"docno\": \"d2\", \"text\": \"x\"}\n",
        );
        let e = ws.start_compute(&source, 1, false).unwrap_err();
        assert!(e.contains("qrels"), "{e}");
        load_text(&mut ws, 12, "q.txt", "q1 0 d1 1\n");
        let e = ws.start_compute(&source, 1, false).unwrap_err();
        assert!(e.contains("p.jsonl: docno d1 (query q1)"), "{e}");
    }

    #[test]
    fn a_file_that_is_not_a_model_is_refused_with_its_name() {
        let e = open_model(&VecSource::new(b"[{\"question\": 1}]".to_vec()), "x.json").unwrap_err();
        assert!(e.contains("x.json") && e.contains("not a GGUF file"), "{e}");
    }
}
