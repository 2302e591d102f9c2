//! The evaluation worker: a yew-agent reactor that owns an [`engine::Workspace`].

use crate::engine::Workspace;
use futures::future::{select, Either};
use futures::{SinkExt, StreamExt};
use ragscope_protocol::{Request, Response};
use yew_agent::reactor::{reactor, ReactorScope};

#[reactor(EvalReactor)]
pub async fn eval_reactor(mut scope: ReactorScope<Request, Response>) {
    let mut workspace = Workspace::default();
    // Requests that arrived while the worker read a file (blob_load.rs), in order.
    let mut pending = std::collections::VecDeque::<Request>::new();
    // The files channel before the warm-up: the page sends it first, and a file picked while
    // the warm-up runs is posted there at once (crates/platform/src/blob_channel.rs); a channel
    // joined later would miss it. Then, before the next request, V8 compiles the parsers' hot loops
    // while the page starts.
    #[cfg(target_arch = "wasm32")]
    {
        match scope.next().await {
            Some(Request::Files { channel }) => {
                ragscope_platform::blob_channel::join_files_channel(&channel)
            }
            Some(other) => pending.push_back(other),
            None => return,
        }
        crate::engine::warm_up::once();
    }
    // Judge jobs run as tasks of their own and report here; the loop forwards their messages
    // between requests.
    #[cfg(target_arch = "wasm32")]
    let mut jobs = crate::engine::judges::worker::Jobs::default();
    // The lost-in-the-middle page's remote model: a task of its own, reporting like judge jobs.
    #[cfg(target_arch = "wasm32")]
    let mut remote = crate::engine::litm_remote::worker::RemoteRuns::default();
    let (judge_out, mut judge_in) = futures::channel::mpsc::unbounded::<Response>();
    #[cfg(not(target_arch = "wasm32"))]
    drop(judge_out);
    loop {
        let request = if let Some(request) = pending.pop_front() {
            request
        } else {
            match select(scope.next(), judge_in.next()).await {
                Either::Left((Some(request), _)) => request,
                Either::Left((None, _)) => return,
                Either::Right((Some(message), _)) => {
                    if scope.send(message).await.is_err() {
                        return;
                    }
                    continue;
                }
                // Cannot happen while `judge_out` lives; if it did, wait for requests alone.
                Either::Right((None, _)) => match scope.next().await {
                    Some(request) => request,
                    None => return,
                },
            }
        };
        // A run read in two places: the part the helper read is parsed here before any
        // request that needs the whole run, and right after the evaluation that did not.
        #[cfg(target_arch = "wasm32")]
        if workspace.tail().is_some()
            && !workspace.answers_without_tail(&request)
            && !parse_tail(&mut scope, &mut workspace).await
        {
            return;
        }
        #[cfg(target_arch = "wasm32")]
        let evaluation = matches!(request, Request::Evaluate(_));
        #[cfg(target_arch = "wasm32")]
        let mut evaluated_ahead = false;
        let responses = match request {
            #[cfg(target_arch = "wasm32")]
            Request::Helper { script_url } => {
                crate::engine::shard::start(&script_url);
                vec![]
            }
            #[cfg(target_arch = "wasm32")]
            Request::Files { channel } => {
                ragscope_platform::blob_channel::join_files_channel(&channel);
                vec![]
            }
            // The utility task's GGUF: its metadata read from the picked file's Blob.
            #[cfg(target_arch = "wasm32")]
            Request::Judge(ragscope_protocol::judges::JudgeRequest::ReadGguf { id, url, name }) => {
                vec![
                    apart(crate::engine::judges::worker::read_gguf(
                        &mut workspace,
                        id,
                        &url,
                        &name,
                    ))
                    .await,
                ]
            }
            #[cfg(target_arch = "wasm32")]
            Request::Judge(request) => {
                jobs.handle(&workspace, request, &judge_out);
                vec![]
            }
            #[cfg(target_arch = "wasm32")]
            Request::Clear => {
                jobs.cancel_all();
                crate::engine::judges::tab_cache::forget();
                workspace.handle(Request::Clear)
            }
            // A picked file, read here slice by slice (no byte crosses the UI thread).
            #[cfg(target_arch = "wasm32")]
            Request::LoadBlob { id, name, url } => {
                use crate::engine::blob_load;
                let load = blob_load::load(&mut scope, &mut workspace, &mut pending, id, name, url);
                let Some(loaded) = apart(load).await else {
                    return;
                };
                let ahead = if loaded.iter().any(|r| matches!(r, Response::Loaded { .. })) {
                    match evaluate_ahead(&mut scope, &mut workspace, &mut pending).await {
                        Some(ahead) => ahead,
                        None => return,
                    }
                } else {
                    vec![]
                };
                evaluated_ahead = !ahead.is_empty();
                // the report first: the page keeps it, and takes it when it asks, right after
                // it shows the file (src/ui/state.rs)
                ahead.into_iter().chain(loaded).collect()
            }
            // Scored one run at a time, yielding between runs so progress reaches the page.
            Request::Evaluate(req) => {
                let generation = req.generation;
                let clock = EvalClock::start();
                match workspace.start_evaluation(req) {
                    Ok(evaluation) => {
                        match evaluate(&mut scope, &mut workspace, evaluation, clock).await {
                            Some(responses) => responses,
                            None => return,
                        }
                    }
                    Err(error) => vec![Response::EvalFailed { generation, error }],
                }
            }
            // Compute locally: model from the picked file, utilities step by step (pause/cancel).
            #[cfg(target_arch = "wasm32")]
            Request::Compute(c) => {
                if !apart(crate::engine::inference::web::drive(
                    &mut scope,
                    &mut workspace,
                    c,
                ))
                .await
                {
                    return;
                }
                vec![]
            }
            #[cfg(target_arch = "wasm32")]
            Request::Litm(r) if r.is_remote() => {
                remote.handle(&workspace, r, &judge_out);
                vec![]
            }
            // The lost-in-the-middle page: one context per step (cancel between steps). Cancel
            // stops a remote run too.
            #[cfg(target_arch = "wasm32")]
            Request::Litm(r) => {
                if matches!(r, ragscope_protocol::litm::LitmRequest::Cancel) {
                    remote.cancel();
                }
                let drive =
                    crate::engine::inference::litm_web::drive(&mut scope, &mut workspace, r);
                if !apart(drive).await {
                    return;
                }
                vec![]
            }
            other => workspace.handle(other),
        };
        for response in responses {
            if scope.send(response).await.is_err() {
                return;
            }
        }
        #[cfg(target_arch = "wasm32")]
        if (evaluation || evaluated_ahead)
            && workspace.tail().is_some()
            && !parse_tail(&mut scope, &mut workspace).await
        {
            return;
        }
    }
}

/// How long the run's whole parse waits after the report is sent. Meanwhile the page decodes the
/// report and lays it out, on a core that the parse, and the browser reading the file for it,
/// would take. The perf flow (`ab-builds.mjs`, 11 rounds, the build before alternating): the
/// report on the page 100 -> 96 ms after the change event, the row 104 -> 100 ms; a request
/// that needs the whole run waits this much longer.
#[cfg(target_arch = "wasm32")]
const TAIL_AFTER_MS: u32 = 30;

/// Parses whole a run whose two parts were only scored (crates/worker/src/engine/split_run.rs), so
/// the workspace holds the whole run. False when the page went away.
///
/// What was sent goes out first: `scope.send` only queues a response for a task that posts it
/// when this one next waits, and the tail's first step (writing its memory) would hold it
/// back (a trace of the perf flow: 7 ms between the report built and the page receiving it).
/// Then it waits [`TAIL_AFTER_MS`] for the page to show the report.
#[cfg(target_arch = "wasm32")]
async fn parse_tail(scope: &mut ReactorScope<Request, Response>, ws: &mut Workspace) -> bool {
    gloo::timers::future::TimeoutFuture::new(TAIL_AFTER_MS).await;
    apart(crate::engine::blob_load::complete_tail(scope, ws)).await
}

/// Scores `evaluation` one run at a time, yielding between runs so progress reaches the page;
/// the report and its timings. `None` when the page went away.
async fn evaluate(
    scope: &mut ReactorScope<Request, Response>,
    workspace: &mut Workspace,
    mut evaluation: crate::engine::Evaluation,
    clock: EvalClock,
) -> Option<Vec<Response>> {
    let generation = evaluation.generation();
    let mut scoring_ms = 0.0;
    let mut t = clock.now();
    while let Some((done, total)) = evaluation.step(workspace) {
        scoring_ms += clock.now() - t;
        let progress = Response::EvalProgress {
            generation,
            done,
            total,
        };
        scope.send(progress).await.ok()?;
        yield_now().await;
        t = clock.now();
    }
    let finish = clock.now();
    let reused = evaluation.reused();
    let report = evaluation.finish(workspace);
    let timings = clock.timings(scoring_ms, clock.now() - finish, &report, reused);
    Some(vec![Response::Report(Box::new(report)), timings])
}

/// After a load, before `Loaded` is sent: the evaluation the page asks for once it has shown
/// the file. Otherwise the page would show the file, ask, and wait for the answer while it
/// lays out the new state (12–15 ms from `Loaded` to the row in the perf test). Only when no
/// request waits (those that came meanwhile go first) and the workspace says what the report
/// is of ([`Workspace::evaluation_ahead`]); the page takes the report only for an evaluation
/// of exactly that, and the worker answers the page's request as any other. Empty when there
/// is nothing to evaluate ahead; `None` when the page went away.
#[cfg(target_arch = "wasm32")]
async fn evaluate_ahead(
    scope: &mut ReactorScope<Request, Response>,
    workspace: &mut Workspace,
    pending: &mut std::collections::VecDeque<Request>,
) -> Option<Vec<Response>> {
    if !pending.is_empty() {
        return Some(vec![]);
    }
    // requests posted before the load ended arrive now
    pending.extend(crate::engine::blob_load::arrived_requests(scope).await?);
    if !pending.is_empty() {
        return Some(vec![]);
    }
    let clock = EvalClock::start();
    let Some((evaluation, of)) = workspace.evaluation_ahead() else {
        return Some(vec![]);
    };
    let mut responses = evaluate(scope, workspace, evaluation, clock).await?;
    for response in &mut responses {
        match response {
            Response::Report(report) => report.ahead_of = Some(of.clone()),
            Response::Timings(t) => t.what = format!("{} (ahead of the request)", t.what),
            _ => {}
        }
    }
    Some(responses)
}

/// Times an evaluation for `Response::Timings` (the performance test reads them).
struct EvalClock {
    start: f64,
}

impl EvalClock {
    fn start() -> Self {
        EvalClock {
            start: Self::wall(),
        }
    }

    fn wall() -> f64 {
        #[cfg(target_arch = "wasm32")]
        return crate::engine::blob_load::wall_ms();
        #[cfg(not(target_arch = "wasm32"))]
        return 0.0;
    }

    fn now(&self) -> f64 {
        Self::wall()
    }

    /// Scoring summed over the runs; the rest (significance, tables of the report) after it.
    fn timings(
        &self,
        scoring_ms: f64,
        report_ms: f64,
        report: &ragscope_protocol::Report,
        reused: usize,
    ) -> Response {
        let end = Self::wall();
        #[cfg(target_arch = "wasm32")]
        let wasm_memory_bytes = crate::engine::blob_load::wasm_memory_bytes();
        #[cfg(not(target_arch = "wasm32"))]
        let wasm_memory_bytes = 0;
        Response::Timings(ragscope_protocol::Timings {
            what: format!(
                "evaluate {} runs ({reused} kept from the last evaluation)",
                report.runs.len()
            ),
            start_ms: self.start,
            end_ms: end,
            phases: vec![
                ("score".into(), scoring_ms),
                ("report (significance, per-query tables)".into(), report_ms),
            ],
            wasm_memory_bytes,
        })
    }
}

/// A request's long-running work as a future of its own behind a pointer, so that its code is
/// not inlined into this reactor's state machine. V8 compiles a wasm function again with its
/// optimising tier once it has run enough, on a background thread, and with every such
/// future inlined this reactor's function was 27 KB of wasm: a profile of the perf test's
/// flow (Chromium's trace with `--trace-wasm-compilation-times`) showed its TurboFan compile
/// take 60–90 ms of the second core while the worker parsed the run.
#[cfg(target_arch = "wasm32")]
fn apart<'a, T: 'a>(
    work: impl std::future::Future<Output = T> + 'a,
) -> futures::future::LocalBoxFuture<'a, T> {
    Box::pin(work)
}

/// Lets the worker's event loop run (posting queued messages) before continuing.
async fn yield_now() {
    gloo::timers::future::TimeoutFuture::new(0).await;
}

#[cfg(test)]
mod tests {
    use super::EvalReactor;
    use std::any::TypeId;
    use yew_agent::reactor::Reactor;

    /// The page bridges to this worker through its own handle (src/worker_link.rs), which
    /// knows the messages and not the code: both must have one scope, or the page would encode
    /// requests this reactor cannot decode.
    #[test]
    fn the_pages_handle_speaks_this_reactors_messages() {
        assert_eq!(
            TypeId::of::<<EvalReactor as Reactor>::Scope>(),
            TypeId::of::<<ragscope_web::worker_link::EvalWorker as Reactor>::Scope>()
        );
    }
}
