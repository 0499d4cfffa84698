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
//!
//! The swapped pointer is epoch-protected (`crossbeam-epoch`): a lookup pins
//! the epoch once ([`FilterGuard`]) and then loads the filter of every file it
//! probes with a plain atomic load, where a reference-counted swap (`arc-swap`)
//! cost a pair of atomic writes per file (10% of a budgeted `readmissing`). A
//! filter swapped out is freed once no pinned lookup can still see it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use crossbeam_epoch::{self as epoch, Atomic, Guard, Owned};

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
    /// The resident units under a budget: never null, swapped whole by
    /// [`replace`](Self::replace), freed through the epoch.
    current: Atomic<Filter>,
    counters: Arc<Counters>,
}

/// A lookup's pin of the epoch, taken at its first probe of a filter under a
/// budget and held to its end: no filter it loaded is freed meanwhile.
#[derive(Default)]
pub struct FilterGuard(Option<Guard>);

impl FilterGuard {
    fn get(&mut self) -> &Guard {
        self.0.get_or_insert_with(epoch::pin)
    }
}

impl ResidentFilter {
    /// The filter of file `number` with no unit resident.
    pub fn new(number: u64, index: FilterIndex, counters: Arc<Counters>) -> Self {
        let current = Atomic::new(index.empty().clone());
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

    /// `f` of the filter as it is now (held for the call: a swap meanwhile
    /// does not free it).
    pub fn with_filter<R>(&self, f: impl FnOnce(&Filter) -> R) -> R {
        match self.pinned.get() {
            Some(filter) => f(filter),
            None => self.with_current(&epoch::pin(), f),
        }
    }

    /// Units resident now.
    pub fn resident(&self) -> u32 {
        self.with_filter(Filter::resident)
    }

    /// Bytes of the resident units now.
    pub fn resident_bytes(&self) -> u64 {
        self.with_filter(Filter::resident_bytes)
    }

    /// `f` of the swapped filter as `guard` sees it.
    #[inline]
    fn with_current<R>(&self, guard: &Guard, f: impl FnOnce(&Filter) -> R) -> R {
        let shared = self.current.load(Ordering::Acquire, guard);
        // SAFETY: `current` is never null (set at construction, only ever
        // swapped for another filter), and a filter swapped out is freed
        // through `guard.defer_destroy`, not before every guard pinned while
        // it was reachable is dropped; `guard` outlives this borrow.
        f(unsafe { shared.deref() })
    }

    /// Makes `filter` (a filter of this file) the resident one, keeping the
    /// filter memory counter exact. Callers serialise swaps of one file.
    pub fn replace(&self, filter: Filter) {
        let new = filter.resident_bytes();
        let guard = epoch::pin();
        let shared = self
            .current
            .swap(Owned::new(filter), Ordering::AcqRel, &guard);
        // SAFETY: the swap made `shared` unreachable from `current`, its only
        // home: lookups pinned before may still read it, later ones cannot,
        // and `defer_destroy` frees it only after those are unpinned. It is
        // not null (see `with_current`).
        let old = unsafe { shared.deref() }.resident_bytes();
        // SAFETY: as above; nothing else frees it.
        unsafe { guard.defer_destroy(shared) };
        // Into the global queue now, so the memory goes even if this thread
        // does not pin again soon (the budget's worker may idle).
        guard.flush();
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
    /// `guard` is the lookup's pin of the epoch, taken here at its first
    /// budgeted filter.
    #[inline]
    pub fn excludes(
        &self,
        probe: &mut KeyProbe<'_>,
        level: usize,
        guard: &mut FilterGuard,
    ) -> (bool, bool) {
        if let Some(filter) = self.pinned.get() {
            return self.probe(filter, probe, level);
        }
        self.with_current(guard.get(), |filter| self.probe(filter, probe, level))
    }

    #[cfg(any(test, feature = "internals"))]
    /// Whether the key of `probe` may be in the file, by the resident units
    /// ("maybe" with none resident), counting and timing nothing: the bare
    /// probe, for reference measurements of what a lookup's filter work costs.
    #[inline]
    pub fn may_contain(&self, probe: &mut KeyProbe<'_>) -> bool {
        self.with_filter(|f| f.may_contain(probe))
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
        let before = probe.digests_computed;
        let start = probe.phase_start();
        // `None`: no resident bits cover the key (no unit, or its partition
        // is not resident), which is no probe at all.
        let Some(maybe) = filter.try_may_contain(probe) else {
            return (false, false);
        };
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
        // SAFETY: `&mut self`: no lookup holds this filter any more, so the
        // current filter (never null) is freed here at once.
        let current = unsafe {
            std::mem::replace(&mut self.current, Atomic::null())
                .into_owned()
                .into_box()
        };
        let bytes = current.resident_bytes() + self.pinned.get().map_or(0, Filter::resident_bytes);
        self.counters
            .filter_memory
            .fetch_sub(bytes, Ordering::Relaxed);
    }
}
