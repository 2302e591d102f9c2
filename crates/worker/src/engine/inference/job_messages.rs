//! The page's messages read between the steps of a running compute job (utilities: web.rs;
//! answers: answering_web.rs), answered alike for both: pause/resume, cancel, the GPU probe, the
//! lost-GPU test hook, a refused model or start, and everything else handled as usual (files
//! keep loading and evaluations keep running between steps).

use super::gpu;
use super::web::{probe_gpu, send};
use crate::engine::Workspace;
use futures::{FutureExt, StreamExt};
use ragscope_protocol::compute::{ComputeEvent, ComputeRequest};
use ragscope_protocol::{Request, Response};
use yew_agent::reactor::ReactorScope;

type Scope = ReactorScope<Request, Response>;

/// What the loop does once the messages are read.
pub(super) enum Next {
    /// The next step.
    Go,
    /// The job was cancelled (already reported).
    Stop,
    /// The page has gone.
    Gone,
}

/// What differs between the jobs in those answers.
pub(super) trait RunningJob {
    /// What is being computed, as the refusal to open another model names it.
    const WHAT: &'static str;
    /// Whether the job waits for Resume (false without a job).
    fn paused(ws: &mut Workspace) -> bool;
    /// Pauses or resumes the job: its progress event, none without a job.
    fn set_paused(ws: &mut Workspace, pause: bool) -> Option<Response>;
    /// Ends the job: the message that says so, if any.
    fn cancel(ws: &mut Workspace) -> Option<Response>;
    /// The refusal of another `Start` or `Answer` request.
    fn refuse(request: &ComputeRequest) -> Response;
}

/// Reads the page's queued messages; while the job is paused, waits for them.
pub(super) async fn read_messages<J: RunningJob>(scope: &mut Scope, ws: &mut Workspace) -> Next {
    loop {
        let message = if J::paused(ws) {
            Some(scope.next().await)
        } else {
            scope.next().now_or_never()
        };
        let Some(message) = message else {
            return Next::Go;
        };
        match on_message::<J>(scope, ws, message).await {
            Next::Go => {}
            end => return end,
        }
    }
}

async fn on_message<J: RunningJob>(
    scope: &mut Scope,
    ws: &mut Workspace,
    message: Option<Request>,
) -> Next {
    let Some(request) = message else {
        return Next::Gone;
    };
    let responses: Vec<Response> = match request {
        Request::Compute(ComputeRequest::Pause) => J::set_paused(ws, true).into_iter().collect(),
        Request::Compute(ComputeRequest::Resume) => J::set_paused(ws, false).into_iter().collect(),
        Request::Compute(ComputeRequest::Cancel) => {
            if let Some(r) = J::cancel(ws) {
                if !send(scope, r).await {
                    return Next::Gone;
                }
            }
            return Next::Stop;
        }
        Request::Compute(ComputeRequest::ProbeGpu) => {
            vec![Response::Compute(ComputeEvent::Gpu(probe_gpu().await))]
        }
        Request::Compute(ComputeRequest::LoseGpu) => {
            if let Some(local) = &ws.local {
                gpu::lose_device(local);
            }
            vec![]
        }
        Request::Compute(ComputeRequest::OpenModel { name, .. }) => {
            vec![Response::Compute(ComputeEvent::ModelFailed(format!(
                "{name}: {} are being computed; cancel first to open another model",
                J::WHAT
            )))]
        }
        Request::Compute(r @ (ComputeRequest::Start { .. } | ComputeRequest::Answer(_))) => {
            vec![J::refuse(&r)]
        }
        other => ws.handle(other),
    };
    for r in responses {
        if !send(scope, r).await {
            return Next::Gone;
        }
    }
    Next::Go
}
