//! What the benchmarks read and write: key popularity ([`distribution`]) and
//! bulk-loaded trees of the benchmark key space ([`bulk`]).

pub mod bulk;
pub mod distribution;
