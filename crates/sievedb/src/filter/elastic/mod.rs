//! Dividing filter memory among files: which prefix of each file's filter
//! units is resident, under a byte budget.
//!
//! A file's filter is split into units (see [`super::units`]); with `n` of
//! them enabled its false-positive rate is `fp(n)`. The [`Allocator`] decides
//! `n` for every live file according to a [`FilterPolicy`]; it is pure
//! decision logic, called by the engine's filter manager under a mutex, which
//! loads and drops the units and reports back with [`Allocator::applied`].
//!
//! * [`monkey`]: Monkey's closed form (memory across runs by their size);
//! * `policy`: the policies by name; `plan`: what each policy plans;
//! * `uniform`: uniform's plan, kept by what changed;
//! * `monkey_plan`: Monkey's plan as a policy, made over the whole tree now
//!   and then and kept by what changed in between;
//! * `skew`: skew-at-write's choice for a new file, priced by its last
//!   optimum;
//! * `access`: accesses counted per file, the clock and the counts' decay;
//! * `batch`: registering a batch of files (a version installed, an open);
//! * `mq`: ElasticBF's multi-queue (memory moved to hot files at run time);
//! * `short`: the files waiting for their starting units, hottest first;
//! * `target`: moving a file's target, and what that keeps consistent;
//! * `trim`: the order units are given back in when the budget falls;
//! * `levels`: totals per level (entries, hotness);
//! * [`inherit`](mod@inherit): hotness handed from compaction inputs to outputs;
//! * [`hotness`]: the `HOTNESS` side file that keeps counts across restarts.
//!
//! Every decision is deterministic: files are kept in ordered maps and ties
//! are broken by file number, so the same calls give the same changes.

mod access;
mod batch;
mod greedy;
pub mod hotness;
pub mod inherit;
mod levels;
pub mod monkey;
mod monkey_plan;
mod mq;
mod plan;
mod policy;
mod short;
mod skew;
mod target;
mod trim;
mod uniform;

#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::sync::Arc;

use levels::Levels;
use monkey_plan::MonkeyPlan;
use mq::MultiQueue;
use short::ShortFiles;
use skew::SkewPrice;
use trim::TrimOrder;
use uniform::UniformPlan;

use super::family::Family;

pub use inherit::{inherit, InheritInput, InheritOutput};
pub use policy::FilterPolicy;

/// ElasticBF acts only if it lowers `E` by more than this fraction of `E`.
pub const GAIN_THRESHOLD: f64 = 1e-4;
/// ... and by more than this many reads: loading a unit is one device read,
/// and `E`'s terms count false positives over the accesses the (decayed)
/// counts remember, so an exchange that saves less than one read over that
/// window costs more than it saves. Without it the queues churned: at 4
/// bits/key and zipf 0.99, 0.08 unit loads per lookup ate the false
/// positives saved (`sievedb experiment elastic-table1`).
pub const LOAD_COST: f64 = 1.0;
/// The most units a file can have (more are ignored).
pub const MAX_UNITS: u32 = 64;
/// Units a new file gets under elastic-uniform by default (the ElasticBF
/// prototype enables two when a table opens).
pub const DEFAULT_INITIAL_UNITS: u32 = 2;
/// The default lifetime is at least this many Gets.
pub const MIN_DEFAULT_LIFETIME: u64 = 1_000;
/// The default half-life is this many lifetimes: counts fade on the time
/// scale of ElasticBF's expiry, so that a file which was hot and expired
/// becomes a cheap victim within a few lifetimes. With 16 lifetimes a hot set
/// that moved on kept its units: its large old counts priced every exchange
/// out (E grew a hundredfold over 8 shifts of the hot range in
/// `tests/filter_memory.rs`'s setting; with 2 it stayed flat).
pub const HALF_LIFE_LIFETIMES: u64 = 2;
/// `E` and the hotness total are recomputed exactly after this many accesses
/// (they are otherwise kept incrementally, which drifts in floating point).
const RECOMPUTE_EVERY: u64 = 1 << 16;
/// Under uniform and monkey, the files registered since the plan wait for
/// free memory while what they lack is at most `budget / WAIT_FRACTION`;
/// monkey and skew-at-write solve their whole-tree plans again once the
/// files registered or removed since the last one pass `1 / WAIT_FRACTION`
/// of the live files, or the budget moved by that fraction; a budget that
/// falls below monkey's plan by at most that fraction of it is met by the
/// newest files.
const WAIT_FRACTION: u64 = 64;
/// Added to every count, times the file's share of its run's entries, when
/// skew-at-write solves its optimum: files nobody has read yet then share
/// memory as lookups would reach them (each lookup probes one file per run,
/// a file of a run in proportion to its entries), not equally per file, which
/// gave the few small files of the top levels every unit (a tie-breaker far
/// below one access).
const SKEW_TIE_WEIGHT: f64 = 1e-6;

/// A file as the allocator sees it.
#[derive(Clone, Debug, PartialEq)]
pub struct FileDesc {
    /// File number.
    pub id: u64,
    /// Level of the tree.
    pub level: usize,
    /// Run id within the level (every L0 file is its own run).
    pub run: u64,
    /// Keys in the file's filter.
    pub entries: u64,
    /// Bytes one unit takes in memory.
    pub unit_bytes: u64,
    /// `fpr[n]` with `n` units enabled, `n = 0..=units`: `fpr[0] = 1`,
    /// non-increasing. `units = fpr.len() − 1` (0: the file has no filter).
    /// Shared: the files of one shape (most of a level) hold one copy.
    pub fpr: Arc<[f64]>,
    /// The family of the file's filter (its rate model and probe cost, see
    /// [`crate::filter::family`]).
    pub family: Family,
}

/// Settings of an [`Allocator`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct AllocConfig {
    /// The policy.
    pub policy: FilterPolicy,
    /// ElasticBF's lifeTime, in Gets: a file not accessed for this long is
    /// expired. `None`: `max(1000, 2 × live files)`, re-evaluated on every
    /// access (the paper sets it to the order of the number of files).
    pub lifetime: Option<u64>,
    /// Units a new file gets under `elastic-uniform` (capped at its units and at the
    /// free budget). `None`: 2, as in the ElasticBF prototype.
    pub initial_units: Option<u32>,
    /// Access counts halve every this many Gets. `None`: [`HALF_LIFE_LIFETIMES`] lifetimes;
    /// `Some(0)`: counts never decay.
    pub half_life: Option<u64>,
    /// Reads an elastic exchange must save beyond ElasticBF's own threshold
    /// (`None`: [`LOAD_COST`]; `Some(0.0)`: the paper's rule alone).
    pub load_cost: Option<f64>,
}

/// What the allocator keeps per live file.
#[derive(Debug)]
struct FileState {
    /// The description, `fpr` sanitised: `fpr[0] = 1`, values in `[0, 1]`,
    /// non-increasing, at most `MAX_UNITS + 1` entries.
    desc: FileDesc,
    /// `desc.fpr.len() − 1`.
    units: u32,
    /// Units the plan wants resident. Invariant: `target <= units`.
    target: u32,
    /// The count last handed out by `take_changes` or reported by `applied`;
    /// the file has a pending change iff `target != handed`.
    handed: u32,
    /// Decayed access count `f_i`. Invariant: finite and `>= 0`.
    hot: f64,
    /// ElasticBF's expiredTime: the file is expired once `clock > expire`.
    expire: u64,
    /// The stamp the file is filed under in its queue (unique; larger =
    /// more recent). Invariant: `stamp <= last`.
    stamp: u64,
    /// Recency stamp of its latest access (or registration). An access
    /// sets only this; the queue re-files the file under it when a scan
    /// meets it ([`MultiQueue`]'s lazy order), so an access moves nothing.
    last: u64,
    /// Its key in the shrink order while that order is kept (`trim`).
    filed: Option<u64>,
    /// Whether its id is in the allocator's `pending` list (so that a file
    /// is listed there at most once).
    queued: bool,
    /// Whether it is filed in the multi-queue (under the elastic policies
    /// every live file is, except while [`add_files`](Allocator::add_files)
    /// registers a batch: its files are filed together at the batch's end).
    in_queue: bool,
}

impl FileState {
    fn fp(&self, n: u32) -> f64 {
        self.desc.fpr.get(n as usize).copied().unwrap_or(1.0)
    }

    /// The file as Monkey's plan sees it; with `first_set_aside`, its units
    /// after the first (the rates from one unit on).
    fn monkey_file(&self, first_set_aside: bool) -> monkey::MonkeyFile<'_> {
        monkey::MonkeyFile {
            run: (self.desc.level, self.desc.run),
            entries: self.desc.entries,
            unit_bytes: self.desc.unit_bytes,
            family: self.desc.family,
            fpr: if first_set_aside && self.units > 0 {
                &self.desc.fpr[1..]
            } else {
                &self.desc.fpr
            },
        }
    }
}

/// Totals kept per run `(level, run)`.
#[derive(Clone, Copy, Debug, Default)]
struct RunAgg {
    entries: u64,
    files: usize,
}

/// Decides how many filter units each live file keeps resident under a byte
/// budget. See the [module documentation](self).
///
/// Invariants after every call: `used_bytes() <= budget()`; no target exceeds
/// its file's units; the changes [`take_changes`](Self::take_changes) returns
/// list decreases first, so a manager applying them in order never holds more
/// than the budget.
#[derive(Debug)]
pub struct Allocator {
    cfg: AllocConfig,
    budget: u64,
    /// Gets so far (ElasticBF's currentTime).
    clock: u64,
    files: BTreeMap<u64, FileState>,
    /// Invariant: `Σ target × unit_bytes` over `files`.
    used: u64,
    /// `E = Σ hot × fp(target)` over `files`, kept incrementally.
    extra_io: f64,
    /// `Σ hot` over `files`, kept incrementally.
    total_hot: f64,
    mq: MultiQueue,
    /// Next recency stamp; larger than every stamp in use.
    next_stamp: u64,
    /// Clock value at which counts were last halved.
    decay_epoch: u64,
    /// Uniform and Monkey: the plan is stale and is brought up to date when
    /// changes are taken.
    dirty: bool,
    /// Memory was freed (a file left, the budget grew) under an elastic
    /// policy: the files of `short` get their starting units from the free
    /// budget at the next `take_changes`.
    top_up: bool,
    /// Files that registered under an elastic policy with fewer units than
    /// they start with (the budget was full, as when a compaction's outputs
    /// register while its inputs still hold their units), hottest first: a
    /// top-up serves them from the front, so that it costs the files it
    /// serves, not a pass over the tree or over every short file.
    short: ShortFiles,
    /// Files whose target may differ from their handed count, in no order.
    /// Invariant: holds every live file whose `queued` is set, once; it may
    /// also hold ids of files that left or were registered again since,
    /// which [`take_changes`](Self::take_changes) skips (their `queued`
    /// is not set, or was cleared by the entry met first). A `Vec` and a
    /// flag rather than an ordered set: the changes are sorted once when
    /// taken, and a set cost a B-tree insert per target moved (every file
    /// at open).
    pending: Vec<u64>,
    /// Accesses since `E` was last recomputed exactly.
    since_recompute: u64,
    /// Bytes [`reshape`](Self::reshape) freed since the plan last took them
    /// into account.
    reshaped_free: u64,
    runs: BTreeMap<(usize, u64), RunAgg>,
    /// Totals per level (see `levels`).
    levels: Levels,
    /// Uniform's plan between changes (empty under the other policies).
    uniform: UniformPlan,
    /// Monkey's plan between whole-tree plans (empty under the others).
    monkey: MonkeyPlan,
    /// Skew-at-write's price of memory (empty under the others).
    skew: SkewPrice,
    /// The order units go in when the budget falls (elastic policies and
    /// skew-at-write).
    trim: TrimOrder,
    /// Files visited so far (one per file an operation touches; a pass over
    /// every file counts them all): what tests pin complexity by.
    work: u64,
    /// Set while [`add_files`](Self::add_files) registers a batch: its
    /// files are filed in the multi-queue together at the end (bulk-built
    /// queues), not one B-tree insert into `Q_0` and a move per file.
    filing_deferred: bool,
    /// Targets moved so far (each [`set_target`](Self::set_target) that
    /// changes one: a move in the multi-queue under the elastic policies,
    /// an entry in `pending`): what tests pin a plan's moves by.
    moves: u64,
    /// Bumped by every change to what a whole-tree plan is made of (a file
    /// registered, removed or reshaped, a count, the budget) and to any
    /// target: equal epochs mean the same plan and the same targets (see
    /// `SkewPrice::in_force`).
    epoch: u64,
}

impl Allocator {
    /// An allocator with no files and a zero budget.
    pub fn new(cfg: AllocConfig) -> Self {
        Allocator {
            cfg,
            budget: 0,
            clock: 0,
            files: BTreeMap::new(),
            used: 0,
            extra_io: 0.0,
            total_hot: 0.0,
            mq: MultiQueue::new(),
            next_stamp: 0,
            decay_epoch: 0,
            dirty: false,
            top_up: false,
            short: ShortFiles::default(),
            pending: Vec::new(),
            since_recompute: 0,
            reshaped_free: 0,
            runs: BTreeMap::new(),
            levels: Levels::default(),
            uniform: UniformPlan::default(),
            monkey: MonkeyPlan::default(),
            skew: SkewPrice::default(),
            trim: TrimOrder::default(),
            work: 0,
            filing_deferred: false,
            moves: 0,
            epoch: 0,
        }
    }

    #[cfg(test)]
    /// Files visited so far by every operation (see the field): a count of
    /// work, not of time, so that tests can pin an operation's complexity.
    pub fn work(&self) -> u64 {
        self.work
    }

    #[cfg(test)]
    /// Targets moved so far by every operation (see the field).
    pub fn moves(&self) -> u64 {
        self.moves
    }

    /// Counts a pass over every live file.
    fn visit_all(&mut self) {
        self.work += self.files.len() as u64;
    }

    #[cfg(test)]
    /// Files in `short`.
    pub fn short_len(&self) -> usize {
        self.short.len()
    }

    #[cfg(test)]
    /// The configuration.
    pub fn config(&self) -> &AllocConfig {
        &self.cfg
    }

    /// Sets the budget in bytes. If it is now below the planned memory, units
    /// are demoted at once: uniform moves its plan, monkey plans again (or,
    /// a little over, takes units from its newest files), the elastic
    /// policies drop the units costing least (`f·Δfp` per byte),
    /// skew-at-write empties the coldest files first (the last two in an
    /// order kept between shrinks, see `trim`).
    pub fn set_budget(&mut self, bytes: u64) {
        self.top_up |= bytes > self.budget;
        if bytes != self.budget {
            self.epoch += 1;
        }
        self.budget = bytes;
        if self.cfg.policy.is_planned() {
            self.dirty = true;
        }
        if self.used <= self.budget {
            return;
        }
        match self.cfg.policy {
            FilterPolicy::Uniform | FilterPolicy::Monkey => self.replan(),
            FilterPolicy::ElasticUniform | FilterPolicy::Elastic | FilterPolicy::SkewAtWrite => {
                self.shrink_in_order()
            }
        }
        debug_assert!(self.used <= self.budget);
    }

    /// The budget in bytes.
    pub fn budget(&self) -> u64 {
        self.budget
    }

    /// Registers a file with 0 units resident (re-registering an id replaces
    /// it). `hotness` is its inherited access count; a value that is not
    /// positive and finite means "no history", and the policy's prior is used
    /// (elastic and skew-at-write: the mean count per run, `Σ f /
    /// runs`, times the file's share of its run's entries, since a lookup
    /// probes one file per run; otherwise 0). Its target then follows the
    /// policy: uniform and monkey place it when changes are taken (it may
    /// wait there for free memory, see `uniform` and `monkey_plan`);
    /// elastic-uniform gives it `initial_units`, elastic Monkey's count for
    /// its run (at least one unit), and skew-at-write its count in the
    /// optimum of all live files (read off that optimum's price, see
    /// `skew`), each capped at what fits in the free budget (nothing is
    /// evicted for a new file).
    pub fn add_file(&mut self, f: FileDesc, hotness: f64) {
        let id = self.insert_file(f, hotness);
        let want = match self.cfg.policy {
            FilterPolicy::Uniform | FilterPolicy::Monkey => return,
            FilterPolicy::ElasticUniform | FilterPolicy::Elastic => self.start_units(id),
            FilterPolicy::SkewAtWrite => self.skew_units(&[id])[0],
        };
        self.start_at(id, want);
    }

    /// Gives a file that just registered `want` units, or what fits of them;
    /// under the elastic policies a file that got fewer joins `short`.
    /// Returns the units it got.
    fn start_at(&mut self, id: u64, want: u32) -> u32 {
        let Some(f) = self.files.get(&id) else {
            return 0;
        };
        let (want, hot) = (want.min(f.units), f.hot);
        let fit = self.units_fitting(self.used, f.target, f.desc.unit_bytes, want);
        self.set_target(id, fit);
        if fit < want && self.cfg.policy.is_elastic() {
            self.short.insert(id, hot);
        }
        fit
    }

    /// Inserts file `f` with 0 units (replacing a file of the same id) and
    /// its count or prior; uniform and monkey are marked for a re-plan.
    /// Returns its id.
    fn insert_file(&mut self, f: FileDesc, hotness: f64) -> u64 {
        // File numbers grow: a file above the last one is new (no search).
        let known = self
            .files
            .last_key_value()
            .is_some_and(|(&last, _)| last >= f.id);
        if known && self.files.contains_key(&f.id) {
            self.remove_file(f.id);
        }
        let (id, mut state) = self.new_state(f, hotness);
        if self.cfg.policy.is_elastic() && !self.filing_deferred {
            self.mq.insert(0, state.stamp, id);
            state.in_queue = true;
        }
        self.files.insert(id, state);
        id
    }

    /// The state of a new file `f` (not registered before) with its count
    /// or prior, counted in every total and plan as
    /// [`insert_file`](Self::insert_file) counts it, but neither in `files`
    /// nor in a queue: the caller puts it there.
    fn new_state(&mut self, f: FileDesc, hotness: f64) -> (u64, FileState) {
        self.work += 1;
        self.epoch += 1;
        let desc = sanitise(f);
        let id = desc.id;
        let run = (desc.level, desc.run);
        let agg = self.runs.entry(run).or_default();
        agg.entries += desc.entries;
        agg.files += 1;

        let hot = if hotness.is_finite() && hotness > 0.0 {
            hotness
        } else {
            match self.cfg.policy {
                FilterPolicy::Elastic => self.monkey_prior(&desc),
                FilterPolicy::SkewAtWrite => self.monkey_prior(&desc),
                _ => 0.0,
            }
        };
        let units = desc.fpr.len() as u32 - 1;
        let stamp = self.next_stamp;
        self.next_stamp += 1;
        let state = FileState {
            desc,
            units,
            target: 0,
            handed: 0,
            hot,
            expire: self.clock + self.lifetime(),
            stamp,
            last: stamp,
            filed: None,
            queued: false,
            in_queue: false,
        };
        self.extra_io += hot * state.fp(0);
        self.total_hot += hot;
        self.levels.add(state.desc.level, state.desc.entries, hot);
        let ub = state.desc.unit_bytes;
        self.uniform_add(id, units, ub);
        self.monkey_add(id);
        self.skew_changed();
        if self.cfg.policy.is_planned() {
            self.dirty = true;
        }
        (id, state)
    }

    /// The target units of a file (what the plan wants resident).
    pub fn target(&self, id: u64) -> Option<u32> {
        self.files.get(&id).map(|f| f.target)
    }

    /// Replaces the description of registered file `f.id` by `f` when both
    /// have the same number of units (a file planned with an estimated shape
    /// whose own filter was read), keeping its target, count and queue
    /// place: `O(log files)`, no re-plan. If its larger units no longer fit,
    /// the file gives up units until they do. Returns false (and changes
    /// nothing) for an unknown file or another number of units.
    pub fn reshape(&mut self, f: FileDesc) -> bool {
        let f = sanitise(f);
        let Some(s) = self.files.get_mut(&f.id) else {
            return false;
        };
        if f.fpr.len() != s.desc.fpr.len() {
            return false;
        }
        let (units, old_unit) = (s.units, s.desc.unit_bytes);
        self.epoch += 1;
        let t = u64::from(s.target);
        self.reshaped_free += t * s.desc.unit_bytes.saturating_sub(f.unit_bytes);
        self.used = self.used - t * s.desc.unit_bytes + t * f.unit_bytes;
        let old_fp = s.fp(s.target);
        s.desc.unit_bytes = f.unit_bytes;
        s.desc.fpr = f.fpr;
        self.extra_io += s.hot * (s.fp(s.target) - old_fp);
        let id = f.id;
        self.trim_refile(id);
        self.uniform_remove(id, units, old_unit);
        self.uniform_add(id, units, f.unit_bytes);
        self.monkey_changed();
        while self.used > self.budget && self.files[&id].target > 0 {
            let t = self.files[&id].target;
            self.set_target(id, t - 1);
        }
        // The planned policies take a reshape into their plan at the cost of
        // the file (monkey counts it toward its next whole-tree plan). Under
        // the elastic policies, memory freed by files smaller than planned
        // goes to the short files once it adds up to 1/64 of the budget: a
        // top-up per file read would cost more than it places.
        self.dirty |= self.cfg.policy.is_planned();
        if self.reshaped_free > self.budget / 64 {
            self.reshaped_free = 0;
            self.top_up = true;
        }
        true
    }

    /// Forgets a file; its units are freed (the manager drops them with the
    /// file, so no change is listed for it).
    pub fn remove_file(&mut self, id: u64) {
        let Some(f) = self.files.remove(&id) else {
            return;
        };
        self.work += 1;
        self.epoch += 1;
        self.trim_unfile(id, &f);
        self.uniform_remove(id, f.units, f.desc.unit_bytes);
        self.monkey_changed();
        self.skew_changed();
        self.used -= f.target as u64 * f.desc.unit_bytes;
        self.levels.remove(f.desc.level, f.desc.entries, f.hot);
        self.extra_io -= f.hot * f.fp(f.target);
        self.total_hot -= f.hot;
        if f.in_queue {
            self.mq.remove(f.target, f.stamp);
        }
        // Its id may stay in `pending`: `take_changes` skips it.
        self.short.remove(id);
        let run = (f.desc.level, f.desc.run);
        if let Some(agg) = self.runs.get_mut(&run) {
            agg.entries -= f.desc.entries;
            agg.files -= 1;
            if agg.files == 0 {
                self.runs.remove(&run);
            }
        }
        if self.files.is_empty() {
            // Start exact again rather than carry rounding residue.
            self.extra_io = 0.0;
            self.total_hot = 0.0;
            self.levels = Levels::default();
        }
        if self.cfg.policy.is_planned() {
            self.dirty = true;
        }
        self.top_up = true;
    }

    /// `(file id, target units)` for every file whose target differs from the
    /// count last handed out or applied, decreases first (then by id); each is
    /// handed out once. Uniform and monkey re-plan here if the tree or the
    /// budget changed.
    pub fn take_changes(&mut self) -> Vec<(u64, u32)> {
        if self.dirty {
            self.replan();
        }
        if std::mem::take(&mut self.top_up) {
            self.top_up_starts();
        }
        let pending = std::mem::take(&mut self.pending);
        // (decreases, increases), each in id order
        let (mut down, mut up) = (Vec::new(), Vec::new());
        let mut take = |id: u64, f: &mut FileState| {
            if f.queued {
                f.queued = false;
                if f.target != f.handed {
                    let to = if f.target < f.handed {
                        &mut down
                    } else {
                        &mut up
                    };
                    to.push((id, f.target));
                    f.handed = f.target;
                }
            }
        };
        if 4 * pending.len() >= self.files.len() {
            // Most files (every file at open): one pass in id order rather
            // than a search per file and a sort.
            self.visit_all();
            for (&id, f) in self.files.iter_mut() {
                take(id, f);
            }
        } else {
            self.work += pending.len() as u64;
            for id in pending {
                if let Some(f) = self.files.get_mut(&id) {
                    take(id, f);
                }
            }
            down.sort_unstable();
            up.sort_unstable();
        }
        down.append(&mut up);
        down
    }

    /// The manager made `units` resident for file `id`. If that is fewer than
    /// it was handed (a load failed) and the target has not moved since, the
    /// target drops to it (the memory becomes free for the plan again);
    /// otherwise any difference is listed again by the next
    /// [`take_changes`](Self::take_changes).
    pub fn applied(&mut self, id: u64, units: u32) {
        let Some(f) = self.files.get_mut(&id) else {
            return;
        };
        let attempted = f.handed;
        f.handed = units;
        if units < attempted && f.target == attempted {
            self.set_target(id, units);
        }
        self.queue_if_pending(id);
    }

    /// Lists file `id` in `pending` if its target differs from its handed
    /// count and it is not listed yet.
    fn queue_if_pending(&mut self, id: u64) {
        if let Some(f) = self.files.get_mut(&id) {
            if f.target != f.handed && !f.queued {
                f.queued = true;
                self.pending.push(id);
            }
        }
    }

    #[cfg(test)]
    /// The target units of a file.
    pub fn units(&self, id: u64) -> Option<u32> {
        self.files.get(&id).map(|f| f.target)
    }

    #[cfg(test)]
    /// `Σ target units × unit_bytes`: the memory the plan uses.
    pub fn used_bytes(&self) -> u64 {
        self.used
    }

    #[cfg(test)]
    /// Live files.
    pub fn len(&self) -> usize {
        self.files.len()
    }

    #[cfg(test)]
    /// Whether there are no live files.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// `want` capped at the file's units and at what fits in the free budget.
    fn fitting(&self, id: u64, want: u32) -> u32 {
        let f = &self.files[&id];
        self.units_fitting(self.used, f.target, f.desc.unit_bytes, want.min(f.units))
    }

    /// Of `want` units of `unit_bytes` each, for a file holding `target`
    /// of them, those that fit in the budget with `used` bytes of it taken
    /// (the file's own units included).
    fn units_fitting(&self, used: u64, target: u32, unit_bytes: u64, want: u32) -> u32 {
        let free = self.budget.saturating_sub(used) + u64::from(target) * unit_bytes;
        match free.checked_div(unit_bytes) {
            Some(fit) => want.min(fit.min(u64::from(u32::MAX)) as u32),
            None => want, // units that take no memory always fit
        }
    }

    /// Recomputes `E` and `Σ f` exactly.
    fn recompute(&mut self) {
        self.visit_all();
        self.extra_io = self.files.values().map(|f| f.hot * f.fp(f.target)).sum();
        self.total_hot = self.files.values().map(|f| f.hot).sum();
        self.levels = self.remade_levels();
        self.since_recompute = 0;
    }
}

/// Makes a file's rates usable: `fpr[0] = 1`, every value in `[0, 1]` (NaN
/// as 1), non-increasing, at most `MAX_UNITS` units. Rates usable already
/// (every file planned from a filter's shape) are kept, not copied.
fn sanitise(mut f: FileDesc) -> FileDesc {
    let usable = |r: &[f64]| {
        r.len() <= MAX_UNITS as usize + 1
            && r.first() == Some(&1.0)
            && r.windows(2).all(|w| w[1] <= w[0])
            && r.iter().all(|p| (0.0..=1.0).contains(p))
    };
    if usable(&f.fpr) {
        return f;
    }
    let mut fpr: Vec<f64> = f.fpr.iter().copied().take(MAX_UNITS as usize + 1).collect();
    if fpr.is_empty() {
        fpr.push(1.0);
    }
    fpr[0] = 1.0;
    let mut prev = 1.0f64;
    for p in fpr.iter_mut() {
        let v = if p.is_nan() { 1.0 } else { p.clamp(0.0, 1.0) };
        prev = prev.min(v);
        *p = prev;
    }
    f.fpr = fpr.into();
    f
}
