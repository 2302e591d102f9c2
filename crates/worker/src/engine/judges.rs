//! LLM judges in the worker: the input files (topics, passages) and the judge jobs, which run
//! on crates/judge with the browser's `fetch` as transport and IndexedDB as cache.

pub mod batch;
#[cfg(target_arch = "wasm32")]
pub(crate) mod fetch;
mod files;
mod grades_view;
#[cfg(target_arch = "wasm32")]
pub(crate) mod idb_cache;
pub mod job;
#[cfg(any(target_arch = "wasm32", test))]
pub mod job_controls;
#[cfg(test)]
mod job_tests;
#[cfg(any(target_arch = "wasm32", test))]
pub(crate) mod tab_cache;
mod tasks;
#[cfg(test)]
mod tasks_tests;
mod utility;
#[cfg(test)]
mod utility_tests;
#[cfg(target_arch = "wasm32")]
pub mod worker;

pub use files::JudgeFiles;

use super::Workspace;
use futures::future::LocalBoxFuture;
use ragscope_judge::{
    Env, HttpRequest, HttpResponse, MemoryCache, Runtime, Transport, TransportError,
};
use ragscope_protocol::judges::{JudgeRequest, JudgeResponse};
use ragscope_protocol::Response;
use std::rc::Rc;
use std::time::Duration;

/// Outside the browser (native tests of the engine) nothing is ever sent.
pub(crate) struct NoNetwork;

impl Transport for NoNetwork {
    fn send(&self, _: HttpRequest) -> LocalBoxFuture<'_, Result<HttpResponse, TransportError>> {
        Box::pin(async { Err(TransportError::Other("no network here".into())) })
    }
}

impl Runtime for NoNetwork {
    fn sleep(&self, _: Duration) -> LocalBoxFuture<'static, ()> {
        Box::pin(async {})
    }
    fn now_ms(&self) -> u64 {
        0
    }
}

impl Workspace {
    /// Judge requests answered at once, without the network: the estimate (against an empty
    /// cache). The worker's reactor answers them itself, with its IndexedDB cache, and runs jobs
    /// concurrently with everything else (`worker`).
    pub fn judge_now(&mut self, request: JudgeRequest) -> Vec<Response> {
        let response = match request {
            JudgeRequest::Estimate { ticket, spec } => {
                match self.prepare_judge(&spec, None, true) {
                    Ok(prepared) => {
                        let env = Env {
                            provider: prepared.env_provider(),
                            transport: Rc::new(NoNetwork),
                            runtime: Rc::new(NoNetwork),
                            cache: Rc::new(MemoryCache::new()),
                        };
                        futures::executor::block_on(job::estimate(&prepared, &env, ticket))
                    }
                    Err(error) => JudgeResponse::EstimateFailed { ticket, error },
                }
            }
            JudgeRequest::Start { job, .. } => JudgeResponse::Failed {
                job,
                error: "judge jobs run only in the browser worker".into(),
            },
            JudgeRequest::ReadGguf { id, name, .. } => JudgeResponse::GgufRead {
                id,
                result: Err(format!("{name}: reading a GGUF needs the web worker")),
            },
            // Nothing is kept outside the browser.
            JudgeRequest::KeptBatches => JudgeResponse::KeptBatches(Vec::new()),
            JudgeRequest::Pause { .. }
            | JudgeRequest::Resume { .. }
            | JudgeRequest::Cancel { .. } => return vec![],
        };
        vec![Response::Judge(response)]
    }
}
