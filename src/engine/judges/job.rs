//! A judge job as the worker runs it: the items of a run's top k (from the loaded topics,
//! passages and run), the estimate shown before Start, and the run itself on crates/judge,
//! reported as [`JudgeResponse`]s. Generic over the judge layer's `Env` (transport, timers,
//! cache), so it is tested natively with a fake transport and the worker plugs in `fetch` and
//! IndexedDB.

use super::super::{ranked_docnos, Workspace};
use crate::protocol::judges::{
    JudgeEstimate, JudgeFailure, JudgeOutcome, JudgeProgress, JudgeResponse, JudgeSpec,
    JudgeTaskChoice, ProviderChoice,
};
use ragscope_judge::provider::provider;
use ragscope_judge::task::umbrela::Umbrela;
use ragscope_judge::{
    run_job, ApiKey, Budget, Call, Control, Env, Event, Job, JudgeOptions, Price, PriceTable,
    ProviderConfig, ProviderKind, Status,
};
use std::rc::Rc;

/// Skipped items named in the estimate, at most.
const SKIPPED_SHOWN: usize = 5;
/// Requests in flight at most, whatever the form says (the anchors use 1–8).
pub const MAX_CONCURRENCY: u32 = 64;

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
    pub job: Job,
    pub config: ProviderConfig,
    pub opts: JudgeOptions,
    /// The result's file name.
    pub name: String,
    pub skipped: Vec<String>,
    pub price_note: String,
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

        let (_, topics_name, topics) = self
            .judge_files
            .topics
            .as_ref()
            .filter(|(id, _, _)| *id == spec.topics)
            .ok_or("the topics file is no longer loaded")?;
        let (_, passages_name, passages) = self
            .judge_files
            .passages
            .as_ref()
            .filter(|(id, _, _)| *id == spec.passages)
            .ok_or("the passages file is no longer loaded")?;
        let (_, run_name, run) = self
            .runs
            .iter()
            .find(|(id, _, _)| *id == spec.run)
            .ok_or("the run is no longer loaded")?;
        let task = match spec.task {
            JudgeTaskChoice::Umbrela => Umbrela::new(),
        };
        let mut items = Vec::new();
        let (mut no_question, mut no_text) = (Vec::new(), Vec::new());
        for topic in run.topics() {
            let qid = topic.qid();
            let Some(question) = topics.get(qid) else {
                no_question.push(qid.to_string());
                continue;
            };
            for (docno, _) in ranked_docnos(run, topic).into_iter().take(spec.k) {
                let docno = String::from_utf8_lossy(docno);
                match passages.get(docno.as_ref()) {
                    Some(text) => items.push(task.item(qid, &docno, question, text)?),
                    None => no_text.push(format!("{qid}/{docno}")),
                }
            }
        }
        let mut skipped = Vec::new();
        let list = |v: &[String]| {
            let mut s = v
                .iter()
                .take(SKIPPED_SHOWN)
                .cloned()
                .collect::<Vec<_>>()
                .join(", ");
            if v.len() > SKIPPED_SHOWN {
                s.push_str(&format!(", … ({} in all)", v.len()));
            }
            s
        };
        if !no_question.is_empty() {
            skipped.push(format!(
                "queries of {run_name} without a question in {topics_name}: {}",
                list(&no_question)
            ));
        }
        if !no_text.is_empty() {
            skipped.push(format!(
                "passages of {run_name} without a text in {passages_name}: {}",
                list(&no_text)
            ));
        }
        if items.is_empty() {
            return Err(format!(
                "nothing to judge: no query of {run_name} has both a question in {topics_name} \
                 and passage texts in {passages_name}"
            ));
        }
        let prices = PriceTable::builtin();
        let (price, price_note) = match prices.lookup(kind, &spec.model) {
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
            None => (None, format!("{} is not in the price table", spec.model)),
        };
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
        Ok(PreparedJob {
            job: Job {
                task: Rc::new(task),
                items,
                samples: 1,
            },
            opts: JudgeOptions {
                concurrency: spec.concurrency.clamp(1, MAX_CONCURRENCY) as usize,
                budget: Budget {
                    max_cost: spec.max_cost,
                    max_tokens: spec.max_tokens,
                },
                price,
                ..JudgeOptions::default()
            },
            config,
            name: format!("umbrela-{model_slug}.qrels"),
            skipped,
            price_note,
        })
    }
}

/// The first request's prompt as the model will read it.
fn prompt_text(call: &Call) -> String {
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
            requests: e.requests as usize,
            cached: e.cached as usize,
            input_tokens: e.input_tokens,
            output_tokens: e.max_output_tokens,
            cost: e.max_cost,
            price_note: prepared.price_note.clone(),
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

/// Runs the job to its end, cancellation or budget, reporting through `send`; `now_s` is a
/// clock in seconds for the ETA.
pub async fn run(
    prepared: PreparedJob,
    env: Env,
    control: Control,
    job_id: u32,
    now_s: impl Fn() -> f64,
    send: impl Fn(JudgeResponse),
) {
    let started = now_s();
    let total = prepared.job.items.len();
    let mut last = JudgeProgress {
        job: job_id,
        total,
        cost: prepared.opts.price.map(|_| 0.0),
        ..JudgeProgress::default()
    };
    send(JudgeResponse::Progress(last.clone()));
    let control_ref = &control;
    let mut on_event = |event: Event| match event {
        Event::Item(rec) if rec.status == Status::Failed => {
            let error = rec.error.clone().unwrap_or_default();
            if !unsent_on_cancel(rec.attempts, &error) {
                send(JudgeResponse::Failure {
                    job: job_id,
                    failure: JudgeFailure {
                        qid: rec.key.get("qid").unwrap_or("").to_string(),
                        docno: rec.key.get("docno").unwrap_or("").to_string(),
                        error,
                        raw: rec.raw.clone(),
                        attempts: rec.attempts,
                    },
                });
            }
        }
        Event::Progress(p) => {
            let fresh = p.done.saturating_sub(p.cached);
            let elapsed = now_s() - started;
            last = JudgeProgress {
                job: job_id,
                total,
                done: p.done,
                cached: p.cached,
                failed: p.failed,
                input_tokens: p.input_tokens,
                output_tokens: p.output_tokens,
                cost: p.cost,
                eta_s: (fresh > 0 && elapsed > 0.0)
                    .then(|| (total - p.done) as f64 * elapsed / fresh as f64),
                paused: control_ref.state() == ragscope_judge::runner::ControlState::Paused,
            };
            send(JudgeResponse::Progress(last.clone()));
        }
        _ => {}
    };
    let summary = run_job(&prepared.job, &env, &prepared.opts, &control, &mut on_event).await;
    let judged = summary
        .records
        .iter()
        .filter(|r| r.status == Status::Ok)
        .count();
    send(JudgeResponse::Finished(JudgeOutcome {
        job: job_id,
        name: prepared.name.clone(),
        qrels: prepared.job.task.write_output(&summary.records),
        judged,
        failed: summary.records.len() - judged,
        stopped: summary.stopped,
    }));
}
