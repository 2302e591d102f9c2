//! `ragscope answer`: the end-to-end outcome of every context of a correlation study, with a local
//! GGUF model: the paper's Figure 3 prompt over the context's passages through the model's chat
//! template, the greedy answer (cut at the first newline), and its outcome — abstain (the answer
//! is NO-RESPONSE), correct (normalised substring match with a gold answer, lost-in-the-middle's
//! scorer; never for a context without a relevant passage), or wrong. With `--erag`, every
//! passage is also answered alone and scored by the downstream metric (eRAG's per-passage score).
//!
//! The output is the input with outcomes (and `erag` scores) filled in, so `ragscope correlate`
//! reads it directly.

use super::utility::Failure;
use indicatif::{ProgressBar, ProgressStyle};
use ragscope_eval::rag::answer_match::{outcome, DownstreamMetric};
use ragscope_infer::answer::Answerer;
use ragscope_infer::gguf::GgufFile;
use ragscope_infer::utility::PromptTemplate;
use ragscope_infer::{ChatTemplate, GreedyOptions, InferError, Model, Tokenizer};
use serde_json::{Map, Value};
use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
#[command(
    long_about = "Answers every context of a correlation-study input with a local GGUF model (greedy decoding, \
the paper's Figure 3 prompt with one \"Document:\" line per passage, through the model's chat template) and \
records each context's outcome: abstain (NO-RESPONSE), correct (a gold answer is a substring of the answer, both \
normalised as in the lost-in-the-middle scorer; a context without a relevant passage is never correct) or wrong.\n\n\
Input: JSON Lines as `ragscope correlate` reads them, each line also holding \"question\", \"answers\" (a list of \
strings) and a \"text\" for every passage; or a UDCG reference JSON (a list of examples with question, passages \
and answers), whose every example becomes one context of all its passages.\n\
Output: the same lines with each context's \"outcome\", \"answer\" and \"stop\" filled in and \"model\" set to the \
model's name; `ragscope correlate ANSWERS.jsonl` reads it. Rerunning resumes after the last complete line.\n\n\
With --erag, every passage is also answered alone (passages.ID.erag_answer, with its score erag under \
--erag-metric): the file is then an eRAG outcomes file for `ragscope eval/compare --erag-outcomes` \
(measures eRAG-P@k, eRAG-success@k).\n\
With --judge PROVIDER/MODEL (e.g. gemini/gemini-2.0-flash), each answered context with a relevant passage \
is graded by an LLM judge (semantic equivalence with a gold answer, as the UDCG paper does with Gemini 2.0 \
Flash) instead of the substring match, through the judge cache; a failed judgment is written as outcome \
\"failed\" (left out by `correlate`), and the exit status is then 3."
)]
pub struct Args {
    /// GGUF model file.
    #[arg(long)]
    pub model: PathBuf,
    /// Context sets (JSON Lines) or a UDCG reference JSON.
    pub contexts: PathBuf,
    /// Output JSON Lines (appended to and resumed).
    #[arg(short = 'o', long)]
    pub output: PathBuf,
    /// Compute engine: cpu, gpu (wgpu: KV cache and decoding steps on the GPU; an error without
    /// an adapter) or auto (a hardware GPU when there is one, else the CPU engine).
    #[arg(long, value_enum, default_value_t = super::utility_backend::BackendChoice::Auto)]
    pub backend: super::utility_backend::BackendChoice,
    /// Grade correctness with an LLM judge PROVIDER/MODEL (e.g. gemini/gemini-2.0-flash)
    /// instead of the substring match; the --judge-* options as for `ragscope judge`.
    #[arg(long)]
    pub judge: Option<String>,
    #[command(flatten)]
    pub judge_options: super::answer_judge::JudgeOptions,
    /// Also answer every passage alone and store its eRAG score (passages.ID.erag).
    #[arg(long)]
    pub erag: bool,
    /// Downstream metric of eRAG's per-passage score: substring, em or rouge_l.
    #[arg(long, default_value = "substring")]
    pub erag_metric: String,
    /// Name written in the "model" field (default: the GGUF's general.name, else the file stem).
    #[arg(long)]
    pub model_name: Option<String>,
    /// Maximum new tokens per answer.
    #[arg(long, default_value_t = 64)]
    pub max_new_tokens: usize,
    /// JSON file {"system": ..., "user": "...{text}...{question}..."} replacing the paper's prompt
    /// (the line holding {text} is repeated for every passage).
    #[arg(long)]
    pub prompt_template: Option<PathBuf>,
    /// Jinja chat template file replacing the model's tokenizer.chat_template.
    #[arg(long)]
    pub chat_template: Option<PathBuf>,
    /// Prompts decoded together.
    #[arg(long, default_value_t = 8)]
    pub batch_size: usize,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

pub fn run(args: Args) -> ExitCode {
    if let Some(spec) = &args.judge {
        if let Err(e) = super::answer_judge::check(spec, &args.judge_options) {
            return Failure::exit("answer", Err(e));
        }
    }
    match (run_inner(&args), &args.judge) {
        (Ok(()), Some(spec)) => {
            super::answer_judge::grade(&args.output, spec, &args.judge_options, args.quiet)
        }
        (r, _) => Failure::exit("answer", r),
    }
}

fn err(m: impl Into<String>) -> Failure {
    Failure::Error(m.into())
}

fn read_text(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| err(format!("{}: {e}", path.display())))
}

/// One question of the input, validated.
struct Question {
    /// 1-based line (JSONL) or example index (reference JSON), for messages.
    at: String,
    dataset: String,
    qid: String,
    question: String,
    golds: Vec<String>,
    value: Map<String, Value>,
}

/// One prompt to answer: a context (all its passages) or one passage alone (eRAG).
struct Job {
    context: Option<usize>,
    passage: Option<String>,
    ids: Vec<String>,
}

fn run_inner(args: &Args) -> Result<(), Failure> {
    let metric = DownstreamMetric::parse(&args.erag_metric).ok_or_else(|| {
        Failure::Usage(format!(
            "--erag-metric {:?}: expected substring, em or rouge_l",
            args.erag_metric
        ))
    })?;
    if args.batch_size == 0 {
        return Err(Failure::Usage("--batch-size must be at least 1".into()));
    }
    let questions = read_input(&args.contexts)?;
    if let Some(n) = args.threads {
        ragscope_infer::init_threads(n.max(1)).map_err(err)?;
    }
    let (g, src) = GgufFile::open(&args.model)?;
    let mut model = Model::load(&g, &src)?;
    let tokenizer = Tokenizer::from_gguf(&g)?;
    if tokenizer.n_vocab() != model.n_vocab() {
        return Err(err(format!(
            "{}: the tokenizer has {} tokens but token_embd.weight has {} rows",
            args.model.display(),
            tokenizer.n_vocab(),
            model.n_vocab()
        )));
    }
    // The GPU backend decodes too (generate::greedy runs on it); no CPU fallback here.
    super::utility_backend::attach(&mut model, args.backend, false).map_err(err)?;
    let prompt = match &args.prompt_template {
        Some(p) => PromptTemplate::from_json(&read_text(p)?, &p.display().to_string())?,
        None => PromptTemplate::default(),
    };
    let options = GreedyOptions {
        max_new_tokens: args.max_new_tokens,
        ..GreedyOptions::default()
    };
    let answerer = match &args.chat_template {
        Some(p) => Answerer::with_chat_template(
            &model,
            &tokenizer,
            prompt,
            ChatTemplate::new(&read_text(p)?),
            options,
        ),
        None => Answerer::new(&model, &tokenizer, prompt, options)?,
    };
    let model_name = match &args.model_name {
        Some(n) => n.clone(),
        None => match g.get_str("general.name")? {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => args
                .model
                .file_stem()
                .map(|s| s.to_string_lossy().to_string())
                .unwrap_or_else(|| "model".into()),
        },
    };

    let done = resume_state(&args.output)?;
    let todo: Vec<&Question> = questions
        .iter()
        .filter(|q| !done.contains(&(q.dataset.clone(), q.qid.clone())))
        .collect();
    let mut plans = Vec::with_capacity(todo.len());
    let mut total = 0u64;
    for q in &todo {
        let jobs = plan(q, args.erag)?;
        total += jobs.len() as u64;
        plans.push(jobs);
    }
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&args.output)
        .map_err(|e| err(format!("{}: {e}", args.output.display())))?;
    let bar = progress(total, args.quiet);
    for (q, jobs) in todo.iter().zip(&plans) {
        let mut value = q.value.clone();
        for batch in jobs.chunks(args.batch_size) {
            let texts: Vec<Vec<&str>> = batch
                .iter()
                .map(|j| j.ids.iter().map(|id| passage_text(&q.value, id)).collect())
                .collect();
            let items: Vec<(&str, Vec<&str>)> = texts
                .iter()
                .map(|t| (q.question.as_str(), t.clone()))
                .collect();
            let answers = answerer.answer(&items).map_err(|e| match e {
                InferError::ContextOverflow {
                    prompt,
                    tokens,
                    context_length,
                } => err(format!(
                    "{}: {}, question {:?}, {}: the prompt has {tokens} tokens, more than the model's context length of {context_length}",
                    args.contexts.display(),
                    q.at,
                    q.qid,
                    describe(&batch[prompt])
                )),
                other => err(other.to_string()),
            })?;
            for (job, a) in batch.iter().zip(answers) {
                record(&mut value, q, job, &a, metric);
            }
            bar.inc(batch.len() as u64);
        }
        value.insert("model".into(), Value::String(model_name.clone()));
        let mut line = Value::Object(value).to_string();
        line.push('\n');
        // One write + flush per question: an interrupt loses at most the question in flight.
        out.write_all(line.as_bytes())?;
        out.flush()?;
    }
    bar.finish_and_clear();
    Ok(())
}

fn describe(job: &Job) -> String {
    match (&job.context, &job.passage) {
        (Some(c), _) => format!("context {c} (passages {})", job.ids.join(", ")),
        (None, Some(p)) => format!("passage {p:?} alone (eRAG)"),
        (None, None) => "prompt".into(),
    }
}

fn passage_text<'a>(q: &'a Map<String, Value>, id: &str) -> &'a str {
    q.get("passages")
        .and_then(|p| p.get(id))
        .and_then(|p| p.get("text"))
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn is_relevant(q: &Map<String, Value>, id: &str) -> bool {
    q.get("passages")
        .and_then(|p| p.get(id))
        .and_then(|p| p.get("is_relevant"))
        .and_then(Value::as_bool)
        .unwrap_or(false)
}

fn record(
    value: &mut Map<String, Value>,
    q: &Question,
    job: &Job,
    a: &ragscope_infer::Generation,
    metric: DownstreamMetric,
) {
    let stop = serde_json::to_value(a.reason).unwrap_or(Value::Null);
    match (&job.context, &job.passage) {
        (Some(ci), _) => {
            let relevant = job.ids.iter().any(|id| is_relevant(&q.value, id));
            let o = outcome(&a.text, &q.golds, relevant);
            if let Some(c) = value
                .get_mut("contexts")
                .and_then(|c| c.get_mut(*ci))
                .and_then(Value::as_object_mut)
            {
                c.insert("answer".into(), Value::String(a.text.clone()));
                c.insert(
                    "outcome".into(),
                    serde_json::to_value(o).unwrap_or(Value::Null),
                );
                c.insert("stop".into(), stop);
            }
        }
        (None, Some(pid)) => {
            let score = metric.score(&a.text, &q.golds);
            if let Some(p) = value
                .get_mut("passages")
                .and_then(|p| p.get_mut(pid))
                .and_then(Value::as_object_mut)
            {
                p.insert("erag".into(), Value::from(score));
                p.insert("erag_answer".into(), Value::String(a.text.clone()));
                p.insert("erag_metric".into(), Value::String(metric.name().into()));
            }
        }
        (None, None) => {}
    }
}

/// The prompts of one question: its contexts, then (with eRAG) each passage used, alone.
fn plan(q: &Question, erag: bool) -> Result<Vec<Job>, Failure> {
    let contexts = q
        .value
        .get("contexts")
        .and_then(Value::as_array)
        .ok_or_else(|| err(format!("{}: missing list field \"contexts\"", q.at)))?;
    let mut jobs = Vec::new();
    let mut used: Vec<String> = Vec::new();
    for (ci, c) in contexts.iter().enumerate() {
        let ids = c.get("passages").and_then(Value::as_array).ok_or_else(|| {
            err(format!(
                "{}: contexts[{ci}]: missing list \"passages\"",
                q.at
            ))
        })?;
        let mut list = Vec::with_capacity(ids.len());
        for (pi, id) in ids.iter().enumerate() {
            let id = id.as_str().ok_or_else(|| {
                err(format!(
                    "{}: contexts[{ci}].passages[{pi}]: expected a passage id string",
                    q.at
                ))
            })?;
            let p = q.value.get("passages").and_then(|p| p.get(id));
            match p.and_then(|p| p.get("text")) {
                Some(Value::String(_)) => {}
                _ => {
                    return Err(err(format!(
                        "{}: contexts[{ci}].passages[{pi}]: passage {id:?} of question {:?} has no \"text\" under \"passages\"",
                        q.at, q.qid
                    )))
                }
            }
            if p.and_then(|p| p.get("is_relevant"))
                .and_then(Value::as_bool)
                .is_none()
            {
                return Err(err(format!(
                    "{}: passages.{id}: missing boolean \"is_relevant\" (a context without a relevant passage is never correct)",
                    q.at
                )));
            }
            if !used.iter().any(|u| u == id) {
                used.push(id.to_string());
            }
            list.push(id.to_string());
        }
        jobs.push(Job {
            context: Some(ci),
            passage: None,
            ids: list,
        });
    }
    if erag {
        for id in used {
            jobs.push(Job {
                context: None,
                passage: Some(id.clone()),
                ids: vec![id],
            });
        }
    }
    Ok(jobs)
}

fn golds_of(v: &Map<String, Value>, at: &str) -> Result<Vec<String>, Failure> {
    match v.get("answers").or_else(|| v.get("answer")) {
        Some(Value::String(s)) => Ok(vec![s.clone()]),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| err(format!("{at}: answers[{i}] is not a string")))
            })
            .collect(),
        _ => Err(err(format!(
            "{at}: missing \"answers\" (a list of gold answer strings)"
        ))),
    }
}

fn read_input(path: &Path) -> Result<Vec<Question>, Failure> {
    let file = path.display().to_string();
    let text = read_text(path)?;
    if text.trim_start().starts_with('[') {
        return read_reference_json(&file, &text);
    }
    let mut out = Vec::new();
    let mut seen = HashSet::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let at = format!("{file}:{}", i + 1);
        let v: Value = serde_json::from_str(line)
            .map_err(|e| err(format!("{at}: column {}: {e}", e.column())))?;
        let Value::Object(map) = v else {
            return Err(err(format!("{at}: expected a JSON object")));
        };
        let qid = match map.get("qid") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(err(format!("{at}: missing field \"qid\""))),
        };
        let question = map
            .get("question")
            .and_then(Value::as_str)
            .ok_or_else(|| err(format!("{at}: missing string field \"question\"")))?
            .to_string();
        let golds = golds_of(&map, &at)?;
        let dataset = map
            .get("dataset")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if !seen.insert((dataset.clone(), qid.clone())) {
            return Err(err(format!(
                "{at}: duplicate question {qid:?} for dataset {dataset:?}"
            )));
        }
        out.push(Question {
            at,
            dataset,
            qid,
            question,
            golds,
            value: map,
        });
    }
    Ok(out)
}

/// A UDCG reference JSON: each example becomes one context of all its passages, in order.
fn read_reference_json(file: &str, text: &str) -> Result<Vec<Question>, Failure> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        err(format!(
            "{file}: line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let examples = v
        .as_array()
        .ok_or_else(|| err(format!("{file}: expected a list of examples")))?;
    let mut out = Vec::new();
    for (ei, ex) in examples.iter().enumerate() {
        let at = format!("{file}: example {ei}");
        let qid = ex
            .get("example_id")
            .and_then(Value::as_str)
            .map(str::to_string)
            .unwrap_or_else(|| ei.to_string());
        let question = ex
            .get("question")
            .and_then(Value::as_str)
            .ok_or_else(|| err(format!("{at}: missing string field \"question\"")))?
            .to_string();
        let map = ex.as_object().cloned().unwrap_or_default();
        let golds = golds_of(&map, &at)?;
        let passages = ex
            .get("passages")
            .and_then(Value::as_array)
            .ok_or_else(|| err(format!("{at}: missing list field \"passages\"")))?;
        let mut pool = Map::new();
        let mut ids = Vec::new();
        for (pi, p) in passages.iter().enumerate() {
            let id = p
                .get("doc_id")
                .and_then(Value::as_str)
                .map(str::to_string)
                .unwrap_or_else(|| pi.to_string());
            let mut entry = Map::new();
            for key in ["text", "is_relevant"] {
                if let Some(x) = p.get(key) {
                    entry.insert(key.into(), x.clone());
                }
            }
            // The judgment `correlate` needs, when the file holds one model's probability.
            if let Some(Value::Object(info)) = p.get("models_info") {
                if info.len() == 1 {
                    if let Some(prob) = info.values().next().and_then(|m| m.get("no_res_prob")) {
                        entry.insert("no_res_prob".into(), prob.clone());
                    }
                }
            }
            ids.push(Value::String(id.clone()));
            pool.insert(id, Value::Object(entry));
        }
        let mut value = Map::new();
        value.insert("qid".into(), Value::String(qid.clone()));
        value.insert("question".into(), Value::String(question.clone()));
        value.insert(
            "answers".into(),
            Value::Array(golds.iter().cloned().map(Value::String).collect()),
        );
        value.insert("passages".into(), Value::Object(pool));
        let mut context = Map::new();
        context.insert("passages".into(), Value::Array(ids));
        value.insert(
            "contexts".into(),
            Value::Array(vec![Value::Object(context)]),
        );
        out.push(Question {
            at,
            dataset: String::new(),
            qid,
            question,
            golds,
            value,
        });
    }
    Ok(out)
}

fn progress(n: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(n);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} prompts  {per_sec}  ETA {eta}")
    {
        bar.set_style(style);
    }
    bar
}

/// (dataset, qid) of every complete line a previous run wrote; a partial last line is cut off.
fn resume_state(path: &Path) -> Result<HashSet<(String, String)>, Failure> {
    let mut done = HashSet::new();
    if !path.exists() {
        return Ok(done);
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_string(&mut text))
        .map_err(|e| err(format!("{}: {e}", path.display())))?;
    let complete = text.rfind('\n').map_or(0, |i| i + 1);
    if complete < text.len() {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| err(format!("{}: {e}", path.display())))?;
        f.set_len(complete as u64)?;
    }
    for (i, line) in text[..complete].lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|e| {
            err(format!(
                "{}:{}: not a line this command wrote ({e}); move the file away to start over",
                path.display(),
                i + 1
            ))
        })?;
        let qid = match v.get("qid") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => continue,
        };
        let dataset = v
            .get("dataset")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        done.insert((dataset, qid));
    }
    Ok(done)
}
