//! Where sampled lookups spent their time: the running sums
//! ([`BreakdownCounters`]) and their snapshot ([`LookupBreakdown`]).

use std::sync::atomic::AtomicU64;

use super::{bump, get};
use crate::clock::{ns_per_tick, PhaseTicks};

/// Sums of the sampled lookups' phase times, in nanoseconds.
#[derive(Default)]
#[allow(missing_docs)]
pub struct BreakdownCounters {
    pub samples: AtomicU64,
    pub total_ns: AtomicU64,
    pub hash_ns: AtomicU64,
    pub filter_ns: AtomicU64,
    pub index_ns: AtomicU64,
    pub data_ns: AtomicU64,
}

impl BreakdownCounters {
    /// Adds one sampled lookup that took `total` ticks, `phases` of them in
    /// the named phases.
    pub(crate) fn record(&self, total: u64, phases: PhaseTicks) {
        let rate = ns_per_tick();
        #[expect(
            clippy::cast_sign_loss,
            reason = "ticks times a positive rate are not negative"
        )]
        let ns = |t: u64| (t as f64 * rate) as u64;
        bump(&self.samples, 1);
        bump(&self.total_ns, ns(total));
        bump(&self.hash_ns, ns(phases.hash));
        bump(&self.filter_ns, ns(phases.filter));
        bump(&self.index_ns, ns(phases.index));
        bump(&self.data_ns, ns(phases.data));
    }

    pub(super) fn snapshot(&self) -> LookupBreakdown {
        LookupBreakdown {
            samples: get(&self.samples),
            total_ns: get(&self.total_ns),
            hash_ns: get(&self.hash_ns),
            filter_ns: get(&self.filter_ns),
            index_ns: get(&self.index_ns),
            data_ns: get(&self.data_ns),
        }
    }
}

/// Where sampled point lookups spent their time (sums over `samples`
/// lookups; see [`crate::Options::lookup_breakdown_every`]).
///
/// * `hash`: computing key digests;
/// * `filter`: probing memtable and SST filters (hashing excluded);
/// * `index`: fence pointers across files, the table cache and index blocks;
/// * `data`: fetching data blocks (block cache or file) and searching them;
/// * `other` (= total − the four): memtable search, bookkeeping, the clock.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, Options};
///
/// let db = Db::open(dir.path(), Options::builder().lookup_breakdown_every(1).build())?;
/// db.put("k", "v")?;
/// db.flush()?;
/// for _ in 0..10 {
///     db.get("k")?;
/// }
/// let breakdown = db.stats().breakdown;
/// assert_eq!(breakdown.samples, 10); // every lookup timed
/// let [hash, filter, index, data, other] = breakdown.per_lookup().expect("samples");
/// println!("ns per lookup: hash {hash:.0}, filter {filter:.0}, index {index:.0}, data {data:.0}");
/// assert_eq!(breakdown.other_ns() as f64 / 10.0, other);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LookupBreakdown {
    /// Lookups timed.
    pub samples: u64,
    /// Their total time.
    pub total_ns: u64,
    /// Time spent hashing.
    pub hash_ns: u64,
    /// Time spent probing filters.
    pub filter_ns: u64,
    /// Time spent in fence pointers and index blocks.
    pub index_ns: u64,
    /// Time spent reading and searching data blocks.
    pub data_ns: u64,
}

impl LookupBreakdown {
    /// Time in none of the named phases.
    pub fn other_ns(&self) -> u64 {
        self.total_ns
            .saturating_sub(self.hash_ns + self.filter_ns + self.index_ns + self.data_ns)
    }

    /// Mean nanoseconds per sampled lookup: `[hash, filter, index, data,
    /// other]`, or `None` without samples.
    pub fn per_lookup(&self) -> Option<[f64; 5]> {
        if self.samples == 0 {
            return None;
        }
        let n = self.samples as f64;
        Some([
            self.hash_ns as f64 / n,
            self.filter_ns as f64 / n,
            self.index_ns as f64 / n,
            self.data_ns as f64 / n,
            self.other_ns() as f64 / n,
        ])
    }

    pub(super) fn minus(&self, e: &LookupBreakdown) -> LookupBreakdown {
        LookupBreakdown {
            samples: self.samples.saturating_sub(e.samples),
            total_ns: self.total_ns.saturating_sub(e.total_ns),
            hash_ns: self.hash_ns.saturating_sub(e.hash_ns),
            filter_ns: self.filter_ns.saturating_sub(e.filter_ns),
            index_ns: self.index_ns.saturating_sub(e.index_ns),
            data_ns: self.data_ns.saturating_sub(e.data_ns),
        }
    }
}
