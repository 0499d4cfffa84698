//! # sievedb
//!
//! An embedded, durable LSM-tree key-value store whose point lookups hash a
//! key once and reuse that digest in every filter of every level.
//!
//! ```no_run
//! use sievedb::{Db, Options, WriteBatch};
//! # fn main() -> sievedb::Result<()> {
//! let db = Db::open("/tmp/sievedb-demo", Options::default())?;
//! db.put(b"hello", b"world")?;
//! assert_eq!(db.get(b"hello")?.as_deref(), Some(&b"world"[..]));
//! let mut batch = WriteBatch::new();
//! batch.put(b"a", b"1");
//! batch.delete(b"hello");
//! db.write(batch)?;
//! for item in db.range(b"a".as_slice()..b"z".as_slice())? {
//!     let (k, v) = item?;
//!     println!("{k:?} = {v:?}");
//! }
//! # Ok(()) }
//! ```
#![warn(missing_docs)]
// Library code never unwraps: it returns an error; an `expect` states the
// invariant that rules the error out, in an `#[expect(clippy::expect_used,
// reason = "..")]` (tests unwrap freely).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]
// Every file operation goes through `io::FileSystem` (see clippy.toml).
#![cfg_attr(not(test), deny(clippy::disallowed_methods))]

/// The README's Rust examples, compiled and run by `cargo test --doc`.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeExamples;

/// Declares modules that are internal: `pub(crate)`, or `pub` but hidden from
/// the docs with the `internals` feature, which the workspace's own fuzz
/// targets, benchmarks and integration tests enable to reach the formats.
/// Nothing behind that feature is a stable API.
macro_rules! internal_mods {
    ($($name:ident),* $(,)?) => {$(
        #[cfg(feature = "internals")]
        #[doc(hidden)]
        pub mod $name;
        #[cfg(not(feature = "internals"))]
        pub(crate) mod $name;
    )*};
}

internal_mods!(
    batch, cache, clock, coding, compaction, fence, iter, key, memtable, range_del, sst, stats,
    version, wal,
);

/// The run cursor at its path from before it moved into `version`.
#[cfg(feature = "internals")]
#[doc(hidden)]
pub use version::run;

pub mod bulk;
pub mod compaction_filter;
mod db;
pub mod error;
pub mod filter;
pub mod io;
mod keyspace;
pub mod merge;
pub mod options;
mod prefetch;
mod repair;
pub mod ttl;
mod txn;

pub use batch::WriteBatch;
pub use compaction_filter::{CompactionFilter, Decision};
pub use db::{Db, Keyspace, ReadOptions, Snapshot};
pub use error::{ConflictKind, Error, Result};
pub use filter::prefix::{CappedPrefix, FixedPrefix, PrefixExtractor};
pub use filter::{
    FilterLayout, FilterMemory, FilterOptions, FilterPolicy, HashFn, HashSharing, IndexScheme,
    UnitHashing, DEFAULT_FALSE_POSITIVE_COST,
};
pub use iter::DbIterator;
pub use keyspace::KeyspaceOptions;
pub use merge::MergeOperator;
pub use options::{
    CompactionStyle, Compression, Options, OptionsBuilder, WalRecovery, WriteOptions,
};
pub use repair::{LostTable, RepairReport, SalvageMethod};
pub use stats::{LevelStats, LookupBreakdown, Stats};
pub use ttl::{Clock, SystemClock};
pub use txn::{Isolation, Transaction, TransactionIterator, TransactionOptions};
pub use wal::{RecoveryReport, WalDrop};
