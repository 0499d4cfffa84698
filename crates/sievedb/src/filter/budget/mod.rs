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
//! the budget's worker thread ([`worker`]), which replays it into the
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

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock, Weak};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::elastic::{hotness, AllocConfig, Allocator, FileDesc, FilterPolicy};
use super::resident::ResidentFilter;
use super::{Filter, FilterBuilder, FilterIndex, FilterMemory, FilterOptions};
use crate::error::Result;
use crate::io::FileSystem;
use crate::stats::{bump, Counters};

/// Reads filter units from the files (the table cache implements it).
pub trait UnitLoader: Send + Sync {
    /// `current`, a filter of file `number`, with units up to `to` resident.
    fn load_units(&self, number: u64, current: &Filter, to: u32) -> Result<Filter>;
}

/// One lookup in this many records its filter accesses (counted this many
/// times): the multi-queue's bookkeeping is then a quarter of its cost per
/// lookup, and the counts stay unbiased. Sparser samples cost the allocator
/// its aim: with 16, elastic's device-read gain over uniform in
/// `elastic-table1` fell from 1.14–1.17× (every lookup) to 1.02–1.06×; with 4
/// it is 1.11–1.14×, at 3% of a page-cache `readrandom`.
pub const ACCESS_SAMPLE: u32 = 4;
/// Log entries a thread gathers before it hands them to the worker. Each
/// hand-off may wake the worker (a futex wake in the lookup's thread): with
/// 64 entries, a hand-off every ~50 lookups of a page-cache `readmissing`,
/// the wakes made a budgeted lookup 0.37 µs against 0.31 with 1024 (0.27
/// unlimited; BENCHMARKS.md). The allocator then hears of accesses ~800
/// lookups late, well inside a file's lifetime.
pub const LOG_BATCH: usize = 1024;
/// Log entries past which a thread drops the oldest half of its log.
pub const LOG_LIMIT: usize = 1 << 14;
/// Least time between two saves of the hotness file while the database runs.
pub const HOTNESS_SAVE_INTERVAL: Duration = Duration::from_secs(1);
/// The log entry that ends one lookup (a clock tick).
const TICK: u64 = u64::MAX;

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
}

/// Source of [`FilterBudget`] ids (the key of a thread's access log).
static NEXT_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's access log of each budget it has read through.
    static LOGS: RefCell<Vec<(u64, Vec<u64>)>> = const { RefCell::new(Vec::new()) };
    /// Lookups this thread starts before the next one it samples.
    static UNTIL_SAMPLE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

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
    /// When the hotness file was last written.
    last_save: Mutex<Option<Instant>>,
    /// The thread that replays the lookups' logs (under a budget, once
    /// [`start_worker`](Self::start_worker) ran; without it the lookup that
    /// fills a log replays it if it gets the lock).
    worker: OnceLock<worker::Worker>,
}

impl FilterBudget {
    /// A budget loading units through `loader`.
    pub fn new(config: BudgetConfig, loader: Arc<dyn UnitLoader>, counters: Arc<Counters>) -> Self {
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
            }),
            forgotten: Mutex::new(Vec::new()),
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

    /// ElasticBF's E[Extra_IO] now (0 without a budget).
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
            if unread {
                // The tree was written with other filter options than it is
                // opened with: the files not read yet are planned again,
                // once, with this filter's shape.
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

    /// Plans every file whose filter was not read yet again, in one batch,
    /// with the shape of `unread_shape`, keeping their counts; files the
    /// allocator knows that `st.files` does not are forgotten.
    fn replan_unread(&self, st: &mut State) {
        let mut shapes = Provisional::new(&st.unread_shape);
        let unread: Vec<FileShape> = st
            .files
            .values()
            .filter(|t| t.filter.is_none())
            .map(|t| t.shape)
            .collect();
        let mut batch = Vec::with_capacity(unread.len());
        for shape in unread {
            let hotness = st.alloc.hotness(shape.number).unwrap_or(0.0);
            st.alloc.remove_file(shape.number);
            batch.push((shapes.desc(shape), hotness));
        }
        st.alloc.add_files(batch);
    }

    /// Learns the files of a version being installed (at open every file of
    /// the tree; after a flush or a compaction its outputs) in one batch and
    /// plans their units once, without reading them: a file is planned with
    /// the shape of the configured filter ([`BudgetConfig::filter`]), and the
    /// units the plan gives it are reserved in the budget, until its first
    /// lookup reads its filter index and [`register`](Self::register) loads
    /// them. Files known already learn their new place (see
    /// [`relocate`](Self::relocate)). Nothing happens without a budget (a
    /// filter is then read whole at its file's first lookup).
    pub fn add_files(&self, shapes: &[FileShape]) {
        if !self.limited() || shapes.is_empty() {
            return;
        }
        let mut st = self.state.lock();
        self.drain_forgotten(&mut st);
        let mut planned = Provisional::new(&st.unread_shape);
        let mut batch = Vec::new();
        for &shape in shapes {
            if st.files.contains_key(&shape.number) {
                self.relocate_locked(&mut st, shape);
                continue;
            }
            st.files.insert(
                shape.number,
                Tracked {
                    filter: None,
                    shape,
                },
            );
            let hotness = st.pending.remove(&shape.number).unwrap_or(0.0);
            batch.push((planned.desc(shape), hotness));
        }
        st.alloc.add_files(batch);
        self.apply(&mut st);
    }

    /// Whether no file's filter shape is known yet: the next
    /// [`add_files`](Self::add_files) would plan with the configured
    /// options' shape, which a tree written with other options does not
    /// have (then read one file's filter index first and
    /// [`learn_shape`](Self::learn_shape)).
    pub fn needs_shape(&self) -> bool {
        self.limited() && !self.state.lock().shape_learnt
    }

    /// Plans the files whose filter was not read yet with the shape of
    /// `index` (a filter of the tree, read before its files are planned).
    pub fn learn_shape(&self, index: &FilterIndex) {
        let f = index.empty();
        let mut st = self.state.lock();
        // The configured options, when they build filters of this layout
        // and units, give the files' exact unit size; options derived from
        // one filter (its bits per key, rounded up to whole words) are a
        // little off for files of other sizes.
        let o = &self.config.filter;
        if !(o.bits_per_key > 0.0 && o.layout == f.layout() && o.effective_units() == f.units()) {
            st.unread_shape = shape_options(f);
        }
        st.shape_learnt = true;
    }

    /// A file whose filter was planned in [`add_files`](Self::add_files)
    /// turned out to have none: its reservation is released.
    pub fn forget_unfiltered(&self, number: u64) {
        if !self.limited() {
            return;
        }
        let mut st = self.state.lock();
        if st.files.get(&number).is_some_and(|t| t.filter.is_none()) {
            st.files.remove(&number);
            st.alloc.remove_file(number);
            self.apply(&mut st);
        }
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

    /// Records that the file of `shape` now sits at its level and run (a
    /// file moved down by a compaction keeps its units and hotness).
    fn relocate_locked(&self, st: &mut State, shape: FileShape) {
        let Some(t) = st.files.get_mut(&shape.number) else {
            return;
        };
        if t.shape == shape {
            return;
        }
        t.shape = shape;
        let (desc, resident) = match (&t.filter, t.live()) {
            (_, Some(rf)) => (describe(shape, rf.index()), Some(rf.resident())),
            (None, None) => (Provisional::new(&st.unread_shape).desc(shape), None),
            (Some(_), None) => return, // leaving
        };
        let hotness = st.alloc.hotness(shape.number).unwrap_or(0.0);
        st.alloc.remove_file(shape.number);
        st.alloc.add_file(desc, hotness);
        if let Some(units) = resident {
            st.alloc.applied(shape.number, units);
        }
    }

    /// Gives compaction outputs the hotness of their inputs, in proportion
    /// to the entries they take (see [`super::elastic::inherit`]); they pick
    /// it up when they are registered.
    pub fn inherit(
        &self,
        inputs: &[(FileShape, &[u8], &[u8])],
        outputs: &[(FileShape, &[u8], &[u8])],
    ) {
        if !self.limited() || inputs.is_empty() || outputs.is_empty() {
            return;
        }
        let mut st = self.state.lock();
        let ins: Vec<_> = inputs
            .iter()
            .map(|&(s, lo, hi)| super::elastic::InheritInput {
                hotness: st.alloc.hotness(s.number).unwrap_or(0.0),
                entries: s.entries,
                smallest: lo,
                largest: hi,
            })
            .collect();
        let outs: Vec<_> = outputs
            .iter()
            .map(|&(s, lo, hi)| super::elastic::InheritOutput {
                entries: s.entries,
                smallest: lo,
                largest: hi,
            })
            .collect();
        for ((s, _, _), h) in outputs.iter().zip(super::elastic::inherit(&ins, &outs)) {
            st.pending.insert(s.number, h);
        }
    }

    /// Reads the hotness file of `dir` (see [`hotness`]) so that files
    /// registered later start with the access counts they had, and the
    /// clock where it was. Without a budget, or when the file is missing or
    /// damaged, nothing happens (the database starts cold). Call before the
    /// files are registered.
    pub fn load_hotness(&self, fs: &dyn FileSystem, dir: &Path) -> Result<()> {
        if !self.limited() {
            return Ok(());
        }
        if let Some(snap) = hotness::load(fs, dir)? {
            let mut st = self.state.lock();
            st.alloc.set_clock(snap.clock);
            st.pending.extend(snap.files);
        }
        Ok(())
    }

    /// After the files of a reopened database registered: lets the policy
    /// place units by the restored access counts at once (see
    /// [`Allocator::warm_start`]).
    pub fn warm_start(&self) {
        if !self.limited() {
            return;
        }
        let mut st = self.state.lock();
        st.alloc.warm_start();
        self.apply(&mut st);
    }

    /// Writes every registered file's hotness and the clock to the hotness
    /// file of `dir` (atomically replaced). Nothing without a budget. A save
    /// that is not `durable` (made while the database runs, after a flush or
    /// compaction) skips the fsyncs and is skipped itself when the last save
    /// was less than [`HOTNESS_SAVE_INTERVAL`] ago.
    pub fn save_hotness(&self, fs: &dyn FileSystem, dir: &Path, durable: bool) -> Result<()> {
        if !self.limited() || !self.config.policy.uses_counts() {
            return Ok(());
        }
        {
            let mut last = self.last_save.lock();
            let now = Instant::now();
            if !durable && last.is_some_and(|t| now.duration_since(t) < HOTNESS_SAVE_INTERVAL) {
                return Ok(());
            }
            *last = Some(now);
        }
        let snap = {
            let mut st = self.state.lock();
            self.drain_forgotten(&mut st);
            hotness::HotnessSnapshot {
                clock: st.alloc.clock(),
                files: st.alloc.hotness_snapshot(),
            }
        };
        hotness::save(fs, dir, &snap, durable)
    }

    /// A file's metadata was dropped (the file left every version) before its
    /// filter was read: the allocator forgets it (and its reservation) at
    /// its next turn.
    pub fn forget(&self, number: u64) {
        if !self.limited() {
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

    /// Whether the lookup this thread starts records its filter accesses:
    /// under a budget, one in [`ACCESS_SAMPLE`].
    #[inline]
    pub fn sample_lookup(&self) -> bool {
        if !self.limited() {
            return false;
        }
        UNTIL_SAMPLE.with(|c| match c.get() {
            0 => {
                c.set(ACCESS_SAMPLE - 1);
                true
            }
            n => {
                c.set(n - 1);
                false
            }
        })
    }

    /// Notes that the sampled lookup in progress on this thread probed the
    /// filter of file `number`.
    #[inline]
    pub fn record(&self, number: u64) {
        self.with_log(|log| log.push(number));
    }

    /// Ends the sampled lookup in progress on this thread ([`ACCESS_SAMPLE`]
    /// ticks of the allocator's clock); a full log goes to the worker (or,
    /// without one, is replayed here if the allocator's lock is free).
    #[inline]
    pub fn end_lookup(&self) {
        let full = self.with_log(|log| {
            log.push(TICK);
            log.len() >= LOG_BATCH
        });
        if full {
            match self.worker.get() {
                Some(w) => {
                    w.send(
                        self.with_log(|log| std::mem::replace(log, Vec::with_capacity(LOG_BATCH))),
                    );
                }
                None => self.replay(),
            }
        }
    }

    /// The worker's turn: replays `events` (a lookup thread's log) and
    /// carries out the changes.
    fn replay_log(&self, events: &[u64]) {
        let mut st = self.state.lock();
        self.drain_forgotten(&mut st);
        Self::feed(&mut st, events);
        self.apply(&mut st);
    }

    /// Replays this thread's log if the allocator's lock is free.
    fn replay(&self) {
        let Some(mut st) = self.state.try_lock() else {
            self.with_log(|log| {
                if log.len() > LOG_LIMIT {
                    log.drain(..log.len() / 2);
                }
            });
            return;
        };
        let events = self.with_log(std::mem::take);
        self.drain_forgotten(&mut st);
        Self::feed(&mut st, &events);
        self.apply(&mut st);
        // Give the buffer back, so the log does not reallocate.
        let mut events = events;
        events.clear();
        self.with_log(|log| {
            if log.is_empty() {
                *log = events;
            }
        });
    }

    /// Replays logged events into the allocator: each sampled lookup and
    /// access stands for [`ACCESS_SAMPLE`] of them.
    fn feed(st: &mut State, events: &[u64]) {
        for e in events {
            if *e == TICK {
                st.alloc.tick(u64::from(ACCESS_SAMPLE));
            } else if st.files.contains_key(e) {
                st.alloc.record_accesses(*e, f64::from(ACCESS_SAMPLE));
            }
        }
    }

    fn with_log<R>(&self, f: impl FnOnce(&mut Vec<u64>) -> R) -> R {
        LOGS.with(|logs| {
            let mut logs = logs.borrow_mut();
            let i = match logs.iter().position(|(id, _)| *id == self.id) {
                Some(i) => i,
                None => {
                    logs.push((self.id, Vec::with_capacity(LOG_BATCH)));
                    logs.len() - 1
                }
            };
            f(&mut logs[i].1)
        })
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
        for (number, target) in st.alloc.take_changes() {
            let rf = match st
                .files
                .get(&number)
                .map(|t| (t.filter.is_none(), t.live()))
            {
                Some((_, Some(rf))) => rf,
                Some((true, None)) => {
                    // Not read yet: the units stay reserved for its first
                    // lookup, which loads them.
                    st.alloc.applied(number, target);
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

/// The allocator's view of files whose filter index was not read: the shape
/// of the filter the options build for a file's entries.
struct Provisional {
    builder: FilterBuilder,
    filters: bool,
    /// The last description made: files of one size share their shape (a
    /// bulk-loaded or compacted level is mostly files of one size).
    last: Option<FileDesc>,
}

impl Provisional {
    fn new(opts: &FilterOptions) -> Self {
        Provisional {
            builder: FilterBuilder::new(opts),
            filters: opts.bits_per_key > 0.0,
            last: None,
        }
    }

    fn desc(&mut self, shape: FileShape) -> FileDesc {
        let placed = |d: &FileDesc| FileDesc {
            id: shape.number,
            level: shape.level,
            run: shape.run,
            ..d.clone()
        };
        if let Some(d) = self.last.as_ref().filter(|d| d.entries == shape.entries) {
            return placed(d);
        }
        let f = self.builder.shape_for(shape.entries);
        let units = if self.filters { f.units() } else { 0 };
        let d = FileDesc {
            id: shape.number,
            level: shape.level,
            run: shape.run,
            entries: shape.entries,
            unit_bytes: f.unit_memory_bytes() as u64,
            fpr: std::iter::once(1.0)
                .chain((1..=units).map(|j| f.theoretical_fpr_units(j)))
                .collect(),
        };
        self.last = Some(d.clone());
        d
    }
}

/// Options that build filters of `f`'s shape (layout, units, probes, bits
/// per key) for other key counts.
fn shape_options(f: &Filter) -> FilterOptions {
    FilterOptions {
        bits_per_key: f.bits_per_key(),
        layout: f.layout(),
        units: f.units(),
        num_probes: Some(f.probes_per_unit()),
        ..FilterOptions::default()
    }
}

/// The allocator's view of a file.
fn describe(shape: FileShape, index: &FilterIndex) -> FileDesc {
    FileDesc {
        id: shape.number,
        level: shape.level,
        run: shape.run,
        entries: shape.entries,
        unit_bytes: index.unit_bytes(),
        fpr: (0..=index.units()).map(|n| index.fpr(n)).collect(),
    }
}

#[cfg(test)]
mod tests;
mod worker;
