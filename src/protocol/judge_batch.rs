//! Batch mode of a judge job (the providers' batch APIs: half price, answered within 24 hours),
//! between the Judges panel and the worker. The panel offers it from [`OFFER_AT_REQUESTS`]
//! requests on, for the providers that have a batch API; the worker reports each batch's state
//! as a [`BatchUpdate`]. The batch ids are kept in the browser's judge cache, so starting the same
//! job again after a reload resumes its batches instead of paying twice.

use super::judges::ProviderChoice;
use serde::{Deserialize, Serialize};

/// Requests from which batch mode is offered: below it a synchronous run takes minutes, and a
/// batch may take hours.
pub const OFFER_AT_REQUESTS: usize = 200;

/// Whether the panel offers batch mode for `requests` requests to `provider` (OpenAI-compatible
/// servers have no batch API).
pub fn offered(provider: ProviderChoice, requests: usize) -> bool {
    provider != ProviderChoice::OpenAiCompatible && requests >= OFFER_AT_REQUESTS
}

/// One batch of a job as the worker last saw it.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct BatchRow {
    /// The provider's batch id (`msgbatch_...`, `batch_...`, `batches/...`).
    pub id: String,
    /// The provider's state word (`in_progress`, `ended`, `completed`, `RUNNING`, ...), or
    /// `submitted` / `resumed` before the first poll.
    pub state: String,
    /// Requests in it (unknown for a batch resumed from an earlier page).
    pub requests: Option<usize>,
    /// Its replies are in the cache.
    pub imported: bool,
}

/// The batches of a job, sent whenever one changes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct BatchUpdate {
    pub job: u32,
    pub rows: Vec<BatchRow>,
    /// The last thing worth saying (a failed poll that will be retried, a warning).
    pub note: Option<String>,
}
