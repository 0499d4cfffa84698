//! The database: its public handle, the state shared with the background
//! threads, and version installation. The parts live in submodules: `open`
//! (recovery), `write` (group commit), `stall` (write throttling), `read`,
//! `flush`, `scheduler` (background threads and compaction) and `snapshot`.

use arc_swap::ArcSwap;
use std::collections::{BTreeMap, VecDeque};
use std::ops::{Bound, RangeBounds};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex, RwLock};

use crate::batch::{self, WriteBatch};
use crate::cache::{BlockCache, TableCache};
use crate::clock;
use crate::compaction::{self, Compaction, OutputCtx, Pointers};
use crate::error::{Error, Result};
use crate::filter::digest::Phase;
use crate::filter::{KeyProbe, MemtableFilter};
use crate::io::{filename, FileLock, FileSystem, StdFs};
use crate::iter::{DbIterator, InternalIterator, MergingIterator, Pin};
use crate::key::{self, Kind, SeqNo};
use crate::memtable::{Lookup, Memtable};
use crate::options::{Options, ReadOptions, WriteOptions};
use crate::run::RunIter;
use crate::sst::reader::ReadCtx;
use crate::stats::{bump, Counters, LevelStats, Stats};
use crate::version::{Version, VersionEdit, VersionSet};
use crate::wal::{read_records, LogWriter};

mod flush;
mod open;
mod read;
mod scheduler;
mod snapshot;
mod stall;
mod write;

pub use snapshot::Snapshot;

/// An open database. `Db` is `Send + Sync`: share it between threads by
/// reference or in an `Arc`. Dropping it stops the background threads; every
/// acknowledged write is already in the WAL.
pub struct Db {
    inner: Arc<DbInner>,
    threads: Vec<JoinHandle<()>>,
}

/// The memtables: the active one and the frozen ones waiting for flush.
struct MemState {
    mem: Arc<Memtable>,
    /// Oldest first.
    imm: Arc<Vec<Arc<Memtable>>>,
}

struct WalState {
    log: LogWriter,
}

/// What a read looks at: the memtables and the version, pinned together.
/// [`DbInner::publish_view`] publishes a new one whenever any part changes.
#[derive(Clone)]
struct View {
    mem: Arc<Memtable>,
    imm: Arc<Vec<Arc<Memtable>>>,
    version: Arc<Version>,
}

/// One queued write: the batch travels to whichever writer leads the group.
struct Slot {
    batch: Mutex<Option<WriteBatch>>,
    sync: bool,
    result: Mutex<Option<Result<()>>>,
}

struct BgState {
    shutdown: bool,
    error: Option<Error>,
    /// Levels a running compaction occupies.
    busy: Vec<bool>,
    pointers: Pointers,
    /// Manual compactions waiting: automatic ones yield to them.
    manual_waiting: usize,
}

pub(crate) struct DbInner {
    dir: PathBuf,
    opts: Options,
    fs: Arc<dyn FileSystem>,
    counters: Arc<Counters>,
    tables: Arc<TableCache>,
    mem: RwLock<MemState>,
    current: RwLock<Arc<Version>>,
    /// `mem` and `current` together, as reads load them (one lock-free load
    /// instead of two locks and three reference counts per lookup).
    view: ArcSwap<View>,
    /// Serialises [`DbInner::publish_view`], so that the last view published
    /// reflects the last change of `mem` or `current`.
    view_lock: Mutex<()>,
    /// Views published so far (incremented after each store into `view`).
    views_published: AtomicU64,
    versions: Mutex<VersionSet>,
    wal: Mutex<WalState>,
    queue: Mutex<VecDeque<Arc<Slot>>>,
    queue_cv: Condvar,
    last_seq: AtomicU64,
    /// Set once `bg.error` is set: lets writers skip the background lock.
    bg_failed: AtomicBool,
    /// Runs in level 0 of the current version (read by writers without locking).
    l0_runs: AtomicUsize,
    snapshots: Mutex<BTreeMap<SeqNo, usize>>,
    bg: Mutex<BgState>,
    /// Wakes background threads.
    bg_cv: Condvar,
    /// Wakes threads waiting for background work (stalled writers, flush, compact_range).
    done_cv: Condvar,
    _lock: Box<dyn FileLock>,
}

impl Db {
    /// Opens (or creates) the database in `path`.
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        Self::open_with_fs(path, opts, Arc::new(StdFs))
    }

    /// Opens the database through a custom [`FileSystem`] (fault injection in tests).
    pub fn open_with_fs(
        path: impl AsRef<Path>,
        opts: Options,
        fs: Arc<dyn FileSystem>,
    ) -> Result<Db> {
        opts.validate()?;
        let dir = path.as_ref().to_path_buf();
        let inner = Arc::new(DbInner::open(dir, opts, fs)?);
        let mut threads = Vec::new();
        let spawn = |name: &str, f: fn(&DbInner)| {
            let inner = inner.clone();
            std::thread::Builder::new()
                .name(name.to_string())
                .spawn(move || f(&inner))
        };
        threads.push(spawn("sievedb-flush", DbInner::flush_loop)?);
        let compactors = inner.opts.background_threads.saturating_sub(1).max(1);
        for _ in 0..compactors {
            threads.push(spawn("sievedb-compact", DbInner::compaction_loop)?);
        }
        Ok(Db { inner, threads })
    }

    /// The database directory.
    pub fn path(&self) -> &Path {
        &self.inner.dir
    }

    /// The options the database was opened with.
    pub fn options(&self) -> &Options {
        &self.inner.opts
    }

    /// Sets `key` to `value`.
    pub fn put(&self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) -> Result<()> {
        self.put_with(key, value, &WriteOptions::default())
    }

    /// Sets `key` to `value` with explicit write options.
    pub fn put_with(
        &self,
        key: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        wo: &WriteOptions,
    ) -> Result<()> {
        let (key, value) = (key.as_ref(), value.as_ref());
        let mut b = WriteBatch::with_capacity(key.len() + value.len() + 11);
        b.put(key, value);
        self.write_with(b, wo)
    }

    /// Deletes `key` (a no-op for a missing key).
    pub fn delete(&self, key: impl AsRef<[u8]>) -> Result<()> {
        self.delete_with(key, &WriteOptions::default())
    }

    /// Deletes `key` with explicit write options.
    pub fn delete_with(&self, key: impl AsRef<[u8]>, wo: &WriteOptions) -> Result<()> {
        let key = key.as_ref();
        let mut b = WriteBatch::with_capacity(key.len() + 6);
        b.delete(key);
        self.write_with(b, wo)
    }

    /// Applies `batch` atomically.
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        self.write_with(batch, &WriteOptions::default())
    }

    /// Applies `batch` atomically with explicit write options.
    pub fn write_with(&self, batch: WriteBatch, wo: &WriteOptions) -> Result<()> {
        self.inner.write(batch, wo.sync)
    }

    /// The value of `key`, if any.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// The value of `key` with explicit read options.
    pub fn get_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        let (seq, view) = self.inner.view();
        self.inner.get_in(&view, key.as_ref(), seq, ro.fill_cache)
    }

    /// The values of several keys, all read at the same sequence number.
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let (seq, view) = self.inner.view();
        keys.into_iter()
            .map(|k| self.inner.get_in(&view, k.as_ref(), seq, true))
            .collect()
    }

    /// An iterator over every key in ascending order.
    pub fn iter(&self) -> Result<DbIterator> {
        self.range::<&[u8], _>(..)
    }

    /// An iterator over the keys in `range`, ascending.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<DbIterator> {
        let (seq, view) = self.inner.view();
        self.inner.iter_in(&view, seq, bounds(&range), Vec::new())
    }

    /// A consistent point-in-time view of the database.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.inner.clone())
    }

    /// Writes the memtables to SST files and waits until they are flushed.
    pub fn flush(&self) -> Result<()> {
        self.inner.flush()
    }

    /// Flushes the memtables, then waits until no compaction is running or
    /// due (as RocksDB's `WaitForCompact`): the tree then has the shape its
    /// options call for. Returns the background error, if one stopped work.
    pub fn wait_for_compactions(&self) -> Result<()> {
        self.inner.flush()?;
        self.inner.wait_for_compactions()
    }

    /// Compacts the files overlapping `range` down to the deepest non-empty level.
    pub fn compact_range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<()> {
        let (lo, hi) = bounds(&range);
        let key = |b: &Bound<Vec<u8>>| match b {
            Bound::Included(k) | Bound::Excluded(k) => Some(k.clone()),
            Bound::Unbounded => None,
        };
        self.inner
            .compact_range(key(&lo).as_deref(), key(&hi).as_deref())
    }

    /// Current statistics.
    pub fn stats(&self) -> Stats {
        self.inner.stats()
    }

    /// Stops background work, syncs the WAL and closes the database, reporting
    /// a background error if one happened.
    pub fn close(mut self) -> Result<()> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<()> {
        {
            let mut bg = self.inner.bg.lock();
            bg.shutdown = true;
            self.inner.bg_cv.notify_all();
            self.inner.done_cv.notify_all();
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
        let sync = self.inner.wal.lock().log.sync();
        if let Some(e) = self.inner.bg.lock().error.clone() {
            return Err(e);
        }
        sync
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if !self.threads.is_empty() {
            let _ = self.shutdown();
        }
    }
}

/// Converts a user range into owned bounds.
fn bounds<K: AsRef<[u8]>, R: RangeBounds<K>>(r: &R) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let own = |b: Bound<&K>| match b {
        Bound::Included(k) => Bound::Included(k.as_ref().to_vec()),
        Bound::Excluded(k) => Bound::Excluded(k.as_ref().to_vec()),
        Bound::Unbounded => Bound::Unbounded,
    };
    (own(r.start_bound()), own(r.end_bound()))
}

impl DbInner {
    /// Logs `edit` to the MANIFEST and makes the resulting version the one
    /// readers and writers see. Both happen under the version lock, so versions
    /// are installed in the order they were built (an older version installed
    /// after a newer one would lose the newer one's files).
    fn log_and_install(&self, edit: VersionEdit) -> Result<()> {
        let mut versions = self.versions.lock();
        let v = versions.log_and_apply(edit)?;
        self.l0_runs.store(v.levels[0].len(), Ordering::Relaxed);
        *self.current.write() = v;
        self.publish_view();
        Ok(())
    }

    /// Publishes the current memtables and version as the view reads load.
    /// Called after every change of `mem` or `current`, before the change
    /// can matter to a read: a switched-in memtable is published before any
    /// write enters it, and a flushed memtable is retired only after the
    /// version holding its data was published.
    fn publish_view(&self) {
        let _serial = self.view_lock.lock();
        let m = self.mem.read();
        let view = View {
            mem: m.mem.clone(),
            imm: m.imm.clone(),
            version: self.current.read().clone(),
        };
        drop(m);
        self.view.store(Arc::new(view));
        self.views_published.fetch_add(1, Ordering::Release);
    }

    // ----- stats -----

    fn stats(&self) -> Stats {
        let v = self.current.read().clone();
        let mut s = Stats {
            levels: v
                .levels
                .iter()
                .enumerate()
                .map(|(level, runs)| LevelStats {
                    level,
                    files: runs.iter().map(|r| r.files.len()).sum(),
                    runs: runs.len(),
                    bytes: runs.iter().map(|r| r.bytes()).sum(),
                    entries: runs.iter().flat_map(|r| &r.files).map(|f| f.entries).sum(),
                    ..LevelStats::default()
                })
                .collect(),
            ..Stats::default()
        };
        self.counters.fill(&mut s);
        s.filter_memory_bytes = self.counters.filter_memory.load(Ordering::Relaxed);
        s.block_cache_bytes = self.tables.block_cache().map_or(0, |c| c.used_bytes());
        let m = self.mem.read();
        s.memtable_bytes = (m.mem.approximate_size()
            + m.imm.iter().map(|x| x.approximate_size()).sum::<usize>())
            as u64;
        s.last_sequence = self.last_seq.load(Ordering::Acquire);
        s
    }
}
