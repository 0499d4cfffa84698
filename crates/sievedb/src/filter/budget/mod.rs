//! The filter budget: which units of which files' filters are resident.
//!
//! Under a budget every live SST is planned for when a version holding it is
//! installed, in one batch and without reading it
//! ([`FilterBudget::add_files`]); its filter is registered, and the units
//! the plan reserved for it loaded, at its first lookup
//! ([`FilterBudget::register`]). Without a budget ([`FilterMemory::Unlimited`])
//! every unit is loaded at that first lookup and pinned for the file's life,
//! and nothing else happens: no access is recorded.
//!
//! Under a budget an [`Allocator`] (the [`FilterPolicy`]'s decisions) says how
//! many units each file should have resident; this module carries those
//! decisions out: it drops units (`filter_unit_evictions`) before it loads
//! any (`filter_unit_loads`, one read per file through a [`UnitLoader`]), so
//! the resident bytes never exceed what the allocator planned, which never
//! exceeds the budget. A failed load leaves the file with the units it had
//! (a lookup then reads a data block more often, never answers wrongly) and
//! the allocator is told.
//!
//! # Concurrency
//! The read path takes no lock. One lookup in [`ACCESS_SAMPLE`] per thread
//! is sampled: it appends the numbers of the files whose filters it probed,
//! then a clock tick, to a per-thread log, each standing for
//! [`ACCESS_SAMPLE`] accesses; a log of [`LOG_BATCH`] entries is handed to
//! the budget's worker thread (`worker`), which replays it into the
//! allocator and carries out the changes, loads included, so a lookup does
//! no allocator work and no load for another file. When the worker's queue
//! is full the log is dropped (the accesses are a sample). A file's first
//! lookup reads its filter index and the units the plan reserved for it
//! itself ([`FilterBudget::register`]): one file, once. Probes read a
//! file's resident units through one atomic load ([`ResidentFilter`]), so a
//! lookup never waits for a load of any file.
//! A file that leaves the tree hands its filter to the budget, which drops
//! it under the lock as it forgets the file ([`FilterBudget::retire`]): every
//! change to the resident bytes happens under the lock, so the allocator never
//! gives out bytes still resident.
//!
//! # Files
//! This file holds [`FilterBudget`] itself: registration at a file's first
//! lookup, retirement, and carrying out the allocator's changes. `plan`
//! plans files before their filters are read; `access_log` samples lookups
//! and feeds their accesses to the allocator; `hotness` carries hotness
//! across compactions and reopens; `worker` is the thread replaying logs.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;

use parking_lot::Mutex;

// `elastic` itself too: `hotness` reaches `super::elastic::inherit` through it.
use super::elastic::{self, AllocConfig, Allocator, FilterPolicy};
use super::resident::ResidentFilter;
use super::{Filter, FilterIndex, FilterMemory, FilterOptions};
use crate::error::Result;
use crate::stats::{bump, Counters};
use access_log::TICK;
use plan::{describe, shape_options};

#[cfg_attr(
    not(feature = "internals"),
    expect(
        unused_imports,
        reason = "named by the docs and, with internals, by tests"
    )
)]
pub use access_log::{ACCESS_SAMPLE, LOG_BATCH, LOG_LIMIT};
#[cfg_attr(
    not(feature = "internals"),
    expect(
        unused_imports,
        reason = "named by the docs and, with internals, by tests"
    )
)]
pub use hotness::HOTNESS_SAVE_INTERVAL;

/// Reads filter units from the files (the table cache implements it).
pub trait UnitLoader: Send + Sync {
    /// `current`, a filter of file `number`, with units up to `to` resident.
    fn load_units(&self, number: u64, current: &Filter, to: u32) -> Result<Filter>;
}

/// Where a file sits in the tree (what policies allocate by).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileShape {
    /// File number.
    pub number: u64,
    /// Level.
    pub level: usize,
    /// Run id within the level.
    pub run: u64,
    /// Entries (keys in the filter).
    pub entries: u64,
}

/// How a budget chooses (see [`crate::Options`]).
#[derive(Clone, Debug, PartialEq)]
pub struct BudgetConfig {
    /// The memory all filters may hold.
    pub memory: FilterMemory,
    /// The allocation policy.
    pub policy: FilterPolicy,
    /// ElasticBF's lifeTime in lookups (`None`: the allocator's default).
    pub lifetime: Option<u64>,
    /// One lookup in this many is logged, and counts for this many (≥ 1).
    pub access_sample: u32,
    /// Units a new file starts with under the elastic policies.
    pub initial_units: Option<u32>,
    /// The filter options new files are written with: the shape a file's
    /// filter is planned with until its own filter index is read.
    pub filter: FilterOptions,
}

/// A registered file.
struct Tracked {
    /// Its resident filter, once the file's filter index was read (its
    /// first lookup): until then the plan's units for it are reserved in
    /// the budget but not loaded.
    filter: Option<Weak<ResidentFilter>>,
    shape: FileShape,
}

impl Tracked {
    /// The live resident filter, if the file's filter was read.
    fn live(&self) -> Option<Arc<ResidentFilter>> {
        self.filter.as_ref().and_then(Weak::upgrade)
    }
}

/// What the budget's lock guards.
struct State {
    alloc: Allocator,
    files: BTreeMap<u64, Tracked>,
    /// Entries of the live tree (what a bits-per-key budget is sized by).
    entries: u64,
    /// Hotness waiting for files not registered yet: inherited by
    /// compaction outputs, or loaded from the hotness file at open.
    pending: HashMap<u64, f64>,
    /// The filter shape files whose filter was not read yet are planned
    /// with: the configured options' at first, then that of a filter read
    /// (see [`FilterBudget::learn_shape`]), or of the first one read with
    /// another number of units (a tree written with other options than it
    /// is opened with).
    unread_shape: FilterOptions,
    /// Whether `unread_shape` comes from a filter read.
    shape_learnt: bool,
    /// Scratch space of [`FilterBudget::feed`], kept between logs.
    runs: access_log::Runs,
}

/// Source of [`FilterBudget`] ids (the key of a thread's access log).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

/// The filter memory of one database.
pub struct FilterBudget {
    config: BudgetConfig,
    id: u64,
    loader: Arc<dyn UnitLoader>,
    counters: Arc<Counters>,
    state: Mutex<State>,
    /// Files whose metadata was dropped, not yet removed from the allocator,
    /// with (under a budget) their resident filters: these are dropped, and
    /// their bytes leave the filter memory counter, only under the lock
    /// (see [`retire`](Self::retire)).
    forgotten: Mutex<Vec<(u64, Option<Arc<ResidentFilter>>)>>,
    /// Set by [`close`](Self::close): the database is going, files leaving
    /// it are not handed to the allocator.
    closing: AtomicBool,
    /// When the hotness file was last written.
    last_save: Mutex<Option<Instant>>,
    /// The thread that replays the lookups' logs (under a budget, once
    /// [`start_worker`](Self::start_worker) ran; without it the lookup that
    /// fills a log replays it if it gets the lock).
    worker: OnceLock<worker::Worker>,
}

impl FilterBudget {
    /// A budget loading units through `loader`.
    pub fn new(
        mut config: BudgetConfig,
        loader: Arc<dyn UnitLoader>,
        counters: Arc<Counters>,
    ) -> Self {
        config.access_sample = config.access_sample.max(1);
        let alloc = Allocator::new(AllocConfig {
            policy: config.policy,
            lifetime: config.lifetime,
            initial_units: config.initial_units,
            half_life: None,
            load_cost: None,
        });
        let unread_shape = config.filter.clone();
        FilterBudget {
            config,
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            loader,
            counters,
            state: Mutex::new(State {
                alloc,
                files: BTreeMap::new(),
                entries: 0,
                pending: HashMap::new(),
                unread_shape,
                shape_learnt: false,
                runs: access_log::Runs::default(),
            }),
            forgotten: Mutex::new(Vec::new()),
            closing: AtomicBool::new(false),
            last_save: Mutex::new(None),
            worker: OnceLock::new(),
        }
    }

    /// Starts the thread that replays the lookups' access logs and carries
    /// out the allocator's loads and drops (under a budget only; `this` is
    /// the budget itself, held weakly by the thread). If the thread cannot
    /// be spawned, lookups replay their logs themselves, as without it.
    pub fn start_worker(this: &Arc<FilterBudget>) {
        if !this.limited() || this.worker.get().is_some() {
            return;
        }
        if let Ok(w) = worker::Worker::start(Arc::downgrade(this)) {
            let _ = this.worker.set(w);
        }
    }

    /// Whether a budget applies (not [`FilterMemory::Unlimited`]): only then
    /// are accesses recorded.
    #[inline]
    pub fn limited(&self) -> bool {
        self.config.memory != FilterMemory::Unlimited
    }

    #[cfg(test)]
    /// The configuration.
    pub fn config(&self) -> &BudgetConfig {
        &self.config
    }

    /// The resident filter bytes and the budget in bytes (`None` =
    /// unlimited), read together: every load and eviction happens under the
    /// lock this takes, so the pair is one moment's (the budget shrinks
    /// before the evictions it calls for, under the same lock). First the
    /// calling thread's access log goes to the worker and every log handed
    /// over is replayed, so the answer follows from every lookup this
    /// thread made (other threads' logs count once full).
    pub fn usage(&self) -> (u64, Option<u64>) {
        let resident = || self.counters.filter_memory.load(Ordering::Relaxed);
        if !self.limited() {
            return (resident(), None);
        }
        if let Some(w) = self.worker.get() {
            // This thread's log so far, whole lookups only (a log ends with
            // the tick of its last lookup), so that what a thread reports
            // follows from all it has read, however far its log is from full.
            let log = self.with_log(|log| {
                let whole = log.iter().rposition(|&e| e == TICK).map_or(0, |i| i + 1);
                log.drain(..whole).collect::<Vec<u64>>()
            });
            if !log.is_empty() {
                w.send(log);
            }
            w.settle();
        }
        let mut st = self.state.lock();
        self.drain_forgotten(&mut st);
        self.apply(&mut st);
        (resident(), Some(st.alloc.budget()))
    }

    /// ElasticBF's `E[Extra_IO]` now (0 without a budget).
    pub fn expected_extra_io(&self) -> f64 {
        if self.limited() {
            self.state.lock().alloc.expected_extra_io()
        } else {
            0.0
        }
    }

    /// The resident filter of the file `shape` describes, whose filter index
    /// is `index` (read at the file's first lookup): registered, with the
    /// units its policy gives it loaded (under a budget, the units the plan
    /// reserved for it when its version was installed, see
    /// [`add_files`](Self::add_files)). Registering a file twice returns the
    /// first registration's filter. Without a budget every unit is loaded,
    /// and a failed load is the error.
    pub fn register(&self, shape: FileShape, index: &FilterIndex) -> Result<Arc<ResidentFilter>> {
        let mut st = self.state.lock();
        self.drain_forgotten(&mut st);
        if let Some(rf) = st.files.get(&shape.number).and_then(Tracked::live) {
            return Ok(rf);
        }
        let rf = Arc::new(ResidentFilter::new(
            shape.number,
            index.clone(),
            self.counters.clone(),
        ));
        let tracked = Tracked {
            filter: Some(Arc::downgrade(&rf)),
            shape,
        };
        if !self.limited() {
            let all = self
                .loader
                .load_units(shape.number, index.empty(), index.units())?;
            rf.pin(all);
            st.files.insert(shape.number, tracked);
            return Ok(rf);
        }
        let desc = describe(shape, index);
        let unread = st
            .files
            .get(&shape.number)
            .is_some_and(|t| t.filter.is_none());
        if st.alloc.target(shape.number).is_some() && !st.alloc.reshape(desc.clone()) {
            // Planned with another number of units than its own filter has.
            let hotness = st.alloc.hotness(shape.number).unwrap_or(0.0);
            st.alloc.remove_file(shape.number);
            st.pending.insert(shape.number, hotness);
            if unread && !st.shape_learnt {
                // The tree was written with other filter options than it is
                // opened with: the files not read yet are planned again,
                // once, with this filter's shape. Once a filter read gave
                // the shape, a file of another (a tree of mixed layouts:
                // files written before and after the options changed) is
                // planned again alone: a replan of the tree per such file,
                // a Bloom file and a units file in turn, visited the
                // 50,584-file tree 36 times in 1,000 lookups (2.3 s).
                st.unread_shape = shape_options(index.empty());
                st.shape_learnt = true;
                st.files.remove(&shape.number);
                self.replan_unread(&mut st);
            }
        }
        st.files.insert(shape.number, tracked);
        if st.alloc.target(shape.number).is_some() {
            // The plan reserved units for the file when its version was
            // installed (and counts them as applied): load them now.
            let target = st.alloc.target(shape.number).unwrap_or(0);
            if target > 0 {
                match self.loader.load_units(shape.number, index.empty(), target) {
                    Ok(f) => rf.replace(f),
                    Err(_) => st.alloc.applied(shape.number, 0),
                }
            }
        } else {
            // Unknown to the plan (registered by a lookup before its
            // version was installed, or planned again above).
            let hotness = st.pending.remove(&shape.number).unwrap_or(0.0);
            st.alloc.add_file(desc, hotness);
        }
        self.apply(&mut st);
        Ok(rf)
    }

    /// Sizes a bits-per-key budget for a tree of `entries` live entries (the
    /// version being installed, before its new files register, so that they
    /// are placed under the budget the tree will have).
    pub fn set_tree_entries(&self, entries: u64) {
        if !self.limited() {
            return;
        }
        let mut st = self.state.lock();
        st.entries = entries;
        self.rebudget(&mut st);
        self.apply(&mut st);
    }

    /// A file's metadata was dropped (the file left every version) before its
    /// filter was read: the allocator forgets it (and its reservation) at
    /// its next turn.
    pub fn forget(&self, number: u64) {
        if !self.limited() || self.closing.load(Ordering::Relaxed) {
            return;
        }
        self.forgotten.lock().push((number, None));
        if let Some(mut st) = self.state.try_lock() {
            self.drain_forgotten(&mut st);
        }
    }

    /// A file's metadata was dropped (the file left every version), handing
    /// over its resident filter: the allocator forgets the file at its next
    /// turn.
    ///
    /// Under a budget the filter is dropped then, under the lock, not here:
    /// a filter's bytes leave the counter in its `Drop`, which runs only
    /// after its last reference is gone, so a filter dropped outside the
    /// lock is for a while dead to the allocator (its weak reference no
    /// longer upgrades, so a decrease planned for it is skipped) while its
    /// bytes are still counted, and a load the same plan pays for with them
    /// (an expired file's unit given to an accessed one) took the resident
    /// bytes over the budget. Held here, the filter stays live and
    /// accounted until the allocator forgets it and drops it in one step.
    /// Without a budget it is dropped at once (nothing is planned with its
    /// bytes).
    pub fn retire(&self, filter: Arc<ResidentFilter>) {
        if self.closing.load(Ordering::Relaxed) {
            return; // dropped here: its bytes leave the counter, nothing is planned with them
        }
        let number = filter.number();
        let kept = if self.limited() {
            Some(filter)
        } else {
            drop(filter);
            None
        };
        self.forgotten.lock().push((number, kept));
        // Drop it now if nobody holds the allocator (whoever does drains
        // the list at its next turn); its memory is handed on at the next
        // plan.
        if let Some(mut st) = self.state.try_lock() {
            self.drain_forgotten(&mut st);
        }
    }

    /// The database is closing: the files that leave it from now on (all
    /// of them, as its versions drop) are dropped without a word to the
    /// allocator, whose plans no longer matter and are no longer carried
    /// out (no unit is loaded while filters leave unaccounted for).
    /// Forgetting them one by one cost ~2,000 instructions a file (100M at
    /// 50,000 files), more than the rest of closing.
    pub fn close(&self) {
        self.closing.store(true, Ordering::Relaxed);
    }

    /// Removes forgotten files from the allocator, dropping their filters
    /// first (their bytes leave the counter before the allocator hands them
    /// out again). The memory they free is handed on by the caller's next
    /// [`apply`](Self::apply), not here: a closing database forgets every
    /// file, and a plan per file would cost `O(files²)`.
    fn drain_forgotten(&self, st: &mut State) {
        let gone = std::mem::take(&mut *self.forgotten.lock());
        if gone.is_empty() {
            return;
        }
        for (number, filter) in gone {
            drop(filter);
            // A file re-registered since (never: numbers are not reused) stays.
            if st.files.get(&number).is_some_and(|t| t.live().is_none()) {
                st.files.remove(&number);
                if self.limited() {
                    st.alloc.remove_file(number);
                }
            }
        }
    }

    /// Sets the allocator's budget from the configuration and the entries now.
    fn rebudget(&self, st: &mut State) {
        if let Some(b) = self.config.memory.budget_bytes(st.entries) {
            st.alloc.set_budget(b);
        }
    }

    /// Carries out the allocator's changes: drops first, then loads.
    fn apply(&self, st: &mut State) {
        if self.closing.load(Ordering::Relaxed) {
            // Files leave without the allocator hearing of it now: a plan
            // could load units with bytes a leaving filter still holds.
            return;
        }
        for (number, target) in st.alloc.take_changes() {
            let rf = match st
                .files
                .get(&number)
                .map(|t| (t.filter.is_none(), t.live()))
            {
                Some((_, Some(rf))) => rf,
                Some((true, None)) => {
                    // Not read yet: the units stay reserved for its first
                    // lookup, which loads them. `take_changes` counts what
                    // it hands out as applied, so nothing is reported (an
                    // `applied` of the count just handed changes nothing, at
                    // two lookups per file: every file at open).
                    continue;
                }
                _ => continue,
            };
            // Swaps of one file happen only here, under the budget's lock:
            // what is read of the current filter below stays current.
            let have = rf.with_filter(Filter::resident);
            if target < have {
                rf.replace(rf.with_filter(|current| current.truncated(target)));
                bump(
                    &self.counters.filter_unit_evictions,
                    u64::from(have - target),
                );
                st.alloc.applied(number, target);
            } else if target > have {
                match rf.with_filter(|current| self.loader.load_units(number, current, target)) {
                    Ok(f) => {
                        rf.replace(f);
                        st.alloc.applied(number, target);
                    }
                    Err(_) => st.alloc.applied(number, have),
                }
            }
        }
    }
}

mod access_log;
pub mod choice;
mod hotness;
mod plan;
#[cfg(test)]
mod tests;
mod worker;
