//! Results and their forms: the benchmark records and their text and JSON
//! lines ([`record`]), progress on stderr ([`progress`]), and the experiments'
//! outputs: CSV tables ([`csv`]), Markdown summaries ([`summary`]) and plots
//! ([`plot`]).

pub mod csv;
pub mod plot;
pub mod progress;
pub mod record;
pub mod summary;

pub use record::{
    elapsed_line, median, median_header, medians, rate_line, records_table, MedianRow, Rates,
    Record, FILTER_KEYS,
};
