//! Judge jobs in the browser worker: each job runs as its own task (so the worker keeps loading
//! files and evaluating meanwhile) and reports through a channel the reactor forwards to the
//! page. Requests go out with `fetch` from the worker; replies are cached in IndexedDB when the
//! user consented (`JudgeSpec::keep_replies`), else in the tab's memory (`tab_cache`).

use super::fetch::{FetchTransport, WorkerRuntime};
use super::idb_cache::IdbCache;
use super::job_controls::JobControls;
use super::{batch, idb_cache, job, tab_cache};
use crate::engine::Workspace;
use futures::channel::mpsc::UnboundedSender;
use ragscope_judge::{ApiKey, Env};
use ragscope_protocol::judges::{JudgeRequest, JudgeResponse};
use ragscope_protocol::Response;
use std::rc::Rc;

/// The jobs running in this worker, by id, with their pause/resume/cancel handle.
#[derive(Default)]
pub struct Jobs {
    controls: JobControls,
}

impl Jobs {
    /// Handles a judge request; answers go to `out` (now or later).
    pub fn handle(
        &mut self,
        workspace: &Workspace,
        request: JudgeRequest,
        out: &UnboundedSender<Response>,
    ) {
        let send = {
            let out = out.clone();
            move |r: JudgeResponse| {
                let _ = out.unbounded_send(Response::Judge(r));
            }
        };
        match request {
            JudgeRequest::Estimate { ticket, spec } => {
                match workspace.prepare_judge(&spec, None, true) {
                    Ok(prepared) => {
                        let env = env(&prepared, spec.keep_replies);
                        wasm_bindgen_futures::spawn_local(async move {
                            send(job::estimate(&prepared, &env, ticket).await);
                        });
                    }
                    Err(error) => send(JudgeResponse::EstimateFailed { ticket, error }),
                }
            }
            JudgeRequest::Start { job, spec, key } => {
                let key = key.map(|k| ApiKey::new(k.0));
                match workspace.prepare_judge(&spec, key, false) {
                    Ok(mut prepared) => {
                        // Dropped when the task ends, which takes the handle out of the table.
                        let running = self.controls.start(job);
                        let control = running.control.clone();
                        let mut env = env(&prepared, spec.keep_replies);
                        wasm_bindgen_futures::spawn_local(async move {
                            let _running = running;
                            if spec.batch {
                                // The first round through the batch API; its replies land in
                                // the cache and the run below parses them like any reply.
                                let r = batch::batch_env_until_cancelled(
                                    job,
                                    &prepared.job,
                                    &env,
                                    &prepared.opts,
                                    &batch::options(),
                                    &control,
                                    &mut |u| send(JudgeResponse::Batch(u)),
                                )
                                .await;
                                match r {
                                    Ok((quiet, usage)) => {
                                        env = quiet;
                                        prepared.batch_usage = usage;
                                    }
                                    Err(error) => {
                                        send(JudgeResponse::Failed { job, error });
                                        return;
                                    }
                                }
                            }
                            let now_s = || js_sys::Date::now() / 1000.0;
                            job::run(prepared, env, control, job, now_s, send).await;
                        });
                    }
                    Err(error) => send(JudgeResponse::Failed { job, error }),
                }
            }
            JudgeRequest::KeptBatches => {
                wasm_bindgen_futures::spawn_local(async move {
                    // An unreadable cache lists nothing: the batches are still found when the
                    // job is started again.
                    let states = idb_cache::batch_states().await.unwrap_or_default();
                    send(JudgeResponse::KeptBatches(batch::kept_runs(&states).0));
                });
            }
            JudgeRequest::Pause { job } => {
                if let Some(c) = self.controls.get(job) {
                    c.pause();
                }
            }
            JudgeRequest::Resume { job } => {
                if let Some(c) = self.controls.get(job) {
                    c.resume();
                }
            }
            JudgeRequest::Cancel { job } => {
                if let Some(c) = self.controls.remove(job) {
                    c.cancel();
                }
            }
            // Needs the workspace mutably: the reactor calls [`read_gguf`] instead.
            JudgeRequest::ReadGguf { .. } => {}
        }
    }

    /// "Forget everything": every job stops sending.
    pub fn cancel_all(&mut self) {
        for c in self.controls.drain() {
            c.cancel();
        }
    }
}

/// `keep`: the user's consent to keep replies and batch ids in IndexedDB.
fn env(prepared: &job::PreparedJob, keep: bool) -> Env {
    Env {
        provider: prepared.env_provider(),
        transport: Rc::new(FetchTransport),
        runtime: Rc::new(WorkerRuntime),
        cache: tab_cache::choose(keep, || Rc::new(IdbCache)),
    }
}

/// Reads the metadata of the GGUF the page offers (slices of the Blob: the tensors
/// are never read) for the utility task's chat template and tokenizer.
pub async fn read_gguf(ws: &mut Workspace, id: u32, url: &str, name: &str) -> Response {
    let response = match crate::engine::inference::web::blob_from_url(url).await {
        Ok(blob) => match crate::blob_source::BlobSource::new(blob) {
            Ok(src) => ws.read_judge_gguf(id, name, &src),
            Err(e) => JudgeResponse::GgufRead {
                id,
                result: Err(format!("{name}: {e}")),
            },
        },
        Err(e) => JudgeResponse::GgufRead {
            id,
            result: Err(format!("{name}: cannot read the picked file: {e}")),
        },
    };
    Response::Judge(response)
}
