//! Drives a job: for each item and sample, the cache, then the budget, the rate limiter and the
//! concurrency cap, the request with its retries, the parse — and one record per item, with
//! progress events and a control handle to pause, resume or cancel. Single-threaded and
//! runtime-free: the CLI runs it under `futures::executor::block_on`, the browser worker under
//! `wasm_bindgen_futures::spawn_local`.

use crate::cache::{CacheKey, CacheKeyParts, CacheStore, CachedReply};
use crate::cost::{estimate_input_tokens, Budget, Estimate, Price};
use crate::http::{Runtime, Transport};
use crate::limit::{RateLimit, RateLimiter};
use crate::provider::{body_excerpt, Call, Provider, Usage};
use crate::retry::{is_retryable_status, server_delay, splitmix64, RetryPolicy};
use crate::task::{ItemKey, JobItem, Task};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What to judge.
pub struct Job {
    pub task: Rc<dyn Task>,
    pub items: Vec<JobItem>,
    /// Requests per item (≥ 1), each cached separately, combined by [`Task::vote`].
    pub samples: u32,
}

/// Where and how requests go.
#[derive(Clone)]
pub struct Env {
    pub provider: Rc<dyn Provider>,
    pub transport: Rc<dyn Transport>,
    pub runtime: Rc<dyn Runtime>,
    pub cache: Rc<dyn CacheStore>,
}

#[derive(Clone, Debug)]
pub struct JudgeOptions {
    /// Requests in flight at most (≥ 1).
    pub concurrency: usize,
    /// Per request, the whole exchange.
    pub timeout: Duration,
    pub retry: RetryPolicy,
    pub rate: RateLimit,
    pub budget: Budget,
    /// The model's price; required for `budget.max_cost`.
    pub price: Option<Price>,
    /// Re-asks after a reply that does not parse, when the task offers one ([`Task::reask`]).
    pub parse_retries: u32,
}

impl Default for JudgeOptions {
    fn default() -> Self {
        JudgeOptions {
            concurrency: 4,
            timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            rate: RateLimit::default(),
            budget: Budget::default(),
            price: None,
            parse_retries: 0,
        }
    }
}

const RUNNING: u8 = 0;
const PAUSED: u8 = 1;
const CANCELLED: u8 = 2;

/// Pause, resume or cancel a running job from elsewhere (a Ctrl-C handler, a worker message).
/// Paused: requests in flight finish, no new one starts. Cancelled: the same, and every item not
/// yet sent is recorded as failed ("cancelled"); a rerun picks them up, the rest from the cache.
#[derive(Clone, Debug, Default)]
pub struct Control(Arc<AtomicU8>);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ControlState {
    Running,
    Paused,
    Cancelled,
}

impl Control {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn pause(&self) {
        let _ = self
            .0
            .compare_exchange(RUNNING, PAUSED, Ordering::SeqCst, Ordering::SeqCst);
    }
    pub fn resume(&self) {
        let _ = self
            .0
            .compare_exchange(PAUSED, RUNNING, Ordering::SeqCst, Ordering::SeqCst);
    }
    pub fn cancel(&self) {
        self.0.store(CANCELLED, Ordering::SeqCst);
    }
    pub fn state(&self) -> ControlState {
        match self.0.load(Ordering::SeqCst) {
            RUNNING => ControlState::Running,
            PAUSED => ControlState::Paused,
            _ => ControlState::Cancelled,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    Failed,
}

/// The outcome of one item: a line of the log.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ItemRecord {
    /// Position in `Job::items`.
    pub index: usize,
    pub key: ItemKey,
    /// The parsed (voted) result; `None` when failed.
    pub result: Option<Value>,
    pub status: Status,
    /// Why it failed (or, when some samples failed but others voted, why those did).
    pub error: Option<String>,
    /// HTTP requests sent for this item in this run (retries included; 0 when all cached).
    pub attempts: u32,
    /// Every sample came from the cache.
    pub cached: bool,
    /// Tokens of the replies used (cached ones included: what they cost when bought).
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// The reply text (or body excerpt) of a failed item, for inspection.
    pub raw: Option<String>,
}

impl ItemRecord {
    /// One JSON line: the key's fields, then `result status error attempts cached input_tokens
    /// output_tokens raw`.
    pub fn log_line(&self) -> String {
        let mut s = String::from("{");
        let mut field = |k: &str, v: String| {
            if s.len() > 1 {
                s.push(',');
            }
            s.push_str(&Value::String(k.to_string()).to_string());
            s.push(':');
            s.push_str(&v);
        };
        let js = |v: &Value| v.to_string();
        for (k, v) in &self.key.0 {
            field(k, js(&Value::String(v.clone())));
        }
        field("result", js(self.result.as_ref().unwrap_or(&Value::Null)));
        field(
            "status",
            js(&Value::String(
                match self.status {
                    Status::Ok => "ok",
                    Status::Failed => "failed",
                }
                .into(),
            )),
        );
        let opt = |o: &Option<String>| o.clone().map_or(Value::Null, Value::String);
        field("error", js(&opt(&self.error)));
        field("attempts", self.attempts.to_string());
        field("cached", self.cached.to_string());
        field("input_tokens", self.input_tokens.to_string());
        field("output_tokens", self.output_tokens.to_string());
        field("raw", js(&opt(&self.raw)));
        s.push('}');
        s
    }
}

/// Running totals.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Progress {
    pub items: usize,
    pub done: usize,
    /// Items answered entirely from the cache.
    pub cached: usize,
    pub failed: usize,
    /// HTTP requests sent (retries included).
    pub requests: u64,
    /// Tokens bought in this run (cached replies are not counted again).
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Their cost, when the model has a price.
    pub cost: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Event {
    Item(ItemRecord),
    Progress(Progress),
    /// A request failed and will be sent again after `delay`.
    Retry {
        key: ItemKey,
        sample: u32,
        attempt: u32,
        delay: Duration,
        reason: String,
    },
    /// Something that does not fail an item (a cache write that failed).
    Warning(String),
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunSummary {
    /// In input order.
    pub records: Vec<ItemRecord>,
    pub progress: Progress,
    /// Why the run stopped early (cancelled, budget), if it did.
    pub stopped: Option<String>,
}

impl RunSummary {
    pub fn all_ok(&self) -> bool {
        self.records.iter().all(|r| r.status == Status::Ok)
    }
}

/// Checks what a job needs before it starts.
fn validate(job: &Job, opts: &JudgeOptions) -> Result<(), String> {
    if job.samples == 0 {
        return Err("samples must be at least 1".into());
    }
    if opts.concurrency == 0 {
        return Err("concurrency must be at least 1".into());
    }
    if opts.budget.max_cost.is_some() && opts.price.is_none() {
        return Err("a cost budget needs the model's price (add it to the price table)".into());
    }
    Ok(())
}

pub(crate) fn cache_key(
    job: &Job,
    env: &Env,
    prepared: &crate::provider::Prepared,
    sample: u32,
    reask: u32,
) -> CacheKey {
    let c = env.provider.config();
    CacheKey::new(&CacheKeyParts {
        provider: c.kind.name(),
        base_url: &c.base_url,
        model: &c.model,
        endpoint: &prepared.endpoint,
        body: &prepared.body,
        task: job.task.name(),
        template_version: job.task.template_version(),
        sample,
        reask,
    })
}

/// Requests, tokens and cost the job would send, looking each request up in the cache.
pub async fn estimate(job: &Job, env: &Env, opts: &JudgeOptions) -> Result<Estimate, String> {
    validate(job, opts)?;
    let mut e = Estimate::default();
    for item in &job.items {
        let prepared = env
            .provider
            .prepare(&item.call)
            .map_err(|x| format!("{}: {x}", item.key))?;
        for s in 0..job.samples {
            let hit = env
                .cache
                .get(cache_key(job, env, &prepared, s, 0))
                .await
                .ok()
                .flatten()
                .is_some();
            if hit {
                e.cached += 1;
            } else {
                e.requests += 1;
                e.input_tokens += estimate_input_tokens(item.call.prompt_chars());
                e.max_output_tokens += u64::from(item.call.max_tokens());
            }
        }
    }
    e.max_cost = opts.price.map(|p| {
        p.cost(Usage {
            input_tokens: e.input_tokens,
            output_tokens: e.max_output_tokens,
        })
    });
    Ok(e)
}

/// Budget accounting, the rate window and counters shared by the requests in flight.
struct Shared {
    spent: Usage,
    spent_cost: f64,
    reserved_tokens: u64,
    reserved_cost: f64,
    stop: Option<String>,
    limiter: RateLimiter,
    progress: Progress,
}

impl Shared {
    fn reserve(&mut self, usage: Usage, opts: &JudgeOptions) -> Result<(), String> {
        let tokens = usage.input_tokens + usage.output_tokens;
        if let Some(max) = opts.budget.max_tokens {
            let spent = self.spent.input_tokens + self.spent.output_tokens;
            if spent + self.reserved_tokens + tokens > max {
                return Err(format!(
                    "not sent: the token budget ({max}) would be exceeded ({spent} spent, this \
                     request up to {tokens})"
                ));
            }
        }
        let cost = opts.price.map_or(0.0, |p| p.cost(usage));
        if let Some(max) = opts.budget.max_cost {
            if self.spent_cost + self.reserved_cost + cost > max {
                return Err(format!(
                    "not sent: the cost budget (${max}) would be exceeded (${:.4} spent, this \
                     request up to ${cost:.4})",
                    self.spent_cost
                ));
            }
        }
        self.reserved_tokens += tokens;
        self.reserved_cost += cost;
        Ok(())
    }

    fn release(&mut self, usage: Usage, opts: &JudgeOptions) {
        self.reserved_tokens = self
            .reserved_tokens
            .saturating_sub(usage.input_tokens + usage.output_tokens);
        let cost = opts.price.map_or(0.0, |p| p.cost(usage));
        self.reserved_cost = (self.reserved_cost - cost).max(0.0);
    }

    fn spend(&mut self, usage: Usage, opts: &JudgeOptions) {
        self.spent += usage;
        self.progress.input_tokens = self.spent.input_tokens;
        self.progress.output_tokens = self.spent.output_tokens;
        if let Some(p) = opts.price {
            self.spent_cost += p.cost(usage);
            self.progress.cost = Some(self.spent_cost);
        }
    }
}

struct SampleOut {
    result: Result<Value, String>,
    raw: Option<String>,
    attempts: u32,
    cached: bool,
    usage: Usage,
    /// A reply came and the task could not parse it (a re-ask may help).
    unparsed: bool,
}

impl SampleOut {
    fn failed(error: String, attempts: u32) -> Self {
        SampleOut {
            result: Err(error),
            raw: None,
            attempts,
            cached: false,
            usage: Usage::default(),
            unparsed: false,
        }
    }
}

struct Ctx<'a> {
    job: &'a Job,
    env: &'a Env,
    opts: &'a JudgeOptions,
    control: &'a Control,
    shared: RefCell<Shared>,
    sink: RefCell<&'a mut dyn FnMut(Event)>,
}

impl Ctx<'_> {
    fn emit(&self, e: Event) {
        (self.sink.borrow_mut())(e);
    }

    fn scrub(&self, s: String) -> String {
        match &self.env.provider.config().key {
            Some(k) => k.scrub(&s),
            None => s,
        }
    }

    /// Parses a 2xx body (fresh or cached) into the sample's result.
    fn interpret(
        &self,
        key: &ItemKey,
        call: &Call,
        body: &str,
        attempts: u32,
        cached: bool,
    ) -> SampleOut {
        match self.env.provider.parse_reply(call, body) {
            Err(e) => SampleOut {
                result: Err(e.to_string()),
                raw: Some(body_excerpt(body)),
                attempts,
                cached,
                usage: Usage::default(),
                unparsed: false,
            },
            Ok(reply) => {
                let result = self.job.task.parse_item(key, &reply);
                SampleOut {
                    unparsed: result.is_err(),
                    result,
                    raw: Some(reply.text.clone()),
                    attempts,
                    cached,
                    usage: reply.usage,
                }
            }
        }
    }

    /// One sample of an item: its call, then the task's re-asks while replies do not parse.
    async fn sample(&self, index: usize, sample: u32) -> SampleOut {
        let item = &self.job.items[index];
        let mut call = item.call.clone();
        let mut reask = 0u32;
        let mut attempts = 0u32;
        let mut usage = Usage::default();
        let mut cached = true;
        loop {
            let mut out = self.fetch(index, &call, sample, reask).await;
            attempts += out.attempts;
            usage += out.usage;
            cached &= out.cached;
            if out.unparsed && reask < self.opts.parse_retries {
                let raw = out.raw.as_deref().unwrap_or("");
                if let Some(next) = self.job.task.reask(&call, raw, reask + 1) {
                    call = next;
                    reask += 1;
                    continue;
                }
            }
            out.attempts = attempts;
            out.usage = usage;
            out.cached = cached;
            if reask > 0 {
                out.result = out
                    .result
                    .map_err(|e| format!("{e} (after {reask} re-asks)"));
            }
            return out;
        }
    }

    /// One request (cache, budget, rate, retries) for `call`.
    async fn fetch(&self, index: usize, call: &Call, sample: u32, reask: u32) -> SampleOut {
        let item = &self.job.items[index];
        let env = self.env;
        let prepared = match env.provider.prepare(call) {
            Ok(p) => p,
            Err(e) => return SampleOut::failed(e.to_string(), 0),
        };
        let key = cache_key(self.job, env, &prepared, sample, reask);
        match env.cache.get(key.clone()).await {
            Ok(Some(hit)) => return self.interpret(&item.key, call, &hit.body, 0, true),
            Ok(None) => {}
            Err(e) => self.emit(Event::Warning(format!("{}: {e}", item.key))),
        }
        let estimate = Usage {
            input_tokens: estimate_input_tokens(call.prompt_chars()),
            output_tokens: u64::from(call.max_tokens()),
        };
        let mut attempts = 0u32;
        loop {
            loop {
                match self.control.state() {
                    ControlState::Running => break,
                    ControlState::Paused => env.runtime.sleep(Duration::from_millis(200)).await,
                    ControlState::Cancelled => {
                        return SampleOut::failed("cancelled before sending".into(), attempts)
                    }
                }
            }
            {
                let mut sh = self.shared.borrow_mut();
                if let Some(reason) = &sh.stop {
                    return SampleOut::failed(reason.clone(), attempts);
                }
                if let Err(reason) = sh.reserve(estimate, self.opts) {
                    sh.stop = Some(reason.clone());
                    return SampleOut::failed(reason, attempts);
                }
            }
            let tokens = estimate.input_tokens + estimate.output_tokens;
            loop {
                let now = env.runtime.now_ms();
                let wait = self.shared.borrow_mut().limiter.wait(now, tokens);
                match wait {
                    Some(d) => env.runtime.sleep(d).await,
                    None => {
                        self.shared.borrow_mut().limiter.record(now, tokens);
                        break;
                    }
                }
            }
            attempts += 1;
            self.shared.borrow_mut().progress.requests += 1;
            let request = env
                .provider
                .http_request(&prepared, Some(self.opts.timeout));
            let sent = env.transport.send(request).await;
            self.shared.borrow_mut().release(estimate, self.opts);
            let (reason, server) = match sent {
                Ok(resp) if (200..300).contains(&resp.status) => {
                    let body = env.provider.cache_body(call, &resp.body);
                    let c = env.provider.config();
                    let stored = CachedReply {
                        provider: c.kind.name().into(),
                        model: c.model.clone(),
                        task: self.job.task.name().into(),
                        template_version: self.job.task.template_version().into(),
                        sample,
                        received_ms: env.runtime.now_ms(),
                        body: body.clone(),
                    };
                    if let Err(e) = env.cache.put(key.clone(), stored).await {
                        self.emit(Event::Warning(format!("{}: {e}", item.key)));
                    }
                    let out = self.interpret(&item.key, call, &body, attempts, false);
                    // A reply without usage was still bought: count the estimate.
                    let bought = if out.usage == Usage::default() {
                        estimate
                    } else {
                        out.usage
                    };
                    self.shared.borrow_mut().spend(bought, self.opts);
                    return out;
                }
                Ok(resp) => {
                    let err = env.provider.parse_error(resp.status, &resp.body);
                    let retry = is_retryable_status(resp.status, err.code.as_deref());
                    let server =
                        server_delay(&resp.headers, env.runtime.now_ms()).or(err.retry_delay);
                    if !retry || attempts >= self.opts.retry.max_attempts {
                        let mut out = SampleOut::failed(self.scrub(err.to_string()), attempts);
                        out.raw = Some(self.scrub(body_excerpt(&resp.body)));
                        return out;
                    }
                    (err.to_string(), server)
                }
                Err(te) => {
                    if !te.is_retryable() || attempts >= self.opts.retry.max_attempts {
                        return SampleOut::failed(self.scrub(te.to_string()), attempts);
                    }
                    (te.to_string(), None)
                }
            };
            let seed = env.runtime.now_ms() ^ ((index as u64) << 24) ^ u64::from(attempts);
            let delay = self.opts.retry.delay(attempts, server, splitmix64(seed));
            self.emit(Event::Retry {
                key: item.key.clone(),
                sample,
                attempt: attempts,
                delay,
                reason: self.scrub(reason),
            });
            env.runtime.sleep(delay).await;
        }
    }
}

/// The item's record from its samples.
fn combine(task: &dyn Task, index: usize, key: ItemKey, outs: Vec<SampleOut>) -> ItemRecord {
    let attempts = outs.iter().map(|o| o.attempts).sum();
    let cached = outs.iter().all(|o| o.cached);
    let mut usage = Usage::default();
    for o in &outs {
        usage += o.usage;
    }
    let n = outs.len();
    let mut ok = Vec::new();
    let mut errors = Vec::new();
    let mut raw = None;
    for (s, o) in outs.into_iter().enumerate() {
        match o.result {
            Ok(v) => ok.push(v),
            Err(e) => {
                errors.push(if n > 1 { format!("sample {s}: {e}") } else { e });
                if raw.is_none() {
                    raw = o.raw;
                }
            }
        }
    }
    let voted = if ok.is_empty() { None } else { task.vote(&ok) };
    let error = (!errors.is_empty()).then(|| errors.join("; "));
    match voted {
        Some(v) => ItemRecord {
            index,
            key,
            result: Some(v),
            status: Status::Ok,
            error,
            attempts,
            cached,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            raw: None,
        },
        None => ItemRecord {
            index,
            key,
            result: None,
            status: Status::Failed,
            error: Some(error.unwrap_or_else(|| "the samples could not be combined".into())),
            attempts,
            cached,
            input_tokens: usage.input_tokens,
            output_tokens: usage.output_tokens,
            raw,
        },
    }
}

/// Runs `job` to the end (or until cancelled / out of budget), calling `on_event` as items finish.
/// Every item gets a record; nothing already in the cache is sent again.
pub async fn run_job(
    job: &Job,
    env: &Env,
    opts: &JudgeOptions,
    control: &Control,
    on_event: &mut dyn FnMut(Event),
) -> RunSummary {
    let n = job.items.len();
    let mut progress = Progress {
        items: n,
        cost: opts.price.map(|_| 0.0),
        ..Progress::default()
    };
    if let Err(e) = validate(job, opts) {
        let records: Vec<ItemRecord> = job
            .items
            .iter()
            .enumerate()
            .map(|(i, it)| {
                combine(
                    job.task.as_ref(),
                    i,
                    it.key.clone(),
                    vec![SampleOut::failed(e.clone(), 0)],
                )
            })
            .collect();
        progress.done = n;
        progress.failed = n;
        return RunSummary {
            records,
            progress,
            stopped: Some(e),
        };
    }
    let ctx = Ctx {
        job,
        env,
        opts,
        control,
        shared: RefCell::new(Shared {
            spent: Usage::default(),
            spent_cost: 0.0,
            reserved_tokens: 0,
            reserved_cost: 0.0,
            stop: None,
            limiter: RateLimiter::new(opts.rate),
            progress,
        }),
        sink: RefCell::new(on_event),
    };
    let samples = job.samples;
    let mut pending: Vec<Vec<Option<SampleOut>>> = (0..n)
        .map(|_| (0..samples).map(|_| None).collect())
        .collect();
    let mut left: Vec<u32> = vec![samples; n];
    let mut records: Vec<Option<ItemRecord>> = (0..n).map(|_| None).collect();
    let ctx_ref = &ctx;
    let units = (0..n).flat_map(|i| (0..samples).map(move |s| (i, s)));
    let mut stream = futures::stream::iter(units)
        .map(|(i, s)| async move { (i, s, ctx_ref.sample(i, s).await) })
        .buffer_unordered(opts.concurrency);
    while let Some((i, s, out)) = stream.next().await {
        pending[i][s as usize] = Some(out);
        left[i] -= 1;
        if left[i] > 0 {
            continue;
        }
        let outs: Vec<SampleOut> = pending[i].iter_mut().filter_map(Option::take).collect();
        let rec = combine(job.task.as_ref(), i, job.items[i].key.clone(), outs);
        let mut rec = rec;
        rec.error = rec.error.map(|e| ctx.scrub(e));
        rec.raw = rec.raw.map(|r| ctx.scrub(r));
        let snapshot = {
            let mut sh = ctx.shared.borrow_mut();
            sh.progress.done += 1;
            if rec.cached && rec.status == Status::Ok {
                sh.progress.cached += 1;
            }
            if rec.status == Status::Failed {
                sh.progress.failed += 1;
            }
            sh.progress
        };
        ctx.emit(Event::Item(rec.clone()));
        ctx.emit(Event::Progress(snapshot));
        records[i] = Some(rec);
    }
    drop(stream);
    let sh = ctx.shared.into_inner();
    let stopped = if control.state() == ControlState::Cancelled {
        Some("cancelled".to_string())
    } else {
        sh.stop
    };
    RunSummary {
        records: records.into_iter().flatten().collect(),
        progress: sh.progress,
        stopped,
    }
}
