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
use ragscope_eval::rag::answer_jobs::{self, Question};
use ragscope_eval::rag::answer_match::DownstreamMetric;
use ragscope_infer::answer::Answerer;
use ragscope_infer::gguf::GgufFile;
use ragscope_infer::utility::PromptTemplate;
use ragscope_infer::{ChatTemplate, GreedyOptions, InferError, Model, Tokenizer};
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
    let questions = answer_jobs::read_input(
        &args.contexts.display().to_string(),
        &read_text(&args.contexts)?,
    )
    .map_err(err)?;
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
        let jobs = answer_jobs::plan(q, args.erag).map_err(err)?;
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
            let texts: Vec<Vec<&str>> = batch.iter().map(|j| j.texts(q)).collect();
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
                    batch[prompt].describe()
                )),
                other => err(other.to_string()),
            })?;
            for (job, a) in batch.iter().zip(answers) {
                let stop = serde_json::to_value(a.reason).unwrap_or(serde_json::Value::Null);
                answer_jobs::record(&mut value, q, job, &a.text, stop, metric);
            }
            bar.inc(batch.len() as u64);
        }
        let line = answer_jobs::output_line(value, &model_name);
        // One write + flush per question: an interrupt loses at most the question in flight.
        out.write_all(line.as_bytes())?;
        out.flush()?;
    }
    bar.finish_and_clear();
    Ok(())
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
    if !path.exists() {
        return Ok(HashSet::new());
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|mut f| f.read_to_string(&mut text))
        .map_err(|e| err(format!("{}: {e}", path.display())))?;
    let (complete, done) =
        answer_jobs::completed(&path.display().to_string(), &text).map_err(err)?;
    if complete < text.len() {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map_err(|e| err(format!("{}: {e}", path.display())))?;
        f.set_len(complete as u64)?;
    }
    Ok(done)
}
