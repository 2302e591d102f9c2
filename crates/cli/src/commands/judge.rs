//! `ragscope judge`: LLM judges over HTTP. `judge umbrela` grades each run's top-k passages 0–3
//! with UMBRELA's prompt (castorini/umbrela) and writes TREC qrels, a JSONL log with one line per
//! item, and nothing made up: a failed judgment is logged and left out of the qrels.
//!
//! Everything but the command line lives in `ragscope-judge`: providers, retries, the cache
//! (a rerun, or a run resumed after Ctrl-C, sends nothing already answered), budget and prices.

use super::utility::{read_passages, read_run_top_k, read_topics, Failure};
use futures::executor::block_on;
use indicatif::{ProgressBar, ProgressStyle};
use ragscope_judge::cache::NoCache;
use ragscope_judge::limit::RateLimit;
use ragscope_judge::native::{default_cache_dir, DirCache, ThreadRuntime, UreqTransport};
use ragscope_judge::runner::estimate;
use ragscope_judge::task::umbrela::{ItemsError, Umbrela, SYSTEM};
use ragscope_judge::{
    provider, run_job, ApiKey, Budget, CacheStore, Call, Control, Env, Event, Job, JobItem,
    JudgeOptions, Price, PriceTable, ProviderConfig, ProviderKind, RetryPolicy, Status, Task,
};
use std::collections::HashSet;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::rc::Rc;
use std::time::Duration;

#[derive(clap::Args, Debug)]
pub struct Args {
    #[command(subcommand)]
    pub task: JudgeTask,
}

#[derive(clap::Subcommand, Debug)]
pub enum JudgeTask {
    /// UMBRELA relevance 0–3 for each query's top-k passages of a run, written as TREC qrels.
    #[command(
        long_about = "UMBRELA relevance grades 0-3 (castorini/umbrela's rubric and steps, our \
prompt text) for each query's top k passages of a run, as TREC qrels `qid 0 docno grade`.\n\n\
Keys come from ANTHROPIC_API_KEY, GEMINI_API_KEY or OPENAI_API_KEY (openai-compatible: none unless \
--key-env names a variable). Replies are cached (default under the user cache dir): a rerun sends \
only what has no answer yet. The log has one JSON line per item (qid, docno, result, status, error, \
attempts, cached, input_tokens, output_tokens, raw). Exit 0: every item graded; 3: finished with \
failures (in the log, not in the qrels); 2: usage error; 4: --batch --no-wait and the batches are \
still running."
    )]
    Umbrela(UmbrelaArgs),
    /// AutoNuggetizer (castorini/nuggetizer): create, score or assign nuggets; nuggetizer's JSONL
    /// in and out.
    #[command(subcommand)]
    Nuggets(super::judge_answers::NuggetsCmd),
    /// RAGElo pairwise answer battles, both orders per pair, written as RAGElo's pairwise CSV.
    Pairwise(super::judge_answers::PairwiseArgs),
    /// Pointwise answer grades 0-2 with reasoning, as CSV `qid,agent,raw_answer,reasoning,score`.
    Pointwise(super::judge_answers::PairwiseArgs),
    /// Citation support (Open RAG Eval) per (answer sentence, cited passage): full/partial/none.
    Citations(super::judge_answers::CitationsArgs),
    /// Utilities p(NO-RESPONSE | q, p) from an OpenAI-compatible server (vLLM, llama.cpp): the
    /// inputs and outputs of `ragscope utility`.
    Utility(Box<super::judge_utility::Args>),
}

/// Options every judge command shares.
#[derive(clap::Args, Debug)]
pub struct CommonArgs {
    /// anthropic | gemini | openai | openai-compatible
    #[arg(long)]
    pub provider: String,
    /// The provider's model name (e.g. claude-sonnet-4-5, gemini-2.5-flash, gpt-4.1-mini).
    #[arg(long)]
    pub model: String,
    /// API base URL (required for openai-compatible, e.g. http://127.0.0.1:8000/v1).
    #[arg(long)]
    pub base_url: Option<String>,
    /// Read the API key from this environment variable instead of the provider's default.
    #[arg(long)]
    pub key_env: Option<String>,
    /// Output file in the task's format.
    #[arg(short = 'o', long)]
    pub output: Option<PathBuf>,
    /// JSONL log, one line per item.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Requests in flight at most.
    #[arg(long, default_value_t = 4)]
    pub concurrency: usize,
    /// Reply cache directory (default: the user cache dir's ragscope/judge).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Keep no cache (every rerun pays again).
    #[arg(long, conflicts_with = "cache")]
    pub no_cache: bool,
    /// Requests per item, combined by majority (ties to the lower grade); each cached on its own.
    #[arg(long, default_value_t = 1)]
    pub samples: u32,
    /// Stop before the cost in USD would exceed this (needs the model in the price table).
    #[arg(long)]
    pub max_cost: Option<f64>,
    /// Stop before the input+output tokens would exceed this.
    #[arg(long)]
    pub max_tokens: Option<u64>,
    /// Price table JSON replacing the shipped one (same format as crates/judge/prices.json).
    #[arg(long)]
    pub prices: Option<PathBuf>,
    /// Requests per minute at most.
    #[arg(long)]
    pub rpm: Option<u32>,
    /// Estimated tokens per minute at most.
    #[arg(long)]
    pub tpm: Option<u64>,
    /// Seconds per request before it is abandoned (and retried).
    #[arg(long, default_value_t = 60.0)]
    pub timeout: f64,
    /// Attempts per request, the first included.
    #[arg(long, default_value_t = 5)]
    pub max_attempts: u32,
    /// Print the request count, the token and cost estimate and the first prompt; send nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// No progress bar.
    #[arg(long)]
    pub quiet: bool,
    /// Re-asks after a reply that does not parse (a list of the wrong length, no verdict), for
    /// the tasks that re-ask (nuggets, at temperature 0.2); then the item is recorded as failed.
    #[arg(long, default_value_t = 3)]
    pub parse_retries: u32,
    /// Use the provider's batch API (Anthropic, OpenAI, Gemini): half price, answered within
    /// 24 hours. The batch ids are kept under the cache dir (batches/), so the same command run
    /// again resumes the batches instead of submitting again; replies go to the cache.
    #[arg(long)]
    pub batch: bool,
    /// With --batch: seconds before the first poll (default 30), growing by half per poll up to
    /// 10 minutes.
    #[arg(long)]
    pub poll_interval: Option<f64>,
    /// With --batch: submit (or look at the batches once), print each batch's id and state, and
    /// exit 4 while they run; the same command run again continues.
    #[arg(long)]
    pub no_wait: bool,
}

#[derive(clap::Args, Debug)]
pub struct UmbrelaArgs {
    #[command(flatten)]
    pub common: CommonArgs,
    /// Topics file: `qid<TAB>question` per line.
    #[arg(long)]
    pub topics: PathBuf,
    /// Passages JSONL: `{"docno": ..., "text": ...}` per line.
    #[arg(long)]
    pub passages: PathBuf,
    /// TREC run `qid Q0 docno rank score tag`; ranked like trec_eval.
    #[arg(long)]
    pub run: PathBuf,
    /// Passages per query taken from the run.
    #[arg(long)]
    pub k: usize,
    /// Sampling temperature (UMBRELA's default 0; use > 0 with --samples).
    #[arg(long, default_value_t = 0.0)]
    pub temperature: f32,
}

pub fn run(args: Args) -> ExitCode {
    use super::judge_answers as more;
    let r = match args.task {
        JudgeTask::Umbrela(a) => umbrela(a),
        JudgeTask::Nuggets(a) => more::nuggets(a),
        JudgeTask::Pairwise(a) => more::pairwise(a),
        JudgeTask::Pointwise(a) => more::pointwise(a),
        JudgeTask::Citations(a) => more::citations(a),
        JudgeTask::Utility(a) => super::judge_utility::run(*a),
    };
    match r {
        Ok(code) => code,
        Err(Failure::Usage(m)) => {
            eprintln!("ragscope judge: {m}");
            ExitCode::from(2)
        }
        Err(Failure::Error(m)) => {
            eprintln!("ragscope judge: error: {m}");
            ExitCode::from(1)
        }
    }
}

pub(super) fn usage(m: impl Into<String>) -> Failure {
    Failure::Usage(m.into())
}

fn umbrela(a: UmbrelaArgs) -> Result<ExitCode, Failure> {
    if a.k == 0 {
        return Err(usage("--k must be at least 1"));
    }
    let topics = read_topics(&a.topics)?;
    let ranked = read_run_top_k(&a.run, a.k)?;
    let wanted: HashSet<String> = ranked.iter().flat_map(|(_, d)| d.iter().cloned()).collect();
    let passages = read_passages(&a.passages, &wanted)?;
    if !(a.temperature.is_finite() && (0.0..=2.0).contains(&a.temperature)) {
        return Err(usage("--temperature must be between 0 and 2"));
    }
    if a.common.samples > 1 && a.temperature == 0.0 {
        eprintln!(
            "ragscope judge: note: {} samples at temperature 0 mostly repeat one answer (try --temperature 0.5)",
            a.common.samples
        );
    }
    let mut task = Umbrela::new();
    task.params.temperature = Some(a.temperature);
    let items = task
        .items(&ranked, &topics, &passages)
        .map_err(|e| match e {
            ItemsError::NoTopic { .. } => Failure::Error(format!("{}: {e}", a.topics.display())),
            ItemsError::NoPassage { .. } => {
                Failure::Error(format!("{}: {e}", a.passages.display()))
            }
            ItemsError::Template(m) => Failure::Error(m),
        })?;
    drive(&a.common, Rc::new(task), items)
}

/// The part every judge task shares: provider, cache, estimate, run, outputs, exit code.
pub(super) fn drive(
    c: &CommonArgs,
    task: Rc<dyn Task>,
    items: Vec<JobItem>,
) -> Result<ExitCode, Failure> {
    let out_task = task.clone();
    drive_rounds(c, task, items, &mut |_| Vec::new(), &|records| {
        (out_task.write_output(records), None)
    })
}

/// [`drive`] for tasks whose items come in rounds (nugget creation: window r+1 needs window r's
/// list): `next` gets each round's records and returns the next round's items (none: done);
/// `finish` gets every record and returns the output file and an optional note for stderr.
#[allow(clippy::type_complexity)]
pub(super) fn drive_rounds(
    c: &CommonArgs,
    task: Rc<dyn Task>,
    items: Vec<JobItem>,
    next: &mut dyn FnMut(&[ragscope_judge::ItemRecord]) -> Vec<JobItem>,
    finish: &dyn Fn(&[ragscope_judge::ItemRecord]) -> (String, Option<String>),
) -> Result<ExitCode, Failure> {
    let s = setup(c)?;
    drive_rounds_in(c, s, task, items, next, finish)
}

/// What a judge command runs with: the provider, transport, cache and options from the command
/// line (a task that checks the server before its job, like `judge utility`'s probe, uses it).
pub(super) struct Setup {
    pub kind: ProviderKind,
    pub entry: Option<ragscope_judge::cost::PriceEntry>,
    pub discount: Option<ragscope_judge::cost::BatchDiscount>,
    pub full_price: Option<Price>,
    pub batch_run: Option<super::judge_batch::BatchRun>,
    pub env: Env,
    pub opts: JudgeOptions,
}

pub(super) fn setup(c: &CommonArgs) -> Result<Setup, Failure> {
    let kind: ProviderKind = c.provider.parse().map_err(Failure::Usage)?;
    if c.batch {
        ragscope_judge::batch::supported(kind).map_err(Failure::Usage)?;
    }
    if c.concurrency == 0 || c.samples == 0 || c.max_attempts == 0 {
        return Err(usage(
            "--concurrency, --samples and --max-attempts must be at least 1",
        ));
    }
    if !(c.timeout.is_finite() && c.timeout > 0.0) {
        return Err(usage("--timeout must be a positive number of seconds"));
    }
    if c.max_cost.is_some_and(|m| !(m.is_finite() && m >= 0.0)) {
        return Err(usage("--max-cost must be a non-negative number"));
    }
    let key_var = match (&c.key_env, kind) {
        (Some(v), _) => Some(v.as_str()),
        (None, ProviderKind::OpenAiCompatible) => None,
        (None, k) => Some(k.key_env()),
    };
    let key = key_var
        .and_then(|v| std::env::var(v).ok())
        .filter(|k| !k.trim().is_empty())
        .map(ApiKey::new);
    if key.is_none() && kind.key_required() && !c.dry_run {
        return Err(usage(format!(
            "provider {kind} needs an API key in {}",
            key_var.unwrap_or("an environment variable (--key-env)")
        )));
    }
    let mut config = match ProviderConfig::new(kind, &c.model, c.base_url.as_deref(), key.clone()) {
        Ok(cfg) => cfg,
        // A dry run needs no key: it sends nothing.
        Err(_) if c.dry_run && key.is_none() => {
            let placeholder = Some(ApiKey::new("dry-run"));
            ProviderConfig::new(kind, &c.model, c.base_url.as_deref(), placeholder)
                .map_err(Failure::Usage)?
        }
        Err(e) => return Err(Failure::Usage(e)),
    };
    if c.dry_run && key.is_none() {
        config.key = None;
    }
    let table = match &c.prices {
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| Failure::Error(format!("{}: {e}", p.display())))?;
            PriceTable::from_json(&text, &p.display().to_string()).map_err(Failure::Usage)?
        }
        None => PriceTable::builtin(),
    };
    let entry = table.lookup(kind, &c.model).cloned();
    // --batch: the batch discount applies to the estimate, the budget and the summary.
    let discount = table.batch_discount(kind).filter(|_| c.batch).cloned();
    let price = entry.as_ref().map(|e| {
        let p = Price {
            input: e.input,
            output: e.output,
        };
        discount.as_ref().map_or(p, |d| p.discounted(d.discount))
    });
    let full_price = entry.as_ref().map(|e| Price {
        input: e.input,
        output: e.output,
    });
    if c.max_cost.is_some() && price.is_none() {
        return Err(usage(format!(
            "--max-cost needs a price for {kind} model {:?}: add it to a price file (--prices)",
            c.model
        )));
    }
    if !c.dry_run && (c.output.is_none() || c.log.is_none()) {
        return Err(usage("give -o OUT and --log LOG.jsonl (or --dry-run)"));
    }
    let cache_dir = if c.no_cache {
        None
    } else {
        Some(match &c.cache {
            Some(d) => d.clone(),
            None => default_cache_dir().ok_or_else(|| {
                usage("no user cache directory here: give --cache DIR or --no-cache")
            })?,
        })
    };
    let batch_run = super::judge_batch::BatchRun::new(c, cache_dir.as_deref())?;
    let cache: Rc<dyn CacheStore> = match &cache_dir {
        None => Rc::new(NoCache),
        Some(dir) => Rc::new(DirCache::open(dir).map_err(|e| Failure::Error(e.to_string()))?),
    };
    let env = Env {
        provider: Rc::from(provider::provider(config)),
        transport: Rc::new(UreqTransport::new()),
        runtime: Rc::new(ThreadRuntime),
        cache,
    };
    let opts = JudgeOptions {
        concurrency: c.concurrency,
        timeout: Duration::from_secs_f64(c.timeout),
        retry: RetryPolicy {
            max_attempts: c.max_attempts,
            ..RetryPolicy::default()
        },
        rate: RateLimit {
            requests_per_minute: c.rpm,
            tokens_per_minute: c.tpm,
        },
        budget: Budget {
            max_cost: c.max_cost,
            max_tokens: c.max_tokens,
        },
        price,
        // Only tasks that offer a re-ask use it (UMBRELA at temperature 0 does not).
        parse_retries: c.parse_retries,
    };
    Ok(Setup {
        kind,
        entry,
        discount,
        full_price,
        batch_run,
        env,
        opts,
    })
}

/// [`drive_rounds`] with its [`Setup`] made.
#[allow(clippy::type_complexity)]
pub(super) fn drive_rounds_in(
    c: &CommonArgs,
    s: Setup,
    task: Rc<dyn Task>,
    items: Vec<JobItem>,
    next: &mut dyn FnMut(&[ragscope_judge::ItemRecord]) -> Vec<JobItem>,
    finish: &dyn Fn(&[ragscope_judge::ItemRecord]) -> (String, Option<String>),
) -> Result<ExitCode, Failure> {
    let Setup {
        kind,
        entry,
        discount,
        full_price,
        batch_run,
        env,
        opts,
    } = s;
    let job = Job {
        task: task.clone(),
        items,
        samples: c.samples,
    };
    let est = block_on(estimate(&job, &env, &opts)).map_err(Failure::Error)?;
    let batch_note = match (&discount, c.batch) {
        (Some(d), _) => format!(
            ", less the batch discount of {}% (as of {}, {})",
            d.discount * 100.0,
            d.as_of,
            d.source
        ),
        (None, true) => ", no batch discount in the price table".into(),
        (None, false) => String::new(),
    };
    let price_note = match &entry {
        Some(e) => format!(
            "${:.4} at most at {}'s ${}/${} per million input/output tokens{batch_note} (as of {}; prices change, check {})",
            est.max_cost.unwrap_or(0.0),
            e.model,
            e.input,
            e.output,
            e.as_of,
            e.source
        ),
        None => format!("unknown (no price for {kind} model {:?})", c.model),
    };
    let summary = format!(
        "{} items x {} samples: {} requests to send, {} answered from the cache; about {} input \
         tokens (estimated, ~3 characters a token) and at most {} output tokens; cost {price_note}",
        job.items.len(),
        job.samples,
        est.requests,
        est.cached,
        est.input_tokens,
        est.max_output_tokens
    );
    if c.dry_run {
        println!("{summary}");
        if let Some(first) = job.items.first() {
            println!("\nfirst prompt ({}):", first.key);
            print_prompt(&first.call);
        }
        return Ok(ExitCode::SUCCESS);
    }
    eprintln!("ragscope judge: {summary}");
    let (Some(out_path), Some(log_path)) = (&c.output, &c.log) else {
        return Err(usage("give -o OUT and --log LOG.jsonl (or --dry-run)"));
    };
    // Opened at the first run (not before a --no-wait batch that returns at once).
    let mut log: Option<std::fs::File> = None;
    let bar = progress_bar(job.items.len() as u64, c.quiet);
    let mut retries = 0u64;
    let mut log_error: Option<String> = None;
    let control = Control::new();
    let mut all: Vec<ragscope_judge::ItemRecord> = Vec::new();
    let mut progress = ragscope_judge::Progress::default();
    let mut stopped: Option<String> = None;
    let mut job = job;
    loop {
        let mut batch_usage = None;
        // After a batch, what the run itself sends (re-asks) is bought at the standard price.
        let run_opts = JudgeOptions {
            price: if batch_run.is_some() {
                full_price
            } else {
                opts.price
            },
            ..opts.clone()
        };
        let round_env = match &batch_run {
            None => env.clone(),
            Some(b) => match b.round(&job, &env, &opts)? {
                super::judge_batch::Round::Pending => {
                    bar.finish_and_clear();
                    return Ok(ExitCode::from(super::judge_batch::EXIT_PENDING));
                }
                super::judge_batch::Round::Ready { env: e, usage } => {
                    batch_usage = Some(usage);
                    e
                }
            },
        };
        let log = match &mut log {
            Some(f) => f,
            None => log.insert(
                std::fs::File::create(log_path)
                    .map_err(|e| Failure::Error(format!("{}: {e}", log_path.display())))?,
            ),
        };
        let result = block_on(run_job(
            &job,
            &round_env,
            &run_opts,
            &control,
            &mut |e| match e {
                Event::Item(r) => {
                    // Streamed as items finish, so an interrupted run keeps its log.
                    if let Err(e) = writeln!(log, "{}", r.log_line()).and_then(|_| log.flush()) {
                        log_error.get_or_insert(format!("{}: {e}", log_path.display()));
                    }
                    bar.inc(1);
                }
                Event::Progress(p) => bar.set_message(progress_message(&p, retries)),
                Event::Retry { .. } => retries += 1,
                Event::Warning(w) => bar.println(format!("warning: {w}")),
            },
        ));
        let mut p = result.progress;
        if let Some(u) = batch_usage {
            // Bought through the batch (the run itself read them from the cache).
            p.input_tokens += u.input_tokens;
            p.output_tokens += u.output_tokens;
            p.cost = opts.price.map(|pr| p.cost.unwrap_or(0.0) + pr.cost(u));
        }
        progress.items += p.items;
        progress.done += p.done;
        progress.cached += p.cached;
        progress.failed += p.failed;
        progress.requests += p.requests;
        progress.input_tokens += p.input_tokens;
        progress.output_tokens += p.output_tokens;
        progress.cost = match (progress.cost, p.cost) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
        let more = if result.stopped.is_none() {
            next(&result.records)
        } else {
            Vec::new()
        };
        stopped = stopped.or(result.stopped);
        let offset = all.len();
        all.extend(result.records.into_iter().map(|mut r| {
            r.index += offset;
            r
        }));
        if more.is_empty() {
            break;
        }
        bar.inc_length(more.len() as u64);
        job = Job {
            task: task.clone(),
            items: more,
            samples: c.samples,
        };
    }
    bar.finish_and_clear();
    if let Some(e) = log_error {
        return Err(Failure::Error(e));
    }
    // Rewritten in input order now that every item is done.
    let lines: String = all.iter().map(|r| r.log_line() + "\n").collect();
    write_file(log_path, &lines)?;
    let (output, note) = finish(&all);
    write_file(out_path, &output)?;
    if let Some(n) = note {
        eprintln!("ragscope judge: {n}");
    }
    let result = ragscope_judge::RunSummary {
        records: all,
        progress,
        stopped,
    };
    let p = result.progress;
    let ok = result
        .records
        .iter()
        .filter(|r| r.status == Status::Ok)
        .count();
    eprintln!(
        "ragscope judge: {ok} ok, {} failed ({} from the cache); {} requests ({retries} retries); \
         {} input + {} output tokens bought{}",
        p.failed,
        p.cached,
        p.requests,
        p.input_tokens,
        p.output_tokens,
        p.cost.map(|c| format!(", ${c:.4}")).unwrap_or_default()
    );
    if let Some(s) = &result.stopped {
        eprintln!("ragscope judge: stopped early: {s}");
    }
    if p.failed > 0 {
        eprintln!(
            "ragscope judge: failed items are in {} (status \"failed\") and not in {}",
            log_path.display(),
            out_path.display()
        );
    }
    Ok(if result.all_ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(3)
    })
}

fn write_file(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text).map_err(|e| Failure::Error(format!("{}: {e}", path.display())))
}

fn print_prompt(call: &Call) {
    match call {
        Call::Chat(chat) => {
            println!("[system]\n{}", chat.system.as_deref().unwrap_or(SYSTEM));
            for m in &chat.messages {
                println!("[{:?}]\n{}", m.role, m.content);
            }
        }
        Call::Completion(comp) => println!("{}", comp.prompt),
    }
}

fn progress_bar(n: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(n);
    if let Ok(style) = ProgressStyle::with_template("{bar:30} {pos}/{len} items  {msg}  ETA {eta}")
    {
        bar.set_style(style);
    }
    bar
}

fn progress_message(p: &ragscope_judge::Progress, retries: u64) -> String {
    let mut s = format!(
        "{} cached, {} failed, {} retries, {} tokens",
        p.cached,
        p.failed,
        retries,
        p.input_tokens + p.output_tokens
    );
    if let Some(c) = p.cost {
        s.push_str(&format!(", ${c:.4}"));
    }
    s
}
