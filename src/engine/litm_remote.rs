//! The lost-in-the-middle experiment with a remote LLM as the model (the Judges layer's
//! providers): each context's prompt — the same prompt the local engine answers, the UDCG paper's
//! system prompt and one "Document: …" line per passage — is sent once to the provider through
//! crates/judge (retries, concurrency cap, the judge cache, cost), answered at temperature 0 with
//! a few tokens (crates/judge's `answer` task), and scored like a local answer (`litm::item_of`:
//! the lost-in-the-middle paper's normalised substring match, nDCG, MAP, MRR and P of the same
//! context).
//!
//! What a remote model does not give: p(NO-RESPONSE) of the context and of each passage (no
//! provider returns the log-probability of a token it did not generate, except `/completions`
//! with echo, which needs the model's own chat template: see `ragscope judge utility`), so the
//! items carry no p(NO-RESPONSE) and no UDCG — shown as "—" with that reason, never a number.
//!
//! A failed call (after its retries) is reported as failed and never scored. Generic over the
//! judge layer's `Env`: tested natively with a scripted transport; the worker plugs in `fetch`
//! and the IndexedDB judge cache (`worker` below).

use super::inference::litm::{context, item_of};
use super::judges::job::{kind_of, prompt_text};
use crate::protocol::litm::{
    LitmEvent, LitmPrompt, LitmQuestion, LitmRequest, RemoteEstimate, RemoteRun,
};
use crate::protocol::Response;
use ragscope_judge::task::answer::Answer;
use ragscope_judge::{
    run_job, ApiKey, Control, Env, Event, ItemKey, Job, JudgeOptions, PriceTable, ProviderConfig,
    Status,
};
use std::rc::Rc;

/// The most requests in flight, whatever the page asks.
const MAX_CONCURRENCY: u32 = 16;

/// The system prompt and user message of one context (the prompt a local model answers,
/// before its chat template).
pub fn prompt(
    q: &LitmQuestion,
    k: usize,
    position: usize,
    which: LitmPrompt,
) -> Result<(Option<String>, String), String> {
    let texts: Vec<&str> = context(q, k, position)?
        .iter()
        .map(|(j, _)| q.passages[*j].as_str())
        .collect();
    super::litm_prompts::render(which, &q.question, &texts, position - 1)
        .map_err(|e| format!("{}: {e}", q.qid))
}

/// A remote run checked and built before anything is sent.
pub struct Prepared {
    pub job: Job,
    pub config: ProviderConfig,
    pub opts: JudgeOptions,
    pub price_note: String,
    /// (question index, position) of each job item.
    tasks: Vec<(usize, usize)>,
    questions: Vec<LitmQuestion>,
    k: usize,
}

impl Prepared {
    pub fn provider(&self) -> Rc<dyn ragscope_judge::Provider> {
        Rc::from(ragscope_judge::provider::provider(self.config.clone()))
    }
}

/// The job of `run`; `key: None` with `for_estimate` (nothing is sent, the key is not needed).
pub fn prepare(
    run: RemoteRun,
    key: Option<ApiKey>,
    for_estimate: bool,
) -> Result<Prepared, String> {
    let kind = kind_of(run.remote.provider);
    let mut config = if for_estimate {
        let mut c = ProviderConfig::new(
            kind,
            run.remote.model.trim(),
            Some(&run.remote.base_url),
            Some(ApiKey::new("-")),
        )?;
        c.key = None;
        c
    } else {
        ProviderConfig::new(
            kind,
            run.remote.model.trim(),
            Some(&run.remote.base_url),
            key,
        )?
    };
    // From a page: Anthropic needs its browser-access header.
    config.browser = true;
    if run.tasks.is_empty() {
        return Err("nothing to run: every chosen context has a result".into());
    }
    if run.max_tokens == 0 {
        return Err("max_tokens must be at least 1".into());
    }
    let task = Answer::new(run.max_tokens);
    let mut items = Vec::with_capacity(run.tasks.len());
    for &(q, position) in &run.tasks {
        let question = run
            .questions
            .get(q)
            .ok_or_else(|| format!("task names question {q}, there are {}", run.questions.len()))?;
        let (system, user) = prompt(question, run.k, position, run.prompt)?;
        items.push(task.item(
            ItemKey(vec![
                ("qid".into(), question.qid.clone()),
                ("position".into(), position.to_string()),
            ]),
            system.as_deref(),
            &user,
        ));
    }
    let (price, price_note) =
        super::judges::job::price_of(&PriceTable::builtin(), kind, run.remote.model.trim());
    Ok(Prepared {
        job: Job {
            task: Rc::new(task),
            items,
            samples: 1,
        },
        config,
        opts: JudgeOptions {
            concurrency: run.concurrency.clamp(1, MAX_CONCURRENCY) as usize,
            price,
            ..JudgeOptions::default()
        },
        price_note,
        tasks: run.tasks,
        questions: run.questions,
        k: run.k,
    })
}

/// Requests, tokens and cost (requests in the judge cache excluded) and the first prompt.
pub async fn estimate(p: &Prepared, env: &Env) -> LitmEvent {
    let first = &p.job.items[0];
    let endpoint = match env.provider.prepare(&first.call) {
        Ok(x) => format!("{}{}", p.config.base_url, x.endpoint),
        Err(e) => return LitmEvent::RemoteEstimateFailed(e.to_string()),
    };
    match ragscope_judge::runner::estimate(&p.job, env, &p.opts).await {
        Ok(e) => LitmEvent::RemoteEstimate(RemoteEstimate {
            requests: e.requests as usize,
            cached: e.cached as usize,
            input_tokens: e.input_tokens,
            output_tokens: e.max_output_tokens,
            cost: e.max_cost,
            price_note: p.price_note.clone(),
            endpoint,
            first_prompt: prompt_text(&first.call),
        }),
        Err(e) => LitmEvent::RemoteEstimateFailed(e),
    }
}

/// Runs the contexts, reporting each answered one as an item, each failed one as failed
/// (`ItemFailed`), progress and money spent, then `Done` or `Cancelled`. `now_s`: seconds.
pub async fn run(
    p: Prepared,
    env: Env,
    control: Control,
    now_s: impl Fn() -> f64,
    send: impl Fn(LitmEvent),
) {
    let started = now_s();
    let Prepared {
        job,
        opts,
        tasks,
        questions,
        k,
        ..
    } = p;
    let total = job.items.len();
    send(LitmEvent::Progress {
        done: 0,
        total,
        seconds: 0.0,
    });
    let mut on_event = |event: Event| match event {
        Event::Item(rec) => {
            let Some(&(q, position)) = tasks.get(rec.index) else {
                return;
            };
            let question = &questions[q];
            let answer = rec
                .result
                .as_ref()
                .and_then(|v| v.get("answer"))
                .and_then(|a| a.as_str());
            match (rec.status, answer) {
                (Status::Ok, Some(a)) => send(LitmEvent::Item(item_of(
                    question,
                    k,
                    position,
                    a.to_string(),
                    None,
                    None,
                    0,
                ))),
                // Never sent because the run was cancelled: still to do, not a failure.
                _ if rec.attempts == 0
                    && rec
                        .error
                        .as_deref()
                        .is_some_and(|e| e.starts_with("cancelled")) => {}
                _ => send(LitmEvent::ItemFailed {
                    qid: question.qid.clone(),
                    position,
                    error: rec.error.unwrap_or_else(|| "no answer in the reply".into()),
                }),
            }
        }
        Event::Progress(pr) => {
            send(LitmEvent::Progress {
                done: pr.done,
                total,
                seconds: now_s() - started,
            });
            send(LitmEvent::Spent {
                requests: pr.requests,
                cost: pr.cost,
            });
        }
        _ => {}
    };
    let summary = run_job(&job, &env, &opts, &control, &mut on_event).await;
    let seconds = now_s() - started;
    match summary.stopped {
        Some(_) if control.state() == ragscope_judge::runner::ControlState::Cancelled => {
            send(LitmEvent::Cancelled {
                done: summary
                    .records
                    .iter()
                    .filter(|r| r.status == Status::Ok)
                    .count(),
            })
        }
        Some(why) => send(LitmEvent::Failed(why)),
        None => send(LitmEvent::Done { seconds }),
    }
}

/// Natively (tests, the reactor off the browser): the estimate against an empty cache; a run
/// needs the browser worker.
pub fn handle_now(request: LitmRequest) -> Vec<Response> {
    let event = match request {
        LitmRequest::EstimateRemote(run) => match prepare(run, None, true) {
            Ok(p) => {
                let env = Env {
                    provider: p.provider(),
                    transport: Rc::new(super::judges::NoNetwork),
                    runtime: Rc::new(super::judges::NoNetwork),
                    cache: Rc::new(ragscope_judge::MemoryCache::new()),
                };
                futures::executor::block_on(estimate(&p, &env))
            }
            Err(e) => LitmEvent::RemoteEstimateFailed(e),
        },
        LitmRequest::StartRemote { .. } => {
            LitmEvent::Failed("a remote model runs only in the browser worker".into())
        }
        _ => return vec![],
    };
    vec![Response::Litm(event)]
}

/// The remote run of this worker (one at a time) and its pause/cancel handle.
#[cfg(target_arch = "wasm32")]
pub mod worker {
    use super::*;
    use crate::engine::judges::fetch::{FetchTransport, WorkerRuntime};
    use crate::engine::judges::idb_cache::IdbCache;
    use futures::channel::mpsc::UnboundedSender;

    #[derive(Default)]
    pub struct RemoteRuns {
        control: Option<Control>,
    }

    fn env(p: &Prepared) -> Env {
        Env {
            provider: p.provider(),
            transport: Rc::new(FetchTransport),
            runtime: Rc::new(WorkerRuntime),
            cache: Rc::new(IdbCache),
        }
    }

    impl RemoteRuns {
        /// Handles a remote request; answers go to `out` (now or later).
        pub fn handle(&mut self, request: LitmRequest, out: &UnboundedSender<Response>) {
            let send = {
                let out = out.clone();
                move |e: LitmEvent| {
                    let _ = out.unbounded_send(Response::Litm(e));
                }
            };
            match request {
                LitmRequest::EstimateRemote(run) => match prepare(run, None, true) {
                    Ok(p) => {
                        let env = env(&p);
                        wasm_bindgen_futures::spawn_local(async move {
                            send(estimate(&p, &env).await);
                        });
                    }
                    Err(e) => send(LitmEvent::RemoteEstimateFailed(e)),
                },
                LitmRequest::StartRemote { run, key } => {
                    if self.control.as_ref().is_some_and(|c| {
                        c.state() != ragscope_judge::runner::ControlState::Cancelled
                    }) {
                        send(LitmEvent::Failed(
                            "a remote run is already under way; cancel it first".into(),
                        ));
                        return;
                    }
                    match prepare(run, key.map(|k| ApiKey::new(k.0)), false) {
                        Ok(p) => {
                            let control = Control::new();
                            self.control = Some(control.clone());
                            let env = env(&p);
                            wasm_bindgen_futures::spawn_local(async move {
                                let now_s = || js_sys::Date::now() / 1000.0;
                                super::run(p, env, control.clone(), now_s, &send).await;
                                // Done: the handle is dropped at the next start.
                                control.cancel();
                            });
                        }
                        Err(e) => send(LitmEvent::Failed(e)),
                    }
                }
                LitmRequest::PauseRemote => {
                    if let Some(c) = &self.control {
                        c.pause();
                        send(LitmEvent::Paused(true));
                    }
                }
                LitmRequest::ResumeRemote => {
                    if let Some(c) = &self.control {
                        c.resume();
                        send(LitmEvent::Paused(false));
                    }
                }
                LitmRequest::Cancel => self.cancel(),
                LitmRequest::Start { .. } => {}
            }
        }

        /// Stops the remote run, if any (requests in flight finish).
        pub fn cancel(&mut self) {
            if let Some(c) = &self.control {
                c.cancel();
            }
        }
    }

    /// The page has gone (its reactor ends): nothing more is sent on its behalf (what was
    /// answered is in the judge cache, so running again later costs nothing for it).
    impl Drop for RemoteRuns {
        fn drop(&mut self) {
            self.cancel();
        }
    }
}
