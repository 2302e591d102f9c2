//! The yew front end: state as a reducer with an action enum, one file per component.

pub mod components;
pub mod compute_state;
pub mod download;
pub mod persist;
pub mod state;

pub use components::app::App;
