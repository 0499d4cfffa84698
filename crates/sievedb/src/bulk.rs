//! Bulk load: builds a new database directly from a sorted stream of
//! `(key, value)` pairs, as full levels of a chosen shape, without going
//! through the WAL, the memtable or compaction.
//!
//! The result is an ordinary database: SSTs written by the same
//! The table writer compaction uses (with filters, block size and per-level
//! compression from the [`Options`]), one MANIFEST and a `CURRENT`, so
//! [`Db::open`](crate::Db::open) serves it and later writes, deletes and
//! compactions work on it as on any other database.
//!
//! # Shape
//!
//! A [`LevelShape`] names the number of levels `L` (levels `1..=L`; level 0
//! stays empty) and the size ratio `T`. Level `i` receives a share
//! `T^(i-1) / (1 + T + … + T^(L-1))` of the entries, so every level is "full"
//! relative to the next and the last level holds about `(T-1)/T` of the data.
//! Entries are dealt to the levels by a smooth weighted round robin over the
//! stream (weights `T^(i-1)`): within every `W = 1 + T + … + T^(L-1)`
//! consecutive entries level `i` gets exactly `T^(i-1)`, spread as evenly as
//! the weights allow. So every level holds keys from the whole key range,
//! interleaved with the other levels, like a tree built by random inserts, and
//! the assignment is a deterministic function of the stream position. Each
//! level is one sorted run (run id 0) cut into files at
//! [`Options::target_file_size`]. Every level must receive at least one
//! entry: a stream shorter than needed (level 1 gets its first entry after
//! at most `W` entries) is refused with [`Error::InvalidArgument`].
//!
//! # Sequence numbers
//!
//! The entry at stream position `p` (0-based) gets sequence number `p + 1`;
//! the MANIFEST records `last_sequence = n` (the number of entries), so later
//! writes get larger sequence numbers than every loaded entry. As each user key
//! occurs once, the relative order of sequence numbers across levels carries
//! no meaning.
//!
//! # Opening the result
//!
//! Compaction compares the bytes of level `i` with
//! `level1_size · size_ratio^(i-1)`. Open the database with a `size_ratio`
//! equal to the shape's `T`, a `level1_size` at least
//! [`BulkLoadReport::level1_size`] and `max_levels > L`, or background
//! compaction starts reshaping the tree right after open (and a `max_levels`
//! of `L` or less refuses to open it). [`BulkLoadReport::open_options`]
//! returns such options.
//!
//! # Crash safety and restart
//!
//! A bulk load only builds new databases: it refuses a directory that holds
//! `CURRENT`. It takes the directory's `LOCK` for its duration, then writes the
//! marker file [`MARKER`] (fsynced, directory fsynced) before any SST. The
//! SSTs are fsynced, the directory is fsynced, the MANIFEST is written and
//! fsynced, the directory is fsynced again, and only then is `CURRENT`
//! written (atomically, through a fsynced temporary file and a rename). So a
//! crash never leaves a half-loaded directory that opens: until `CURRENT`
//! exists the directory holds SSTs without `CURRENT`, which `Db::open`
//! refuses. The marker is removed once `CURRENT` is durable.
//!
//! On failure (bad input, I/O error, an unfinished [`BulkWriter`] dropped) the
//! load deletes what it wrote, the marker and the `LOCK` file (a refused
//! load deletes a `LOCK` file it created). If it cannot (a crash, a power
//! loss, a failing disk), the marker stays, and the next bulk load into the
//! directory recognises the leftovers by it and deletes every SST, MANIFEST,
//! WAL and temporary file there before starting again. Without the marker a
//! directory holding SSTs or a non-empty WAL is refused: they were not written
//! by a bulk load. A marker left next to a `CURRENT` (crash between writing
//! `CURRENT` and removing the marker) is harmless: the database is complete.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::io::{filename, FileLock, FileSystem, StdFs};
use crate::key::{self, Kind, SeqNo, MAX_KEY_LEN, MAX_SEQ, MAX_VALUE_LEN};
use crate::options::Options;
use crate::sst::TableWriter;
use crate::version::{set_current, NewFile, VersionEdit};
use crate::wal::LogWriter;

/// Name of the marker file present while a bulk load is in progress.
pub const MARKER: &str = "BULKLOAD-IN-PROGRESS";

/// Entries between two calls of the progress callback.
pub const PROGRESS_STEP: u64 = 1 << 14;

/// Largest total weight `1 + T + … + T^(L-1)` a shape may have.
const MAX_TOTAL_WEIGHT: u64 = 1 << 60;

/// The shape of a bulk-loaded tree: `levels` full levels (1..=levels) with
/// size ratio `size_ratio` between adjacent levels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LevelShape {
    /// Number of levels below L0 that receive data (at least 1).
    pub levels: usize,
    /// Size ratio T between adjacent levels (at least 2).
    pub size_ratio: usize,
}

impl LevelShape {
    /// A shape of `levels` levels at size ratio `size_ratio`, checked.
    pub fn new(levels: usize, size_ratio: usize) -> Result<Self> {
        let s = LevelShape { levels, size_ratio };
        s.validate()?;
        Ok(s)
    }

    /// Checks the parameters: `levels >= 1`, `size_ratio >= 2`, and a total
    /// weight `1 + T + … + T^(L-1)` below 2^60.
    pub fn validate(&self) -> Result<()> {
        if self.levels == 0 {
            return Err(Error::InvalidArgument(
                "bulk load shape needs at least 1 level".into(),
            ));
        }
        if self.size_ratio < 2 {
            return Err(Error::InvalidArgument(format!(
                "bulk load size ratio must be at least 2, not {}",
                self.size_ratio
            )));
        }
        self.weights().map(|_| ())
    }

    /// Weight `T^(i-1)` of each level `i` in `1..=levels`, or an error when
    /// their sum exceeds the supported range.
    fn weights(&self) -> Result<Vec<u64>> {
        let too_big = || {
            Error::InvalidArgument(format!(
                "bulk load shape of {} levels at size ratio {} is too large \
                 (1 + T + ... + T^(L-1) must stay below 2^60)",
                self.levels, self.size_ratio
            ))
        };
        let mut w = Vec::with_capacity(self.levels);
        let mut cur = 1u64;
        let mut total = 0u64;
        for i in 0..self.levels {
            if i > 0 {
                cur = cur
                    .checked_mul(self.size_ratio as u64)
                    .ok_or_else(too_big)?;
            }
            total = total.checked_add(cur).ok_or_else(too_big)?;
            if total > MAX_TOTAL_WEIGHT {
                return Err(too_big());
            }
            w.push(cur);
        }
        Ok(w)
    }

    /// `1 + T + … + T^(L-1)`: the period of the level assignment. Level 1
    /// receives one entry out of every `total_weight()`.
    pub fn total_weight(&self) -> Result<u64> {
        Ok(self.weights()?.iter().sum())
    }

    /// The fraction of the entries each level `1..=levels` receives.
    pub fn shares(&self) -> Result<Vec<f64>> {
        let w = self.weights()?;
        let total: u64 = w.iter().sum();
        Ok(w.iter().map(|&x| x as f64 / total as f64).collect())
    }
}

/// What one level of a bulk load holds.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BulkLevel {
    /// The level (1-based; level 0 is always empty).
    pub level: usize,
    /// SST files written.
    pub files: usize,
    /// Entries.
    pub entries: u64,
    /// Bytes of its SST files.
    pub bytes: u64,
    /// Smallest user key.
    pub smallest: Vec<u8>,
    /// Largest user key.
    pub largest: Vec<u8>,
}

/// The outcome of a bulk load.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct BulkLoadReport {
    /// The shape that was loaded.
    pub shape: LevelShape,
    /// Entries loaded.
    pub entries: u64,
    /// Bytes of the user keys and values.
    pub user_bytes: u64,
    /// `last_sequence` recorded in the MANIFEST (= `entries`).
    pub last_sequence: SeqNo,
    /// Levels `1..=shape.levels`, in order.
    pub levels: Vec<BulkLevel>,
    /// Wall-clock seconds from the start of the load to `CURRENT` being durable.
    pub seconds: f64,
}

impl BulkLoadReport {
    /// Bytes of all SST files written.
    pub fn total_bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.bytes).sum()
    }

    /// Number of SST files written.
    pub fn total_files(&self) -> usize {
        self.levels.iter().map(|l| l.files).sum()
    }

    /// The smallest `level1_size` under which no loaded level exceeds its
    /// capacity `level1_size · T^(i-1)` (with `size_ratio = T`): opened with
    /// it, the database starts with every level full but none over, so
    /// background compaction leaves the shape alone until new writes arrive.
    pub fn level1_size(&self) -> u64 {
        let t = self.shape.size_ratio as u64;
        let mut scale = 1u64;
        let mut need = 1u64;
        for l in &self.levels {
            need = need.max(l.bytes / scale + 1);
            scale = scale.saturating_mul(t);
        }
        need
    }

    /// `base` with `size_ratio`, `level1_size` and (if needed) `max_levels`
    /// set so that the loaded shape is what the compaction policy expects
    /// (see [`level1_size`](Self::level1_size)).
    pub fn open_options(&self, base: Options) -> Options {
        Options {
            size_ratio: self.shape.size_ratio,
            level1_size: self.level1_size(),
            max_levels: base.max_levels.max(self.shape.levels + 1),
            ..base
        }
    }

    /// Megabytes (10^6 bytes) of user data loaded per second.
    pub fn mb_per_second(&self) -> f64 {
        if self.seconds > 0.0 {
            self.user_bytes as f64 / 1e6 / self.seconds
        } else {
            0.0
        }
    }
}

/// A progress callback: called with the number of entries added so far.
pub type ProgressFn = Box<dyn FnMut(u64) + Send>;

/// Configures and starts a bulk load.
///
/// ```no_run
/// use sievedb::bulk::{BulkLoad, LevelShape};
/// use sievedb::{Db, Options};
/// # fn main() -> sievedb::Result<()> {
/// let opts = Options::default();
/// let shape = LevelShape::new(3, 10)?;
/// let entries = (0..100_000u32).map(|i| (format!("key{i:08}"), format!("value{i}")));
/// let report = BulkLoad::new("/tmp/bulk-demo", opts.clone(), shape)
///     .on_progress(|done| eprintln!("{done} entries"))
///     .load(entries)?;
/// let db = Db::open("/tmp/bulk-demo", report.open_options(opts))?;
/// assert!(db.get(b"key00000042")?.is_some());
/// # Ok(()) }
/// ```
pub struct BulkLoad {
    dir: PathBuf,
    opts: Options,
    shape: LevelShape,
    fs: Arc<dyn FileSystem>,
    progress: Option<ProgressFn>,
}

impl BulkLoad {
    /// A bulk load of a new database in `path` with table settings from
    /// `opts` (filters, block size, restart interval, per-level compression,
    /// target file size) and the given shape. The database built has no
    /// TTL: `opts.ttl` set makes the load fail with
    /// [`Error::InvalidArgument`] (its values would carry no write-time
    /// stamp).
    pub fn new(path: impl AsRef<Path>, opts: Options, shape: LevelShape) -> Self {
        BulkLoad {
            dir: path.as_ref().to_path_buf(),
            opts,
            shape,
            fs: Arc::new(StdFs),
            progress: None,
        }
    }

    /// Performs all file operations through `fs` (fault injection in tests).
    #[must_use]
    pub fn file_system(mut self, fs: Arc<dyn FileSystem>) -> Self {
        self.fs = fs;
        self
    }

    /// Calls `f` with the number of entries added so far every
    /// [`PROGRESS_STEP`] entries and once when the load finishes.
    #[must_use]
    pub fn on_progress(mut self, f: impl FnMut(u64) + Send + 'static) -> Self {
        self.progress = Some(Box::new(f));
        self
    }

    /// Checks the arguments and the directory, cleans up leftovers of an
    /// interrupted bulk load, and returns a writer to add entries to.
    pub fn start(self) -> Result<BulkWriter> {
        BulkWriter::start(self)
    }

    /// Loads every entry of `entries` (strictly increasing keys) and
    /// finishes the database. On error, nothing usable is left behind.
    pub fn load<K, V, I>(self, entries: I) -> Result<BulkLoadReport>
    where
        K: AsRef<[u8]>,
        V: AsRef<[u8]>,
        I: IntoIterator<Item = (K, V)>,
    {
        let mut w = self.start()?;
        for (k, v) in entries {
            if let Err(e) = w.add(k.as_ref(), v.as_ref()) {
                // The writer's cleanup error (if any) matters less than the cause.
                let _ = w.abort();
                return Err(e);
            }
        }
        w.finish()
    }
}

/// Bulk-loads `entries` (strictly increasing keys) into a new database in
/// `path` with the shape `shape`; `progress` is called with the number of
/// entries done (see [`BulkLoad`] for the details).
pub fn bulk_load<K, V, I>(
    path: impl AsRef<Path>,
    opts: &Options,
    shape: LevelShape,
    entries: I,
    progress: impl FnMut(u64) + Send + 'static,
) -> Result<BulkLoadReport>
where
    K: AsRef<[u8]>,
    V: AsRef<[u8]>,
    I: IntoIterator<Item = (K, V)>,
{
    BulkLoad::new(path, opts.clone(), shape)
        .on_progress(progress)
        .load(entries)
}

/// Deals stream positions to levels: a smooth weighted round robin in which
/// every level earns its weight per entry, and the level with the most credit
/// takes the entry and pays the total weight. Over every `total` consecutive
/// entries level `i` gets exactly `weight[i]`, evenly spread. Ties go to the
/// deeper (heavier) level.
#[derive(Clone, Debug)]
struct LevelPicker {
    weights: Vec<i64>,
    credit: Vec<i64>,
    total: i64,
}

impl LevelPicker {
    fn new(shape: &LevelShape) -> Result<Self> {
        let weights: Vec<i64> = shape.weights()?.iter().map(|&w| w as i64).collect();
        Ok(LevelPicker {
            credit: vec![0; weights.len()],
            total: weights.iter().sum(),
            weights,
        })
    }

    /// The index (0 = level 1) of the level that takes the next entry.
    fn next(&mut self) -> usize {
        let mut best = 0;
        let mut best_credit = i64::MIN;
        for i in (0..self.weights.len()).rev() {
            self.credit[i] += self.weights[i];
            if self.credit[i] > best_credit {
                best_credit = self.credit[i];
                best = i;
            }
        }
        self.credit[best] -= self.total;
        best
    }
}

/// One level being written: its open table and finished files.
struct LevelOut {
    level: usize,
    writer: Option<(TableWriter, u64)>,
    files: Vec<NewFile>,
    entries: u64,
    smallest: Vec<u8>,
    largest: Vec<u8>,
}

/// An in-progress bulk load: add entries in strictly increasing key order,
/// then [`finish`](Self::finish). Dropping it unfinished deletes what it wrote.
pub struct BulkWriter {
    dir: PathBuf,
    opts: Options,
    shape: LevelShape,
    fs: Arc<dyn FileSystem>,
    progress: Option<ProgressFn>,
    levels: Vec<LevelOut>,
    picker: LevelPicker,
    next_file_number: u64,
    /// Every file this load created (SSTs, MANIFEST), for cleanup.
    created: Vec<PathBuf>,
    last_key: Vec<u8>,
    ikey: Vec<u8>,
    entries: u64,
    user_bytes: u64,
    /// The first error: later calls repeat it.
    failed: Option<Error>,
    done: bool,
    started: Instant,
    /// The directory's `LOCK`, held until the load ends; a failed load
    /// deletes the file (see [`BulkWriter::cleanup`]).
    lock: Option<Box<dyn FileLock>>,
}

impl BulkWriter {
    fn start(b: BulkLoad) -> Result<BulkWriter> {
        let started = Instant::now();
        let BulkLoad {
            dir,
            opts,
            shape,
            fs,
            progress,
        } = b;
        opts.validate()?;
        if opts.ttl.is_some() {
            return Err(Error::InvalidArgument(
                "a bulk load builds a database without TTL: its values carry no write-time \
                 stamp, so Options::ttl must be unset"
                    .into(),
            ));
        }
        shape.validate()?;
        let picker = LevelPicker::new(&shape)?;
        if shape.levels + 1 > opts.max_levels {
            return Err(Error::InvalidArgument(format!(
                "bulk load of {} levels needs max_levels >= {} (levels 0..={}), options have {}",
                shape.levels,
                shape.levels + 1,
                shape.levels,
                opts.max_levels
            )));
        }
        if fs.exists(&dir) && !dir.is_dir() {
            return Err(Error::InvalidArgument(format!(
                "{} is not a directory",
                dir.display()
            )));
        }
        fs.create_dir_all(&dir)?;
        let lock_path = filename::lock(&dir);
        let had_lock_file = fs.exists(&lock_path);
        let lock = crate::io::lock_dir(fs.as_ref(), &dir)?;
        match Self::prepare(&dir, fs.as_ref()) {
            Ok(()) => {}
            Err(e) => {
                // A refused load leaves the directory as it found it: a LOCK
                // file this load created goes (deleted while still held, so
                // no other process took it in between).
                if !had_lock_file {
                    let _ = fs.remove_file(&lock_path);
                }
                drop(lock);
                return Err(e);
            }
        }

        let levels = (1..=shape.levels)
            .map(|level| LevelOut {
                level,
                writer: None,
                files: Vec::new(),
                entries: 0,
                smallest: Vec::new(),
                largest: Vec::new(),
            })
            .collect();
        Ok(BulkWriter {
            dir,
            opts,
            shape,
            fs,
            progress,
            levels,
            picker,
            next_file_number: 2,
            created: Vec::new(),
            last_key: Vec::new(),
            ikey: Vec::new(),
            entries: 0,
            user_bytes: 0,
            failed: None,
            done: false,
            started,
            lock: Some(lock),
        })
    }

    /// Checks that `dir` (locked) can receive a bulk load, removes the
    /// leftovers of an interrupted load or creation, and writes the marker.
    fn prepare(dir: &Path, fs: &dyn FileSystem) -> Result<()> {
        if fs.exists(&filename::current(dir)) {
            return Err(Error::InvalidArgument(format!(
                "{} already holds a database (CURRENT exists); bulk load only builds new databases",
                dir.display()
            )));
        }
        let marker = dir.join(MARKER);
        let names = fs.list_dir(dir)?;
        let leftover = fs.exists(&marker);
        if !leftover {
            let data = names.iter().find(|n| match filename::parse(n) {
                Some(filename::FileKind::Sst(_)) => true,
                Some(filename::FileKind::Wal(_)) => {
                    std::fs::metadata(dir.join(n)).map_or(true, |m| m.len() > 0)
                }
                _ => false,
            });
            if let Some(n) = data {
                return Err(Error::InvalidArgument(format!(
                    "{} holds database files ({n}) but no CURRENT and no {MARKER} marker: \
                     not the leftovers of a bulk load, refusing to touch them",
                    dir.display()
                )));
            }
        }
        // Leftovers of an interrupted bulk load (marker present), or of an
        // interrupted database creation (a MANIFEST or an empty WAL, no CURRENT).
        let mut removed = false;
        for n in &names {
            if filename::parse(n).is_some() {
                fs.remove_file(&dir.join(n))?;
                removed = true;
            }
        }
        if removed {
            fs.sync_dir(dir)?;
        }
        let mut m = fs.create(&marker)?;
        m.append(b"sievedb bulk load in progress; the next bulk load into this directory deletes its files\n")?;
        m.sync()?;
        drop(m);
        fs.sync_dir(dir)?;
        Ok(())
    }

    /// Entries added so far.
    pub fn entries(&self) -> u64 {
        self.entries
    }

    /// Adds the next entry. Keys must be strictly increasing; a key out of
    /// order, a duplicate or an oversized key or value is
    /// [`Error::InvalidArgument`] naming the entry's (0-based) position. After
    /// an error the writer only repeats it: drop it or call
    /// [`abort`](Self::abort).
    pub fn add(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let r = self.add_inner(key, value);
        if let Err(e) = &r {
            self.failed = Some(e.clone());
        }
        r
    }

    fn add_inner(&mut self, key: &[u8], value: &[u8]) -> Result<()> {
        let pos = self.entries;
        if key.len() > MAX_KEY_LEN {
            return Err(Error::InvalidArgument(format!(
                "bulk load entry {pos}: key of {} bytes exceeds the limit of {MAX_KEY_LEN}",
                key.len()
            )));
        }
        if value.len() > MAX_VALUE_LEN {
            return Err(Error::InvalidArgument(format!(
                "bulk load entry {pos}: value of {} bytes exceeds the limit of {MAX_VALUE_LEN}",
                value.len()
            )));
        }
        if pos > 0 && key <= self.last_key.as_slice() {
            let what = if key == self.last_key.as_slice() {
                "duplicates"
            } else {
                "sorts before"
            };
            return Err(Error::InvalidArgument(format!(
                "bulk load input is not strictly increasing: key at position {pos} {} {what} \
                 the key at position {}",
                show_key(key),
                pos - 1
            )));
        }
        let seq = pos + 1;
        if seq > MAX_SEQ {
            return Err(Error::InvalidArgument(format!(
                "bulk load entry {pos}: more entries than sequence numbers"
            )));
        }
        let li = self.picker.next();
        self.ikey.clear();
        key::append_internal_key(&mut self.ikey, key, seq, Kind::Put as u8);

        let target = self.opts.target_file_size;
        let lv = &mut self.levels[li];
        if let Some((w, _)) = &lv.writer {
            if w.estimated_size() >= target {
                let (w, n) = lv.writer.take().expect("writer present");
                lv.files.push(finish_table(w, n, lv.level)?);
            }
        }
        if lv.writer.is_none() {
            let n = self.next_file_number;
            self.next_file_number += 1;
            let path = filename::sst(&self.dir, n);
            let file = self.fs.create(&path)?;
            self.created.push(path);
            let w = TableWriter::new(
                file,
                lv.level,
                self.opts.block_size,
                self.opts.block_restart_interval,
                self.opts.compression_for(lv.level),
                &self.opts.filter,
            );
            lv.writer = Some((w, n));
        }
        let (w, _) = lv.writer.as_mut().expect("writer present");
        w.add(&self.ikey, value)?;
        if lv.entries == 0 {
            lv.smallest = key.to_vec();
        }
        lv.entries += 1;

        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.entries += 1;
        self.user_bytes += (key.len() + value.len()) as u64;
        if self.entries.is_multiple_of(PROGRESS_STEP) {
            if let Some(p) = &mut self.progress {
                p(self.entries);
            }
        }
        Ok(())
    }

    /// Finishes the tables, writes the MANIFEST and then `CURRENT`, and
    /// removes the marker. On error, deletes what the load wrote.
    pub fn finish(mut self) -> Result<BulkLoadReport> {
        if let Some(e) = self.failed.clone() {
            let _ = self.cleanup();
            return Err(e);
        }
        let r = self.finish_inner();
        if r.is_err() && !self.done {
            let _ = self.cleanup();
        }
        self.done = true;
        r
    }

    fn finish_inner(&mut self) -> Result<BulkLoadReport> {
        if let Some(lv) = self.levels.iter().find(|l| l.entries == 0) {
            let w = self.shape.total_weight()?;
            return Err(Error::InvalidArgument(format!(
                "bulk load of {} entries into {} levels at size ratio {} leaves level {} empty \
                 (level 1 receives one entry out of every {w})",
                self.entries, self.shape.levels, self.shape.size_ratio, lv.level
            )));
        }
        let mut added = Vec::new();
        for lv in &mut self.levels {
            if let Some((w, n)) = lv.writer.take() {
                lv.files.push(finish_table(w, n, lv.level)?);
            }
            lv.largest = key::user_key(&lv.files.last().expect("level has files").largest).to_vec();
            added.extend(lv.files.iter().cloned());
        }
        self.fs.sync_dir(&self.dir)?;

        let manifest = self.next_file_number;
        self.next_file_number += 1;
        let edit = VersionEdit {
            log_number: Some(0),
            next_file_number: Some(self.next_file_number),
            last_sequence: Some(self.entries),
            deleted: Vec::new(),
            added,
            ttl_stamped: false,
        };
        let path = filename::manifest(&self.dir, manifest);
        let file = self.fs.create(&path)?;
        self.created.push(path.clone());
        let mut log = LogWriter::new(file, path);
        log.add_record(&edit.encode())?;
        log.sync()?;
        drop(log);
        self.fs.sync_dir(&self.dir)?;
        // Commit point. From here on a failure must not delete anything:
        // CURRENT may already name the (complete, durable) MANIFEST. If it
        // does not, the marker stays and the next bulk load cleans up.
        self.done = true;
        set_current(self.fs.as_ref(), &self.dir, manifest)?;
        // The database is complete and durable; a marker that cannot be
        // removed is harmless next to CURRENT.
        if self.fs.remove_file(&self.dir.join(MARKER)).is_ok() {
            let _ = self.fs.sync_dir(&self.dir);
        }
        if let Some(p) = &mut self.progress {
            p(self.entries);
        }
        Ok(BulkLoadReport {
            shape: self.shape,
            entries: self.entries,
            user_bytes: self.user_bytes,
            last_sequence: self.entries,
            levels: self
                .levels
                .iter()
                .map(|lv| BulkLevel {
                    level: lv.level,
                    files: lv.files.len(),
                    entries: lv.entries,
                    bytes: lv.files.iter().map(|f| f.size).sum(),
                    smallest: lv.smallest.clone(),
                    largest: lv.largest.clone(),
                })
                .collect(),
            seconds: self.started.elapsed().as_secs_f64(),
        })
    }

    /// Stops the load and deletes what it wrote (the directory is left
    /// without a database). Returns an error if something could not be
    /// deleted; the marker then stays so that the next bulk load finishes the
    /// cleanup.
    pub fn abort(mut self) -> Result<()> {
        self.cleanup()
    }

    fn cleanup(&mut self) -> Result<()> {
        self.done = true;
        for lv in &mut self.levels {
            lv.writer = None;
        }
        let r = self.delete_written();
        // The directory holds no database (CURRENT was never written), so its
        // LOCK goes too, whatever else failed: deleted while still held, then
        // released.
        if let Some(lock) = self.lock.take() {
            let _ = self.fs.remove_file(&filename::lock(&self.dir));
            drop(lock);
        }
        r
    }

    /// Deletes the files the load wrote, then the marker.
    fn delete_written(&mut self) -> Result<()> {
        let mut first_err: Option<Error> = None;
        for p in self.created.drain(..) {
            match self.fs.remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => {
                    first_err.get_or_insert(Error::Io(e));
                }
            }
        }
        if let Some(e) = first_err {
            return Err(e);
        }
        self.fs.sync_dir(&self.dir)?;
        self.fs.remove_file(&self.dir.join(MARKER))?;
        self.fs.sync_dir(&self.dir)?;
        Ok(())
    }
}

impl Drop for BulkWriter {
    fn drop(&mut self) {
        if !self.done {
            let _ = self.cleanup();
        }
    }
}

/// Closes a table and describes it for the MANIFEST (run 0: one run per level).
fn finish_table(w: TableWriter, number: u64, level: usize) -> Result<NewFile> {
    let (props, size) = w.finish()?;
    Ok(NewFile {
        level,
        run: 0,
        number,
        size,
        entries: props.entries,
        smallest: props.smallest,
        largest: props.largest,
        range_dels: props.range_dels,
        creation_time: 0,
    })
}

/// A short printable form of a key for error messages.
fn show_key(key: &[u8]) -> String {
    const MAX: usize = 64;
    let mut s = String::new();
    for &b in key.iter().take(MAX) {
        if b.is_ascii_graphic() && b != b'%' {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    if key.len() > MAX {
        s.push_str("...");
    }
    format!("\"{s}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assign(shape: LevelShape, n: u64) -> Vec<usize> {
        let mut p = LevelPicker::new(&shape).unwrap();
        (0..n).map(|_| p.next()).collect()
    }

    #[test]
    fn shape_validation() {
        assert!(LevelShape::new(0, 10).is_err());
        assert!(LevelShape::new(3, 1).is_err());
        assert!(LevelShape::new(14, 2).is_ok());
        assert!(LevelShape::new(18, 10).is_ok());
        assert!(LevelShape::new(40, 10).is_err());
        assert_eq!(LevelShape::new(3, 10).unwrap().total_weight().unwrap(), 111);
        let s = LevelShape::new(2, 4).unwrap().shares().unwrap();
        assert!((s[0] - 0.2).abs() < 1e-12 && (s[1] - 0.8).abs() < 1e-12);
    }

    #[test]
    fn round_robin_is_exact_per_period_and_interleaved() {
        let shape = LevelShape::new(4, 3).unwrap();
        let w = shape.total_weight().unwrap(); // 40
        let a = assign(shape, 3 * w);
        for period in a.chunks(w as usize) {
            let counts: Vec<usize> = (0..4)
                .map(|l| period.iter().filter(|&&x| x == l).count())
                .collect();
            assert_eq!(counts, vec![1, 3, 9, 27]);
        }
        // The deepest level never waits long: its gaps are at most 2.
        let deep: Vec<usize> = (0..a.len()).filter(|&i| a[i] == 3).collect();
        assert!(deep.windows(2).all(|p| p[1] - p[0] <= 2));
    }

    #[test]
    fn level1_size_keeps_every_level_under_capacity() {
        let r = BulkLoadReport {
            shape: LevelShape::new(3, 10).unwrap(),
            entries: 0,
            user_bytes: 0,
            last_sequence: 0,
            levels: [1000u64, 10_500, 99_000]
                .iter()
                .enumerate()
                .map(|(i, &b)| BulkLevel {
                    level: i + 1,
                    bytes: b,
                    ..BulkLevel::default()
                })
                .collect(),
            seconds: 0.0,
        };
        let l1 = r.level1_size();
        assert_eq!(l1, 1051);
        let o = r.open_options(Options::default());
        for lv in &r.levels {
            assert!(lv.bytes < o.level_capacity(lv.level));
        }
        assert_eq!(o.size_ratio, 10);
    }
}
