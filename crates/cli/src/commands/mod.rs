pub mod correlate;
pub mod udcg;
