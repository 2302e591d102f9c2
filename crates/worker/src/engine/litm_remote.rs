//! The lost-in-the-middle experiment with a remote LLM as the model (the Judges layer's
//! providers): each context's prompt — the same prompt the local engine answers, the UDCG paper's
//! system prompt and one "Document: …" line per passage — is sent once to the provider through
//! crates/judge (retries, concurrency cap, the judge cache, cost), answered at temperature 0 with
//! a few tokens (crates/judge's `answer` task), and scored like a local answer (`litm::item_of`:
//! the lost-in-the-middle paper's normalised substring match, nDCG, MAP, MRR and P of the same
//! context).
//!
//! p(NO-RESPONSE) of each passage alone — the UDCG paper's utility prompt, as the local engine
//! and `ragscope judge utility` use it — and, when asked, of each whole context, come from the
//! same server through crates/judge's utility task (`task::utility`, one call each, before the
//! answers): with no chat template, the chat endpoint's top 20 logprobs (exact when NO-RESPONSE's
//! first token is listed, else only an upper bound); with the served model's GGUF, `/completions`
//! with the prompt rendered by its chat template and echoed (exact), after the task's alignment
//! probe. UDCG (crates/eval, γ = 1/3) of a context is computed only from exact values of all its
//! passages; a bound is carried as a bound ("≤ x"), never used as a value. Gemini gives the top
//! 20 only (crates/judge sends `responseLogprobs`; it has no /completions to echo), for the
//! models that serve them. Anthropic gives no log-probabilities: no p(NO-RESPONSE), no UDCG.
//!
//! A failed call (after its retries) is reported as failed and never scored; a failed utility
//! call leaves its p and the UDCG that needs it out, and marks the context to be sent again. Generic over the
//! judge layer's `Env`: tested natively with a scripted transport; the worker plugs in `fetch`
//! and the IndexedDB judge cache (`worker` below).

use super::inference::litm::item_of;
use super::judges::job::{kind_of, prompt_text, PROBE_REQUESTS};
use super::Workspace;
use ragscope_judge::task::answer::Answer;
use ragscope_judge::task::utility::{reading, Scoring, Utility};
use ragscope_judge::task::utility_io::{refused, ServerPrompts};
use ragscope_judge::{
    run_job, ApiKey, Control, Env, Event, ItemKey, ItemRecord, Job, JudgeOptions, PriceTable,
    ProviderConfig, Status,
};
use ragscope_protocol::judges::{ProviderChoice, UtilityTemplate};
use ragscope_protocol::litm::{
    context, echo_offered, no_logprobs_reason, utility_passages, LitmEvent, LitmPrompt,
    LitmQuestion, LitmRequest, RemoteEstimate, RemoteRun,
};
use ragscope_protocol::Response;
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
    /// The utility calls, sent before the answers (`None`: no p(NO-RESPONSE) asked for).
    pub utility: Option<UtilityPlan>,
}

/// What one utility call scores.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Target {
    /// Passage `slot` (in `utility_passages` order: gold first) of question `q`, alone.
    Passage { q: usize, slot: usize },
    /// The whole context of answer task `task`.
    Context { task: usize },
}

/// The utility job of a remote run.
pub struct UtilityPlan {
    pub job: Job,
    targets: Vec<Target>,
    /// The alignment probe's prompt (echo scoring only).
    pub probe: Option<String>,
    /// How p is read, in words.
    pub scoring: String,
}

/// The utility prompts of `run` from the worker's workspace (the GGUF it read for the chat
/// template, as the Judges page's utility task reads it); `None` when no p(NO-RESPONSE) is
/// asked for.
pub fn server_prompts(ws: &Workspace, run: &RemoteRun) -> Result<Option<ServerPrompts>, String> {
    let Some(template) = &run.utility else {
        return Ok(None);
    };
    if let Some(why) = no_logprobs_reason(run.remote.provider) {
        return Err(format!("no p(NO-RESPONSE) from this provider: {why}"));
    }
    if !echo_offered(run.remote.provider) && *template != UtilityTemplate::None {
        return Err(format!(
            "{} serves no /completions echo for exact p(NO-RESPONSE): only its top 20 \
             log-probabilities (no GGUF)",
            run.remote.provider.label()
        ));
    }
    ws.server_prompts(template).map(Some)
}

/// The utility job: every passage of each question of the run (the judge cache answers those
/// already paid for), then each context when `context_p` under the UDCG paper's prompt.
fn utility_plan(run: &RemoteRun, prompts: &ServerPrompts) -> Result<UtilityPlan, String> {
    let scoring = prompts.scoring();
    let words = match &scoring {
        Scoring::Echo { .. } => {
            "exact: /completions echo of the prompt rendered with the GGUF's chat template"
        }
        Scoring::TopLogprobs { .. } if run.remote.provider == ProviderChoice::Gemini => {
            "Gemini's top 20 logprobs of the first answer token (responseLogprobs): exact when \
             NO-RESPONSE's first token is listed, else only an upper bound"
        }
        Scoring::TopLogprobs { .. } => {
            "the chat endpoint's top 20 logprobs: exact when NO-RESPONSE's first token is \
             listed, else only an upper bound"
        }
    };
    let task = Utility::new(scoring);
    let mut targets = Vec::new();
    let mut pairs = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for &(q, _) in &run.tasks {
        if !seen.insert(q) {
            continue;
        }
        let question = &run.questions[q];
        for (slot, j) in utility_passages(question, run.k)?.into_iter().enumerate() {
            let item = format!("{} passage {j}", question.qid);
            let prompt = prompts.prompt(&question.question, &question.passages[j], &item)?;
            pairs.push((
                ItemKey(vec![
                    ("qid".into(), question.qid.clone()),
                    ("passage".into(), j.to_string()),
                ]),
                prompt,
            ));
            targets.push(Target::Passage { q, slot });
        }
    }
    if run.context_p && run.prompt == LitmPrompt::Udcg {
        for (task_index, &(q, position)) in run.tasks.iter().enumerate() {
            let question = &run.questions[q];
            let texts: Vec<&str> = context(question, run.k, position)?
                .iter()
                .map(|(j, _)| question.passages[*j].as_str())
                .collect();
            let item = format!("{} context with the gold at {position}", question.qid);
            let prompt = prompts.prompt_docs(&question.question, &texts, &item)?;
            pairs.push((
                ItemKey(vec![
                    ("qid".into(), question.qid.clone()),
                    ("position".into(), position.to_string()),
                    ("context".into(), "1".into()),
                ]),
                prompt,
            ));
            targets.push(Target::Context { task: task_index });
        }
    }
    Ok(UtilityPlan {
        job: Job {
            items: task.items(pairs),
            task: Rc::new(task),
            samples: 1,
        },
        targets,
        probe: prompts.probe_prompt()?,
        scoring: words.into(),
    })
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
    prompts: Option<ServerPrompts>,
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
    let utility = match (&run.utility, prompts) {
        (Some(_), Some(prompts)) => Some(utility_plan(&run, &prompts)?),
        (Some(_), None) => return Err("p(NO-RESPONSE) asked for without its prompts".into()),
        (None, _) => None,
    };
    Ok(Prepared {
        utility,
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

/// Requests, tokens and cost (requests in the judge cache excluded) of the answers and the
/// utility calls, and the first prompt.
pub async fn estimate(p: &Prepared, env: &Env) -> LitmEvent {
    let first = &p.job.items[0];
    let endpoint = match env.provider.prepare(&first.call) {
        Ok(x) => format!("{}{}", p.config.base_url, x.endpoint),
        Err(e) => return LitmEvent::RemoteEstimateFailed(e.to_string()),
    };
    let answers = match ragscope_judge::runner::estimate(&p.job, env, &p.opts).await {
        Ok(e) => e,
        Err(e) => return LitmEvent::RemoteEstimateFailed(e),
    };
    let mut out = RemoteEstimate {
        requests: answers.requests as usize,
        cached: answers.cached as usize,
        input_tokens: answers.input_tokens,
        output_tokens: answers.max_output_tokens,
        cost: answers.max_cost,
        price_note: p.price_note.clone(),
        endpoint,
        first_prompt: prompt_text(&first.call),
        utility_requests: 0,
        scoring: String::new(),
    };
    if let Some(u) = &p.utility {
        if !u.job.items.is_empty() {
            match ragscope_judge::runner::estimate(&u.job, env, &p.opts).await {
                Ok(e) => {
                    out.utility_requests = e.requests as usize;
                    out.cached += e.cached as usize;
                    out.input_tokens += e.input_tokens;
                    out.output_tokens += e.max_output_tokens;
                    out.cost = out.cost.zip(e.max_cost).map(|(a, b)| a + b);
                }
                Err(e) => return LitmEvent::RemoteEstimateFailed(e),
            }
        }
        if u.probe.is_some() {
            out.utility_requests += PROBE_REQUESTS;
            out.price_note = format!(
                "{}; first {PROBE_REQUESTS} requests probe that the server's echoed logprobs \
                 are aligned",
                out.price_note
            );
        }
        out.requests += out.utility_requests;
        out.scoring = u.scoring.clone();
    }
    LitmEvent::RemoteEstimate(out)
}

/// One utility call's reading: (p or its upper bound, exact?), or why it failed.
type Reading = Result<(f64, bool), String>;
/// The utility calls' readings, by target (`None`: not answered).
type Readings = Vec<Option<Reading>>;

/// A record never sent because the run was cancelled: still to do, not a failure.
fn unsent(rec: &ItemRecord) -> bool {
    rec.attempts == 0
        && rec
            .error
            .as_deref()
            .is_some_and(|e| e.starts_with("cancelled"))
}

/// Runs the utility calls (after the alignment probe, for echo scoring), then the contexts,
/// reporting each answered context as an item (with its p(NO-RESPONSE) and UDCG where the
/// utility calls allow), each failed call as failed (`ItemFailed`, `UtilityFailed`), progress
/// and money spent, then `Done` or `Cancelled`. `now_s`: seconds.
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
        utility,
        config,
        ..
    } = p;
    let n_utility = utility.as_ref().map_or(0, |u| u.job.items.len());
    let total = job.items.len() + n_utility;
    send(LitmEvent::Progress {
        done: 0,
        total,
        seconds: 0.0,
    });
    let cancelled = || control.state() == ragscope_judge::runner::ControlState::Cancelled;
    // What the utility job spent, added to the answers' (one run, one bill).
    let mut spent_before: (u64, Option<f64>) = (0, Some(0.0));
    let mut readings: Readings = Vec::new();
    let mut targets: Vec<Target> = Vec::new();
    if let Some(u) = utility {
        if let Some(prompt) = &u.probe {
            // The CLI's probe and message (crates/judge): a misaligned server gets no call.
            if let Err(e) =
                ragscope_judge::task::utility::probe_with(&env, &opts, prompt, &control).await
            {
                if cancelled() {
                    send(LitmEvent::Cancelled { done: 0 });
                } else {
                    send(LitmEvent::Failed(format!(
                        "{} — nothing else was sent; without the GGUF (bound scoring) the chat \
                         endpoint is used instead",
                        refused(&config.base_url, &e)
                    )));
                }
                return;
            }
        }
        readings = vec![None; u.job.items.len()];
        targets = u.targets.clone();
        let mut on_event = |event: Event| match event {
            Event::Item(rec) => {
                let Some(target) = u.targets.get(rec.index) else {
                    return;
                };
                if rec.status != Status::Ok && unsent(&rec) {
                    return;
                }
                let value = reading(&rec).ok_or_else(|| {
                    rec.error
                        .clone()
                        .unwrap_or_else(|| "no probability in the reply".into())
                });
                if let Err(error) = &value {
                    let (q, what) = match *target {
                        Target::Passage { q, slot } => {
                            let j = utility_passages(&questions[q], k)
                                .ok()
                                .and_then(|o| o.get(slot).copied())
                                .unwrap_or(slot);
                            (q, format!("passage {j} alone"))
                        }
                        Target::Context { task } => {
                            let (q, position) = tasks[task];
                            (q, format!("the context with the gold at {position}"))
                        }
                    };
                    send(LitmEvent::UtilityFailed {
                        qid: questions[q].qid.clone(),
                        what,
                        error: error.clone(),
                    });
                }
                readings[rec.index] = Some(value);
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
        let summary = run_job(&u.job, &env, &opts, &control, &mut on_event).await;
        spent_before = (summary.progress.requests, summary.progress.cost);
        match summary.stopped {
            Some(_) if cancelled() => {
                send(LitmEvent::Cancelled { done: 0 });
                return;
            }
            Some(why) => {
                send(LitmEvent::Failed(why));
                return;
            }
            None => {}
        }
    }
    let utilities = Utilities::of(&targets, &readings, &questions, k);
    for (q, p) in utilities.exact_passages.iter().enumerate() {
        if let Some(p) = p {
            send(LitmEvent::Utilities {
                qid: questions[q].qid.clone(),
                p: p.clone(),
            });
        }
    }
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
                (Status::Ok, Some(a)) => send(LitmEvent::Item(
                    utilities.item(question, q, rec.index, k, position, a),
                )),
                // Never sent because the run was cancelled: still to do, not a failure.
                _ if unsent(&rec) => {}
                _ => send(LitmEvent::ItemFailed {
                    qid: question.qid.clone(),
                    position,
                    error: rec.error.unwrap_or_else(|| "no answer in the reply".into()),
                }),
            }
        }
        Event::Progress(pr) => {
            send(LitmEvent::Progress {
                done: n_utility + pr.done,
                total,
                seconds: now_s() - started,
            });
            send(LitmEvent::Spent {
                requests: spent_before.0 + pr.requests,
                cost: spent_before.1.zip(pr.cost).map(|(a, b)| a + b),
            });
        }
        _ => {}
    };
    let summary = run_job(&job, &env, &opts, &control, &mut on_event).await;
    let seconds = now_s() - started;
    match summary.stopped {
        Some(_) if cancelled() => send(LitmEvent::Cancelled {
            done: summary
                .records
                .iter()
                .filter(|r| r.status == Status::Ok)
                .count(),
        }),
        Some(why) => send(LitmEvent::Failed(why)),
        None => send(LitmEvent::Done { seconds }),
    }
}

/// The utility calls' readings arranged for scoring the contexts.
struct Utilities {
    /// Per question: its k passages' readings (gold first), when it had utility calls.
    passages: Vec<Option<Readings>>,
    /// Per question: the k passages' p when all are exact (what UDCG may use).
    exact_passages: Vec<Option<Vec<f64>>>,
    /// Per answer task: the whole context's reading, when asked for.
    contexts: std::collections::HashMap<usize, Reading>,
    asked: bool,
}

impl Utilities {
    fn of(targets: &[Target], readings: &Readings, questions: &[LitmQuestion], k: usize) -> Self {
        let mut passages: Vec<Option<Readings>> = vec![None; questions.len()];
        let mut contexts = std::collections::HashMap::new();
        for (t, r) in targets.iter().zip(readings) {
            match *t {
                Target::Passage { q, slot } => {
                    let v = passages[q].get_or_insert_with(|| vec![None; k]);
                    if let (Some(x), Some(r)) = (v.get_mut(slot), r) {
                        *x = Some(r.clone());
                    }
                }
                Target::Context { task } => {
                    if let Some(r) = r {
                        contexts.insert(task, r.clone());
                    }
                }
            }
        }
        let exact_passages = passages
            .iter()
            .map(|v| {
                v.as_ref()?
                    .iter()
                    .map(|r| match r {
                        Some(Ok((p, true))) => Some(*p),
                        _ => None,
                    })
                    .collect::<Option<Vec<f64>>>()
            })
            .collect();
        Utilities {
            passages,
            exact_passages,
            contexts,
            asked: !targets.is_empty(),
        }
    }

    /// One answered context: its scores, UDCG from exact passage values only, the context's
    /// p(NO-RESPONSE) (or its bound), and whether a utility call of it failed.
    fn item(
        &self,
        question: &LitmQuestion,
        q: usize,
        task: usize,
        k: usize,
        position: usize,
        answer: &str,
    ) -> ragscope_protocol::litm::LitmItem {
        let exact = self.exact_passages.get(q).and_then(|e| e.as_deref());
        let context = self.contexts.get(&task);
        let p = match context {
            Some(Ok((p, _))) => Some(*p),
            _ => None,
        };
        let mut item = item_of(question, k, position, answer.to_string(), exact, p, 0);
        item.p_bound = matches!(context, Some(Ok((_, false))));
        let passages = self.passages.get(q).and_then(|v| v.as_ref());
        let failed = passages.map_or(0, |v| {
            v.iter()
                .filter(|r| matches!(r, Some(Err(_)) | None))
                .count()
        });
        let bounded = passages.map_or(0, |v| {
            v.iter()
                .filter(|r| matches!(r, Some(Ok((_, false)))))
                .count()
        });
        if self.asked && exact.is_none() {
            item.udcg_missing = Some(if failed > 0 {
                format!("{failed} of its {k} passages' utility calls failed")
            } else if bounded > 0 {
                format!("{bounded} of its {k} passages' p(NO-RESPONSE) are only upper bounds")
            } else {
                "no passage utilities".to_string()
            });
        }
        item.retry = failed > 0 || matches!(context, Some(Err(_)));
        item
    }
}

/// Natively (tests, the reactor off the browser): the estimate against an empty cache; a run
/// needs the browser worker.
pub fn handle_now(ws: &Workspace, request: LitmRequest) -> Vec<Response> {
    let event = match request {
        LitmRequest::EstimateRemote(run) => {
            match server_prompts(ws, &run).and_then(|prompts| prepare(run, None, true, prompts)) {
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
            }
        }
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
    use crate::engine::judges::tab_cache;
    use futures::channel::mpsc::UnboundedSender;

    #[derive(Default)]
    pub struct RemoteRuns {
        control: Option<Control>,
    }

    /// `keep`: the user's consent to keep the replies in IndexedDB ("Keep results in this
    /// browser"); without it the tab's memory cache, shared with the judge jobs.
    fn env(p: &Prepared, keep: bool) -> Env {
        Env {
            provider: p.provider(),
            transport: Rc::new(FetchTransport),
            runtime: Rc::new(WorkerRuntime),
            cache: tab_cache::choose(keep, || Rc::new(IdbCache)),
        }
    }

    impl RemoteRuns {
        /// Handles a remote request; answers go to `out` (now or later).
        pub fn handle(
            &mut self,
            ws: &Workspace,
            request: LitmRequest,
            out: &UnboundedSender<Response>,
        ) {
            let send = {
                let out = out.clone();
                move |e: LitmEvent| {
                    let _ = out.unbounded_send(Response::Litm(e));
                }
            };
            match request {
                LitmRequest::EstimateRemote(run) => {
                    let keep = run.keep;
                    match server_prompts(ws, &run)
                        .and_then(|prompts| prepare(run, None, true, prompts))
                    {
                        Ok(p) => {
                            let env = env(&p, keep);
                            wasm_bindgen_futures::spawn_local(async move {
                                send(estimate(&p, &env).await);
                            });
                        }
                        Err(e) => send(LitmEvent::RemoteEstimateFailed(e)),
                    }
                }
                LitmRequest::StartRemote { run, key } => {
                    if self.control.as_ref().is_some_and(|c| {
                        c.state() != ragscope_judge::runner::ControlState::Cancelled
                    }) {
                        send(LitmEvent::Failed(
                            "a remote run is already under way; cancel it first".into(),
                        ));
                        return;
                    }
                    let keep = run.keep;
                    let prepared = server_prompts(ws, &run).and_then(|prompts| {
                        prepare(run, key.map(|k| ApiKey::new(k.0)), false, prompts)
                    });
                    match prepared {
                        Ok(p) => {
                            let control = Control::new();
                            self.control = Some(control.clone());
                            let env = env(&p, keep);
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
