//! What the benchmarks read and write: key popularity ([`distribution`]).

pub mod distribution;
