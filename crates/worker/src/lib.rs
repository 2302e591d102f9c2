//! The evaluation worker of ragscope's web app: a yew-agent reactor ([`agent`]) that owns the
//! loaded data ([`engine::Workspace`]) and runs every evaluation, local model and judge job, so
//! heavy work never blocks the page. The page reaches it only through the messages of
//! crates/protocol; `crates/worker/src/bin/worker.rs` is the worker's wasm entry, built by Trunk
//! (index.html).

pub mod agent;
#[cfg(target_arch = "wasm32")]
pub mod blob_source;
pub mod detect;
pub mod engine;

#[cfg(test)]
mod engine_tests;
