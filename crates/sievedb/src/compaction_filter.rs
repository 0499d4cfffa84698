//! Compaction filters (RocksDB's `CompactionFilter`): user code that sees
//! the values compactions rewrite and may keep, change or remove them.
//!
//! Install one with
//! [`OptionsBuilder::compaction_filter`](crate::OptionsBuilder::compaction_filter).
//! During a compaction the filter is called once for each put entry that
//! the compaction keeps, is the newest version of its user key among the
//! compaction's inputs, and no live snapshot can see (its sequence number
//! is greater than the newest snapshot's, or there is no snapshot). It is
//! never called for deletions, range tombstones, entries a range tombstone
//! hides, or older versions of a key.
//!
//! - [`Decision::Keep`] writes the entry unchanged.
//! - [`Decision::ChangeValue`] writes the same key, at the same sequence
//!   number, with the new value.
//! - [`Decision::Remove`] writes a point tombstone at the entry's sequence
//!   number in its place, so an older version of the key in a deeper level
//!   is not brought back; when the compaction writes the deepest data of
//!   that key, the tombstone itself is dropped at once.
//!
//! Semantics to know:
//!
//! - Flushes do not call the filter (as in RocksDB by default): a value is
//!   filtered the first time a compaction rewrites it, and may be read
//!   unfiltered until then. Nothing filters at read time.
//! - A key that is never compacted again is never filtered again: the
//!   filter is a way to reclaim space and rewrite values lazily, not a
//!   read-time guarantee. [`Db::compact_range`](crate::Db::compact_range)
//!   forces it over a range.
//! - A snapshot taken while a compaction runs may see the compaction's
//!   decisions for entries written before it (as in RocksDB): the snapshots
//!   a compaction honours are those alive when it started.
//! - The filter is called from background compaction threads and from the
//!   thread of `compact_range`, possibly on several threads at once; it must
//!   be fast, and must not call back into the database.
//! - A panic in the filter fails that compaction: its partial outputs are
//!   removed, its inputs stay, and the database refuses writes with
//!   [`Error::Poisoned`](crate::Error::Poisoned) (as for any panicked
//!   background work) until it is reopened. Nothing on disk is damaged.
//! - With [`Options::ttl`](crate::Options::ttl) the filter sees values
//!   without their write-time stamp, only for entries that have not
//!   expired (expired entries are removed first); a changed value keeps the
//!   original write time.
//!
//! ```
//! use std::sync::Arc;
//! use sievedb::{CompactionFilter, Db, Decision, Options};
//!
//! /// Drops every key under `tmp:`, upper-cases the values of `name:`.
//! struct Cleanup;
//! impl CompactionFilter for Cleanup {
//!     fn filter(&self, _level: usize, key: &[u8], value: &[u8]) -> Decision {
//!         if key.starts_with(b"tmp:") {
//!             Decision::Remove
//!         } else if key.starts_with(b"name:") {
//!             Decision::ChangeValue(value.to_ascii_uppercase())
//!         } else {
//!             Decision::Keep
//!         }
//!     }
//! }
//!
//! # fn main() -> sievedb::Result<()> {
//! # let dir = tempfile::tempdir().unwrap();
//! let opts = Options::builder().compaction_filter(Arc::new(Cleanup)).build();
//! let db = Db::open(dir.path(), opts)?;
//! db.put("tmp:1", "x")?;
//! db.put("name:1", "ada")?;
//! db.compact_range::<&[u8], _>(..)?;
//! assert_eq!(db.get("tmp:1")?, None);
//! assert_eq!(db.get("name:1")?.as_deref(), Some(&b"ADA"[..]));
//! # Ok(()) }
//! ```

/// What a [`CompactionFilter`] decides for one entry.
///
/// ```
/// use sievedb::{CompactionFilter, Decision};
///
/// /// Drops empty values, keeps short ones, cuts the others to 4 bytes.
/// struct Cap;
/// impl CompactionFilter for Cap {
///     fn filter(&self, _level: usize, _key: &[u8], value: &[u8]) -> Decision {
///         match value.len() {
///             0 => Decision::Remove,
///             1..=4 => Decision::Keep,
///             _ => Decision::ChangeValue(value[..4].to_vec()),
///         }
///     }
/// }
///
/// assert_eq!(Cap.filter(1, b"k", b""), Decision::Remove);
/// assert_eq!(Cap.filter(1, b"k", b"abc"), Decision::Keep);
/// assert_eq!(Cap.filter(1, b"k", b"abcdef"), Decision::ChangeValue(b"abcd".to_vec()));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Write the entry unchanged.
    Keep,
    /// Delete the key: a point tombstone replaces the entry (at its sequence
    /// number), hiding any older version of the key.
    Remove,
    /// Write the key with this value instead (same sequence number).
    ChangeValue(Vec<u8>),
}

/// User code called by compactions on the newest version of each key no
/// snapshot can see (see the [module docs](self) for exactly when).
///
/// ```
/// use sievedb::{CompactionFilter, Db, Decision, Options};
///
/// /// Removes the entries whose value is `"obsolete"`.
/// struct DropObsolete;
/// impl CompactionFilter for DropObsolete {
///     fn filter(&self, _level: usize, _key: &[u8], value: &[u8]) -> Decision {
///         if value == b"obsolete" { Decision::Remove } else { Decision::Keep }
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let opts = Options::builder().compaction_filter(std::sync::Arc::new(DropObsolete)).build();
/// let db = Db::open(dir.path(), opts)?;
/// db.put("old", "obsolete")?;
/// assert!(db.get("old")?.is_some()); // nothing filters at read time
/// db.compact_range::<&[u8], _>(..)?;
/// assert_eq!(db.get("old")?, None);
/// assert_eq!(db.stats().compaction_filter_removed, 1);
/// # Ok(()) }
/// ```
pub trait CompactionFilter: Send + Sync {
    /// Decides what happens to `key` = `value`, being written by a
    /// compaction into `level` (the compaction's output level).
    fn filter(&self, level: usize, key: &[u8], value: &[u8]) -> Decision;
}

impl std::fmt::Debug for dyn CompactionFilter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompactionFilter")
    }
}
