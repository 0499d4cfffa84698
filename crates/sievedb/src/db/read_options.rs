//! Options of one read ([`ReadOptions`]), as the `rocksdb` crate's.
//!
//! They live with the database, not in `options.rs`, because they name a
//! [`Snapshot`] (a lower module must not import a higher one).

use super::Snapshot;

/// Options of one read: a point lookup ([`Db::get_opt`](crate::Db::get_opt),
/// [`Db::multi_get_opt`](crate::Db::multi_get_opt)) or an iterator
/// ([`Db::iter_opt`](crate::Db::iter_opt)).
///
/// The snapshot is borrowed, so the options cannot outlive it;
/// `ReadOptions::default()` reads the latest data with no bounds. Build them
/// with the setters:
///
/// ```
/// # fn main() -> sievedb::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
/// db.put("a", "1")?;
/// let snap = db.snapshot();
/// db.put("b", "2")?;
/// let ro = sievedb::ReadOptions::default()
///     .snapshot(&snap)
///     .lower_bound("a")
///     .upper_bound("c")
///     .fill_cache(false);
/// assert_eq!(db.iter_opt(&ro)?.count(), 1); // "b" is newer than the snapshot
/// # Ok(())
/// # }
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct ReadOptions<'a> {
    /// Put blocks read by this operation into the block cache. Default true.
    pub fill_cache: bool,
    /// Check the checksum of every data block read from a file (when the
    /// database checks checksums at all, [`crate::Options::verify_checksums`]).
    /// Default true. A block read unchecked is not cached.
    pub verify_checksums: bool,
    /// Read as of this snapshot (of the same database) instead of the latest
    /// data. Default none.
    pub snapshot: Option<&'a Snapshot>,
    /// Iterators start at this key (inclusive). Point lookups ignore it.
    pub lower_bound: Option<Vec<u8>>,
    /// Iterators stop before this key (exclusive). Point lookups ignore it.
    pub upper_bound: Option<Vec<u8>>,
    /// Iterators' [`seek`](crate::DbIterator::seek) and
    /// [`seek_for_prev`](crate::DbIterator::seek_for_prev) yield only the
    /// keys of the target's prefix under [`crate::Options::prefix_extractor`]
    /// (within the bounds), and skip the files and memtables whose prefix
    /// filter rules that prefix out. A target out of the extractor's domain,
    /// `seek_to_first`, `seek_to_last` and the `Iterator` steps from no seek
    /// read the whole range. Default false; without an extractor it does
    /// nothing. (The `rocksdb` crate's name.)
    pub prefix_same_as_start: bool,
}

impl Default for ReadOptions<'_> {
    fn default() -> Self {
        ReadOptions {
            fill_cache: true,
            verify_checksums: true,
            snapshot: None,
            lower_bound: None,
            upper_bound: None,
            prefix_same_as_start: false,
        }
    }
}

impl<'a> ReadOptions<'a> {
    /// Sets [`fill_cache`](Self::fill_cache).
    #[must_use]
    pub fn fill_cache(mut self, fill: bool) -> Self {
        self.fill_cache = fill;
        self
    }

    /// Sets [`verify_checksums`](Self::verify_checksums).
    #[must_use]
    pub fn verify_checksums(mut self, verify: bool) -> Self {
        self.verify_checksums = verify;
        self
    }

    /// Reads as of `snapshot` (see [`snapshot`](Self::snapshot)).
    #[must_use]
    pub fn snapshot(mut self, snapshot: &'a Snapshot) -> Self {
        self.snapshot = Some(snapshot);
        self
    }

    /// Sets the inclusive [`lower_bound`](Self::lower_bound) of iterators.
    #[must_use]
    pub fn lower_bound(mut self, key: impl AsRef<[u8]>) -> Self {
        self.lower_bound = Some(key.as_ref().to_vec());
        self
    }

    /// Sets [`prefix_same_as_start`](Self::prefix_same_as_start).
    #[must_use]
    pub fn prefix_same_as_start(mut self, on: bool) -> Self {
        self.prefix_same_as_start = on;
        self
    }

    /// Sets the exclusive [`upper_bound`](Self::upper_bound) of iterators.
    #[must_use]
    pub fn upper_bound(mut self, key: impl AsRef<[u8]>) -> Self {
        self.upper_bound = Some(key.as_ref().to_vec());
        self
    }
}
