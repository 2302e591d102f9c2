//! The ragscope web app: a yew front end on the UI thread and a Web Worker that owns the loaded
//! data and runs every evaluation (crates/eval), so heavy work never blocks the page.

pub mod agent;
pub mod blob_channel;
#[cfg(target_arch = "wasm32")]
pub mod blob_source;
pub mod charts;
pub mod detect;
pub mod engine;
pub mod export;
pub mod export_tournament;
pub mod idb;
pub mod ui;

#[cfg(test)]
mod engine_tests;
