//! The flags of the subcommands this crate serves: `sievedb bench`
//! ([`bench_args`]) and the filter flags it shares with `sievedb bulkload`
//! ([`filter_args`]), the transactional benchmarks' ([`txn_args`]), and
//! `sievedb devices` ([`devices_args`]).

pub mod bench_args;
pub mod devices_args;
pub mod filter_args;
pub mod txn_args;
