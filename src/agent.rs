//! The evaluation worker: a yew-agent reactor that owns an [`engine::Workspace`].

use crate::engine::Workspace;
use crate::protocol::{Request, Response};
use futures::future::{select, Either};
use futures::{SinkExt, StreamExt};
use yew_agent::reactor::{reactor, ReactorScope};

#[reactor(EvalReactor)]
pub async fn eval_reactor(mut scope: ReactorScope<Request, Response>) {
    let mut workspace = Workspace::default();
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
        let request = match select(scope.next(), judge_in.next()).await {
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
        };
        let responses = match request {
            // The utility task's GGUF: its metadata read from the picked file's Blob.
            #[cfg(target_arch = "wasm32")]
            Request::Judge(crate::protocol::judges::JudgeRequest::ReadGguf { id, url, name }) => {
                vec![
                    crate::engine::judges::worker::read_gguf(&mut workspace, id, &url, &name).await,
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
                workspace.handle(Request::Clear)
            }
            // Scored one run at a time, yielding between runs so progress reaches the page.
            Request::Evaluate(req) => {
                let generation = req.generation;
                match workspace.start_evaluation(req) {
                    Ok(mut evaluation) => {
                        while let Some((done, total)) = evaluation.step(&workspace) {
                            let progress = Response::EvalProgress {
                                generation,
                                done,
                                total,
                            };
                            if scope.send(progress).await.is_err() {
                                return;
                            }
                            yield_now().await;
                        }
                        vec![Response::Report(Box::new(evaluation.finish(&workspace)))]
                    }
                    Err(error) => vec![Response::EvalFailed { generation, error }],
                }
            }
            // Compute locally: model from the picked file, utilities step by step (pause/cancel).
            #[cfg(target_arch = "wasm32")]
            Request::Compute(c) => {
                if !crate::engine::inference::web::drive(&mut scope, &mut workspace, c).await {
                    return;
                }
                vec![]
            }
            #[cfg(target_arch = "wasm32")]
            Request::Litm(r) if r.is_remote() => {
                remote.handle(r, &judge_out);
                vec![]
            }
            // The lost-in-the-middle page: one context per step (cancel between steps). Cancel
            // stops a remote run too.
            #[cfg(target_arch = "wasm32")]
            Request::Litm(r) => {
                if matches!(r, crate::protocol::litm::LitmRequest::Cancel) {
                    remote.cancel();
                }
                if !crate::engine::inference::litm_web::drive(&mut scope, &mut workspace, r).await {
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
    }
}

/// Lets the worker's event loop run (posting queued messages) before continuing.
async fn yield_now() {
    gloo::timers::future::TimeoutFuture::new(0).await;
}
