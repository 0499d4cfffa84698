//! The database: its public handle, the state shared with the background
//! threads, and version installation. The parts live in submodules: `open`
//! (recovery), `replay` (the WALs at open), `write` (group commit), `stall` (write throttling), `read`,
//! `flush`, `scheduler` (background threads and compaction) and `snapshot`.

use std::collections::{BTreeMap, VecDeque};
use std::ops::{Bound, RangeBounds};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

use crate::batch::{self, WriteBatch};
use crate::cache::{BlockCache, TableCache};
use crate::clock;
use crate::compaction::{self, ClaimId, Compaction, OutputCtx};
use crate::error::{Error, Result};
use crate::filter::digest::Phase;
use crate::filter::{KeyProbe, MemtableFilter};
use crate::io::{filename, FileLock, FileSystem, StdFs, WritableFile};
use crate::iter::{CursorFactory, DbIterator, InternalIterator, MergingIterator, Pin};
use crate::key::{self, SeqNo};
use crate::keyspace::{Tree, View};
use crate::memtable::{Lookup, Memtable};
use crate::options::{Options, WalRecovery, WriteOptions};
use crate::range_del::Fragments;
use crate::sst::reader::ReadCtx;
use crate::stats::{bump, Counters, LevelStats, Stats};
use crate::version::run::RunIter;
use crate::version::{Version, VersionEdit, VersionSet};
use crate::wal::{
    Damage, DamageKind, LogItem, LogReader, LogWriter, RecoveryReport, WalDrop, HEADER_LEN,
};
use parking_lot::RwLock;

mod approximate;
mod bg_error;
mod checkpoint;
pub(crate) mod conflicts;
mod flush;
pub(crate) mod handles;
mod keyspaces;
mod may_exist;
mod open;
mod properties;
mod read;
mod read_options;
mod replay;
mod scheduler;
mod snapshot;
mod stall;
mod ttl;
pub(crate) mod txn_support;
mod write;

pub use keyspaces::Keyspace;
pub use read_options::ReadOptions;
pub use snapshot::Snapshot;

#[cfg(test)]
mod tests;

/// An open database. `Db` is `Send + Sync`: share it between threads by
/// reference or in an `Arc`. Dropping it stops the background threads; every
/// acknowledged write is already in the WAL.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, Options};
///
/// let db = Db::open(dir.path(), Options::default())?;
/// std::thread::scope(|s| {
///     for i in 0..4 {
///         let db = &db; // `Db` is `Sync`: threads share it by reference
///         s.spawn(move || db.put(format!("key{i}"), "v").unwrap());
///     }
/// });
/// assert_eq!(db.iter()?.count(), 4);
/// db.close()?;
/// let db = Db::open(dir.path(), Options::default())?; // the writes are in the WAL
/// assert_eq!(db.get("key3")?.as_deref(), Some(&b"v"[..]));
/// # Ok(()) }
/// ```
pub struct Db {
    inner: Arc<DbInner>,
    /// What the [`Keyspace`] handles reach the database through (weakly):
    /// taken by [`close`](Db::close) and dropped with the `Db`, which
    /// closes them.
    gate: Option<Arc<handles::Gate>>,
    threads: Vec<JoinHandle<()>>,
}

struct WalState {
    log: LogWriter,
    /// Paces writers while L0 is at its slowdown trigger (see `stall.rs`).
    throttle: stall::Throttle,
}

/// One queued write: the batch travels to whichever writer leads the group.
struct Slot {
    batch: Mutex<Option<WriteBatch>>,
    /// A transaction's commit check, run by the leader under the WAL lock.
    check: Mutex<Option<Box<dyn conflicts::CommitCheck>>>,
    sync: bool,
    result: Mutex<Option<Result<()>>>,
}

struct BgState {
    shutdown: bool,
    /// The background error that stopped writes (see `bg_error.rs`).
    error: Option<Error>,
    /// A resume is clearing `error` (writes stay refused until it is done).
    resuming: bool,
    /// Automatic resume attempts since the error was set.
    resume_attempts: u32,
    /// Successful resumes so far: a flush or compaction notes it when it
    /// starts, and a full disk it met before the last resume is not
    /// reported after it (see `DbInner::set_job_error`).
    resumes: u64,
    /// Compactions running (over every keyspace).
    running: usize,
    /// Where the next search for a compaction starts among the keyspaces.
    rotate: usize,
    /// Manual compactions waiting: automatic ones yield to them.
    manual_waiting: usize,
}

pub(crate) struct DbInner {
    dir: PathBuf,
    opts: Options,
    fs: Arc<dyn FileSystem>,
    counters: Arc<Counters>,
    tables: Arc<TableCache>,
    /// The default keyspace's memtables, version and view.
    tree: Arc<Tree>,
    /// Every live keyspace by id, the default one included. Changed (a
    /// keyspace created or dropped) only under the WAL lock, so a writer
    /// holding it sees a stable set.
    trees: RwLock<BTreeMap<u32, Arc<Tree>>>,
    /// Some keyspace besides the default one is live: writers then look
    /// at every keyspace's memtable when making room.
    multi: AtomicBool,
    /// Held while memtables are flushed: the flush thread and a resume
    /// never flush the same memtable twice.
    flush_lock: Mutex<()>,
    versions: Mutex<VersionSet>,
    wal: Mutex<WalState>,
    /// The WALs this process opened with or started, oldest first, until a
    /// flush finds them obsolete and removes them (without listing the
    /// directory, which holds every SST of the tree).
    wal_files: Mutex<VecDeque<u64>>,
    queue: Mutex<VecDeque<Arc<Slot>>>,
    queue_cv: Condvar,
    last_seq: AtomicU64,
    /// Set once `bg.error` is set: lets writers skip the background lock.
    bg_failed: AtomicBool,
    snapshots: Mutex<BTreeMap<SeqNo, usize>>,
    bg: Mutex<BgState>,
    /// Wakes background threads.
    bg_cv: Condvar,
    /// Wakes threads waiting for background work (stalled writers, flush, compact_range).
    done_cv: Condvar,
    /// Opened with [`Db::open_read_only`]: no background threads, no writes.
    read_only: bool,
    /// What WAL replay did at open.
    recovery: RecoveryReport,
    /// The locks of pessimistic transactions (`txn/locks.rs`).
    locks: crate::txn::locks::LockManager,
    /// The snapshots, iterators and transactions open, by kind (`handles.rs`).
    handles: handles::HandleCounts,
    /// Names this database in the [`WriteBatch`]es of its keyspaces: unique
    /// in the process (never reused, unlike an address), so that a batch or
    /// a keyspace handle of a closed database never passes for one of a
    /// database opened later.
    token: usize,
    _lock: Box<dyn FileLock>,
}

impl Db {
    /// Opens (or creates) the database in `path`. An empty path is
    /// [`Error::InvalidArgument`], refused before anything touches the disk
    /// (`"."` names the current directory).
    pub fn open(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        Self::open_with_fs(path, opts, Arc::new(StdFs))
    }

    /// Opens the database through a custom [`FileSystem`] (fault injection in tests).
    pub fn open_with_fs(
        path: impl AsRef<Path>,
        opts: Options,
        fs: Arc<dyn FileSystem>,
    ) -> Result<Db> {
        let mut db = Db::open_inner(path.as_ref(), opts, fs, false)?;
        let compactors = db.inner.opts.background_threads.saturating_sub(1).max(1);
        let workers = std::iter::once(("sievedb-flush", DbInner::flush_loop as fn(&DbInner)))
            .chain((0..compactors).map(|_| ("sievedb-compact", DbInner::compaction_loop as _)));
        for (name, work) in workers {
            match spawn_worker(&db.inner, name, work) {
                Ok(t) => db.threads.push(t),
                Err(e) => {
                    // Stop the threads already started: they hold the
                    // database (and its LOCK) until they return.
                    let _ = db.shutdown();
                    return Err(Error::Io(e));
                }
            }
        }
        Ok(db)
    }

    /// Opens the database in `path` for reading only: for backups, read-only
    /// mounts and inspection.
    ///
    /// Nothing in the directory is created, written, renamed or removed: no
    /// `LOCK` is taken (so a process that has the database open read-write
    /// is not blocked, and does not block this), no WAL or MANIFEST is
    /// written, and the writes found in the WALs are replayed into memtables
    /// (under [`Options::wal_recovery`], reported by
    /// [`recovery_report`](Self::recovery_report)) instead of being flushed.
    /// No background thread runs. Reads, iterators, snapshots and
    /// [`stats`](Self::stats) work; writes, [`flush`](Self::flush),
    /// [`compact_range`](Self::compact_range) and
    /// [`wait_for_compactions`](Self::wait_for_compactions) return
    /// [`Error::Unsupported`].
    ///
    /// The handle sees the database as its files were at open. If a writer
    /// has it open at the same time, later writes are not seen, and a file
    /// the writer deletes (a compacted SST not yet opened by this handle, a
    /// WAL between listing and reading) makes the open or a read fail with an
    /// I/O error; open a copy for a stable view. A missing directory, or one
    /// without `CURRENT`, is [`Error::InvalidArgument`] naming the path
    /// (`create_if_missing` is ignored), as is an empty path; `error_if_exists`
    /// is refused.
    pub fn open_read_only(path: impl AsRef<Path>, opts: Options) -> Result<Db> {
        Self::open_read_only_with_fs(path, opts, Arc::new(StdFs))
    }

    /// [`open_read_only`](Self::open_read_only) through a custom [`FileSystem`].
    pub fn open_read_only_with_fs(
        path: impl AsRef<Path>,
        opts: Options,
        fs: Arc<dyn FileSystem>,
    ) -> Result<Db> {
        Db::open_inner(path.as_ref(), opts, fs, true)
    }

    /// Recovers the database (see [`DbInner::open`]) into a handle without
    /// background threads. Every I/O error names its path, whatever `fs` is.
    fn open_inner(
        path: &Path,
        opts: Options,
        fs: Arc<dyn FileSystem>,
        read_only: bool,
    ) -> Result<Db> {
        let what = match read_only {
            true => "Db::open_read_only",
            false => "Db::open",
        };
        filename::check_dir_arg(path, what)?;
        opts.validate()?;
        let fs: Arc<dyn FileSystem> = Arc::new(crate::io::NamedFs(fs));
        let inner = Arc::new(DbInner::open(path.to_path_buf(), opts, fs, read_only)?);
        Ok(Db {
            gate: Some(Arc::new(inner.clone())),
            inner,
            threads: Vec::new(),
        })
    }

    /// Whether the handle was opened with [`open_read_only`](Self::open_read_only).
    pub fn is_read_only(&self) -> bool {
        self.inner.read_only
    }

    /// What replaying the write-ahead logs did at open: the WALs replayed,
    /// the records applied and, under [`WalRecovery::PointInTime`] or for a
    /// torn tail, what was dropped and where it was kept.
    pub fn recovery_report(&self) -> &RecoveryReport {
        &self.inner.recovery
    }

    /// Rebuilds the MANIFEST of the (closed) database in `path` from the SSTs
    /// and WALs present, for when it is lost or damaged (LevelDB's
    /// `RepairDB`): every readable entry is merged by sequence number into one
    /// run of the last level of `opts`, keeping the newest version of each key
    /// and dropping deleted keys; damaged files are moved to `lost/`. See
    /// the `repair` module for the steps and their crash safety. The
    /// rebuilt MANIFEST records a TTL database (see [`Options::ttl`]) when
    /// `opts.ttl` is set: repair a database with the TTL-ness it was
    /// created with. An empty path is [`Error::InvalidArgument`] (nothing
    /// is touched).
    pub fn repair(path: impl AsRef<Path>, opts: Options) -> Result<crate::RepairReport> {
        Self::repair_with_fs(path, opts, Arc::new(StdFs))
    }

    /// [`Db::repair`] through a custom [`FileSystem`].
    pub fn repair_with_fs(
        path: impl AsRef<Path>,
        opts: Options,
        fs: Arc<dyn FileSystem>,
    ) -> Result<crate::RepairReport> {
        filename::check_dir_arg(path.as_ref(), "Db::repair")?;
        crate::repair::repair(path.as_ref(), &opts, Arc::new(crate::io::NamedFs(fs)))
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
        let mut b =
            WriteBatch::with_capacity(key.len() + value.len() + crate::batch::ENTRY_OVERHEAD);
        b.put(key, value);
        self.write_with(b, wo)
    }

    /// Merges `operand` into `key` through [`Options::merge_operator`]
    /// (see [`crate::merge`]): a counter increment or an append without
    /// reading the key first. Without a merge operator the write is refused
    /// with [`Error::InvalidArgument`] (nothing is written): every read of
    /// the key would fail.
    ///
    /// ```
    /// # fn main() -> sievedb::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// use std::sync::Arc;
    /// use sievedb::{merge::U64Add, Db, Error, Options};
    ///
    /// let plain = Db::open(dir.path().join("plain"), Options::default())?;
    /// assert!(matches!(plain.merge("hits", 1u64.to_le_bytes()), Err(Error::InvalidArgument(_))));
    /// let db = Db::open(dir.path().join("counters"), Options::builder().merge_operator(Arc::new(U64Add)).build())?;
    /// db.merge("hits", 1u64.to_le_bytes())?;
    /// db.merge("hits", 2u64.to_le_bytes())?;
    /// assert_eq!(db.get("hits")?, Some(3u64.to_le_bytes().to_vec()));
    /// # Ok(()) }
    /// ```
    pub fn merge(&self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) -> Result<()> {
        self.merge_with(key, operand, &WriteOptions::default())
    }

    /// [`merge`](Self::merge) with explicit write options.
    pub fn merge_with(
        &self,
        key: impl AsRef<[u8]>,
        operand: impl AsRef<[u8]>,
        wo: &WriteOptions,
    ) -> Result<()> {
        let (key, operand) = (key.as_ref(), operand.as_ref());
        let mut b =
            WriteBatch::with_capacity(key.len() + operand.len() + crate::batch::ENTRY_OVERHEAD);
        b.merge(key, operand);
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

    /// Deletes every key in `range` (any [`RangeBounds`], as for
    /// [`range`](Self::range)) with one range tombstone, whatever the range
    /// holds: `O(1)` to write. Bounds are normalised to a half-open interval
    /// (see [`WriteBatch::delete_range`]). An empty range (`b..a`, `a..a`)
    /// is a no-op, as deleting a missing key is; a bound longer than
    /// 64 KiB (the key limit) is [`Error::InvalidArgument`].
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
    /// for k in ["a1", "b1", "b2", "c1"] {
    ///     db.put(k, "v")?;
    /// }
    /// db.delete_range(b"b".as_slice()..b"c".as_slice())?; // one tombstone, not a scan
    /// assert_eq!(db.get("b1")?, None);
    /// assert_eq!(db.iter()?.count(), 2);
    /// # Ok(()) }
    /// ```
    pub fn delete_range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<()> {
        self.delete_range_with(range, &WriteOptions::default())
    }

    /// [`delete_range`](Self::delete_range) with explicit write options.
    pub fn delete_range_with<K: AsRef<[u8]>, R: RangeBounds<K>>(
        &self,
        range: R,
        wo: &WriteOptions,
    ) -> Result<()> {
        let mut b = WriteBatch::new();
        b.delete_range(range);
        self.write_with(b, wo)
    }

    /// Applies `batch` atomically.
    pub fn write(&self, batch: WriteBatch) -> Result<()> {
        self.write_with(batch, &WriteOptions::default())
    }

    /// Applies `batch` atomically with explicit write options.
    pub fn write_with(&self, batch: WriteBatch, wo: &WriteOptions) -> Result<()> {
        self.writable("write")?;
        // TTL: values stamped (db/ttl.rs). Checked here, not only in
        // stamp_writes: a call that returns the batch costs the put path ~47
        // instructions (measured, even with `#[inline]`).
        let batch = match self.inner.opts.ttl.is_none() && batch.keyspaces().is_empty() {
            true => batch,
            false => self.inner.stamp_writes(batch)?,
        };
        self.inner.write(batch, wo.sync)
    }

    /// The value of `key`, if any.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        self.get_opt(key, &ReadOptions::default())
    }

    /// The value of `key` with explicit read options (their snapshot, cache
    /// and checksum settings; bounds do not apply to point lookups).
    pub fn get_opt(&self, key: impl AsRef<[u8]>, ro: &ReadOptions) -> Result<Option<Vec<u8>>> {
        self.inner.get_opt(&self.inner.tree, key.as_ref(), ro)
    }

    /// The values of several keys, all read at the same sequence number.
    pub fn multi_get<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        self.multi_get_opt(keys, &ReadOptions::default())
    }

    /// [`multi_get`](Self::multi_get) with explicit read options (as
    /// [`get_opt`](Self::get_opt)).
    pub fn multi_get_opt<K: AsRef<[u8]>>(
        &self,
        keys: impl IntoIterator<Item = K>,
        ro: &ReadOptions,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        self.inner.multi_get_opt(&self.inner.tree, keys, ro)
    }

    /// An iterator over every key in ascending order (a
    /// [`DoubleEndedIterator`]: `.rev()` for descending order).
    pub fn iter(&self) -> Result<DbIterator> {
        self.range::<&[u8], _>(..)
    }

    /// An iterator over the keys in `range`, ascending (`.rev()`: descending).
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<DbIterator> {
        DbInner::range(&self.inner, &self.inner.tree, bounds(&range)?)
    }

    /// An iterator over the keys that start with `prefix` (fjall's name):
    /// the range from `prefix` to its successor (`prefix` with trailing 0xFF
    /// bytes dropped and its last byte incremented; no upper bound for an
    /// empty or all-0xFF prefix).
    ///
    /// ```
    /// # fn main() -> sievedb::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
    /// for k in ["user:1", "user:2", "users", "video:1"] {
    ///     db.put(k, "")?;
    /// }
    /// let keys: Vec<Vec<u8>> = db.prefix("user:")?.map(|kv| kv.map(|(k, _)| k)).collect::<Result<_, _>>()?;
    /// assert_eq!(keys, [b"user:1", b"user:2"]);
    /// assert_eq!(db.prefix("user:")?.rev().next().transpose()?.map(|(k, _)| k), Some(b"user:2".to_vec()));
    /// # Ok(())
    /// # }
    /// ```
    pub fn prefix(&self, prefix: impl AsRef<[u8]>) -> Result<DbIterator> {
        self.range(prefix_bounds(prefix.as_ref())?)
    }

    /// An iterator with explicit read options: their snapshot, bounds
    /// (`lower_bound` inclusive, `upper_bound` exclusive), cache and checksum
    /// settings. (The `rocksdb` crate calls it `iterator_opt`.)
    pub fn iter_opt(&self, ro: &ReadOptions) -> Result<DbIterator> {
        DbInner::iter_opt(&self.inner, &self.inner.tree, ro)
    }

    /// A consistent point-in-time view of the database.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
    /// db.put("k", "old")?;
    /// let snap = db.snapshot();
    /// db.put("k", "new")?;
    /// assert_eq!(snap.get("k")?.as_deref(), Some(&b"old"[..]));
    /// assert_eq!(db.get("k")?.as_deref(), Some(&b"new"[..]));
    /// # Ok(()) }
    /// ```
    pub fn snapshot(&self) -> Snapshot {
        Snapshot::new(self.inner.clone(), handles::HandleKind::Snapshot)
    }

    /// Makes every write acknowledged so far durable: one fsync of the WAL
    /// (RocksDB's `SyncWAL`). Writes made without
    /// [`WriteOptions::sync`](crate::WriteOptions) then survive a power loss,
    /// so a caller can write unsynced, answer once readable, and sync many
    /// writes with one call (as a Raft log's group commit). Concurrent
    /// writers wait for the WAL while it syncs; a sync error stops writes as
    /// a failed sync write does.
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
    /// db.put("a", "1")?;
    /// db.put("b", "2")?;
    /// db.sync_wal()?; // both are durable now
    /// # Ok(()) }
    /// ```
    pub fn sync_wal(&self) -> Result<()> {
        self.writable("sync_wal")?;
        self.inner.sync_wal()
    }

    /// Writes the memtables to SST files and waits until they are flushed.
    pub fn flush(&self) -> Result<()> {
        self.writable("flush")?;
        // Every keyspace's memtable is frozen and flushed together.
        self.inner.flush()
    }

    /// Flushes the memtables, then waits until no compaction is running or
    /// due (as RocksDB's `WaitForCompact`): the tree then has the shape its
    /// options call for. Returns the background error, if one stopped work.
    pub fn wait_for_compactions(&self) -> Result<()> {
        self.writable("wait_for_compactions")?;
        self.inner.flush()?;
        self.inner.wait_for_compactions()
    }

    /// Compacts the files overlapping `range` down to the deepest level
    /// holding data when it starts (after flushing), where they stay:
    /// overwritten versions and tombstones that no snapshot needs are
    /// dropped on the way. That level itself is rewritten only where it
    /// holds several runs, range tombstones, or entries a compaction filter
    /// or TTL may drop, so compacting a range again is cheap and moves
    /// nothing further down (RocksDB's `CompactRange` with its default
    /// `bottommost_level_compaction`).
    pub fn compact_range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<()> {
        self.writable("compact_range")?;
        let (lo, hi) = bounds(&range)?;
        let key = |b: &Bound<Vec<u8>>| match b {
            Bound::Included(k) | Bound::Excluded(k) => Some(k.clone()),
            Bound::Unbounded => None,
        };
        self.inner
            .compact_range(&self.inner.tree, key(&lo).as_deref(), key(&hi).as_deref())
    }

    /// `Error::Unsupported` naming `what` on a read-only handle.
    fn writable(&self, what: &str) -> Result<()> {
        if self.inner.read_only {
            return Err(open::read_only_error(what));
        }
        Ok(())
    }

    /// Current statistics: the levels are every keyspace's together (see
    /// [`Keyspace::stats`] for one keyspace's).
    pub fn stats(&self) -> Stats {
        self.inner.stats(&self.inner.trees())
    }

    /// Stops background work, syncs the WAL and closes the database, reporting
    /// a background error if one happened.
    ///
    /// [`Keyspace`] handles do not keep the database open: from `close` on
    /// (or once the `Db` is dropped), every call through one returns
    /// [`Error::Closed`]. Snapshots, iterators and transactions do keep the
    /// database they read alive: if any is still open, `close` still stops
    /// background work and syncs the WAL, but returns [`Error::Busy`] saying
    /// how many of each are open; they go on reading, and the directory
    /// stays locked (a reopen gets [`Error::Locked`]) until the last of them
    /// is dropped.
    ///
    /// ```
    /// # fn main() -> sievedb::Result<()> {
    /// # let dir = tempfile::tempdir().unwrap();
    /// use sievedb::{Db, Error, Options};
    ///
    /// let db = Db::open(dir.path(), Options::default())?;
    /// let users = db.keyspace("users")?;
    /// users.put("u1", "alice")?;
    /// db.close()?; // the keyspace handle does not keep the database open
    /// assert!(matches!(users.get("u1"), Err(Error::Closed)));
    ///
    /// let db = Db::open(dir.path(), Options::default())?;
    /// let (snap, iter) = (db.snapshot(), db.iter()?);
    /// match db.close() {
    ///     Err(Error::Busy(why)) => assert!(why.starts_with("1 snapshot, 1 iterator of"), "{why}"),
    ///     other => panic!("expected Busy, got {other:?}"),
    /// }
    /// drop((snap, iter)); // the directory is unlocked once they are dropped
    /// let db = Db::open(dir.path(), Options::default())?;
    /// assert_eq!(db.get("u1")?, None); // "u1" is in keyspace "users"
    /// # Ok(()) }
    /// ```
    pub fn close(mut self) -> Result<()> {
        // Keyspace handles are closed first: a call in progress through one
        // finishes with the reference it upgraded.
        self.gate = None;
        self.shutdown()?;
        // Background threads are joined: every other reference is a
        // snapshot, an iterator, a transaction, or a keyspace call ending.
        match Arc::strong_count(&self.inner) - 1 {
            0 => Ok(()),
            n => Err(Error::Busy(format!(
                "{} of {} still open: the database stays locked until they are dropped",
                self.inner.handles.describe(n),
                self.inner.dir.display()
            ))),
        }
    }

    /// Clears a background error caused by a full disk (ENOSPC or an exceeded
    /// quota), as RocksDB's `Resume`: the memtables are written to a fresh WAL
    /// and flushed (a WAL a write failed on may end in a torn record), then
    /// writes are accepted again. A recoverable error is also retried
    /// automatically (see [`Options::max_bg_error_resume_count`]). Returns
    /// `Ok` when there is no error (any more); the error itself when it is
    /// not recoverable (EIO, a failed fsync, corruption, a panicked write:
    /// reopen the database) or when the retry failed again.
    pub fn resume(&self) -> Result<()> {
        self.inner.resume()
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
        self.inner.save_hotness(true);
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

impl Drop for DbInner {
    /// Before the versions drop (fields drop after this): their files need
    /// not be handed to the filter budget one by one.
    fn drop(&mut self) {
        self.tables.filter_budget().close();
    }
}

/// Starts background thread `name` running `work` on `inner`.
fn spawn_worker(
    inner: &Arc<DbInner>,
    name: &str,
    work: fn(&DbInner),
) -> std::io::Result<JoinHandle<()>> {
    #[cfg(test)]
    if tests::injected_spawn_failure() {
        return Err(std::io::Error::other("injected thread spawn failure"));
    }
    let inner = inner.clone();
    std::thread::Builder::new()
        .name(name.to_string())
        .spawn(move || work(&inner))
}

/// A user key checked against [`key::MAX_KEY_LEN`] (`InvalidArgument` if longer).
fn user_key(k: &[u8]) -> Result<&[u8]> {
    key::check_len(k).map_err(Error::InvalidArgument)?;
    Ok(k)
}

/// Owned lower and upper bounds of a user range.
type Bounds = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The block-read policy of `ro` (the level is set per file).
fn block_policy(ro: &ReadOptions) -> ReadCtx {
    ReadCtx {
        level: 0,
        fill_cache: ro.fill_cache,
        verify_checksums: ro.verify_checksums,
    }
}

/// The bounds of the keys starting with `prefix`: `[prefix, successor)`.
fn prefix_bounds(prefix: &[u8]) -> Result<Bounds> {
    let lo = Bound::Included(user_key(prefix)?.to_vec());
    let hi = match crate::iter::prefix_successor(prefix) {
        Some(s) => Bound::Excluded(s),
        None => Bound::Unbounded,
    };
    Ok((lo, hi))
}

/// Converts a user range into owned bounds, each checked as a user key.
fn bounds<K: AsRef<[u8]>, R: RangeBounds<K>>(r: &R) -> Result<Bounds> {
    let own = |b: Bound<&K>| -> Result<Bound<Vec<u8>>> {
        Ok(match b {
            Bound::Included(k) => Bound::Included(user_key(k.as_ref())?.to_vec()),
            Bound::Excluded(k) => Bound::Excluded(user_key(k.as_ref())?.to_vec()),
            Bound::Unbounded => Bound::Unbounded,
        })
    };
    Ok((own(r.start_bound())?, own(r.end_bound())?))
}

impl DbInner {
    /// Logs `edit` to the MANIFEST and makes the resulting version the one
    /// readers and writers see (retiring `flushed`, the frozen memtable the
    /// edit's new file holds: see [`Tree::install`]). Both happen under the
    /// version lock, so versions are installed in the order they were built
    /// (an older version installed after a newer one would lose the newer
    /// one's files).
    fn log_and_install(&self, tree: &Tree, edit: VersionEdit) -> Result<()> {
        {
            let mut versions = self.versions.lock();
            if let Some(v) = versions.log_and_apply_all(vec![edit])?.pop() {
                tree.install(v.1, None);
            }
        }
        self.save_hotness(false);
        Ok(())
    }

    /// The live keyspaces, default first.
    fn trees(&self) -> Vec<Arc<Tree>> {
        self.trees.read().values().cloned().collect()
    }

    /// Saves the filter budget's access counts, `durable` at close (advisory:
    /// a failure only means the next open starts colder).
    fn save_hotness(&self, durable: bool) {
        if !self.read_only {
            let _ = self
                .tables
                .filter_budget()
                .save_hotness(self.fs.as_ref(), &self.dir, durable);
        }
    }
}
