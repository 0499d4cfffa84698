//! What one keyspace owns: its memtables, its current version and the view
//! reads load of both (a [`Tree`]). What every keyspace shares (the WAL, the
//! sequence number, snapshots, the MANIFEST and file numbers, the caches and
//! the filter budget, the background threads) stays in `db/`.
//!
//! A database has a default keyspace (id 0, named [`DEFAULT`]) and any
//! number of named ones; the design is `docs/design/keyspaces.md`.
//! `options.rs` holds [`KeyspaceOptions`].

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use parking_lot::{Mutex, RwLock};

use crate::compaction::{Claims, Pointers};
use crate::memtable::Memtable;
use crate::options::Options;
use crate::version::Version;

mod options;

pub use options::KeyspaceOptions;

/// The name of the default keyspace, which every database has.
pub const DEFAULT: &str = "default";

/// A keyspace's compaction state (guarded by the database's background
/// lock, taken before this one).
#[derive(Default)]
pub(crate) struct CompactionState {
    /// What the running compactions hold of the levels.
    pub(crate) claims: Claims,
    /// Round-robin pointers of leveling.
    pub(crate) pointers: Pointers,
}

/// The memtables: the active one and the frozen ones waiting for flush.
pub(crate) struct MemState {
    pub(crate) mem: Arc<Memtable>,
    /// Oldest first.
    pub(crate) imm: Arc<Vec<Arc<Memtable>>>,
}

/// What a read looks at: the memtables and the version, pinned together.
/// [`Tree::publish_view`] publishes a new one whenever any part changes.
#[derive(Clone)]
pub(crate) struct View {
    pub(crate) mem: Arc<Memtable>,
    pub(crate) imm: Arc<Vec<Arc<Memtable>>>,
    pub(crate) version: Arc<Version>,
    /// The keyspace's options (its merge operator and TTL, for reads).
    pub(crate) opts: Arc<Options>,
}

/// One LSM tree: memtables, the current version, and the view of both.
///
/// Lock order: `mem` before `current` (as [`Tree::publish_view`] and the
/// version installation take them); the view lock is taken before either.
pub(crate) struct Tree {
    /// The keyspace's id (0: the default keyspace).
    pub(crate) id: u32,
    /// The keyspace's name.
    pub(crate) name: String,
    /// The keyspace's options: the database's with its
    /// [`KeyspaceOptions`] applied.
    opts: RwLock<Arc<Options>>,
    /// Its options were given in this process (at open for the default
    /// keyspace, by the first `Db::keyspace`/`keyspace_with` for another);
    /// until then a keyspace recovered at open runs on the database's.
    pub(crate) configured: AtomicBool,
    /// Set once the keyspace is dropped: writes to it fail, flushes and
    /// compactions leave it.
    pub(crate) dropped: AtomicBool,
    /// Busy levels and leveling pointers.
    pub(crate) compaction: Mutex<CompactionState>,
    pub(crate) mem: RwLock<MemState>,
    pub(crate) current: RwLock<Arc<Version>>,
    /// `mem` and `current` together, as reads load them (one lock-free load
    /// instead of two locks and three reference counts per lookup).
    pub(crate) view: ArcSwap<View>,
    /// Serialises [`Tree::publish_view`], so that the last view published
    /// reflects the last change of `mem` or `current`.
    view_lock: Mutex<()>,
    /// Views published so far (incremented after each store into `view`).
    pub(crate) views_published: AtomicU64,
    /// Runs in level 0 of the current version (read by writers without locking).
    pub(crate) l0_runs: AtomicUsize,
    /// Its options' `write_buffer_size` (read by writers without locking).
    pub(crate) write_buffer_size: AtomicUsize,
    /// The newest sequence number of any write of this keyspace that is in
    /// no memtable any more (flushed to a file): a transaction whose
    /// snapshot is older cannot be checked against the memtables alone
    /// (`db/conflicts.rs`). Raised under the memtable lock, before the
    /// memtable leaves.
    pub(crate) flushed_seq: AtomicU64,
}

impl Tree {
    /// Keyspace `id` named `name` under `opts`, of the active memtable
    /// `mem`, the frozen memtables `imm` (oldest first) and `version`.
    /// Every write up to `flushed_seq` is in `version` (or in `imm`).
    pub(crate) fn new(
        id: u32,
        name: &str,
        opts: Arc<Options>,
        mem: Arc<Memtable>,
        imm: Vec<Arc<Memtable>>,
        version: Arc<Version>,
        flushed_seq: u64,
    ) -> Self {
        let imm = Arc::new(imm);
        Tree {
            flushed_seq: AtomicU64::new(flushed_seq),
            write_buffer_size: AtomicUsize::new(opts.write_buffer_size),
            id,
            name: name.to_string(),
            configured: AtomicBool::new(id == 0),
            dropped: AtomicBool::new(false),
            compaction: Mutex::new(CompactionState {
                claims: Claims::default(),
                pointers: Pointers::default(),
            }),
            view: ArcSwap::from_pointee(View {
                mem: mem.clone(),
                imm: imm.clone(),
                version: version.clone(),
                opts: opts.clone(),
            }),
            opts: RwLock::new(opts),
            view_lock: Mutex::new(()),
            views_published: AtomicU64::new(0),
            l0_runs: AtomicUsize::new(version.levels[0].len()),
            mem: RwLock::new(MemState { mem, imm }),
            current: RwLock::new(version),
        }
    }

    /// The keyspace's options.
    pub(crate) fn opts(&self) -> Arc<Options> {
        self.opts.read().clone()
    }

    /// Gives the keyspace its options (the first open of a recovered
    /// keyspace in this process) and publishes them to reads.
    pub(crate) fn configure(&self, opts: Arc<Options>) {
        self.write_buffer_size
            .store(opts.write_buffer_size, Ordering::Relaxed);
        *self.opts.write() = opts;
        self.configured.store(true, Ordering::Release);
        self.publish_view();
    }

    /// Moves to WAL `wal_number` at a memtable switch: a non-empty active
    /// memtable is frozen and `fresh()` takes its place; an empty one is
    /// kept and renumbered (an idle keyspace costs no new memtable).
    /// The caller holds the WAL lock; `last_seq` is the database's last
    /// sequence number (no entry of the frozen memtable is newer).
    pub(crate) fn switch(&self, wal_number: u64, last_seq: u64, fresh: impl FnOnce() -> Memtable) {
        let empty = self.mem.read().mem.is_empty();
        if empty {
            self.mem.read().mem.renumber(wal_number);
        } else {
            self.mem.read().mem.seal(last_seq);
            self.freeze(fresh());
        }
    }

    /// The oldest WAL number this keyspace still needs: that of its oldest
    /// frozen memtable other than `flushing`, else of its active one.
    pub(crate) fn oldest_wal(&self, flushing: Option<&Arc<Memtable>>) -> u64 {
        let m = self.mem.read();
        let unflushed = m
            .imm
            .iter()
            .find(|x| flushing.is_none_or(|f| !Arc::ptr_eq(x, f)));
        unflushed.map_or(m.mem.wal_number(), |x| x.wal_number())
    }
    /// Makes `v` the current version and, when `flushed` (the frozen
    /// memtable whose entries `v` now holds in a file) is given, retires it
    /// in the same step, under the memtable lock: no view ever has a
    /// memtable beside the file its entries were flushed to (a read would
    /// meet each entry twice, and apply a merge operand twice). The caller
    /// holds the version lock, so versions are installed in the order they
    /// were built.
    pub(crate) fn install(&self, v: Arc<Version>, flushed: Option<&Arc<Memtable>>) {
        self.l0_runs.store(v.levels[0].len(), Ordering::Relaxed);
        let mut m = self.mem.write();
        *self.current.write() = v;
        if let Some(flushed) = flushed {
            self.flushed_seq
                .fetch_max(flushed.sealed_seq(), Ordering::AcqRel);
            let imm = m.imm.iter().filter(|x| !Arc::ptr_eq(x, flushed)).cloned();
            m.imm = Arc::new(imm.collect());
        }
        drop(m);
        self.publish_view();
    }

    /// Freezes the active memtable behind the frozen ones and makes `fresh`
    /// the active one, then publishes the view (before any write enters
    /// `fresh`).
    pub(crate) fn freeze(&self, fresh: Memtable) {
        let mut m = self.mem.write();
        let old = std::mem::replace(&mut m.mem, Arc::new(fresh));
        let mut imm = (*m.imm).clone();
        imm.push(old);
        m.imm = Arc::new(imm);
        drop(m);
        self.publish_view();
    }

    /// Publishes the current memtables and version as the view reads load.
    /// Called after every change of `mem` or `current`, before the change
    /// can matter to a read: a switched-in memtable is published before any
    /// write enters it, and a flushed memtable is retired in the same
    /// publish as the version holding its data.
    fn publish_view(&self) {
        let _serial = self.view_lock.lock();
        let m = self.mem.read();
        let view = View {
            mem: m.mem.clone(),
            imm: m.imm.clone(),
            version: self.current.read().clone(),
            opts: self.opts(),
        };
        drop(m);
        self.view.store(Arc::new(view));
        self.views_published.fetch_add(1, Ordering::Release);
    }

    /// Bytes held by the active and frozen memtables (the memtable lock is
    /// released on return).
    pub(crate) fn memtable_bytes(&self) -> u64 {
        let m = self.mem.read();
        (m.mem.approximate_size() + m.imm.iter().map(|x| x.approximate_size()).sum::<usize>())
            as u64
    }

    /// The frozen memtables waiting for flush, oldest first.
    pub(crate) fn frozen(&self) -> Arc<Vec<Arc<Memtable>>> {
        self.mem.read().imm.clone()
    }

    /// The current version.
    pub(crate) fn version(&self) -> Arc<Version> {
        self.current.read().clone()
    }
}
