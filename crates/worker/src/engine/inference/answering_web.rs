//! "Answer the contexts" in the worker's event loop: the backend chosen as for utilities
//! (WebGPU on a GPU, else the CPU, with the reason), one step at a time (one prompt on the CPU,
//! up to eight prompts of a question per GPU step, decoding batched over them), progress with
//! tokens/s and the outcomes so far, pause/resume/cancel read between steps. A paused run keeps
//! everything answered; a GPU that fails mid-run is retried once on a new device, then the run
//! continues on the CPU (answers are the same token for token: the GPU decoder is checked against
//! the CPU engine), saying why. A step that runs out of GPU memory is retried with half as many
//! prompts on a new device (halved again while they still run out), and the run keeps that size.

use super::answering::AnswerJob;
use super::answering::GPU_STEP_PROMPTS;
use super::gpu::{self, GaveUp, GpuSlot, StepError};
use super::job_messages::{read_messages, Next, RunningJob};
use super::web::{choose_backend, now_seconds, send};
use super::LocalModel;
use super::CPU_LABEL;
use crate::engine::Workspace;
use ragscope_infer::gpu::GpuError;
use ragscope_protocol::answer_generation::{AnswerEvent, AnswerStart};
use ragscope_protocol::compute::{BackendInfo, ComputeEvent, ComputeRequest};
use ragscope_protocol::{Request, Response};
use yew_agent::reactor::ReactorScope;

type Scope = ReactorScope<Request, Response>;

fn event(e: AnswerEvent) -> Response {
    Response::Compute(ComputeEvent::Answers(e))
}

/// Runs an answer job to its end (or cancel); false when the page has gone.
pub async fn drive(scope: &mut Scope, ws: &mut Workspace, start: AnswerStart) -> bool {
    if let Err(e) = ws.start_answers(&start) {
        return send(scope, event(AnswerEvent::Failed(e))).await;
    }
    let info = choose_backend(ws, start.backend).await;
    if let Some(job) = ws.answer_job() {
        job.use_backend(&info.label, info.gpu);
    }
    if !send(scope, event(AnswerEvent::Backend(info))).await {
        return false;
    }
    run(scope, ws).await
}

/// Answers the next prompts of the current question on the GPU.
async fn gpu_step(local: &LocalModel, job: &mut AnswerJob) -> Result<(), StepError> {
    let GpuSlot::Ready(g) = &local.gpu else {
        return Err(StepError::Gpu(
            GpuError::DeviceLost("no WebGPU device".into()),
            0,
        ));
    };
    let batch = local
        .gpu_room
        .batch(GPU_STEP_PROMPTS.min(g.max_batch_prompts()));
    let prompts = job.next_prompts(local, batch).map_err(StepError::Prompt)?;
    if prompts.is_empty() {
        return Ok(());
    }
    let refs: Vec<&[u32]> = prompts.iter().map(Vec::as_slice).collect();
    if let Some(e) = local.gpu_room.simulated_failure(refs.len()) {
        return Err(StepError::Gpu(e, refs.len()));
    }
    let out = g
        .greedy(&local.model, &local.tokenizer, &refs, job.options())
        .await
        .map_err(|e| StepError::Gpu(e, refs.len()))?;
    job.record(&out);
    Ok(())
}

/// One GPU step with the recovery policy: a lost device is replaced once and the step retried;
/// a second failure (or any other GPU error) moves the run to the CPU. The new backend, when it
/// changed, is returned for the panel.
async fn gpu_step_with_recovery(ws: &mut Workspace) -> Result<Option<BackendInfo>, String> {
    let (Some(local), Some(job)) = (ws.local.as_mut(), ws.answering.job.as_mut()) else {
        return Err("nothing to answer".into());
    };
    let (first, batch) = match gpu_step(local, job).await {
        Ok(()) => return Ok(None),
        Err(StepError::Prompt(e)) => return Err(e),
        Err(StepError::Gpu(e, batch)) => (e, batch),
    };
    let failure = if matches!(first, GpuError::OutOfMemory(_)) && batch > 1 {
        let smaller =
            gpu::in_smaller_steps(local, batch, async |l: &LocalModel| gpu_step(l, job).await);
        match smaller.await {
            Ok(((), room, label)) => {
                return Ok(Some(BackendInfo {
                    gpu: true,
                    label,
                    reason: format!(
                        "the WebGPU device ran out of memory on a step of {batch} prompts; steps \
                         of {room} on a new device worked, and the run goes on with them"
                    ),
                }))
            }
            Err(GaveUp::Prompt(e)) => return Err(e),
            Err(GaveUp::Gpu(why)) => format!("{first}; {why}"),
        }
    } else if first.is_device_failure() {
        local.gpu = GpuSlot::Untried;
        match gpu::ensure(local).await {
            Ok(label) => match gpu_step(local, job).await {
                Ok(()) => {
                    return Ok(Some(BackendInfo {
                        gpu: true,
                        label,
                        reason: format!(
                            "the WebGPU device failed mid-run ({first}); the step was retried on a new device, which worked"
                        ),
                    }))
                }
                Err(StepError::Prompt(e)) => return Err(e),
                Err(StepError::Gpu(again, _)) => {
                    format!("{first}; again on a new device: {again}")
                }
            },
            Err(why) => format!("{first}; no new device: {why}"),
        }
    } else {
        gpu::reason(&first)
    };
    local.gpu = GpuSlot::Failed(failure.clone());
    job.use_backend(CPU_LABEL, false);
    Ok(Some(BackendInfo {
        gpu: false,
        label: CPU_LABEL.into(),
        reason: format!(
            "WebGPU failed mid-run ({failure}); continuing on the CPU (the same answers), the {} answers already computed are kept",
            job.progress.done
        ),
    }))
}

/// One answer step on the GPU with the recovery policy (tests drive the job with it).
impl Workspace {
    pub async fn answer_step_gpu(&mut self) -> Result<Option<BackendInfo>, String> {
        gpu_step_with_recovery(self).await
    }
}

/// Progress messages at most this often: each one re-renders the page.
const PROGRESS_EVERY_S: f64 = 0.1;

/// The answer job, as the messages between its steps see it.
struct Answers;

impl RunningJob for Answers {
    const WHAT: &'static str = "answers";

    fn paused(ws: &mut Workspace) -> bool {
        ws.answer_job().is_some_and(|j| j.progress.paused)
    }

    fn set_paused(ws: &mut Workspace, pause: bool) -> Option<Response> {
        let job = ws.answer_job()?;
        job.progress.paused = pause;
        Some(event(AnswerEvent::Progress(job.progress)))
    }

    fn cancel(ws: &mut Workspace) -> Option<Response> {
        ws.cancel_answers()
    }

    fn refuse(request: &ComputeRequest) -> Response {
        match request {
            ComputeRequest::Answer(_) => event(AnswerEvent::Failed(
                "answers are already being computed".into(),
            )),
            _ => Response::Compute(ComputeEvent::Failed(
                "answers are being computed; wait or cancel them first".into(),
            )),
        }
    }
}

async fn run(scope: &mut Scope, ws: &mut Workspace) -> bool {
    let mut last_progress = f64::NEG_INFINITY;
    loop {
        // Let the worker's event loop deliver queued messages (and post ours), then read them.
        gloo::timers::future::TimeoutFuture::new(0).await;
        match read_messages::<Answers>(scope, ws).await {
            Next::Go => {}
            Next::Stop => return true,
            Next::Gone => return false,
        }
        let Some(job) = ws.answer_job() else {
            return true;
        };
        if job.is_done() {
            for r in ws.finish_answers() {
                if !send(scope, r).await {
                    return false;
                }
            }
            return true;
        }
        let on_gpu = job.on_gpu;
        let start = now_seconds();
        let stepped = if on_gpu {
            gpu_step_with_recovery(ws).await
        } else {
            ws.answer_step_cpu().map(|()| None)
        };
        let Some(job) = ws.answer_job() else {
            return true;
        };
        job.add_seconds(now_seconds() - start);
        let progress = job.progress;
        match stepped {
            Ok(None) => {}
            Ok(Some(info)) => {
                if !send(scope, event(AnswerEvent::Backend(info))).await {
                    return false;
                }
            }
            Err(e) => {
                let _ = ws.cancel_answers();
                return send(scope, event(AnswerEvent::Failed(e))).await;
            }
        }
        let now = now_seconds();
        if now - last_progress >= PROGRESS_EVERY_S {
            last_progress = now;
            if !send(scope, event(AnswerEvent::Progress(progress))).await {
                return false;
            }
        }
    }
}
