//! The ragscope web app: a yew front end on the UI thread. Every evaluation runs in a Web
//! Worker (crates/worker) that owns the loaded data, so heavy work never blocks the page; the app
//! speaks to it only through the messages of crates/protocol ([`worker_link`]).

pub mod charts;
pub mod export;
pub mod export_tournament;
pub mod ui;
pub mod worker_link;
