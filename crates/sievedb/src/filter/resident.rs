//! The resident part of one SST's filter: which of its units are in memory.
//!
//! A [`ResidentFilter`] holds the filter's index (parameters, where each unit
//! is on disk) and an atomically swapped [`Filter`] with the first `n` units
//! resident. A lookup loads the current filter without a lock and probes its
//! units in order, stopping at the first "no"; with no unit resident it
//! answers "maybe". Changing the resident units builds a new [`Filter`] and
//! swaps it in whole, so a probe never sees a half-loaded unit. Only the
//! filter budget ([`super::budget`]) changes them, one file at a time under
//! its lock; the filter memory counter follows every swap and the drop.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwap;

use super::digest::Phase;
use super::{Filter, FilterIndex, KeyProbe};
use crate::prefetch::prefetch_addr;
use crate::stats::{bump, Counters, DIGESTS, NEGATIVES};

/// The resident units of one file's filter.
pub struct ResidentFilter {
    number: u64,
    index: FilterIndex,
    /// Set once without a budget: every unit, resident for the file's life
    /// (probed without the atomic swap's bookkeeping). `current` is then
    /// unused.
    pinned: OnceLock<Filter>,
    current: ArcSwap<Filter>,
    counters: Arc<Counters>,
}

impl ResidentFilter {
    /// The filter of file `number` with no unit resident.
    pub fn new(number: u64, index: FilterIndex, counters: Arc<Counters>) -> Self {
        let current = ArcSwap::from_pointee(index.empty().clone());
        ResidentFilter {
            number,
            index,
            pinned: OnceLock::new(),
            current,
            counters,
        }
    }

    /// Makes `filter` resident for the file's life (without a budget, where
    /// units never come and go); ignored if one is pinned already.
    pub fn pin(&self, filter: Filter) {
        let bytes = filter.resident_bytes();
        if self.pinned.set(filter).is_ok() {
            bump(&self.counters.filter_memory, bytes);
        }
    }

    /// The file number.
    pub fn number(&self) -> u64 {
        self.number
    }

    /// The filter's index.
    pub fn index(&self) -> &FilterIndex {
        &self.index
    }

    /// The filter as it is now (a snapshot: later swaps do not change it).
    pub fn current(&self) -> Arc<Filter> {
        match self.pinned.get() {
            Some(f) => Arc::new(f.clone()),
            None => self.current.load_full(),
        }
    }

    /// Units resident now.
    pub fn resident(&self) -> u32 {
        match self.pinned.get() {
            Some(f) => f.resident(),
            None => self.current.load().resident(),
        }
    }

    /// Bytes of the resident units now.
    pub fn resident_bytes(&self) -> u64 {
        match self.pinned.get() {
            Some(f) => f.resident_bytes(),
            None => self.current.load().resident_bytes(),
        }
    }

    /// Makes `filter` (a filter of this file) the resident one, keeping the
    /// filter memory counter exact. Callers serialise swaps of one file.
    pub fn replace(&self, filter: Filter) {
        let new = filter.resident_bytes();
        let old = self.current.swap(Arc::new(filter)).resident_bytes();
        if new >= old {
            bump(&self.counters.filter_memory, new - old);
        } else {
            self.counters
                .filter_memory
                .fetch_sub(old - new, Ordering::Relaxed);
        }
    }

    /// Whether the resident units rule the key of `probe` out, counting the
    /// probe (and timing it, for sampled lookups) for `level`. The second
    /// value says whether any unit was probed (a "maybe" from no unit is not
    /// a false positive of the filter).
    #[inline]
    pub fn excludes(&self, probe: &mut KeyProbe<'_>, level: usize) -> (bool, bool) {
        if let Some(filter) = self.pinned.get() {
            return self.probe(filter, probe, level);
        }
        let filter = self.current.load();
        self.probe(&filter, probe, level)
    }

    #[cfg(any(test, feature = "internals"))]
    /// Whether the key of `probe` may be in the file, by the resident units
    /// ("maybe" with none resident), counting and timing nothing: the bare
    /// probe, for reference measurements of what a lookup's filter work costs.
    #[inline]
    pub fn may_contain(&self, probe: &mut KeyProbe<'_>) -> bool {
        match self.pinned.get() {
            Some(filter) => filter.may_contain(probe),
            None => self.current.load().may_contain(probe),
        }
    }

    /// Prefetches what a probe reads before the filter's bits: the pinned
    /// filter's state, parameters and bit pointer (two cache lines).
    #[inline]
    pub fn prefetch(&self) {
        let at = std::ptr::from_ref(&self.pinned).cast::<u8>();
        prefetch_addr(at);
        prefetch_addr(at.wrapping_add(64));
    }

    #[inline(always)]
    fn probe(&self, filter: &Filter, probe: &mut KeyProbe<'_>, level: usize) -> (bool, bool) {
        if filter.resident() == 0 {
            return (false, false);
        }
        let before = probe.digests_computed;
        let start = probe.phase_start();
        let maybe = filter.may_contain(probe);
        probe.phase_end(start, Phase::Filter);
        let counts = [1, u32::from(!maybe), probe.digests_computed - before, 0];
        match probe.tally.levels.get_mut(level) {
            Some(row) => {
                for (c, n) in row.iter_mut().zip(counts) {
                    *c += n;
                }
            }
            None => {
                let lc = &self.counters.levels[level.min(self.counters.levels.len() - 1)];
                bump(&lc.filter_probes, 1);
                bump(&lc.filter_negatives, u64::from(counts[NEGATIVES]));
                bump(&lc.digests_computed, u64::from(counts[DIGESTS]));
            }
        }
        (!maybe, true)
    }
}

#[cfg(test)]
thread_local! {
    /// Run once by the next `drop` on this thread, after the last reference
    /// went and before the bytes leave the counter: tests act in that window,
    /// as another thread would if the dropping one were preempted there.
    pub(crate) static ON_DROP: std::cell::RefCell<Option<Box<dyn FnOnce()>>> =
        const { std::cell::RefCell::new(None) };
}

impl Drop for ResidentFilter {
    fn drop(&mut self) {
        #[cfg(test)]
        if let Some(hook) = ON_DROP.with(|h| h.borrow_mut().take()) {
            hook();
        }
        let bytes = self.current.load().resident_bytes()
            + self.pinned.get().map_or(0, Filter::resident_bytes);
        self.counters
            .filter_memory
            .fetch_sub(bytes, Ordering::Relaxed);
    }
}
