//! Everything about charts that is not drawing: scales, ticks and distribution summaries.
//! The SVG components in `ui::components::charts` only place what these compute.

pub mod distribution;
pub mod pareto;
pub mod scale;

pub use distribution::{density, BoxStats};
pub use scale::{format_tick, nice_ticks, LinearScale};
