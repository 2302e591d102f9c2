//! `ragscope utility`: p(NO-RESPONSE | question, passage) from a local GGUF model for every passage
//! of a UDCG reference JSON, or for each run's top-k passages (utilities TSV).
//!
//! UDCG (Trappolini et al.) scores a context by passage utilities u = R·(1 − p(NO-RESPONSE));
//! this command computes the p part with the CPU reference engine of `ragscope-infer`.

use indicatif::{ProgressBar, ProgressStyle};
use ragscope_eval::measures::topic::rank;
use ragscope_eval::Qrels;
use ragscope_infer::gguf::GgufFile;
use ragscope_infer::utility::{NoResponseScorer, PromptTemplate};
use ragscope_infer::{ChatTemplate, Model, Tokenizer};
use serde_json::Value;
use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
#[command(
    long_about = "Computes p(NO-RESPONSE | question, passage) with a local GGUF model (the paper's prompt through the \
model's chat template, probability of the first token of \"NO-RESPONSE\" at the last position).\n\n\
JSON mode:  ragscope utility --model M.gguf INPUT.json [-o OUTPUT.json]\n  fills models_info[MODEL].no_res_prob for every passage of a UDCG reference JSON, keeping every other field.\n\n\
Run mode:   ragscope utility --model M.gguf --topics T.tsv --passages P.jsonl --qrels Q --run R --k 5 -o U.tsv\n  writes `qid docno relevant no_res_prob` for each query's top k; rerunning resumes after the last written line."
)]
pub struct Args {
    /// GGUF model file (llama, qwen2, smollm or mistral architecture).
    #[arg(long)]
    pub model: PathBuf,
    #[command(flatten)]
    pub inputs: PassageInputs,
    /// Output file (JSON mode: default stdout; run mode: required, appended to and resumed).
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// Key under models_info (default: the GGUF's general.name, else the file stem).
    #[arg(long)]
    pub model_name: Option<String>,
    /// Jinja chat template file replacing the model's tokenizer.chat_template.
    #[arg(long)]
    pub chat_template: Option<PathBuf>,
    /// Prompts per forward pass.
    #[arg(long, default_value_t = 8)]
    pub batch_size: usize,
    /// Where forward passes run: cpu, gpu (wgpu: Vulkan/Metal/DX12; fails when there is no
    /// adapter), auto (a hardware GPU if present, else the CPU).
    #[arg(long, value_enum, default_value_t = super::utility_backend::BackendChoice::Auto)]
    pub backend: super::utility_backend::BackendChoice,
    /// When the GPU fails mid-batch (after one retry on a new device), finish that batch on the CPU.
    #[arg(long)]
    pub cpu_fallback: bool,
    /// Worker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// The passages to score and the prompt: the inputs `ragscope utility` and `ragscope judge
/// utility` share (JSON mode: a UDCG reference JSON; run mode: topics, passages, qrels, a run).
#[derive(clap::Args, Debug)]
pub struct PassageInputs {
    /// UDCG reference JSON to fill (JSON mode).
    pub input: Option<PathBuf>,
    /// Topics file: `qid<TAB>question` per line (run mode).
    #[arg(long)]
    pub topics: Option<PathBuf>,
    /// Passages JSONL: `{"docno": ..., "text": ...}` per line (run mode).
    #[arg(long)]
    pub passages: Option<PathBuf>,
    /// TREC qrels `qid iter docno rel` (run mode); rel > 0 counts as relevant.
    #[arg(long)]
    pub qrels: Option<PathBuf>,
    /// TREC run `qid Q0 docno rank score tag` (run mode); ranked like trec_eval.
    #[arg(long)]
    pub run: Option<PathBuf>,
    /// Passages per query taken from the run (run mode).
    #[arg(long, default_value_t = 5)]
    pub k: usize,
    /// JSON file {"system": ..., "user": "...{text}...{question}..."} replacing the paper's prompt.
    #[arg(long)]
    pub prompt_template: Option<PathBuf>,
}

impl PassageInputs {
    /// Exactly one of the two modes must be given.
    pub(super) fn check_mode(&self) -> Result<(), Failure> {
        let run_mode = [&self.topics, &self.passages, &self.qrels, &self.run]
            .iter()
            .any(|o| o.is_some());
        if run_mode == self.input.is_some() {
            return Err(Failure::Usage(
                "give either INPUT.json, or all of --topics --passages --qrels --run (see --help)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The paper's prompt, or the one in --prompt-template.
    pub(super) fn prompt(&self) -> Result<PromptTemplate, Failure> {
        Ok(match &self.prompt_template {
            Some(p) => PromptTemplate::from_json(&read_text(p)?, &p.display().to_string())?,
            None => PromptTemplate::default(),
        })
    }

    /// Run mode's files: topics, passages, qrels, run (a usage error names the missing one).
    pub(super) fn run_files(&self) -> Result<[PathBuf; 4], Failure> {
        let need = |o: &Option<PathBuf>, flag: &str| {
            o.clone()
                .ok_or_else(|| Failure::Usage(format!("run mode needs {flag}")))
        };
        Ok([
            need(&self.topics, "--topics")?,
            need(&self.passages, "--passages")?,
            need(&self.qrels, "--qrels")?,
            need(&self.run, "--run")?,
        ])
    }
}

pub fn run(args: Args) -> ExitCode {
    Failure::exit("utility", run_inner(&args))
}

pub(super) enum Failure {
    Usage(String),
    Error(String),
}

impl Failure {
    /// The exit status of a model command (`utility`, `answer`): 0, 2 for a usage error, 1
    /// otherwise, with the message on stderr.
    pub(super) fn exit(command: &str, result: Result<(), Failure>) -> ExitCode {
        match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(Failure::Usage(m)) => {
                eprintln!("ragscope {command}: {m}");
                ExitCode::from(2)
            }
            Err(Failure::Error(m)) => {
                eprintln!("ragscope {command}: error: {m}");
                ExitCode::from(1)
            }
        }
    }
}

impl<E: std::fmt::Display> From<E> for Failure {
    fn from(e: E) -> Self {
        Failure::Error(e.to_string())
    }
}

fn err(m: impl Into<String>) -> Failure {
    Failure::Error(m.into())
}

fn run_inner(args: &Args) -> Result<(), Failure> {
    args.inputs.check_mode()?;
    if args.batch_size == 0 {
        return Err(Failure::Usage("--batch-size must be at least 1".into()));
    }
    if let Some(n) = args.threads {
        ragscope_infer::init_threads(n.max(1)).map_err(err)?;
    }
    let (g, src) = GgufFile::open(&args.model)?;
    let mut model = Model::load(&g, &src)?;
    super::utility_backend::attach(&mut model, args.backend, args.cpu_fallback).map_err(err)?;
    let tokenizer = Tokenizer::from_gguf(&g)?;
    if tokenizer.n_vocab() != model.n_vocab() {
        return Err(err(format!(
            "{}: the tokenizer has {} tokens but token_embd.weight has {} rows",
            args.model.display(),
            tokenizer.n_vocab(),
            model.n_vocab()
        )));
    }
    let prompt = args.inputs.prompt()?;
    let scorer = match &args.chat_template {
        Some(p) => NoResponseScorer::with_chat_template(
            &model,
            &tokenizer,
            prompt,
            ChatTemplate::new(&read_text(p)?),
        )?,
        None => NoResponseScorer::new(&model, &tokenizer, prompt)?,
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
    if let Some(input) = &args.inputs.input {
        json_mode(args, input, &scorer, &model_name)
    } else {
        run_mode_tsv(args, &scorer)
    }
}

fn read_text(path: &Path) -> Result<String, Failure> {
    std::fs::read_to_string(path).map_err(|e| err(format!("{}: {e}", path.display())))
}

fn progress(n: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(n);
    if let Ok(style) =
        ProgressStyle::with_template("{bar:40} {pos}/{len} passages  {per_sec}  ETA {eta}")
    {
        bar.set_style(style);
    }
    bar
}

// ---------------------------------------------------------------- JSON mode

fn json_mode(
    args: &Args,
    input: &Path,
    scorer: &NoResponseScorer,
    model_name: &str,
) -> Result<(), Failure> {
    let file = input.display().to_string();
    let text = read_text(input)?;
    let mut data: Value = serde_json::from_str(&text).map_err(|e| {
        err(format!(
            "{file}: line {}, column {}: {e}",
            e.line(),
            e.column()
        ))
    })?;
    let examples = data
        .as_array_mut()
        .ok_or_else(|| err(format!("{file}: expected a JSON list of examples")))?;
    // Validate everything before the first forward pass.
    let mut jobs: Vec<(usize, usize, String, String)> = Vec::new();
    for (ei, ex) in examples.iter().enumerate() {
        let at = |what: &str| format!("{file}: example {ei}{}: {what}", example_label(ex));
        let question = ex
            .get("question")
            .and_then(Value::as_str)
            .ok_or_else(|| err(at("missing string field \"question\"")))?;
        let passages = ex
            .get("passages")
            .and_then(Value::as_array)
            .ok_or_else(|| err(at("missing list field \"passages\"")))?;
        for (pi, p) in passages.iter().enumerate() {
            let text = p
                .get("text")
                .and_then(Value::as_str)
                .ok_or_else(|| err(at(&format!("passage {pi}: missing string field \"text\""))))?;
            if !p.is_object() {
                return Err(err(at(&format!("passage {pi} is not an object"))));
            }
            jobs.push((ei, pi, question.to_string(), text.to_string()));
        }
    }
    let bar = progress(jobs.len() as u64, args.quiet);
    for batch in jobs.chunks(args.batch_size) {
        let items: Vec<(&str, &str)> = batch
            .iter()
            .map(|(_, _, q, t)| (q.as_str(), t.as_str()))
            .collect();
        let ps = scorer.score(&items).map_err(|e| {
            too_long(e, |i| {
                let (ei, pi, _, _) = &batch[i];
                let doc = examples[*ei]["passages"][*pi]
                    .get("doc_id")
                    .and_then(Value::as_str)
                    .map(|d| format!(" ({d})"))
                    .unwrap_or_default();
                format!(
                    "{file}: example {ei}{}, passage {pi}{doc}",
                    example_label(&examples[*ei])
                )
            })
        })?;
        for ((ei, pi, _, _), p) in batch.iter().zip(ps) {
            let passage = &mut examples[*ei]["passages"][*pi];
            ragscope_judge::task::utility_io::set_model_field(
                passage,
                model_name,
                "no_res_prob",
                p,
            );
        }
        bar.inc(batch.len() as u64);
    }
    bar.finish_and_clear();
    let out = serde_json::to_string_pretty(&data)? + "\n";
    match &args.output {
        Some(path) => {
            std::fs::write(path, out).map_err(|e| err(format!("{}: {e}", path.display())))?
        }
        None => std::io::stdout().write_all(out.as_bytes())?,
    }
    Ok(())
}

/// Names the passage of a prompt that does not fit in the model's context window.
fn too_long(e: ragscope_infer::InferError, name: impl Fn(usize) -> String) -> Failure {
    match e {
        ragscope_infer::InferError::ContextOverflow {
            prompt,
            tokens,
            context_length,
        } => err(format!(
            "{}: its prompt has {tokens} tokens, more than the model's context length of {context_length}; shorten or split the passage",
            name(prompt)
        )),
        other => err(other.to_string()),
    }
}

fn example_label(ex: &Value) -> String {
    ex.get("example_id")
        .and_then(Value::as_str)
        .map(|id| format!(" ({id})"))
        .unwrap_or_default()
}

// ---------------------------------------------------------------- run mode

fn open_lines(
    path: &Path,
) -> Result<impl Iterator<Item = (usize, std::io::Result<String>)>, Failure> {
    let f = std::fs::File::open(path).map_err(|e| err(format!("{}: {e}", path.display())))?;
    Ok(BufReader::new(f)
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l)))
}

pub(super) fn read_topics(path: &Path) -> Result<HashMap<String, String>, Failure> {
    let file = path.display();
    let mut out = HashMap::new();
    for (ln, line) in open_lines(path)? {
        let line = line.map_err(|e| err(format!("{file}:{ln}: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let (qid, q) = line.split_once('\t').ok_or_else(|| {
            err(format!(
                "{file}:{ln}: expected `qid<TAB>question`, got {line:?}"
            ))
        })?;
        out.insert(qid.trim().to_string(), q.to_string());
    }
    Ok(out)
}

/// The TREC qrels, read by crates/eval exactly as trec_eval reads them.
fn read_qrels(path: &Path) -> Result<Qrels, Failure> {
    super::common::read_qrels(&path.to_string_lossy()).map_err(err)
}

/// Top `k` docnos per query of a TREC run, in trec_eval's order (score descending, ties by
/// docno descending), topics in trec_eval's order.
pub(super) fn read_run_top_k(path: &Path, k: usize) -> Result<Vec<(String, Vec<String>)>, Failure> {
    let run = super::common::read_run(&path.to_string_lossy()).map_err(err)?;
    let mut scratch = Vec::new();
    Ok(run
        .topics()
        .iter()
        .map(|topic| {
            rank(&run, topic, k, &mut scratch);
            let docnos = scratch
                .iter()
                .map(|&(_, i)| {
                    String::from_utf8_lossy(run.docno(&topic.docs()[i as usize])).into_owned()
                })
                .collect();
            (topic.qid().to_string(), docnos)
        })
        .collect())
}

pub(super) fn read_passages(
    path: &Path,
    wanted: &HashSet<String>,
) -> Result<HashMap<String, String>, Failure> {
    let file = path.display();
    let mut out = HashMap::new();
    for (ln, line) in open_lines(path)? {
        let line = line.map_err(|e| err(format!("{file}:{ln}: {e}")))?;
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(&line)
            .map_err(|e| err(format!("{file}:{ln}: column {}: {e}", e.column())))?;
        let docno = match v.get("docno") {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Number(n)) => n.to_string(),
            _ => return Err(err(format!("{file}:{ln}: missing field \"docno\""))),
        };
        if !wanted.contains(&docno) {
            continue;
        }
        let text = v.get("text").and_then(Value::as_str).ok_or_else(|| {
            err(format!(
                "{file}:{ln}: missing string field \"text\" (docno {docno})"
            ))
        })?;
        out.insert(docno, text.to_string());
    }
    Ok(out)
}

/// Reads what a previous (possibly interrupted) run wrote and cuts off a partial last line.
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
    for line in text[..complete].lines() {
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() == 4 && f[0] != "qid" {
            done.insert((f[0].to_string(), f[1].to_string()));
        }
    }
    Ok(done)
}

fn run_mode_tsv(args: &Args, scorer: &NoResponseScorer) -> Result<(), Failure> {
    let need = |o: &Option<PathBuf>, flag: &str| {
        o.clone()
            .ok_or_else(|| Failure::Usage(format!("run mode needs {flag}")))
    };
    let [topics_p, passages_p, qrels_p, run_p] = args.inputs.run_files()?;
    let out_p = need(&args.output, "-o OUTPUT.tsv (it is also the resume state)")?;
    let topics = read_topics(&topics_p)?;
    let qrels = read_qrels(&qrels_p)?;
    let ranked = read_run_top_k(&run_p, args.inputs.k)?;
    let wanted: HashSet<String> = ranked.iter().flat_map(|(_, d)| d.iter().cloned()).collect();
    let passages = read_passages(&passages_p, &wanted)?;
    let done = resume_state(&out_p)?;

    let mut jobs = Vec::new();
    for (qid, docs) in &ranked {
        let Some(question) = topics.get(qid) else {
            return Err(err(format!(
                "{}: query {qid} of the run has no topic",
                topics_p.display()
            )));
        };
        for d in docs {
            if done.contains(&(qid.clone(), d.clone())) {
                continue;
            }
            let text = passages.get(d).ok_or_else(|| {
                err(format!(
                    "{}: docno {d} (query {qid}) is not in the passages file",
                    passages_p.display()
                ))
            })?;
            let rel = qrels
                .topic(qid)
                .and_then(|t| t.rel(d.as_bytes()))
                .is_some_and(|r| r > 0);
            jobs.push((
                qid.as_str(),
                d.as_str(),
                rel,
                question.as_str(),
                text.as_str(),
            ));
        }
    }
    let fresh = !out_p.exists()
        || std::fs::metadata(&out_p)
            .map(|m| m.len() == 0)
            .unwrap_or(true);
    let mut out = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&out_p)
        .map_err(|e| err(format!("{}: {e}", out_p.display())))?;
    if fresh {
        out.write_all(b"qid\tdocno\trelevant\tno_res_prob\n")?;
    }
    let bar = progress(jobs.len() as u64, args.quiet);
    for batch in jobs.chunks(args.batch_size) {
        let items: Vec<(&str, &str)> = batch.iter().map(|j| (j.3, j.4)).collect();
        let ps = scorer
            .score(&items)
            .map_err(|e| too_long(e, |i| format!("query {}, docno {}", batch[i].0, batch[i].1)))?;
        let mut lines = String::new();
        for (j, p) in batch.iter().zip(ps) {
            lines.push_str(&format!("{}\t{}\t{}\t{}\n", j.0, j.1, u8::from(j.2), p));
        }
        // One write + flush per batch: an interrupt loses at most the batch in flight.
        out.write_all(lines.as_bytes())?;
        out.flush()?;
        bar.inc(batch.len() as u64);
    }
    bar.finish_and_clear();
    Ok(())
}
