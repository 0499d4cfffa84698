//! The database: recovery, the write path (group commit into the WAL and the
//! memtable), the read path, snapshots, and the background flush and
//! compaction threads.

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
use crate::options::{CompactionStyle, Options, ReadOptions, WriteOptions};
use crate::run::RunIter;
use crate::sst::reader::ReadCtx;
use crate::stats::{bump, Counters, LevelStats, Stats};
use crate::version::{Version, VersionEdit, VersionSet};
use crate::wal::{read_records, LogWriter};

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

/// Largest group a commit leader gathers.
const MAX_GROUP_BYTES: usize = 1 << 20;

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

/// A point-in-time view: reads see exactly the writes acknowledged before it
/// was taken. Compaction keeps the versions it needs until it is dropped.
pub struct Snapshot {
    inner: Arc<DbInner>,
    seq: SeqNo,
}

impl Snapshot {
    fn new(inner: Arc<DbInner>) -> Self {
        let mut snaps = inner.snapshots.lock();
        let seq = inner.last_seq.load(Ordering::Acquire);
        *snaps.entry(seq).or_insert(0) += 1;
        drop(snaps);
        Snapshot { inner, seq }
    }

    /// The sequence number the snapshot reads at.
    pub fn sequence(&self) -> SeqNo {
        self.seq
    }

    /// The value of `key` as of the snapshot.
    pub fn get(&self, key: impl AsRef<[u8]>) -> Result<Option<Vec<u8>>> {
        let view = self.inner.view_at_snapshot();
        self.inner.get_in(&view, key.as_ref(), self.seq, true)
    }

    /// An iterator over every key as of the snapshot.
    pub fn iter(&self) -> Result<DbIterator> {
        self.range::<&[u8], _>(..)
    }

    /// An iterator over `range` as of the snapshot.
    pub fn range<K: AsRef<[u8]>, R: RangeBounds<K>>(&self, range: R) -> Result<DbIterator> {
        let pin: Pin = Box::new(SnapshotPin(Snapshot::new_at(self.inner.clone(), self.seq)));
        let view = self.inner.view_at_snapshot();
        self.inner
            .iter_in(&view, self.seq, bounds(&range), vec![pin])
    }

    fn new_at(inner: Arc<DbInner>, seq: SeqNo) -> Self {
        *inner.snapshots.lock().entry(seq).or_insert(0) += 1;
        Snapshot { inner, seq }
    }
}

/// Keeps a snapshot registered while an iterator made from it lives.
struct SnapshotPin(#[allow(dead_code)] Snapshot);

impl Drop for Snapshot {
    fn drop(&mut self) {
        let mut snaps = self.inner.snapshots.lock();
        if let Some(n) = snaps.get_mut(&self.seq) {
            *n -= 1;
            if *n == 0 {
                snaps.remove(&self.seq);
            }
        }
    }
}

impl DbInner {
    fn open(dir: PathBuf, opts: Options, fs: Arc<dyn FileSystem>) -> Result<DbInner> {
        if !fs.exists(&dir) {
            if !opts.create_if_missing {
                return Err(Error::InvalidArgument(format!(
                    "database {} does not exist (create_if_missing is off)",
                    dir.display()
                )));
            }
            fs.create_dir_all(&dir)?;
        } else if !dir.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        let lock = crate::io::lock_dir(fs.as_ref(), &dir)?;
        if opts.use_direct_reads {
            // Fail at open, not at the first read, where O_DIRECT is refused.
            fs.open_random(&filename::lock(&dir), true).map_err(|e| {
                if e.raw_os_error() == Some(libc::EINVAL) {
                    Error::Unsupported(format!(
                        "the file system of {} refuses O_DIRECT (use_direct_reads)",
                        dir.display()
                    ))
                } else {
                    Error::Io(e)
                }
            })?;
        }
        let counters = Arc::new(Counters::new(opts.max_levels));
        let blocks = (opts.block_cache_capacity > 0)
            .then(|| Arc::new(BlockCache::new(opts.block_cache_capacity)));
        let tables = Arc::new(TableCache::new(
            fs.clone(),
            dir.clone(),
            &opts,
            blocks,
            counters.clone(),
        ));
        let mut versions = VersionSet::new(&dir, fs.clone(), tables.clone(), opts.max_levels);
        let names = fs.list_dir(&dir)?;
        if fs.exists(&filename::current(&dir)) {
            if opts.error_if_exists {
                return Err(Error::InvalidArgument(format!(
                    "database {} already exists",
                    dir.display()
                )));
            }
            versions.recover()?;
        } else if names.iter().any(|n| match filename::parse(n) {
            // Nothing is acknowledged before CURRENT exists, so a MANIFEST or an
            // empty WAL without CURRENT is left over from an interrupted creation
            // (deleted below as obsolete); an SST or a non-empty WAL is data.
            Some(filename::FileKind::Sst(_)) => true,
            Some(filename::FileKind::Wal(_)) => {
                std::fs::metadata(dir.join(n)).map_or(true, |m| m.len() > 0)
            }
            _ => false,
        }) {
            return Err(Error::corruption(
                filename::current(&dir),
                "CURRENT is missing but the directory holds database files",
            ));
        }
        // Never reuse a file number that exists on disk.
        for n in &names {
            if let Some(
                filename::FileKind::Wal(x)
                | filename::FileKind::Sst(x)
                | filename::FileKind::Manifest(x),
            ) = filename::parse(n)
            {
                versions.next_file_number = versions.next_file_number.max(x + 1);
            }
        }
        let mut wals: Vec<u64> = names
            .iter()
            .filter_map(|n| match filename::parse(n) {
                Some(filename::FileKind::Wal(x)) if x >= versions.log_number => Some(x),
                _ => None,
            })
            .collect();
        wals.sort_unstable();

        let mut edit = VersionEdit::default();
        let mut last_seq = versions.last_sequence;
        let mut mem = Arc::new(Memtable::new(0));
        for &w in &wals {
            let path = filename::wal(&dir, w);
            let data = fs.read_all(&path)?;
            for rec in read_records(&data, &path, crate::wal::Tail::Lenient)? {
                let (seq, entries) = batch::decode(rec).map_err(|d| Error::corruption(&path, d))?;
                for (i, e) in entries.iter().enumerate() {
                    mem.insert(seq + i as u64, e.kind, e.key, e.value);
                }
                last_seq =
                    last_seq.max(seq + entries.len() as u64 - u64::from(!entries.is_empty()));
                if mem.approximate_size() >= opts.write_buffer_size {
                    recovery_flush(&mut versions, &fs, &dir, &opts, &mem, &mut edit)?;
                    mem = Arc::new(Memtable::new(0));
                }
            }
        }
        if !mem.is_empty() {
            recovery_flush(&mut versions, &fs, &dir, &opts, &mem, &mut edit)?;
        }
        let wal_number = versions.new_file_number();
        let wal_path = filename::wal(&dir, wal_number);
        let log = LogWriter::new(fs.create(&wal_path)?, wal_path);
        fs.sync_dir(&dir)?;
        edit.log_number = Some(wal_number);
        edit.last_sequence = Some(last_seq);
        let current = versions.log_and_apply(edit)?;
        let l0_runs = current.levels[0].len();

        let mem = Arc::new(new_memtable(&opts, wal_number));
        let imm = Arc::new(Vec::new());
        let inner = DbInner {
            view: ArcSwap::from_pointee(View {
                mem: mem.clone(),
                imm: imm.clone(),
                version: current.clone(),
            }),
            view_lock: Mutex::new(()),
            views_published: AtomicU64::new(0),
            mem: RwLock::new(MemState { mem, imm }),
            current: RwLock::new(current),
            wal: Mutex::new(WalState { log }),
            queue: Mutex::new(VecDeque::new()),
            queue_cv: Condvar::new(),
            last_seq: AtomicU64::new(last_seq),
            bg_failed: AtomicBool::new(false),
            l0_runs: AtomicUsize::new(l0_runs),
            snapshots: Mutex::new(BTreeMap::new()),
            bg: Mutex::new(BgState {
                shutdown: false,
                error: None,
                busy: vec![false; opts.max_levels],
                pointers: Pointers::default(),
                manual_waiting: 0,
            }),
            bg_cv: Condvar::new(),
            done_cv: Condvar::new(),
            versions: Mutex::new(versions),
            dir,
            opts,
            fs,
            counters,
            tables,
            _lock: lock,
        };
        inner.delete_obsolete_files()?;
        Ok(inner)
    }

    /// Removes WALs, SSTs and MANIFESTs the live version no longer needs.
    fn delete_obsolete_files(&self) -> Result<()> {
        let (live, log_number, manifest) = {
            let vs = self.versions.lock();
            let live: std::collections::HashSet<u64> =
                vs.current().files().map(|(_, f)| f.number).collect();
            (live, vs.log_number, vs.manifest_number())
        };
        for name in self.fs.list_dir(&self.dir)? {
            let remove = match filename::parse(&name) {
                Some(filename::FileKind::Wal(n)) => n < log_number,
                Some(filename::FileKind::Sst(n)) => !live.contains(&n),
                Some(filename::FileKind::Manifest(n)) => n != manifest,
                Some(filename::FileKind::Temp) => true,
                None => false,
            };
            if remove {
                let _ = self.fs.remove_file(&self.dir.join(&name));
            }
        }
        Ok(())
    }

    // ----- writes -----

    fn write(&self, mut batch: WriteBatch, sync: bool) -> Result<()> {
        batch.validate()?;
        if batch.is_empty() {
            return Ok(());
        }
        if self.bg_failed.load(Ordering::Acquire) {
            if let Some(e) = &self.bg.lock().error {
                return Err(Error::ReadOnly(e.to_string()));
            }
        }
        // Fast path: nobody else is writing, so there is no group to form.
        if let Some(mut wal) = self.wal.try_lock() {
            if self.queue.lock().is_empty() {
                return self.write_batches(&mut wal, std::slice::from_mut(&mut batch), sync);
            }
        }
        let slot = Arc::new(Slot {
            batch: Mutex::new(Some(batch)),
            sync,
            result: Mutex::new(None),
        });
        let mut q = self.queue.lock();
        q.push_back(slot.clone());
        loop {
            if let Some(r) = slot.result.lock().take() {
                return r;
            }
            if Arc::ptr_eq(&q[0], &slot) {
                break;
            }
            self.queue_cv.wait(&mut q);
        }
        // This writer leads: gather a group from the front of the queue.
        let mut group = Vec::new();
        let mut bytes = 0usize;
        for s in q.iter() {
            let size = s.batch.lock().as_ref().map_or(0, WriteBatch::size_in_bytes);
            if !group.is_empty() && bytes + size > MAX_GROUP_BYTES {
                break;
            }
            bytes += size;
            group.push(s.clone());
        }
        drop(q);
        let mut batches: Vec<WriteBatch> = group
            .iter()
            .map(|s| s.batch.lock().take().expect("batch present"))
            .collect();
        let sync = group.iter().any(|s| s.sync);
        let result = self.write_batches(&mut self.wal.lock(), &mut batches, sync);
        let mut q = self.queue.lock();
        for s in &group {
            let front = q.pop_front().expect("group member queued");
            debug_assert!(Arc::ptr_eq(&front, s));
            if !Arc::ptr_eq(s, &slot) {
                *s.result.lock() = Some(result.clone());
            }
        }
        self.queue_cv.notify_all();
        result
    }

    /// Logs `batches` as one WAL write (one fsync when `sync`) and applies them
    /// to the memtable. The caller holds the WAL lock, so writes never interleave.
    fn write_batches(
        &self,
        wal: &mut WalState,
        batches: &mut [WriteBatch],
        sync: bool,
    ) -> Result<()> {
        let mem = self.make_room(wal)?;
        let first = self.last_seq.load(Ordering::Acquire) + 1;
        let mut seq = first;
        for b in batches.iter_mut() {
            let rec = b.encode(seq);
            if let Err(e) = wal.log.add_record(rec) {
                return Err(self.set_bg_error(e));
            }
            seq += b.len() as u64;
        }
        let logged = if sync {
            wal.log.sync()
        } else {
            wal.log.flush()
        };
        if let Err(e) = logged {
            return Err(self.set_bg_error(e));
        }
        let (mut puts, mut dels, mut user_bytes, mut wal_bytes) = (0, 0, 0, 0);
        let mut s = first;
        for b in batches.iter_mut() {
            let rec = b.encode(s);
            wal_bytes += rec.len() as u64 + crate::wal::HEADER_LEN as u64;
            batch::for_each_entry(rec, |e| {
                mem.insert(s, e.kind, e.key, e.value);
                s += 1;
                user_bytes += (e.key.len() + e.value.len()) as u64;
                match e.kind {
                    Kind::Put => puts += 1,
                    Kind::Delete => dels += 1,
                }
            })
            .expect("batch encoded by this process");
        }
        self.last_seq.store(seq - 1, Ordering::Release);
        let c = &self.counters;
        bump(&c.puts, puts);
        bump(&c.deletes, dels);
        bump(&c.user_bytes_written, user_bytes);
        bump(&c.wal_bytes_written, wal_bytes);
        bump(&c.bytes_written, wal_bytes);
        Ok(())
    }

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

    /// Records a background/WAL error: the database becomes read-only.
    fn set_bg_error(&self, e: Error) -> Error {
        let mut bg = self.bg.lock();
        if bg.error.is_none() {
            bg.error = Some(e.clone());
            self.bg_failed.store(true, Ordering::Release);
        }
        self.done_cv.notify_all();
        e
    }

    /// Makes sure the active memtable has room, stalling or switching as
    /// needed; returns the memtable to write into.
    fn make_room(&self, wal: &mut WalState) -> Result<Arc<Memtable>> {
        let mut slowed = false;
        loop {
            let l0 = self.l0_runs.load(Ordering::Relaxed);
            if !slowed && l0 >= self.opts.level0_slowdown_trigger {
                std::thread::sleep(Duration::from_millis(1));
                slowed = true;
                continue;
            }
            let (mem, imms) = {
                let m = self.mem.read();
                (m.mem.clone(), m.imm.len())
            };
            if mem.approximate_size() < self.opts.write_buffer_size {
                return Ok(mem);
            }
            let mut bg = self.bg.lock();
            if let Some(e) = &bg.error {
                return Err(Error::ReadOnly(e.to_string()));
            }
            if bg.shutdown {
                return Err(Error::Closed);
            }
            if imms >= self.opts.max_immutable_memtables
                || self.l0_runs.load(Ordering::Relaxed) >= self.opts.level0_stop_trigger
            {
                self.bg_cv.notify_all();
                self.done_cv.wait_for(&mut bg, Duration::from_millis(100));
                continue;
            }
            drop(bg);
            self.switch_memtable(wal)?;
        }
    }

    /// Freezes the active memtable and starts a new WAL (caller holds the WAL lock).
    fn switch_memtable(&self, wal: &mut WalState) -> Result<()> {
        let number = self.versions.lock().new_file_number();
        let path = filename::wal(&self.dir, number);
        let file = self.fs.create(&path)?;
        self.fs.sync_dir(&self.dir)?;
        // Everything acknowledged is already in the old WAL; sync it so a later
        // synced write in the new WAL never survives a power loss that older
        // unsynced writes do not.
        wal.log.sync()?;
        wal.log = LogWriter::new(file, path);
        let mut m = self.mem.write();
        let old = std::mem::replace(&mut m.mem, Arc::new(new_memtable(&self.opts, number)));
        let mut imm = (*m.imm).clone();
        imm.push(old);
        m.imm = Arc::new(imm);
        drop(m);
        self.publish_view();
        let _bg = self.bg.lock();
        self.bg_cv.notify_all();
        Ok(())
    }

    // ----- reads -----

    /// The memtables and version to read, plus the newest sequence number they
    /// answer for consistently.
    ///
    /// Sound because (1) the view's version was installed before the
    /// sequence number is read, so every compaction in it chose what to drop
    /// with a smallest snapshot `<=` that number; and (2) no publish finished
    /// between loading the view and reading the number, so no memtable the
    /// view lacks holds a write up to that number: a switched-in memtable
    /// receives writes only after its publish finished (and a write seen
    /// through `last_seq` happened after it), and a retired memtable's data
    /// is in a version published before it was retired.
    fn view(&self) -> (SeqNo, arc_swap::Guard<Arc<View>>) {
        loop {
            // A publish stores its view before it counts itself, so an
            // unchanged count means no publish finished in between.
            let before = self.views_published.load(Ordering::Acquire);
            let view = self.view.load();
            let seq = self.last_seq.load(Ordering::Acquire);
            if self.views_published.load(Ordering::Acquire) == before {
                return (seq, view);
            }
        }
    }

    /// A view for a sequence number a registered snapshot protects: every
    /// write up to it was published before the snapshot was taken.
    fn view_at_snapshot(&self) -> arc_swap::Guard<Arc<View>> {
        self.view.load()
    }

    /// Looks `key` up in `view` as of `seq`. One [`KeyProbe`] serves the
    /// memtable filters and every SST filter, so under `levels` sharing the
    /// key is hashed at most once. One lookup in
    /// [`Options::lookup_breakdown_every`] is timed phase by phase.
    fn get_in(
        &self,
        view: &View,
        key: &[u8],
        seq: SeqNo,
        fill_cache: bool,
    ) -> Result<Option<Vec<u8>>> {
        let start = Counters::sample_lookup(self.opts.lookup_breakdown_every).then(clock::ticks);
        let mut probe = KeyProbe::new(key, self.opts.filter.sharing);
        if start.is_some() {
            probe.enable_timing();
        }
        let r = self.lookup(view, &mut probe, seq, fill_cache);
        self.counters
            .finish_lookup(&probe.tally, probe.digests_computed);
        if let (Some(t0), Some(phases)) = (start, probe.phase_ticks()) {
            self.counters
                .breakdown
                .record(clock::ticks().wrapping_sub(t0), phases);
        }
        Ok(match r? {
            Lookup::Value(v) => Some(v),
            _ => None,
        })
    }

    /// The memtables, newest first, then the version.
    fn lookup(
        &self,
        view: &View,
        probe: &mut KeyProbe<'_>,
        seq: SeqNo,
        fill_cache: bool,
    ) -> Result<Lookup> {
        thread_local! {
            /// The seek key of this thread's lookups, reused (no allocation per lookup).
            static SEEK: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        SEEK.with(|cell| match cell.try_borrow_mut() {
            Ok(mut seek) => self.lookup_with(view, probe, seq, fill_cache, &mut seek),
            // A lookup nested in another on this thread (none today): its own buffer.
            Err(_) => self.lookup_with(view, probe, seq, fill_cache, &mut Vec::new()),
        })
    }

    /// [`DbInner::lookup`] with `buf` as the buffer of the seek key.
    fn lookup_with(
        &self,
        view: &View,
        probe: &mut KeyProbe<'_>,
        seq: SeqNo,
        fill_cache: bool,
        buf: &mut Vec<u8>,
    ) -> Result<Lookup> {
        let user_key = probe.key();
        let mut seek = key::LazySeek::new(buf, seq);
        for m in std::iter::once(&view.mem).chain(view.imm.iter().rev()) {
            if m.is_empty() {
                continue;
            }
            if m.filter().is_some() {
                probe.tally.memtable_filter_probes += 1;
                let start = probe.phase_start();
                let maybe = m.may_contain(probe);
                probe.phase_end(start, Phase::Filter);
                if !maybe {
                    probe.tally.memtable_filter_negatives += 1;
                    continue;
                }
            }
            match m.get(user_key, seek.get(user_key)) {
                Lookup::Absent => {}
                found => {
                    bump(&self.counters.memtable_hits, 1);
                    return Ok(found);
                }
            }
        }
        view.version.get(probe, &mut seek, fill_cache)
    }

    fn iter_in(
        &self,
        view: &View,
        seq: SeqNo,
        (lo, hi): (Bound<Vec<u8>>, Bound<Vec<u8>>),
        mut pins: Vec<Pin>,
    ) -> Result<DbIterator> {
        let View { mem, imm, version } = view.clone();
        let mut children: Vec<Box<dyn InternalIterator>> = vec![Box::new(mem.iter())];
        for m in imm.iter().rev() {
            children.push(Box::new(m.iter()));
        }
        for (level, runs) in version.levels.iter().enumerate() {
            for run in runs {
                let ctx = ReadCtx {
                    level,
                    fill_cache: true,
                };
                children.push(Box::new(RunIter::new(run.files.clone(), ctx)));
            }
        }
        pins.push(Box::new(version));
        Ok(DbIterator::new(
            MergingIterator::new(children),
            seq,
            lo,
            hi,
            pins,
        ))
    }

    // ----- flush -----

    fn flush(&self) -> Result<()> {
        let target = {
            let mut wal = self.wal.lock();
            if !self.mem.read().mem.is_empty() {
                self.switch_memtable(&mut wal)?;
            }
            self.mem.read().imm.last().map(|m| m.wal_number())
        };
        let Some(target) = target else { return Ok(()) };
        self.wait_background(|_| !self.mem.read().imm.iter().any(|m| m.wal_number() <= target))
    }

    /// Wakes the background threads and waits until `done` holds (checked
    /// under the background lock), a background error stops work, or the
    /// database closes.
    fn wait_background(&self, mut done: impl FnMut(&BgState) -> bool) -> Result<()> {
        let mut bg = self.bg.lock();
        loop {
            if let Some(e) = &bg.error {
                return Err(e.clone());
            }
            if bg.shutdown {
                return Err(Error::Closed);
            }
            if done(&bg) {
                return Ok(());
            }
            self.bg_cv.notify_all();
            self.done_cv.wait_for(&mut bg, Duration::from_millis(100));
        }
    }

    fn flush_loop(&self) {
        loop {
            {
                let mut bg = self.bg.lock();
                while !bg.shutdown && (bg.error.is_some() || self.mem.read().imm.is_empty()) {
                    self.bg_cv.wait(&mut bg);
                }
                if bg.shutdown {
                    return;
                }
            }
            if let Err(e) = self.flush_oldest() {
                self.set_bg_error(e);
            }
            let _bg = self.bg.lock();
            self.done_cv.notify_all();
            self.bg_cv.notify_all();
        }
    }

    /// Writes the oldest frozen memtable to an L0 SST.
    fn flush_oldest(&self) -> Result<()> {
        let Some(imm) = self.mem.read().imm.first().cloned() else {
            return Ok(());
        };
        let mut edit = VersionEdit::default();
        if !imm.is_empty() {
            let new_number = || self.versions.lock().new_file_number();
            let ctx = OutputCtx {
                fs: self.fs.as_ref(),
                dir: &self.dir,
                opts: &self.opts,
                level: 0,
                run: 0,
                split: false,
                smallest_snapshot: self.smallest_snapshot(),
                new_file_number: &new_number,
            };
            let mut it = imm.iter();
            let mut outputs = compaction::write_outputs(&mut it, &ctx, &|_| false)?;
            for f in &mut outputs {
                f.run = f.number;
                bump(&self.counters.flush_bytes_written, f.size);
                bump(&self.counters.bytes_written, f.size);
            }
            edit.added = outputs;
            self.fs.sync_dir(&self.dir)?;
        }
        let next_log = {
            let m = self.mem.read();
            m.imm.get(1).map_or(m.mem.wal_number(), |n| n.wal_number())
        };
        edit.log_number = Some(next_log);
        edit.last_sequence = Some(self.last_seq.load(Ordering::Acquire));
        self.log_and_install(edit)?;
        {
            let mut m = self.mem.write();
            let imm: Vec<_> = m.imm.iter().skip(1).cloned().collect();
            m.imm = Arc::new(imm);
        }
        self.publish_view();
        bump(&self.counters.flushes, 1);
        for name in self.fs.list_dir(&self.dir)? {
            if let Some(filename::FileKind::Wal(n)) = filename::parse(&name) {
                if n < next_log {
                    let _ = self.fs.remove_file(&self.dir.join(name));
                }
            }
        }
        Ok(())
    }

    fn smallest_snapshot(&self) -> SeqNo {
        let last = self.last_seq.load(Ordering::Acquire);
        self.snapshots
            .lock()
            .keys()
            .next()
            .copied()
            .map_or(last, |s| s.min(last))
    }

    // ----- compaction -----

    fn wait_for_compactions(&self) -> Result<()> {
        self.wait_background(|bg| {
            let idle = !bg.busy.iter().any(|&b| b) && bg.manual_waiting == 0;
            let v = self.current.read().clone();
            idle && compaction::pick(&v, &self.opts, &bg.busy, &mut bg.pointers.clone()).is_none()
        })
    }

    fn compaction_loop(&self) {
        loop {
            let c = {
                let mut bg = self.bg.lock();
                loop {
                    if bg.shutdown {
                        return;
                    }
                    if bg.error.is_none() && bg.manual_waiting == 0 {
                        let v = self.current.read().clone();
                        let BgState { busy, pointers, .. } = &mut *bg;
                        if let Some(c) = compaction::pick(&v, &self.opts, busy, pointers) {
                            busy[c.level] = true;
                            busy[c.output_level] = true;
                            break c;
                        }
                    }
                    self.bg_cv.wait(&mut bg);
                }
            };
            let r = self.run_compaction(&c);
            let mut bg = self.bg.lock();
            bg.busy[c.level] = false;
            bg.busy[c.output_level] = false;
            drop(bg);
            if let Err(e) = r {
                self.set_bg_error(e);
            }
            let _bg = self.bg.lock();
            self.done_cv.notify_all();
            self.bg_cv.notify_all();
        }
    }

    fn run_compaction(&self, c: &Compaction) -> Result<()> {
        let version = self.current.read().clone();
        let mut edit = VersionEdit::default();
        c.delete_inputs(&mut edit);
        let leveled_run = |level: usize| {
            if level == 0 {
                None
            } else {
                Some(0)
            }
        };
        if c.trivial_move {
            let f = &c.inputs[0].1[0];
            edit.added.push(crate::version::NewFile {
                level: c.output_level,
                run: leveled_run(c.output_level).unwrap_or(f.number),
                number: f.number,
                size: f.size,
                entries: f.entries,
                smallest: f.smallest.clone(),
                largest: f.largest.clone(),
            });
        } else {
            let run = match self.opts.compaction_style {
                CompactionStyle::Leveling => 0,
                CompactionStyle::Tiering => self.versions.lock().new_file_number(),
            };
            let new_number = || self.versions.lock().new_file_number();
            let ctx = OutputCtx {
                fs: self.fs.as_ref(),
                dir: &self.dir,
                opts: &self.opts,
                level: c.output_level,
                run,
                split: true,
                smallest_snapshot: self.smallest_snapshot(),
                new_file_number: &new_number,
            };
            let mut input = compaction::input_iter(c);
            let outputs = compaction::write_outputs(
                &mut input,
                &ctx,
                &compaction::bottom_check(c, &version),
            )?;
            for f in &outputs {
                bump(&self.counters.compaction_bytes_written, f.size);
                bump(&self.counters.bytes_written, f.size);
            }
            edit.added = outputs;
            self.fs.sync_dir(&self.dir)?;
        }
        self.log_and_install(edit)?;
        bump(&self.counters.compactions, 1);
        Ok(())
    }

    fn compact_range(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> Result<()> {
        self.flush()?;
        let deepest = {
            let v = self.current.read();
            (0..v.levels.len())
                .rev()
                .find(|&l| !v.levels[l].is_empty())
                .unwrap_or(0)
        };
        let last = deepest.max(1).min(self.opts.max_levels - 1);
        self.bg.lock().manual_waiting += 1;
        let result = (|| {
            for level in 0..=last {
                let c = {
                    let mut bg = self.bg.lock();
                    loop {
                        if let Some(e) = &bg.error {
                            return Err(e.clone());
                        }
                        if bg.shutdown {
                            return Err(Error::Closed);
                        }
                        let out = (level + 1).min(self.opts.max_levels - 1);
                        if !bg.busy[level] && !bg.busy[out] {
                            break;
                        }
                        self.done_cv.wait_for(&mut bg, Duration::from_millis(100));
                    }
                    let v = self.current.read().clone();
                    // The deepest level is merged in place only under tiering,
                    // and only when it holds several runs.
                    let done_at_last = self.opts.compaction_style == CompactionStyle::Leveling
                        || v.levels[level].len() < 2;
                    let c = if level == last && done_at_last {
                        None
                    } else {
                        compaction::manual(&v, &self.opts, level, lo, hi)
                    };
                    let Some(c) = c else { continue };
                    bg.busy[c.level] = true;
                    bg.busy[c.output_level] = true;
                    c
                };
                let r = self.run_compaction(&c);
                let mut bg = self.bg.lock();
                bg.busy[c.level] = false;
                bg.busy[c.output_level] = false;
                self.done_cv.notify_all();
                drop(bg);
                r?;
            }
            Ok(())
        })();
        let mut bg = self.bg.lock();
        bg.manual_waiting -= 1;
        self.bg_cv.notify_all();
        result
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

/// Flushes a memtable rebuilt from the WAL during recovery into an L0 file.
/// Bytes of memtable per key its filter is sized for (a filter sized for
/// small entries wastes a little memory on large ones; the reverse would
/// raise its false-positive rate).
const MEMTABLE_BYTES_PER_FILTER_KEY: usize = 64;

/// A fresh active memtable for WAL `wal_number`, with a filter when the
/// options ask for one.
fn new_memtable(opts: &Options, wal_number: u64) -> Memtable {
    let filter = opts.filter.memtable_filter.then(|| {
        let keys = (opts.write_buffer_size / MEMTABLE_BYTES_PER_FILTER_KEY).max(1024);
        MemtableFilter::new(keys, &opts.filter)
    });
    Memtable::with_filter(wal_number, filter)
}

fn recovery_flush(
    versions: &mut VersionSet,
    fs: &Arc<dyn FileSystem>,
    dir: &Path,
    opts: &Options,
    mem: &Arc<Memtable>,
    edit: &mut VersionEdit,
) -> Result<()> {
    let next = AtomicU64::new(versions.next_file_number);
    let new_number = || next.fetch_add(1, Ordering::Relaxed);
    let ctx = OutputCtx {
        fs: fs.as_ref(),
        dir,
        opts,
        level: 0,
        run: 0,
        split: false,
        smallest_snapshot: 0,
        new_file_number: &new_number,
    };
    let mut it = mem.iter();
    let outputs = compaction::write_outputs(&mut it, &ctx, &|_| false)?;
    versions.next_file_number = next.into_inner();
    for mut f in outputs {
        f.run = f.number;
        edit.added.push(f);
    }
    fs.sync_dir(dir)?;
    Ok(())
}
