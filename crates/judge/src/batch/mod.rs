//! The providers' batch APIs (Anthropic Message Batches, OpenAI Batch, Gemini batch mode): the
//! same requests as the synchronous path, at half the price, answered within 24 hours.
//!
//! The lifecycle, in [`prefetch`]: every request of a job that has no cached reply is submitted
//! (split into batches of the provider's size limit); the batch ids and their requests' cache
//! keys are saved at once in a state record named by the *run key* (provider, base URL, model,
//! task), so a process killed after submitting and started again — with the same command, or
//! with inputs changed meanwhile — polls the batches that carry its requests instead of paying
//! twice. Polls back off from `poll_interval` to `max_poll_interval`. When a batch ends,
//! every reply is stored in the ordinary cache under the key the synchronous path uses; the job
//! then runs through [`crate::run_job`] with a transport that sends none of them again
//! ([`BatchOnly`]), so replies are parsed exactly as in a synchronous run, and items the batch did
//! not answer (an error, an expired or cancelled request) are recorded as failed with the batch's
//! reason — never given a score. A rerun sends them again (in a new batch with `--batch`,
//! synchronously without). Re-asks after a batch reply that does not parse are sent
//! synchronously, as the synchronous path would.
//!
//! Wire formats (builders and parsers are pure, one module per provider; I/O only through
//! [`crate::http::Transport`], so this also runs in the browser worker):
//! - Anthropic: `POST /v1/messages/batches {requests:[{custom_id, params}]}`, `GET
//!   /v1/messages/batches/{id}` until `processing_status` is `ended`, then the JSONL at
//!   `results_url` (`{custom_id, result:{type: succeeded|errored|canceled|expired, ...}}`).
//! - OpenAI: the JSONL of `{custom_id, method, url, body}` uploaded to `POST /v1/files`
//!   (`purpose=batch`), `POST /v1/batches {input_file_id, endpoint, completion_window: "24h"}`,
//!   `GET /v1/batches/{id}` until `completed|failed|expired|cancelled`, then
//!   `GET /v1/files/{output_file_id|error_file_id}/content`.
//! - Gemini: `POST /v1beta/models/{model}:batchGenerateContent` with inline requests, `GET
//!   /v1beta/{batches/...}` (an operation) until its state is SUCCEEDED, FAILED, CANCELLED or
//!   EXPIRED; the responses are inline, in input order.

pub mod anthropic;
pub mod gemini;
pub mod openai;
pub mod state;

use crate::cache::{CacheKey, CachedReply};
use crate::cost::estimate_input_tokens;
use crate::http::{HttpRequest, HttpResponse, Transport, TransportError};
use crate::provider::{body_excerpt, Prepared, ProviderKind, Usage};
use crate::retry::is_retryable_status;
use crate::runner::{cache_key, Env, Job, JudgeOptions};
use futures::future::LocalBoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::time::Duration;

pub use state::{BatchRecord, MemoryStateStore, RunState, StateStore};

/// One request of a batch: the synchronous request's endpoint and body, named by its cache key.
#[derive(Clone, Debug, PartialEq)]
pub struct BatchRequest {
    /// The cache key's hex (64 characters: Anthropic's limit for `custom_id`).
    pub custom_id: String,
    pub prepared: Prepared,
}

/// What a batch answered for one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ItemResult {
    /// The body the synchronous endpoint would have returned (JSON text).
    Ok(String),
    /// Why there is no answer (an API error, expired, cancelled).
    Failed(String),
}

/// A batch's status as a poll saw it.
#[derive(Clone, Debug, PartialEq)]
pub enum Polled {
    /// Still running: the provider's state word.
    Running(String),
    /// Ended (its state word): results can be fetched from the status object kept here.
    Ended { state: String, status: Value },
}

/// A batch API error: the step, and whether trying again later may help.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchError {
    pub message: String,
    pub retryable: bool,
}

impl BatchError {
    pub fn fatal(message: impl Into<String>) -> Self {
        BatchError {
            message: message.into(),
            retryable: false,
        }
    }
}

impl std::fmt::Display for BatchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

/// Which batch API a provider has (`None`: OpenAI-compatible servers, which have none we know).
pub fn supported(kind: ProviderKind) -> Result<(), String> {
    match kind {
        ProviderKind::Anthropic | ProviderKind::Gemini | ProviderKind::OpenAi => Ok(()),
        ProviderKind::OpenAiCompatible => Err(
            "openai-compatible servers have no batch API here (vLLM and llama.cpp serve requests \
             as they come): run without --batch"
                .into(),
        ),
    }
}

/// Requests per batch at most (Anthropic 100,000; OpenAI 50,000 per file; Gemini's inline
/// requests are bounded by a 20 MB request, so fewer).
pub fn max_requests(kind: ProviderKind) -> usize {
    match kind {
        ProviderKind::Anthropic => 100_000,
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => 50_000,
        ProviderKind::Gemini => 2_000,
    }
}

#[derive(Clone, Debug)]
pub struct BatchOptions {
    /// The first wait between polls.
    pub poll_interval: Duration,
    /// Waits grow by half each poll up to this.
    pub max_poll_interval: Duration,
    /// `false`: submit (or look at the batches once) and return without waiting.
    pub wait: bool,
    /// Polls in a row that may fail (network, 429, 5xx) before giving up (the state is kept: a
    /// rerun resumes).
    pub max_poll_failures: u32,
}

impl Default for BatchOptions {
    fn default() -> Self {
        BatchOptions {
            poll_interval: Duration::from_secs(30),
            max_poll_interval: Duration::from_secs(600),
            wait: true,
            max_poll_failures: 10,
        }
    }
}

/// What happened, for the log and the progress display.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum BatchEvent {
    /// Batches of an earlier run of the same job were found and are resumed.
    Resumed {
        ids: Vec<String>,
    },
    Submitted {
        id: String,
        requests: usize,
    },
    Polled {
        id: String,
        state: String,
    },
    /// A poll failed and will be repeated.
    PollRetry {
        id: String,
        reason: String,
    },
    Imported {
        id: String,
        ok: usize,
        failed: usize,
    },
    Warning(String),
}

/// The result of [`prefetch`].
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Every batch ended; its replies are in the cache.
    Done(Imported),
    /// Not waiting (`wait: false`): the batches still running, as saved in the state.
    Pending(RunState),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct Imported {
    /// Requests of this job that a batch did not answer, with the reason.
    pub failures: HashMap<CacheKey, String>,
    /// Replies stored in the cache in this call.
    pub stored: usize,
    /// Tokens of those replies (bought at the batch price).
    pub usage: Usage,
    /// The batches of the job (all ended).
    pub state: RunState,
}

/// The name of the state record: SHA-256 over provider, base URL, model, task and template. Every
/// job of that task on that model shares it, so a job changed while its batches run (a passage
/// added, a rerun with other inputs) still finds the requests already in flight and does not
/// buy them again.
pub fn run_key(job: &Job, env: &Env) -> String {
    let c = env.provider.config();
    let mut h = Sha256::new();
    for field in [
        "ragscope-judge-batch-v1",
        c.kind.name(),
        &c.base_url,
        &c.model,
        job.task.name(),
        job.task.template_version(),
    ] {
        h.update((field.len() as u64).to_le_bytes());
        h.update(field.as_bytes());
    }
    let mut hex = String::with_capacity(32);
    for b in &h.finalize()[..16] {
        let _ = write!(hex, "{b:02x}");
    }
    hex
}

/// Every request (item x sample, first asks only: re-asks are synchronous) of `job`, deduplicated
/// by cache key, with the sample each key stands for.
fn requests_of(job: &Job, env: &Env) -> Result<Vec<(CacheKey, u32, Prepared)>, String> {
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for item in &job.items {
        let prepared = env
            .provider
            .prepare(&item.call)
            .map_err(|x| format!("{}: {x}", item.key))?;
        for s in 0..job.samples {
            let key = cache_key(job, env, &prepared, s, 0);
            if seen.insert(key.clone()) {
                out.push((key, s, prepared.clone()));
            }
        }
    }
    Ok(out)
}

/// Sends one batch API request; non-2xx answers become errors with the provider's message.
pub(crate) async fn exchange(
    env: &Env,
    request: HttpRequest,
    what: &str,
) -> Result<HttpResponse, BatchError> {
    let scrub = |s: String| match &env.provider.config().key {
        Some(k) => k.scrub(&s),
        None => s,
    };
    match env.transport.send(request).await {
        Ok(r) if (200..300).contains(&r.status) => Ok(r),
        Ok(r) => {
            let e = env.provider.parse_error(r.status, &r.body);
            Err(BatchError {
                message: scrub(format!("{what}: {e}")),
                retryable: is_retryable_status(r.status, e.code.as_deref()),
            })
        }
        Err(e) => Err(BatchError {
            message: scrub(format!("{what}: {e}")),
            retryable: e.is_retryable(),
        }),
    }
}

/// A batch API request with the provider's auth headers; `body` is (content type, text).
pub(crate) fn api_request(
    env: &Env,
    method: &str,
    url: String,
    body: Option<(&str, String)>,
    timeout: Duration,
) -> HttpRequest {
    let mut headers = Vec::new();
    let mut text = String::new();
    if let Some((ct, b)) = body {
        headers.push(("content-type".to_string(), ct.to_string()));
        text = b;
    }
    headers.extend(env.provider.auth_headers());
    HttpRequest {
        method: method.into(),
        url,
        headers,
        body: text,
        timeout: Some(timeout),
    }
}

pub(crate) fn json_of(r: &HttpResponse, what: &str) -> Result<Value, BatchError> {
    serde_json::from_str(&r.body).map_err(|e| {
        BatchError::fatal(format!(
            "{what}: not JSON (line {}, column {}): {e}: {}",
            e.line(),
            e.column(),
            body_excerpt(&r.body)
        ))
    })
}

/// Submits `requests` as one batch; returns its id.
async fn submit(env: &Env, requests: &[BatchRequest], label: &str) -> Result<String, BatchError> {
    match env.provider.config().kind {
        ProviderKind::Anthropic => anthropic::submit(env, requests).await,
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => {
            openai::submit(env, requests).await
        }
        ProviderKind::Gemini => gemini::submit(env, requests, label).await,
    }
}

async fn poll(env: &Env, id: &str) -> Result<Polled, BatchError> {
    match env.provider.config().kind {
        ProviderKind::Anthropic => anthropic::poll(env, id).await,
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => openai::poll(env, id).await,
        ProviderKind::Gemini => gemini::poll(env, id).await,
    }
}

async fn results(
    env: &Env,
    record: &BatchRecord,
    state: &str,
    status: &Value,
) -> Result<Vec<(String, ItemResult)>, BatchError> {
    match env.provider.config().kind {
        ProviderKind::Anthropic => anthropic::results(env, status).await,
        ProviderKind::OpenAi | ProviderKind::OpenAiCompatible => {
            openai::results(env, &record.custom_ids, state, status).await
        }
        ProviderKind::Gemini => gemini::results(state, status, &record.custom_ids),
    }
}

/// Submits what the cache lacks, resumes batches of an earlier run, waits for them (unless
/// `bopts.wait` is false) and imports their replies into the cache. See the module docs.
pub async fn prefetch(
    job: &Job,
    env: &Env,
    opts: &JudgeOptions,
    bopts: &BatchOptions,
    store: &dyn StateStore,
    on_event: &mut dyn FnMut(BatchEvent),
) -> Result<Outcome, String> {
    let c = env.provider.config();
    supported(c.kind)?;
    let all = requests_of(job, env)?;
    let rk = run_key(job, env);
    let mut state = store.load(&rk).await?.unwrap_or_else(|| RunState {
        version: state::VERSION,
        run_key: rk.clone(),
        provider: c.kind.name().into(),
        model: c.model.clone(),
        task: job.task.name().into(),
        batches: Vec::new(),
    });
    // Imported batches have done their work (their replies are in the cache; what failed is sent
    // again below): only batches still running are kept.
    state.batches.retain(|b| !b.imported);
    let mine: std::collections::HashSet<&str> = all.iter().map(|(k, _, _)| k.as_str()).collect();
    // The running batches that carry requests of this job: polled and imported now. Batches of
    // other jobs of the lane are left to those jobs.
    let relevant: Vec<bool> = state
        .batches
        .iter()
        .map(|b| b.custom_ids.iter().any(|i| mine.contains(i.as_str())))
        .collect();
    let open: Vec<String> = state
        .batches
        .iter()
        .zip(&relevant)
        .filter(|(_, r)| **r)
        .map(|(b, _)| b.id.clone())
        .collect();
    if !open.is_empty() {
        on_event(BatchEvent::Resumed { ids: open });
    }
    let mut relevant = relevant;
    let in_open: std::collections::HashSet<String> = state
        .batches
        .iter()
        .flat_map(|b| b.custom_ids.iter().cloned())
        .collect();
    let mut to_send = Vec::new();
    for (key, _, prepared) in &all {
        if in_open.contains(key.as_str()) {
            continue;
        }
        let hit = env.cache.get(key.clone()).await.ok().flatten().is_some();
        if !hit {
            to_send.push(BatchRequest {
                custom_id: key.as_str().to_string(),
                prepared: prepared.clone(),
            });
        }
    }
    if !to_send.is_empty() {
        check_budget(opts, &to_send)?;
    }
    for chunk in to_send.chunks(max_requests(c.kind)) {
        let label = format!("ragscope-{}-{}", job.task.name(), &rk[..8]);
        let id = submit(env, chunk, &label)
            .await
            .map_err(|e| format!("submitting the batch: {e}"))?;
        on_event(BatchEvent::Submitted {
            id: id.clone(),
            requests: chunk.len(),
        });
        let sample_of: HashMap<&str, u32> = all.iter().map(|(k, s, _)| (k.as_str(), *s)).collect();
        state.batches.push(BatchRecord {
            id,
            submitted_ms: env.runtime.now_ms(),
            custom_ids: chunk.iter().map(|r| r.custom_id.clone()).collect(),
            samples: chunk
                .iter()
                .map(|r| sample_of.get(r.custom_id.as_str()).copied().unwrap_or(0))
                .collect(),
            state: "submitted".into(),
            imported: false,
        });
        relevant.push(true);
        // At once: a process killed from here on resumes this batch instead of paying again.
        store.save(&rk, &state).await?;
    }
    let by_key: HashMap<&str, u32> = all.iter().map(|(k, s, _)| (k.as_str(), *s)).collect();
    let mut imported = Imported::default();
    let mut wait = bopts.poll_interval;
    let mut failures_in_row = 0u32;
    loop {
        let mut open = 0usize;
        for (i, &wanted) in relevant.iter().enumerate() {
            if state.batches[i].imported || !wanted {
                continue;
            }
            let id = state.batches[i].id.clone();
            let polled = match poll(env, &id).await {
                Ok(p) => {
                    failures_in_row = 0;
                    p
                }
                Err(e) if e.retryable && failures_in_row < bopts.max_poll_failures => {
                    failures_in_row += 1;
                    on_event(BatchEvent::PollRetry {
                        id: id.clone(),
                        reason: e.message,
                    });
                    open += 1;
                    continue;
                }
                Err(e) => {
                    return Err(format!(
                        "polling batch {id}: {e} (the batch ids are kept: run the same command \
                         again to resume)"
                    ))
                }
            };
            match polled {
                Polled::Running(s) => {
                    on_event(BatchEvent::Polled {
                        id: id.clone(),
                        state: s.clone(),
                    });
                    if state.batches[i].state != s {
                        state.batches[i].state = s;
                        store.save(&rk, &state).await?;
                    }
                    open += 1;
                }
                Polled::Ended { state: s, status } => {
                    on_event(BatchEvent::Polled {
                        id: id.clone(),
                        state: s.clone(),
                    });
                    let got = results(env, &state.batches[i], &s, &status)
                        .await
                        .map_err(|e| {
                            format!(
                                "fetching the results of batch {id}: {e} (run the same command \
                                 again to resume)"
                            )
                        })?;
                    let (ok, failed) = import(
                        job,
                        env,
                        &state.batches[i],
                        &s,
                        got,
                        &by_key,
                        &mut imported,
                        on_event,
                    )
                    .await;
                    on_event(BatchEvent::Imported {
                        id: id.clone(),
                        ok,
                        failed,
                    });
                    state.batches[i].state = s;
                    state.batches[i].imported = true;
                    store.save(&rk, &state).await?;
                }
            }
        }
        if open == 0 {
            break;
        }
        if !bopts.wait {
            return Ok(Outcome::Pending(state));
        }
        env.runtime.sleep(wait).await;
        wait = wait
            .mul_f64(1.5)
            .min(bopts.max_poll_interval.max(bopts.poll_interval));
    }
    // Requests of this job that no batch answered in this call and the cache lacks (an item that
    // failed in an earlier run's batch): recorded as failed now, sent again by a rerun.
    for (key, _, _) in &all {
        if imported.failures.contains_key(key) {
            continue;
        }
        if env.cache.get(key.clone()).await.ok().flatten().is_none() {
            imported.failures.insert(
                key.clone(),
                "batch: no reply for this request (run again to send it)".into(),
            );
        }
    }
    imported.state = state;
    Ok(Outcome::Done(imported))
}

/// Refuses a submission the budget cannot pay in full (a batch is bought whole).
fn check_budget(opts: &JudgeOptions, to_send: &[BatchRequest]) -> Result<(), String> {
    // Estimated from the body as sent (a slight over-estimate: JSON syntax counts too).
    let mut usage = Usage::default();
    for r in to_send {
        let chars = r.prepared.body.to_string().chars().count();
        usage.input_tokens += estimate_input_tokens(chars);
        usage.output_tokens += max_tokens_of(&r.prepared.body);
    }
    if let Some(max) = opts.budget.max_tokens {
        let t = usage.input_tokens + usage.output_tokens;
        if t > max {
            return Err(format!(
                "not submitted: the batch of {} requests may use up to {t} tokens, over the token \
                 budget ({max})",
                to_send.len()
            ));
        }
    }
    if let (Some(max), Some(p)) = (opts.budget.max_cost, opts.price) {
        let cost = p.cost(usage);
        if cost > max {
            return Err(format!(
                "not submitted: the batch of {} requests may cost up to ${cost:.4}, over the cost \
                 budget (${max})",
                to_send.len()
            ));
        }
    }
    Ok(())
}

/// The output ceiling written in a request body (each format names it differently).
fn max_tokens_of(body: &Value) -> u64 {
    ["max_tokens", "max_completion_tokens"]
        .iter()
        .find_map(|k| body.get(k).and_then(Value::as_u64))
        .or_else(|| {
            body.get("generationConfig")
                .and_then(|g| g.get("maxOutputTokens"))
                .and_then(Value::as_u64)
        })
        .unwrap_or(0)
}

/// Stores a batch's replies under the synchronous path's cache keys; collects its failures.
#[allow(clippy::too_many_arguments)]
async fn import(
    job: &Job,
    env: &Env,
    record: &BatchRecord,
    state: &str,
    got: Vec<(String, ItemResult)>,
    by_key: &HashMap<&str, u32>,
    imported: &mut Imported,
    on_event: &mut dyn FnMut(BatchEvent),
) -> (usize, usize) {
    let c = env.provider.config();
    let mut answered: BTreeMap<String, ItemResult> = got.into_iter().collect();
    let (mut ok, mut failed) = (0, 0);
    for (n, id) in record.custom_ids.iter().enumerate() {
        let key = CacheKey(id.clone());
        // A request of another job of the lane (submitted by an earlier, different job): its
        // reply is stored too (it was paid for); its failure is that job's to record.
        let mine = by_key.get(id.as_str()).copied();
        let sample = mine.or(record.samples.get(n).copied()).unwrap_or(0);
        let result = answered.remove(id).unwrap_or_else(|| {
            ItemResult::Failed(format!(
                "batch {} ended ({state}) without a result for this request",
                record.id
            ))
        });
        match result {
            ItemResult::Ok(body) => {
                // The tokens bought: the same parse the runner makes (a call is needed only to
                // pick OpenAI's chat vs completions parser; chat is the one batches carry).
                if let Some(item) = job.items.first() {
                    if let Ok(reply) = env.provider.parse_reply(&item.call, &body) {
                        imported.usage += reply.usage;
                    }
                }
                let stored = CachedReply {
                    provider: c.kind.name().into(),
                    model: c.model.clone(),
                    task: job.task.name().into(),
                    template_version: job.task.template_version().into(),
                    sample,
                    received_ms: env.runtime.now_ms(),
                    body,
                };
                match env.cache.put(key.clone(), stored).await {
                    Ok(()) => {
                        imported.stored += 1;
                        ok += 1;
                    }
                    Err(e) => {
                        on_event(BatchEvent::Warning(format!("batch {}: {e}", record.id)));
                        imported
                            .failures
                            .insert(key, format!("batch: the reply could not be cached: {e}"));
                        failed += 1;
                    }
                }
            }
            ItemResult::Failed(_) if mine.is_none() => {}
            ItemResult::Failed(why) => {
                let why = match &c.key {
                    Some(k) => k.scrub(&why),
                    None => why,
                };
                imported.failures.insert(key, format!("batch: {why}"));
                failed += 1;
            }
        }
    }
    (ok, failed)
}

/// The transport of the run that follows [`prefetch`]. Every first request the batch answered is
/// in the cache; one it did not answer (an error, expired) reaches this transport and fails with
/// the batch's reason, unsent (a rerun sends it). Anything else is a re-ask after a batch reply
/// that did not parse: it goes to the real transport, as in a synchronous run (at the standard
/// price), so outputs stay those of the synchronous path.
pub struct BatchOnly {
    by_request: HashMap<String, String>,
    inner: std::rc::Rc<dyn Transport>,
}

impl BatchOnly {
    pub fn new(job: &Job, env: &Env, imported: &Imported) -> Self {
        let mut by_request = HashMap::new();
        if let Ok(all) = requests_of(job, env) {
            for (key, _, prepared) in all {
                if let Some(why) = imported.failures.get(&key) {
                    let r = env.provider.http_request(&prepared, None);
                    by_request.insert(format!("{}\n{}", r.url, r.body), why.clone());
                }
            }
        }
        BatchOnly {
            by_request,
            inner: env.transport.clone(),
        }
    }
}

impl Transport for BatchOnly {
    fn send(
        &self,
        request: HttpRequest,
    ) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
        match self
            .by_request
            .get(&format!("{}\n{}", request.url, request.body))
        {
            Some(why) => {
                let why = why.clone();
                Box::pin(async move { Err(TransportError::Other(why)) })
            }
            None => self.inner.send(request),
        }
    }
}
