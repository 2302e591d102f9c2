//! LLM judges over HTTP for ragscope: providers (Anthropic, Gemini, OpenAI, OpenAI-compatible
//! servers), tasks as data (UMBRELA relevance first), and the reliability layer every judge
//! shares: retries with backoff, a concurrency cap and rate limiter, a persistent cache that
//! doubles as resume, and a budget.
//!
//! The core is transport-agnostic and runtime-free: it needs a [`http::Transport`] (send one HTTP
//! request) and a [`http::Runtime`] (sleep, now). The `native` feature provides both with ureq
//! and threads for the CLI; the browser worker provides them with `fetch` and timers.
//!
//! Nothing here ever writes an API key anywhere: keys live in [`provider::ApiKey`], which prints
//! as `<redacted>`, are added to HTTP headers only, and are not part of any cache key or record.

pub mod batch;
pub mod cache;
pub mod cost;
pub mod http;
pub mod limit;
pub mod provider;
pub mod retry;
pub mod runner;
pub mod task;

#[cfg(feature = "native")]
pub mod native;

pub use cache::{CacheKey, CacheStore, CachedReply, MemoryCache};
pub use cost::{Budget, Estimate, Price, PriceTable};
pub use http::{HttpRequest, HttpResponse, Runtime, Transport, TransportError};
pub use provider::{
    ApiKey, Call, ChatRequest, CompletionRequest, Finish, GenParams, Message, Provider,
    ProviderConfig, ProviderKind, Reply, Role, Usage,
};
pub use retry::RetryPolicy;
pub use runner::{
    run_job, Control, Env, Event, ItemRecord, Job, JudgeOptions, Progress, RunSummary, Status,
};
pub use task::{ItemKey, JobItem, Task};
