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
/// servers have no batch API), from `threshold` requests on ([`OFFER_AT_REQUESTS`] unless the
/// page's URL says otherwise, see [`threshold_of_query`]).
pub fn offered(provider: ProviderChoice, requests: usize, threshold: usize) -> bool {
    provider != ProviderChoice::OpenAiCompatible && requests >= threshold.max(1)
}

/// The offer threshold a page URL's query asks for: `?batch-at=N` (for trying the batch option
/// on a small job, and for the end-to-end test); [`OFFER_AT_REQUESTS`] otherwise.
pub fn threshold_of_query(query: &str) -> usize {
    query
        .trim_start_matches('?')
        .split('&')
        .find_map(|kv| kv.strip_prefix("batch-at="))
        .and_then(|n| n.parse::<usize>().ok())
        .filter(|n| *n >= 1)
        .unwrap_or(OFFER_AT_REQUESTS)
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
    /// Once imported: replies stored, and requests the batch did not answer (recorded as failed).
    #[serde(default)]
    pub answered: Option<(usize, usize)>,
}

/// The batches of a job, sent whenever one changes.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Default)]
pub struct BatchUpdate {
    pub job: u32,
    pub rows: Vec<BatchRow>,
    /// The last thing worth saying (a failed poll that will be retried, a warning).
    pub note: Option<String>,
    /// When the provider was last asked (Unix milliseconds).
    #[serde(default)]
    pub polled_ms: Option<u64>,
}

/// Batches kept in this browser for one task on one model (an earlier page submitted them and
/// their replies are not imported yet): shown after a reload, so the user knows to start the
/// same job again to collect them.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct KeptRun {
    /// The provider's `--provider` name (`anthropic`, `openai`, `gemini`).
    pub provider: String,
    pub model: String,
    /// The task's name (`umbrela`, `nuggets-assign`, ...).
    pub task: String,
    pub batches: Vec<KeptBatch>,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq)]
pub struct KeptBatch {
    pub id: String,
    /// The last state seen.
    pub state: String,
    pub requests: usize,
    /// Unix milliseconds.
    pub submitted_ms: u64,
}
