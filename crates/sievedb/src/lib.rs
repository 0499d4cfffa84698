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

pub mod batch;
pub mod bulk;
pub mod cache;
pub mod clock;
pub mod coding;
pub mod compaction;
mod db;
pub mod error;
pub mod fence;
pub mod filter;
pub mod io;
pub mod iter;
pub mod key;
pub mod memtable;
pub mod options;
pub mod repair;
pub mod run;
pub mod skiplist;
pub mod sst;
pub mod stats;
pub mod version;
pub mod wal;

pub use batch::WriteBatch;
pub use db::{Db, ReadOptions, Snapshot};
pub use error::{Error, Result};
pub use filter::{
    FilterLayout, FilterMemory, FilterOptions, FilterPolicy, HashFn, HashSharing, IndexScheme,
    UnitHashing,
};
pub use iter::DbIterator;
pub use options::{
    CompactionStyle, Compression, Options, OptionsBuilder, WalRecovery, WriteOptions,
};
pub use repair::RepairReport;
pub use stats::{LevelStats, LookupBreakdown, Stats};
pub use wal::{RecoveryReport, WalDrop};
