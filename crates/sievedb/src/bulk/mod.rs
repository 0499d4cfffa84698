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
//! at most `W` entries) is refused with [`Error::InvalidArgument`](crate::Error::InvalidArgument).
//!
//! # Keyspace
//!
//! The entries go to the default keyspace, or with [`BulkLoad::keyspace`]
//! to a named keyspace of the new database (id 1; the default keyspace is
//! then empty), which [`Db::keyspace`](crate::Db::keyspace) opens.
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

mod report;
mod shape;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Result;
use crate::io::{FileSystem, StdFs};
use crate::options::Options;

pub use report::{BulkLevel, BulkLoadReport};
pub use shape::{LevelPicker, LevelShape};
pub use writer::BulkWriter;

/// Name of the marker file present while a bulk load is in progress.
pub const MARKER: &str = "BULKLOAD-IN-PROGRESS";

/// Entries between two calls of the progress callback.
pub const PROGRESS_STEP: u64 = 1 << 14;

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
    keyspace: Option<String>,
}

impl BulkLoad {
    /// A bulk load of a new database in `path` with table settings from
    /// `opts` (filters, block size, restart interval, per-level compression,
    /// target file size) and the given shape. The database built has no
    /// TTL: `opts.ttl` set makes the load fail with
    /// [`Error::InvalidArgument`](crate::Error::InvalidArgument) (its values would carry no write-time
    /// stamp), as does an empty `path` (refused before the disk is touched).
    pub fn new(path: impl AsRef<Path>, opts: Options, shape: LevelShape) -> Self {
        BulkLoad {
            dir: path.as_ref().to_path_buf(),
            opts,
            shape,
            fs: Arc::new(StdFs),
            progress: None,
            keyspace: None,
        }
    }

    /// Loads the entries into keyspace `name` of the new database instead
    /// of its default keyspace (see the module docs).
    #[must_use]
    pub fn keyspace(mut self, name: &str) -> Self {
        self.keyspace = Some(name.to_string());
        self
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
