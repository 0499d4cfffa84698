//! [`KeyspaceOptions`]: what one keyspace may set apart from the database's
//! [`Options`] (RocksDB's column family options).

use std::sync::Arc;
use std::time::Duration;

use crate::compaction_filter::CompactionFilter;
use crate::error::Result;
use crate::merge::MergeOperator;
use crate::options::{CompactionStyle, Compression, Options};

/// The options of one keyspace: each one left unset is the database's
/// (from the [`Options`] it was opened with).
///
/// What stays database-wide: the WAL and the memtable switch (every
/// keyspace's memtable is frozen together), `max_levels`, the caches, the
/// filter memory budget and the filter's hashing and layout (one digest of a
/// key serves every filter of every keyspace).
///
/// ```
/// # fn main() -> sievedb::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// use std::{sync::Arc, time::Duration};
/// use sievedb::{merge::U64Add, Db, KeyspaceOptions, Options};
///
/// let db = Db::open(dir.path(), Options::default())?;
/// let counters = db.keyspace_with("counters", KeyspaceOptions::default().merge_operator(Arc::new(U64Add)))?;
/// counters.merge("hits", 1u64.to_le_bytes())?;
/// counters.merge("hits", 2u64.to_le_bytes())?;
/// assert_eq!(counters.get("hits")?, Some(3u64.to_le_bytes().to_vec()));
/// let sessions = db.keyspace_with("sessions", KeyspaceOptions::default().ttl(Duration::from_secs(3600)))?;
/// sessions.put("token", "alice")?;
/// assert_eq!(db.list_keyspaces(), ["counters", "default", "sessions"]);
/// # Ok(()) }
/// ```
#[derive(Clone, Default)]
#[must_use]
pub struct KeyspaceOptions {
    compaction_style: Option<CompactionStyle>,
    size_ratio: Option<usize>,
    level1_size: Option<u64>,
    target_file_size: Option<u64>,
    level0_compaction_trigger: Option<usize>,
    write_buffer_size: Option<usize>,
    block_size: Option<usize>,
    compression_per_level: Option<Vec<Compression>>,
    bits_per_key: Option<f64>,
    /// `Some(None)`: none, whatever the database's.
    merge_operator: Option<Option<Arc<dyn MergeOperator>>>,
    compaction_filter: Option<Option<Arc<dyn CompactionFilter>>>,
    ttl: Option<Option<Duration>>,
    periodic_compaction: Option<Duration>,
}

macro_rules! setter {
    ($(#[$doc:meta])* $name:ident: $ty:ty) => {
        $(#[$doc])*
        pub fn $name(mut self, v: $ty) -> Self {
            self.$name = Some(v);
            self
        }
    };
}

impl KeyspaceOptions {
    setter!(/// See [`Options::compaction_style`].
        compaction_style: CompactionStyle);
    setter!(/// See [`Options::size_ratio`].
        size_ratio: usize);
    setter!(/// See [`Options::level1_size`].
        level1_size: u64);
    setter!(/// See [`Options::target_file_size`].
        target_file_size: u64);
    setter!(/// See [`Options::level0_compaction_trigger`] (the slowdown and
        /// stop triggers stay the database's, and must not be below it).
        level0_compaction_trigger: usize);
    setter!(/// The size at which this keyspace's memtable makes the database
        /// switch memtables (see [`Options::write_buffer_size`]).
        write_buffer_size: usize);
    setter!(/// See [`Options::block_size`].
        block_size: usize);
    setter!(/// See [`Options::compression_per_level`].
        compression_per_level: Vec<Compression>);
    setter!(/// Bits per key of this keyspace's SST filters (0: none).
        bits_per_key: f64);
    /// See [`Options::merge_operator`].
    pub fn merge_operator(mut self, op: Arc<dyn MergeOperator>) -> Self {
        self.merge_operator = Some(Some(op));
        self
    }

    /// No merge operator in this keyspace, even if the database has one.
    pub fn no_merge_operator(mut self) -> Self {
        self.merge_operator = Some(None);
        self
    }

    /// See [`Options::compaction_filter`].
    pub fn compaction_filter(mut self, f: Arc<dyn CompactionFilter>) -> Self {
        self.compaction_filter = Some(Some(f));
        self
    }

    /// No compaction filter in this keyspace, even if the database has one.
    pub fn no_compaction_filter(mut self) -> Self {
        self.compaction_filter = Some(None);
        self
    }

    /// The time to live of this keyspace's values (see [`Options::ttl`]).
    /// Recorded when the keyspace is created: reopen it with a TTL too.
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = Some(Some(ttl));
        self
    }

    /// No TTL in this keyspace, even if the database has one (a keyspace
    /// with a merge operator in a TTL database, for one).
    pub fn no_ttl(mut self) -> Self {
        self.ttl = Some(None);
        self
    }
    setter!(/// See [`Options::periodic_compaction`].
        periodic_compaction: Duration);

    /// Compression for every level.
    pub fn compression(self, c: Compression) -> Self {
        self.compression_per_level(vec![c])
    }

    /// `db` with these options applied, checked as a whole.
    pub(crate) fn apply(&self, db: &Options) -> Result<Options> {
        let mut o = db.clone();
        macro_rules! take {
            ($($f:ident),*) => {$(
                if let Some(v) = &self.$f {
                    o.$f = v.clone();
                }
            )*};
        }
        take!(
            compaction_style,
            size_ratio,
            level1_size,
            target_file_size,
            level0_compaction_trigger,
            write_buffer_size,
            block_size,
            compression_per_level
        );
        if let Some(b) = self.bits_per_key {
            o.filter.bits_per_key = b;
        }
        if let Some(m) = &self.merge_operator {
            o.merge_operator = m.clone();
        }
        if let Some(f) = &self.compaction_filter {
            o.compaction_filter = f.clone();
        }
        if let Some(t) = self.ttl {
            o.ttl = t;
        }
        if let Some(p) = self.periodic_compaction {
            o.periodic_compaction = Some(p);
        }
        o.validate()?;
        Ok(o)
    }
}

impl std::fmt::Debug for KeyspaceOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyspaceOptions")
            .field("compaction_style", &self.compaction_style)
            .field("size_ratio", &self.size_ratio)
            .field("level1_size", &self.level1_size)
            .field("target_file_size", &self.target_file_size)
            .field("write_buffer_size", &self.write_buffer_size)
            .field("bits_per_key", &self.bits_per_key)
            .field(
                "merge_operator",
                &(self.merge_operator.as_ref()).map(|m| m.as_ref().map(|m| m.name().to_string())),
            )
            .field("compaction_filter", &self.compaction_filter.is_some())
            .field("ttl", &self.ttl)
            .field("periodic_compaction", &self.periodic_compaction)
            .finish_non_exhaustive()
    }
}
