pub mod app;
pub mod drop_zone;
pub mod error_panel;
pub mod file_list;
pub mod results_table;
