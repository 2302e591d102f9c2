//! A judge job as the worker runs it: the items of a run's top k (from the loaded topics,
//! passages and run), the estimate shown before Start, and the run itself on crates/judge,
//! reported as [`JudgeResponse`]s. Generic over the judge layer's `Env` (transport, timers,
//! cache), so it is tested natively with a fake transport and the worker plugs in `fetch` and
//! IndexedDB.

use super::super::Workspace;
use super::tasks::{Finish, NextRound, View};
use ragscope_judge::provider::provider;
use ragscope_judge::{
    run_job, ApiKey, Budget, Call, Control, Env, Event, ItemKey, ItemRecord, Job, JudgeOptions,
    Price, PriceTable, ProviderConfig, ProviderKind, Status, Usage,
};
use ragscope_protocol::judges::{
    JudgeEstimate, JudgeFailure, JudgeOutcome, JudgeProgress, JudgeResponse, JudgeSpec,
    ProviderChoice,
};
use std::rc::Rc;

/// Re-asks after a reply that does not parse (the CLI's `--parse-retries` default; UMBRELA
/// never re-asks).
pub const PARSE_RETRIES: u32 = 3;
/// Requests in flight at most, whatever the form says (the anchors use 1–8).
pub const MAX_CONCURRENCY: u32 = 64;
/// The utility task's alignment probe: one token generated, then echoed.
pub const PROBE_REQUESTS: usize = 2;

/// The model's price per million tokens from the built-in table, and the line that says so
/// (or that the model is not in it).
pub(crate) fn price_of(
    prices: &PriceTable,
    kind: ProviderKind,
    model: &str,
) -> (Option<Price>, String) {
    match prices.lookup(kind, model) {
        Some(p) => (
            Some(Price {
                input: p.input,
                output: p.output,
            }),
            format!(
                "${} in / ${} out per million tokens, as of {}",
                p.input, p.output, p.as_of
            ),
        ),
        None => (None, format!("{model} is not in the price table")),
    }
}

pub fn kind_of(p: ProviderChoice) -> ProviderKind {
    match p {
        ProviderChoice::Anthropic => ProviderKind::Anthropic,
        ProviderChoice::Gemini => ProviderKind::Gemini,
        ProviderChoice::OpenAi => ProviderKind::OpenAi,
        ProviderChoice::OpenAiCompatible => ProviderKind::OpenAiCompatible,
    }
}

/// Everything a job needs, checked and built before anything is sent.
pub struct PreparedJob {
    /// The first round (for most tasks the only one).
    pub job: Job,
    /// Nugget creation's later rounds.
    pub next_round: Option<NextRound>,
    pub finish: Finish,
    /// The file the views load when it differs from the output (utilities).
    pub view: Option<View>,
    /// The utility task's alignment probe prompt: two requests before the items, and the job
    /// is refused when the server's echoed logprobs are misaligned.
    pub probe: Option<String>,
    pub config: ProviderConfig,
    pub opts: JudgeOptions,
    /// The result's file name.
    pub name: String,
    pub skipped: Vec<String>,
    pub price_note: String,
    /// The price through the provider's batch API (the table's discount), when known.
    pub batch_price: Option<Price>,
    /// Tokens already bought through a batch before the run (counted at `batch_price`).
    pub batch_usage: Usage,
}

impl PreparedJob {
    pub fn env_provider(&self) -> Rc<dyn ragscope_judge::Provider> {
        Rc::from(provider(self.config.clone()))
    }
}

impl Workspace {
    /// The job `spec` describes; `key: None` for an estimate (nothing is sent, so the key is
    /// not needed, and it never reaches this function before Start).
    pub fn prepare_judge(
        &self,
        spec: &JudgeSpec,
        key: Option<ApiKey>,
        for_estimate: bool,
    ) -> Result<PreparedJob, String> {
        let kind = kind_of(spec.provider);
        let mut config = if for_estimate {
            // Validates base URL and model like a real config; the placeholder key is dropped.
            let mut c = ProviderConfig::new(
                kind,
                &spec.model,
                Some(&spec.base_url),
                Some(ApiKey::new("-")),
            )?;
            c.key = None;
            c
        } else {
            ProviderConfig::new(kind, &spec.model, Some(&spec.base_url), key)?
        };
        // From a page: Anthropic needs its browser-access header.
        config.browser = true;

        let built = self.build_task(&spec.inputs, &spec.model, spec.provider)?;
        let prices = PriceTable::builtin();
        let (price, price_note) = price_of(&prices, kind, &spec.model);
        if spec.max_cost.is_some() && price.is_none() {
            return Err(format!(
                "a maximum cost needs the model's price, and {} is not in the price table: \
                 set a maximum of tokens instead",
                spec.model
            ));
        }
        let model_slug: String = spec
            .model
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '.' || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let batch_price = match (price, prices.batch_discount(kind)) {
            (Some(p), Some(d)) if ragscope_judge::batch::supported(kind).is_ok() => {
                Some(p.discounted(d.discount))
            }
            _ => None,
        };
        Ok(PreparedJob {
            batch_price,
            batch_usage: Usage::default(),
            job: Job {
                task: built.task,
                items: built.items,
                samples: 1,
            },
            next_round: built.next_round,
            finish: built.finish,
            view: built.view,
            probe: built.probe,
            opts: JudgeOptions {
                concurrency: spec.concurrency.clamp(1, MAX_CONCURRENCY) as usize,
                budget: Budget {
                    max_cost: spec.max_cost,
                    max_tokens: spec.max_tokens,
                },
                price,
                parse_retries: PARSE_RETRIES,
                ..JudgeOptions::default()
            },
            config,
            name: format!("{}-{model_slug}.{}", built.stem, built.ext),
            skipped: built.skipped,
            price_note,
        })
    }
}

/// The first request's prompt as the model will read it.
pub(crate) fn prompt_text(call: &Call) -> String {
    match call {
        Call::Chat(c) => {
            let mut s = String::new();
            if let Some(system) = &c.system {
                s.push_str(&format!("[system]\n{system}\n\n"));
            }
            for m in &c.messages {
                let role = format!("{:?}", m.role).to_lowercase();
                s.push_str(&format!("[{role}]\n{}\n", m.content));
            }
            s
        }
        Call::Completion(c) => c.prompt.clone(),
    }
}

/// Requests, tokens and cost of `prepared` (cached requests excluded), and its first prompt.
pub async fn estimate(prepared: &PreparedJob, env: &Env, ticket: u32) -> JudgeResponse {
    let first = &prepared.job.items[0];
    let endpoint = match env.provider.prepare(&first.call) {
        Ok(p) => format!("{}{}", prepared.config.base_url, p.endpoint),
        Err(e) => {
            return JudgeResponse::EstimateFailed {
                ticket,
                error: e.to_string(),
            }
        }
    };
    match ragscope_judge::runner::estimate(&prepared.job, env, &prepared.opts).await {
        Ok(e) => JudgeResponse::Estimate(JudgeEstimate {
            ticket,
            items: prepared.job.items.len(),
            requests: e.requests as usize
                + if prepared.probe.is_some() {
                    PROBE_REQUESTS
                } else {
                    0
                },
            cached: e.cached as usize,
            input_tokens: e.input_tokens,
            output_tokens: e.max_output_tokens,
            cost: e.max_cost,
            price_note: match prepared.probe {
                Some(_) => format!(
                    "{}; first {PROBE_REQUESTS} requests probe that the server's echoed logprobs \
                     are aligned",
                    prepared.price_note
                ),
                None => prepared.price_note.clone(),
            },
            batch_cost: prepared.batch_price.map(|p| {
                p.cost(Usage {
                    input_tokens: e.input_tokens,
                    output_tokens: e.max_output_tokens,
                })
            }),
            endpoint,
            first_prompt: prompt_text(&first.call),
            skipped: prepared.skipped.clone(),
        }),
        Err(error) => JudgeResponse::EstimateFailed { ticket, error },
    }
}

/// Whether a failed record is only an item the job never sent because it was cancelled (the
/// outcome says so once; the failures table keeps real failures).
fn unsent_on_cancel(attempts: u32, error: &str) -> bool {
    attempts == 0 && error.starts_with("cancelled")
}

/// The failures table's two columns: `qid`, and UMBRELA's `docno` or the key's other fields.
fn failure_columns(key: &ItemKey) -> (String, String) {
    let qid = key.get("qid").unwrap_or("").to_string();
    let rest = match key.get("docno") {
        Some(d) => d.to_string(),
        None => key
            .0
            .iter()
            .filter(|(k, _)| k != "qid")
            .map(|(k, v)| format!("{k}={v}"))
            .collect::<Vec<_>>()
            .join(" "),
    };
    (qid, rest)
}

/// Runs the job to its end, cancellation or budget, reporting through `send`; `now_s` is a
/// clock in seconds for the ETA. A task with rounds (nugget creation) runs them one after the
/// other, each round's items made from the previous round's records; the totals grow as rounds
/// are made.
pub async fn run(
    prepared: PreparedJob,
    env: Env,
    control: Control,
    job_id: u32,
    now_s: impl Fn() -> f64,
    send: impl Fn(JudgeResponse),
) {
    let PreparedJob {
        job,
        mut next_round,
        finish,
        mut opts,
        name,
        view,
        probe,
        config,
        batch_price,
        batch_usage,
        ..
    } = prepared;
    if let Some(prompt) = probe {
        // The CLI's probe and message (crates/judge): a misaligned server gets no item.
        let probed =
            ragscope_judge::task::utility::probe_with(&env, &opts, &prompt, &control).await;
        if let Err(e) = probed {
            let cancelled = control.state() == ragscope_judge::runner::ControlState::Cancelled;
            send(JudgeResponse::Failed {
                job: job_id,
                error: if cancelled {
                    "cancelled during the alignment probe: nothing was judged".into()
                } else {
                    ragscope_judge::task::utility_io::refused(&config.base_url, &e)
                },
            });
            return;
        }
    }
    let started = now_s();
    let mut round = job;
    let mut all: Vec<ItemRecord> = Vec::new();
    // Items and totals of the rounds before this one (and what a batch bought before them).
    let mut before = JudgeProgress {
        job: job_id,
        input_tokens: batch_usage.input_tokens,
        output_tokens: batch_usage.output_tokens,
        cost: opts
            .price
            .map(|p| batch_price.unwrap_or(p).cost(batch_usage)),
        ..JudgeProgress::default()
    };
    let mut stopped: Option<String>;
    loop {
        let total = before.total + round.items.len();
        send(JudgeResponse::Progress(JudgeProgress {
            total,
            ..before.clone()
        }));
        let control_ref = &control;
        let base = before.clone();
        let mut last = JudgeProgress {
            total,
            ..base.clone()
        };
        let mut on_event = |event: Event| match event {
            Event::Item(rec) if rec.status == Status::Failed => {
                let error = rec.error.clone().unwrap_or_default();
                if !unsent_on_cancel(rec.attempts, &error) {
                    let (qid, docno) = failure_columns(&rec.key);
                    send(JudgeResponse::Failure {
                        job: job_id,
                        failure: JudgeFailure {
                            qid,
                            docno,
                            error,
                            raw: rec.raw.clone(),
                            attempts: rec.attempts,
                        },
                    });
                }
            }
            Event::Progress(p) => {
                let done = base.done + p.done;
                let fresh = done.saturating_sub(base.cached + p.cached);
                let elapsed = now_s() - started;
                last = JudgeProgress {
                    job: job_id,
                    total,
                    done,
                    cached: base.cached + p.cached,
                    failed: base.failed + p.failed,
                    input_tokens: base.input_tokens + p.input_tokens,
                    output_tokens: base.output_tokens + p.output_tokens,
                    cost: match (base.cost, p.cost) {
                        (Some(a), Some(b)) => Some(a + b),
                        (a, b) => a.or(b),
                    },
                    eta_s: (fresh > 0 && elapsed > 0.0)
                        .then(|| (total - done) as f64 * elapsed / fresh as f64),
                    paused: control_ref.state() == ragscope_judge::runner::ControlState::Paused,
                };
                send(JudgeResponse::Progress(last.clone()));
            }
            _ => {}
        };
        let summary = run_job(&round, &env, &opts, &control, &mut on_event).await;
        before = JudgeProgress {
            eta_s: None,
            ..last
        };
        stopped = summary.stopped.clone();
        let next = match (&mut next_round, &stopped) {
            (Some(next), None) => next(&summary.records),
            _ => Vec::new(),
        };
        all.extend(summary.records);
        if next.is_empty() {
            break;
        }
        // The budget is the whole job's: later rounds get what the earlier ones left.
        if let Some(m) = opts.budget.max_tokens.as_mut() {
            *m = m.saturating_sub(before.input_tokens + before.output_tokens);
        }
        if let (Some(m), Some(spent)) = (opts.budget.max_cost.as_mut(), before.cost) {
            *m = (*m - spent).max(0.0);
        }
        round = Job {
            task: round.task.clone(),
            items: next,
            samples: round.samples,
        };
    }
    let judged = all.iter().filter(|r| r.status == Status::Ok).count();
    let (output, note) = finish(&all);
    let view = view.map(|v| v(&all));
    send(JudgeResponse::Finished(JudgeOutcome {
        job: job_id,
        name,
        qrels: output,
        note,
        judged,
        failed: all.len() - judged,
        stopped,
        view,
    }));
}
