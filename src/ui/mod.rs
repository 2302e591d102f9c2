//! The yew front end: state as a reducer with an action enum, one file per component.

pub mod answering_state;
pub mod components;
pub mod compute_state;
pub mod csp;
pub mod download;
pub mod hooks;
pub mod judge_keys;
pub mod judges_state;
pub mod perf_marks;
pub mod persist;
pub mod route;
pub mod state;

pub use components::app::App;
