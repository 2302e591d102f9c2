//! The lost-in-the-middle experiment in the browser's worker: the job of `litm.rs` stepped one
//! question's utilities or one context at a time, on WebGPU (crates/infer's wgpu backend: the
//! token probability read back on the GPU, greedy decoding with the KV cache on the GPU) or on
//! the CPU engine, reading cancel between steps. A WebGPU failure moves the rest of the run to
//! the CPU (said in a backend message); nothing computed is lost.

use super::gpu::{self, GpuSlot};
use super::litm::{no_response_token, Work};
use super::web::{choose_backend, now_seconds};
use super::CPU_LABEL;
use crate::engine::Workspace;
use futures::{FutureExt, SinkExt, StreamExt};
use ragscope_protocol::compute::{BackendInfo, ComputeEvent, ComputeRequest};
use ragscope_protocol::litm::{LitmEvent, LitmRequest};
use ragscope_protocol::{Request, Response};
use yew_agent::reactor::ReactorScope;

type Scope = ReactorScope<Request, Response>;

async fn send(scope: &mut Scope, r: Response) -> bool {
    scope.send(r).await.is_ok()
}

/// Handles one request of the page; false when the page has gone (the reactor then stops).
pub async fn drive(scope: &mut Scope, ws: &mut Workspace, request: LitmRequest) -> bool {
    let backend = match &request {
        // Outside a run there is nothing to cancel.
        LitmRequest::Cancel => return true,
        LitmRequest::Start { backend, .. } => *backend,
        // The remote runner's (see crates/worker/src/agent.rs).
        _ => return true,
    };
    if let Err(e) = ws.start_litm(request) {
        return send(scope, Response::Litm(LitmEvent::Failed(e))).await;
    }
    let info = choose_backend(ws, backend).await;
    if let Some(job) = ws.litm_job() {
        job.on_gpu = info.gpu;
    }
    if !send(scope, Response::Litm(LitmEvent::Backend(info))).await {
        return false;
    }
    run(scope, ws).await
}

/// One step on WebGPU: the event it produced, `None` when the job is finished.
async fn gpu_step(ws: &mut Workspace) -> Result<Option<LitmEvent>, String> {
    let (Some(local), Some(job)) = (ws.local.as_ref(), ws.litm.as_mut()) else {
        return Err("nothing to compute".into());
    };
    let GpuSlot::Ready(g) = &local.gpu else {
        return Err("no WebGPU device".into());
    };
    let gpu_err = |e: ragscope_infer::gpu::GpuError| format!("WebGPU: {}", gpu::reason(&e));
    match job.next_work(local)? {
        Work::Finished => Ok(None),
        Work::Utilities { q, prompts } => {
            let target = no_response_token(local)?;
            let refs: Vec<&[u32]> = prompts.iter().map(Vec::as_slice).collect();
            let p = g
                .prefill_token_probs(&local.model, &refs, &vec![target; refs.len()])
                .await
                .map_err(gpu_err)?;
            Ok(Some(job.record_utilities(
                q,
                p.into_iter().map(f64::from).collect(),
            )))
        }
        Work::Context {
            task,
            prompt,
            want_p,
        } => {
            let p = if want_p {
                let target = no_response_token(local)?;
                g.prefill_token_probs(&local.model, &[prompt.as_slice()], &[target])
                    .await
                    .map_err(gpu_err)?
                    .first()
                    .map(|&p| f64::from(p))
            } else {
                None
            };
            let answer = g
                .greedy(
                    &local.model,
                    &local.tokenizer,
                    &[prompt.as_slice()],
                    &job.options,
                )
                .await
                .map_err(gpu_err)?
                .into_iter()
                .next()
                .map(|g| g.text)
                .unwrap_or_default();
            Ok(Some(job.record_context(task, answer, p, prompt.len())))
        }
    }
}

enum Next {
    Go,
    Stop,
    Gone,
}

/// Messages that arrive during a run: cancel stops it; another start or model is refused.
async fn on_message(scope: &mut Scope, ws: &mut Workspace, message: Option<Request>) -> Next {
    let response = match message {
        None => return Next::Gone,
        Some(Request::Litm(LitmRequest::Cancel)) => {
            let done = ws.end_litm().map_or(0, |j| j.done());
            return if send(scope, Response::Litm(LitmEvent::Cancelled { done })).await {
                Next::Stop
            } else {
                Next::Gone
            };
        }
        Some(Request::Litm(LitmRequest::Start { .. })) => Some(Response::Litm(LitmEvent::Failed(
            "an experiment is already running; cancel it first".into(),
        ))),
        Some(Request::Compute(ComputeRequest::OpenModel { name, .. })) => {
            Some(Response::Compute(ComputeEvent::ModelFailed(format!(
                "{name}: an experiment is running; cancel it first to open another model"
            ))))
        }
        Some(Request::Compute(_)) => None,
        Some(other) => {
            for r in ws.handle(other) {
                if !send(scope, r).await {
                    return Next::Gone;
                }
            }
            None
        }
    };
    match response {
        Some(r) => {
            if send(scope, r).await {
                Next::Go
            } else {
                Next::Gone
            }
        }
        None => Next::Go,
    }
}

/// Progress messages at most this often: each one re-renders the page.
const PROGRESS_EVERY_S: f64 = 0.2;

async fn run(scope: &mut Scope, ws: &mut Workspace) -> bool {
    let mut last_progress = f64::NEG_INFINITY;
    loop {
        // Let the worker's event loop deliver queued messages (and post ours), then read them.
        gloo::timers::future::TimeoutFuture::new(0).await;
        while let Some(message) = scope.next().now_or_never() {
            match on_message(scope, ws, message).await {
                Next::Go => {}
                Next::Stop => return true,
                Next::Gone => return false,
            }
        }
        let Some(job) = ws.litm_job() else {
            return true;
        };
        let on_gpu = job.on_gpu;
        let start = now_seconds();
        let mut stepped = if on_gpu {
            gpu_step(ws).await
        } else {
            ws.litm_step_cpu()
        };
        if on_gpu {
            if let Err(e) = &stepped {
                if e.starts_with("WebGPU") {
                    // The rest of the run on the CPU; this step again there.
                    let info = BackendInfo {
                        gpu: false,
                        label: CPU_LABEL.into(),
                        reason: format!("{e}; the rest of the run is computed on the CPU"),
                    };
                    if let Some(job) = ws.litm_job() {
                        job.on_gpu = false;
                    }
                    if !send(scope, Response::Litm(LitmEvent::Backend(info))).await {
                        return false;
                    }
                    stepped = ws.litm_step_cpu();
                }
            }
        }
        let Some(job) = ws.litm_job() else {
            return true;
        };
        job.seconds += now_seconds() - start;
        let progress = job.progress();
        match stepped {
            Ok(Some(event)) => {
                if !send(scope, Response::Litm(event)).await {
                    return false;
                }
            }
            Ok(None) => {
                let seconds = ws.end_litm().map_or(0.0, |j| j.seconds);
                return send(scope, Response::Litm(LitmEvent::Done { seconds })).await;
            }
            Err(e) => {
                ws.end_litm();
                return send(scope, Response::Litm(LitmEvent::Failed(e))).await;
            }
        }
        let now = now_seconds();
        if now - last_progress >= PROGRESS_EVERY_S {
            last_progress = now;
            if !send(scope, Response::Litm(progress)).await {
                return false;
            }
        }
    }
}
