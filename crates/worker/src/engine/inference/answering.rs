//! "Answer the contexts": `ragscope answer` in the worker. The picked model answers every
//! context of a loaded context-set file (or UDCG JSON) greedily with the paper's Figure 3 prompt
//! through its chat template; each answer's outcome (abstain / correct / wrong; a context without
//! a relevant passage is never correct) is recorded by crates/eval's `rag::answer_jobs`, the
//! bookkeeping the CLI uses, so the file the app writes is the CLI's, byte for byte. The job runs
//! one step at a time (a few prompts of one question) so the worker reports progress and obeys
//! pause/cancel between steps; a finished file is kept as the loaded context sets, so the
//! correlation study reads its outcomes at once.

use super::{LocalModel, CPU_LABEL};
use crate::engine::{Loader, Workspace};
use ragscope_eval::rag::answer_jobs::{self, Job, Question};
use ragscope_eval::rag::answer_match::DownstreamMetric;
use ragscope_eval::rag::contexts::Outcome;
use ragscope_infer::answer::Answerer;
use ragscope_infer::utility::PromptTemplate;
use ragscope_infer::{Generation, GreedyOptions, InferError};
use ragscope_protocol::answer_generation::{
    AnswerEvent, AnswerProgress, AnswerSource, AnswerStart, AnswersDone,
};
use ragscope_protocol::compute::{BackendInfo, ComputeEvent};
use ragscope_protocol::{FileId, FileKind, Response};
use serde_json::{Map, Value};
use std::collections::HashMap;

/// Loaded context-set files (their text: the input of a run) and the run, if any.
#[derive(Default)]
pub struct Answering {
    sources: HashMap<FileId, (String, String)>,
    pub(crate) job: Option<AnswerJob>,
}

impl Answering {
    /// Keeps the text of a loaded context-set file (answerable later); it replaces the one
    /// before it, as the loaded context sets do.
    pub fn keep_source(&mut self, id: FileId, name: &str, text: String) {
        self.sources.clear();
        self.sources.insert(id, (name.to_string(), text));
    }

    pub fn forget(&mut self, id: FileId) {
        self.sources.remove(&id);
    }

    /// A context-set file the study could not read: when it is an input of `ragscope answer`
    /// without any outcome yet, it is kept to be answered (its summary says so and why the study
    /// cannot use it yet); otherwise the study's error stands.
    pub fn keep_unanswered(
        &mut self,
        id: FileId,
        name: &str,
        text: String,
        study_error: String,
    ) -> Result<String, String> {
        let Ok(questions) = answer_jobs::read_input(name, &text) else {
            return Err(study_error);
        };
        let contexts: Vec<&Value> = questions
            .iter()
            .flat_map(|q| {
                q.value
                    .get("contexts")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .collect();
        if contexts.is_empty() || contexts.iter().any(|c| c.get("outcome").is_some()) {
            return Err(study_error);
        }
        let summary = format!(
            "{} questions, {} contexts without outcomes: answer them with a model (Compute locally) for the correlation study",
            questions.len(),
            contexts.len()
        );
        self.keep_source(id, name, text);
        Ok(summary)
    }
}

/// Prompts per CPU step: the engine is single-threaded in wasm32, so one prompt keeps pause and
/// cancel within one answer.
const CPU_STEP_PROMPTS: usize = 1;
/// Prompts per GPU step: decoding steps are batched over them.
pub const GPU_STEP_PROMPTS: usize = 8;

/// Answers being computed.
pub struct AnswerJob {
    source_name: String,
    result: FileId,
    questions: Vec<Question>,
    plans: Vec<Vec<Job>>,
    /// The question being answered, its next prompt, and its line being filled in.
    question: usize,
    next: usize,
    value: Option<Map<String, Value>>,
    /// Complete output lines so far.
    jsonl: String,
    model_name: String,
    metric: DownstreamMetric,
    options: GreedyOptions,
    pub progress: AnswerProgress,
    pub on_gpu: bool,
    backends: Vec<String>,
}

/// The model's name as `ragscope answer` writes it: `general.name`, else the file's stem.
fn model_name(local: &LocalModel) -> String {
    let info = &local.info;
    if info.name != info.file_name {
        return info.name.clone();
    }
    std::path::Path::new(&info.file_name)
        .file_stem()
        .map(|s| s.to_string_lossy().to_string())
        .unwrap_or_else(|| "model".into())
}

impl AnswerJob {
    pub fn is_done(&self) -> bool {
        self.question >= self.questions.len()
    }

    pub fn use_backend(&mut self, label: &str, gpu: bool) {
        self.on_gpu = gpu;
        if self.backends.last().map(String::as_str) != Some(label) {
            self.backends.push(label.to_string());
        }
    }

    pub fn options(&self) -> &GreedyOptions {
        &self.options
    }

    pub fn add_seconds(&mut self, s: f64) {
        self.progress.seconds += s;
    }

    /// The next prompts (of the current question, at most `max`) with their token ids; a prompt
    /// past the model's context window is an error naming the question and the context.
    pub(crate) fn next_prompts(
        &self,
        local: &LocalModel,
        max: usize,
    ) -> Result<Vec<Vec<u32>>, String> {
        let Some(q) = self.questions.get(self.question) else {
            return Ok(vec![]);
        };
        let answerer = answerer(local, &self.options)?;
        let ctx = local.model.config.context_length;
        let mut out = Vec::new();
        for job in self.plans[self.question]
            .iter()
            .skip(self.next)
            .take(max.max(1))
        {
            let ids = answerer
                .prompt_tokens(&q.question, &job.texts(q))
                .map_err(|e| format!("{}, question {:?}, {}: {e}", q.at, q.qid, job.describe()))?;
            if ids.is_empty() || (ctx > 0 && ids.len() > ctx) {
                return Err(overflow(q, job, ids.len(), ctx));
            }
            out.push(ids);
        }
        Ok(out)
    }

    /// Records the answers of the prompts `next_prompts` gave, in order; a question whose every
    /// prompt is answered becomes an output line.
    pub(crate) fn record(&mut self, answers: &[Generation]) {
        for a in answers {
            let q = &self.questions[self.question];
            let value = self.value.get_or_insert_with(|| q.value.clone());
            let job = &self.plans[self.question][self.next];
            let stop = serde_json::to_value(a.reason).unwrap_or(Value::Null);
            match answer_jobs::record(value, q, job, &a.text, stop, self.metric) {
                Some(Outcome::Correct) => self.progress.outcomes.correct += 1,
                Some(Outcome::Abstain) => self.progress.outcomes.abstain += 1,
                Some(Outcome::Wrong) => self.progress.outcomes.wrong += 1,
                None => {}
            }
            self.progress.new_tokens += a.tokens.len() as u64;
            self.progress.done += 1;
            self.next += 1;
            self.finish_questions();
        }
    }

    /// Writes the lines of every complete question (a question without prompts too).
    fn finish_questions(&mut self) {
        while self.question < self.questions.len() && self.next >= self.plans[self.question].len() {
            let value = self
                .value
                .take()
                .unwrap_or_else(|| self.questions[self.question].value.clone());
            self.jsonl
                .push_str(&answer_jobs::output_line(value, &self.model_name));
            self.question += 1;
            self.next = 0;
            self.progress.questions_done += 1;
        }
    }
}

fn overflow(q: &Question, job: &Job, tokens: usize, context_length: usize) -> String {
    format!(
        "{}, question {:?}, {}: the prompt has {tokens} tokens, more than the model's context length of {context_length}",
        q.at,
        q.qid,
        job.describe()
    )
}

fn answerer<'m>(local: &'m LocalModel, options: &GreedyOptions) -> Result<Answerer<'m>, String> {
    Answerer::new(
        &local.model,
        &local.tokenizer,
        PromptTemplate::default(),
        options.clone(),
    )
    .map_err(|e| e.to_string())
}

impl Workspace {
    /// Validates everything before the first prompt: a model is open, the source is loaded and
    /// every question and context is readable (errors name the line and field).
    pub fn start_answers(&mut self, start: &AnswerStart) -> Result<(), String> {
        let Some(local) = &self.local else {
            return Err("pick a GGUF model first".into());
        };
        let (name, text) = match start.source {
            AnswerSource::Contexts(id) => self
                .answering
                .sources
                .get(&id)
                .ok_or("that context-set file is no longer loaded")?,
            AnswerSource::Udcg(id) => self
                .udcg_sources
                .get(&id)
                .ok_or("that UDCG JSON file is no longer loaded")?,
        };
        let questions = answer_jobs::read_input(name, text)?;
        let plans = questions
            .iter()
            .map(|q| answer_jobs::plan(q, start.erag))
            .collect::<Result<Vec<_>, _>>()?;
        let total: usize = plans.iter().map(Vec::len).sum();
        if total == 0 {
            return Err(format!("{name}: no contexts to answer"));
        }
        let mut job = AnswerJob {
            source_name: name.clone(),
            result: start.result,
            progress: AnswerProgress {
                total,
                questions: questions.len(),
                ..Default::default()
            },
            questions,
            plans,
            question: 0,
            next: 0,
            value: None,
            jsonl: String::new(),
            model_name: model_name(local),
            metric: DownstreamMetric::Substring,
            options: GreedyOptions {
                max_new_tokens: start.max_new_tokens,
                ..GreedyOptions::default()
            },
            on_gpu: false,
            backends: Vec::new(),
        };
        job.finish_questions();
        self.answering.job = Some(job);
        Ok(())
    }

    pub fn answer_job(&mut self) -> Option<&mut AnswerJob> {
        self.answering.job.as_mut()
    }

    /// Answers the next prompt on the CPU engine.
    pub fn answer_step_cpu(&mut self) -> Result<(), String> {
        let (Some(local), Some(job)) = (&self.local, &mut self.answering.job) else {
            return Err("nothing to answer".into());
        };
        let prompts = job.next_prompts(local, CPU_STEP_PROMPTS)?;
        if prompts.is_empty() {
            return Ok(());
        }
        let refs: Vec<&[u32]> = prompts.iter().map(Vec::as_slice).collect();
        let out = ragscope_infer::generate::greedy_cpu(
            &local.model,
            &local.tokenizer,
            &refs,
            &job.options,
        )
        .map_err(|e| {
            let q = &job.questions[job.question];
            match e {
                InferError::ContextOverflow {
                    prompt,
                    tokens,
                    context_length,
                } => overflow(
                    q,
                    &job.plans[job.question][job.next + prompt],
                    tokens,
                    context_length,
                ),
                other => format!("{}, question {:?}: {other}", q.at, q.qid),
            }
        })?;
        job.record(&out);
        Ok(())
    }

    /// Keeps the finished answers as the loaded context sets (the correlation study reads their
    /// outcomes) and reports them.
    pub fn finish_answers(&mut self) -> Vec<Response> {
        let Some(job) = self.answering.job.take() else {
            return vec![];
        };
        let stem = super::file_stem(&job.source_name);
        let key = super::name_key(&job.model_name);
        let name = format!("answers-{key}-{stem}.jsonl");
        let done = Response::Compute(ComputeEvent::Answers(AnswerEvent::Done(AnswersDone {
            result: job.result,
            name: name.clone(),
            jsonl: job.jsonl.clone(),
            progress: job.progress,
            backend: job.backends.join(", then "),
        })));
        let loaded = match self.keep(
            job.result,
            &name,
            Loader::Text(FileKind::ContextSets, job.jsonl.into_bytes()),
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

    pub fn cancel_answers(&mut self) -> Option<Response> {
        self.answering.job.take().map(|j| {
            Response::Compute(ComputeEvent::Answers(AnswerEvent::Cancelled {
                done: j.progress.done,
            }))
        })
    }

    /// The synchronous path (native tests): the run goes to completion on the CPU.
    pub(super) fn answer_now(&mut self, start: AnswerStart) -> Vec<Response> {
        let ev = |e| Response::Compute(ComputeEvent::Answers(e));
        if let Err(e) = self.start_answers(&start) {
            return vec![ev(AnswerEvent::Failed(e))];
        }
        if let Some(job) = self.answer_job() {
            job.use_backend(CPU_LABEL, false);
        }
        let mut out = vec![ev(AnswerEvent::Backend(BackendInfo {
            gpu: false,
            label: CPU_LABEL.into(),
            reason: "WebGPU is used in the browser's worker only".into(),
        }))];
        while self.answering.job.as_ref().is_some_and(|j| !j.is_done()) {
            if let Err(e) = self.answer_step_cpu() {
                self.answering.job = None;
                out.push(ev(AnswerEvent::Failed(e)));
                return out;
            }
            if let Some(j) = &self.answering.job {
                out.push(ev(AnswerEvent::Progress(j.progress)));
            }
        }
        out.extend(self.finish_answers());
        out
    }
}

#[cfg(test)]
mod tests {
    //! The worker's answers natively, with the tiny llama.cpp oracle model on the CLI's answer
    //! fixture: every context's answer equals llama.cpp's greedy answer (the fixture written by
    //! tests/oracle/generate_decode.py, which `ragscope answer` is checked against too).
    use super::*;
    use crate::engine::inference::open_model;
    use ragscope_infer::gguf::VecSource;
    use ragscope_protocol::Request;

    const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

    fn read(rel: &str) -> Vec<u8> {
        let p = format!("{ROOT}/{rel}");
        std::fs::read(&p).unwrap_or_else(|e| panic!("{p}: {e}"))
    }

    fn load(ws: &mut Workspace, id: FileId, name: &str, bytes: Vec<u8>) -> Response {
        ws.handle(Request::LoadStart {
            id,
            name: name.into(),
            size: bytes.len() as u64,
        });
        ws.handle(Request::LoadChunk { id, bytes });
        ws.handle(Request::LoadEnd { id }).remove(0)
    }

    fn model(ws: &mut Workspace) {
        let bytes = read("crates/infer/tests/fixtures/llama-f32.gguf");
        ws.set_model(open_model(&VecSource::new(bytes), "llama-f32.gguf").unwrap());
    }

    #[test]
    fn answers_equal_llama_cpp_and_load_as_the_context_sets() {
        let expected: Value =
            serde_json::from_slice(&read("crates/cli/tests/fixtures/answer/expected.json"))
                .unwrap();
        let mut ws = Workspace::default();
        let r = load(
            &mut ws,
            0,
            "contexts.jsonl",
            read("crates/cli/tests/fixtures/answer/contexts.jsonl"),
        );
        assert!(
            matches!(
                r,
                Response::Loaded {
                    kind: FileKind::ContextSets,
                    ..
                }
            ),
            "{r:?}"
        );
        model(&mut ws);
        let out = ws.handle(ragscope_protocol::Request::Compute(
            ragscope_protocol::compute::ComputeRequest::Answer(AnswerStart {
                source: AnswerSource::Contexts(0),
                result: 1,
                backend: Default::default(),
                erag: true,
                max_new_tokens: expected["max_new_tokens"].as_u64().unwrap() as usize,
            }),
        ));
        let Some(Response::Compute(ComputeEvent::Answers(AnswerEvent::Done(done)))) =
            out.iter().find(|r| {
                matches!(
                    r,
                    Response::Compute(ComputeEvent::Answers(AnswerEvent::Done(_)))
                )
            })
        else {
            panic!("no Done in {out:?}");
        };
        // 2 questions × (3 contexts + 3 passages alone).
        assert_eq!((done.progress.done, done.progress.total), (12, 12));
        assert_eq!(done.progress.outcomes.wrong, 6);
        assert_eq!(done.name, "answers-llama-f32-contexts.jsonl");
        let lines: Vec<Value> = done
            .jsonl
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let mut n = 0;
        for want in expected["answers"].as_array().unwrap() {
            let q = lines.iter().find(|l| l["qid"] == want["qid"]).unwrap();
            let c = &q["contexts"][want["context"].as_u64().unwrap() as usize];
            assert_eq!(c["answer"], want["answer"], "{want}");
            assert_eq!(c["outcome"], "wrong");
            assert_eq!(q["model"], "llama-f32");
            n += 1;
        }
        assert_eq!(n, 6);
        assert!(lines[0]["passages"]["d1"]["erag_answer"].is_string());
        let Some(Response::Loaded {
            id: 1,
            kind,
            summary,
            ..
        }) = out.last()
        else {
            panic!("not loaded: {:?}", out.last());
        };
        assert_eq!(*kind, FileKind::ContextSets);
        assert!(summary.starts_with("2 questions, 6 contexts"), "{summary}");
    }

    #[test]
    fn contexts_without_outcomes_load_to_be_answered_and_errors_name_the_place() {
        let mut ws = Workspace::default();
        let line = r#"{"qid": "q1", "question": "Capital?", "answers": ["Paris"], "passages": {"d1": {"is_relevant": true, "text": "Paris."}}, "contexts": [{"passages": ["d1"]}]}"#;
        let r = load(&mut ws, 0, "c.jsonl", format!("{line}\n").into_bytes());
        let Response::Loaded { summary, .. } = &r else {
            panic!("{r:?}")
        };
        assert!(summary.contains("without outcomes"), "{summary}");
        let start = AnswerStart {
            source: AnswerSource::Contexts(0),
            result: 1,
            backend: Default::default(),
            erag: false,
            max_new_tokens: 4,
        };
        assert!(ws
            .start_answers(&start)
            .unwrap_err()
            .contains("pick a GGUF model"));
        model(&mut ws);
        ws.start_answers(&start).unwrap();
        ws.answer_step_cpu().unwrap();
        assert!(ws.answering.job.as_ref().unwrap().is_done());
        // A file that is neither a study nor an answer input keeps the study's error.
        let r = load(
            &mut ws,
            2,
            "bad.jsonl",
            b"{\"qid\": \"q\", \"contexts\": [{}]}\n".to_vec(),
        );
        assert!(matches!(r, Response::LoadFailed { .. }), "{r:?}");
        // A prompt past the context window is named, never answered.
        let long = "word ".repeat(2000);
        let line = format!(
            r#"{{"qid": "q9", "question": "Q?", "answers": ["a"], "passages": {{"d1": {{"is_relevant": false, "text": "{long}"}}}}, "contexts": [{{"passages": ["d1"]}}]}}"#
        );
        load(&mut ws, 3, "long.jsonl", line.into_bytes());
        let e = ws
            .start_answers(&AnswerStart {
                source: AnswerSource::Contexts(3),
                ..start
            })
            .and_then(|()| ws.answer_step_cpu())
            .unwrap_err();
        assert!(
            e.starts_with("long.jsonl:1, question \"q9\", context 0 (passages d1): the prompt has"),
            "{e}"
        );
    }

    #[test]
    fn a_udcg_json_is_answered_one_context_per_example() {
        let raw = read("../shared/data/udcg/dataset_with_scores.json");
        let mut ws = Workspace::default();
        model(&mut ws);
        let start = |id| {
            ragscope_protocol::Request::Compute(ragscope_protocol::compute::ComputeRequest::Answer(
                AnswerStart {
                    source: AnswerSource::Udcg(id),
                    result: 9,
                    backend: Default::default(),
                    erag: false,
                    max_new_tokens: 2,
                },
            ))
        };
        // The anchor's file has no gold answers: named, nothing answered.
        load(&mut ws, 0, "dataset_with_scores.json", raw.clone());
        let out = ws.handle(start(0));
        assert!(
            matches!(&out[..], [Response::Compute(ComputeEvent::Answers(AnswerEvent::Failed(e)))]
                if e == "dataset_with_scores.json: example 0: missing \"answers\" (a list of gold answer strings)"),
            "{out:?}"
        );
        let mut data: Value = serde_json::from_slice(&raw).unwrap();
        for ex in data.as_array_mut().unwrap() {
            ex["answers"] = serde_json::json!(["Paris"]);
        }
        let r = load(
            &mut ws,
            1,
            "with-answers.json",
            data.to_string().into_bytes(),
        );
        assert!(
            matches!(
                r,
                Response::Loaded {
                    kind: FileKind::UdcgJson,
                    ..
                }
            ),
            "{r:?}"
        );
        let out = ws.handle(start(1));
        let Some(Response::Compute(ComputeEvent::Answers(AnswerEvent::Done(done)))) =
            out.iter().find(|r| {
                matches!(
                    r,
                    Response::Compute(ComputeEvent::Answers(AnswerEvent::Done(_)))
                )
            })
        else {
            panic!("no Done in {out:?}");
        };
        let examples = data.as_array().unwrap();
        assert_eq!(done.progress.total, examples.len());
        let lines: Vec<Value> = done
            .jsonl
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(lines.len(), examples.len());
        for (l, ex) in lines.iter().zip(examples) {
            assert_eq!(l["qid"], ex["example_id"]);
            let ids: Vec<&Value> = ex["passages"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| &p["doc_id"])
                .collect();
            let ctx: Vec<&Value> = l["contexts"][0]["passages"]
                .as_array()
                .unwrap()
                .iter()
                .collect();
            assert_eq!(ctx, ids);
            assert!(l["contexts"][0]["outcome"].is_string());
        }
    }
}
