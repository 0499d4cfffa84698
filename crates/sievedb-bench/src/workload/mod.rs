//! What the benchmarks read and write: the keys and values themselves
//! ([`keys`]), key popularity ([`distribution`]) and bulk-loaded trees of the
//! benchmark key space ([`bulk`]).

pub mod bulk;
pub mod distribution;
pub mod keys;
