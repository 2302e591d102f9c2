//! LLM judges in the worker: the input files (topics, passages) and the judge jobs, which run
//! on crates/judge with the browser's `fetch` as transport and IndexedDB as cache.

mod files;

pub use files::JudgeFiles;

/// The IndexedDB database of cached judge replies (see `idb_cache`).
pub const CACHE_DB: &str = "ragscope-judge-cache";

use super::Workspace;
use crate::protocol::judges::{JudgeRequest, JudgeResponse};
use crate::protocol::Response;

impl Workspace {
    /// Judge requests answered without the network (the estimate); jobs need the worker's
    /// reactor, which runs them concurrently with everything else.
    pub fn judge_now(&mut self, request: JudgeRequest) -> Vec<Response> {
        let response = match request {
            JudgeRequest::Estimate { ticket, .. } => JudgeResponse::EstimateFailed {
                ticket,
                error: "not yet: LLM judges are being added".into(),
            },
            JudgeRequest::Start { job, .. } => JudgeResponse::Failed {
                job,
                error: "judge jobs run only in the browser worker".into(),
            },
            JudgeRequest::Pause { .. }
            | JudgeRequest::Resume { .. }
            | JudgeRequest::Cancel { .. } => return vec![],
        };
        vec![Response::Judge(response)]
    }
}
