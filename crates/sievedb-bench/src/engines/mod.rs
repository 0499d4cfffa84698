//! The storage engines a benchmark can drive, behind one small trait.

pub mod sievedb;

#[cfg(feature = "leveldb")]
pub mod leveldb;

use std::path::Path;
use std::sync::Arc;

/// Error type of engine operations (sendable across benchmark threads).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// Result of engine operations.
pub type EngineResult<T> = Result<T, BoxError>;

/// Settings shared by every engine of a run, so that all engines are configured alike.
#[derive(Clone, Debug, PartialEq)]
pub struct EngineConfig {
    /// Memtable size before it is flushed, in bytes.
    pub write_buffer_size: usize,
    /// Bloom filter bits per key (0 = no filters).
    pub bits_per_key: f64,
    /// Block cache capacity in bytes.
    pub block_cache_size: u64,
    /// Size at which compaction output files are cut, in bytes.
    pub target_file_size: u64,
    /// Size ratio between adjacent levels (sievedb only; LevelDB's is fixed at 10).
    pub size_ratio: usize,
    /// Capacity of level 1 in bytes; level i holds `level1_size · size_ratio^(i-1)`
    /// (sievedb only; LevelDB's is fixed at 10 MiB).
    pub level1_size: u64,
    /// Levels including L0 (sievedb only).
    pub max_levels: usize,
    /// Compaction style (sievedb only; LevelDB always levels).
    pub compaction_style: ::sievedb::CompactionStyle,
    /// Uncompressed data block size in bytes.
    pub block_size: usize,
    /// Table files kept open at once.
    pub max_open_files: usize,
    /// sievedb's filter settings (hash, scheme, layout, sharing, memtable
    /// filter); `bits_per_key` above takes precedence over its own.
    pub filter: ::sievedb::FilterOptions,
    /// sievedb: time one lookup in this many phase by phase (0 = off).
    pub lookup_breakdown_every: u32,
}

/// A key-value engine under benchmark. Implementations are shared across
/// reader threads (`Arc<dyn Engine>`); writes are issued without sync.
pub trait Engine: Send + Sync {
    /// Short name (`sievedb`, `leveldb`).
    fn name(&self) -> &'static str;
    /// Sets `key` to `value`.
    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()>;
    /// The value of `key`, if any.
    fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>>;
    /// The length of the value of `key`, if any. Engines override it when they
    /// can answer without copying the value once more (the timed read loops use it).
    fn get_len(&self, key: &[u8]) -> EngineResult<Option<usize>> {
        Ok(self.get(key)?.map(|v| v.len()))
    }
    /// Writes `entries` atomically as one batch.
    fn write_batch(&self, entries: &[(&[u8], &[u8])]) -> EngineResult<()>;
    /// Reads every entry in key order; returns the number of entries read.
    fn scan_all(&self) -> EngineResult<u64>;
    /// Moves memtable contents into table files (LevelDB: a full manual compaction,
    /// its C API has no plain flush).
    fn flush(&self) -> EngineResult<()>;
    /// Flushes, then waits until no compaction is running or due, so reads
    /// see a settled tree. Engines without such a wait only flush.
    fn wait_for_compactions(&self) -> EngineResult<()> {
        self.flush()
    }
    /// The settings the engine actually runs with, as a JSON object.
    fn settings(&self) -> serde_json::Value;
    /// The engine's statistics, when it keeps any (sievedb does, LevelDB's are not collected).
    fn stats(&self) -> Option<::sievedb::Stats> {
        None
    }
}

/// The engines this crate knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// The sievedb engine of this workspace.
    Sievedb,
    /// LevelDB through its C API (feature `leveldb`).
    Leveldb,
}

impl EngineKind {
    /// Short name, also the name of the engine's database directory.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sievedb => "sievedb",
            EngineKind::Leveldb => "leveldb",
        }
    }

    /// Whether this build contains the engine.
    pub fn available(self) -> bool {
        match self {
            EngineKind::Sievedb => true,
            EngineKind::Leveldb => cfg!(feature = "leveldb"),
        }
    }

    /// Opens (creating if missing) the engine's database at `path`.
    pub fn open(self, path: &Path, cfg: &EngineConfig) -> EngineResult<Arc<dyn Engine>> {
        match self {
            EngineKind::Sievedb => Ok(Arc::new(sievedb::SieveDb::open(path, cfg)?)),
            #[cfg(feature = "leveldb")]
            EngineKind::Leveldb => Ok(Arc::new(leveldb::LevelDb::open(path, cfg)?)),
            #[cfg(not(feature = "leveldb"))]
            EngineKind::Leveldb => Err(not_built().into()),
        }
    }
}

/// The error for LevelDB requested in a build without it.
pub fn not_built() -> String {
    "the leveldb engine is not built in: rebuild with `--features leveldb` \
     (e.g. `cargo run --release -p sievedb-cli --features leveldb -- bench --engine all`; \
     needs the system LevelDB library, Debian package libleveldb-dev)"
        .to_string()
}
