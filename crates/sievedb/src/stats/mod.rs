//! Counters of where lookups, writes and background work spend their effort:
//! the live counters ([`counters`]), the time split of sampled lookups
//! ([`breakdown`]), the snapshot [`crate::Db::stats`] returns ([`snapshot`])
//! and its text form ([`display`]).

use std::sync::atomic::{AtomicU64, Ordering};

mod breakdown;
mod counters;
mod display;
mod snapshot;

pub use breakdown::{BreakdownCounters, LookupBreakdown};
pub use counters::{Counters, ReadTally};
/// The types of [`Counters`]' fields, for the workspace's own tools.
#[cfg(feature = "internals")]
pub use counters::{LevelCounters, WriteCounters, TALLY_LEVELS};
pub(crate) use counters::{DIGESTS, FALSE_POSITIVES, NEGATIVES};
pub use snapshot::{LevelStats, Stats};

/// Adds `n` to a counter (relaxed: counters are statistics, not synchronisation).
#[inline]
pub(crate) fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

/// Reads a counter (relaxed, as [`bump`] writes it).
#[inline]
pub(crate) fn get(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}
