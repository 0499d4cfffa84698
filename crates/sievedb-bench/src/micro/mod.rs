//! Micro-benchmarks of the machine rather than of an engine: `sievedb devices`
//! ([`devices`]).

pub mod devices;
