//! The storage engines a benchmark can drive, behind one small trait.

pub mod sievedb;

#[cfg(feature = "leveldb")]
pub mod leveldb;

#[cfg(feature = "rocksdb")]
pub mod rocksdb;

#[cfg(feature = "fjall")]
pub mod fjall;

#[cfg(feature = "fjall")]
mod fjall_txn;

#[cfg(feature = "rocksdb")]
pub mod rocksdb_txn;

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
    /// Size ratio between adjacent levels (LevelDB's is fixed at 10).
    pub size_ratio: usize,
    /// Capacity of level 1 in bytes; level i holds `level1_size · size_ratio^(i-1)`
    /// (LevelDB's is fixed at 10 MiB; fjall's is 4 · `target_file_size`).
    pub level1_size: u64,
    /// Levels including L0 (sievedb only).
    pub max_levels: usize,
    /// Compaction style (sievedb only; the baselines always level).
    pub compaction_style: ::sievedb::CompactionStyle,
    /// Uncompressed data block size in bytes.
    pub block_size: usize,
    /// Table files kept open at once.
    pub max_open_files: usize,
    /// sievedb's filter flags (hash, scheme, layout, sharing, memtable
    /// filter, filter memory budget), applied with [`crate::FilterArgs::apply`];
    /// `bits_per_key` above takes precedence over its own.
    pub filters: crate::FilterArgs,
    /// sievedb: time one lookup in this many phase by phase (0 = off).
    pub lookup_breakdown_every: u32,
    /// Read table files with O_DIRECT, bypassing the page cache (sievedb and
    /// RocksDB; LevelDB and fjall cannot and list the flag as ignored).
    pub use_direct_reads: bool,
    /// sievedb: read table files through a memory map
    /// (`Options::use_mmap_reads`; the baselines keep their own file access).
    pub use_mmap_reads: bool,
    /// Every write is made durable before it returns (db_bench's `--sync`):
    /// sievedb, LevelDB and RocksDB sync their WAL, fjall its journal.
    pub sync: bool,
    /// sievedb: busy-wait this many nanoseconds per data block read from a
    /// file, emulating a slower device (the baselines list it as ignored).
    pub io_delay_ns: u64,
    /// sievedb: bytes of table metadata kept past the open files
    /// (`Options::table_meta_cache_capacity`).
    pub table_meta_cache_size: u64,
    /// sievedb: block compression of every level (the baselines keep theirs off).
    pub compression: ::sievedb::Compression,
    /// Keyspaces the keys are spread over (`--keyspaces`): 1 = the engine's
    /// default keyspace only (the one path before keyspaces existed); N > 1 =
    /// N named keyspaces [`keyspace_name`]`(0..N)`, each with the settings
    /// above (sievedb's keyspaces, RocksDB's column families, fjall's
    /// keyspaces; LevelDB has none, see [`EngineKind::supports_keyspaces`]).
    pub keyspaces: usize,
    /// Background threads for flushes and compactions (`--background-threads`):
    /// sievedb's `Options::background_threads`, RocksDB's
    /// `max_background_jobs`, fjall's worker threads. LevelDB has one
    /// compaction thread, always (listed under `ignored_flags` otherwise).
    pub background_threads: usize,
    /// The transactions of the run (`--txn-mode`, `--txn-lock-timeout-ms`),
    /// set when `--benchmarks` names a transactional benchmark: RocksDB then
    /// opens a `TransactionDB` or an `OptimisticTransactionDB` and fjall an
    /// `OptimisticTxDatabase` or a `SingleWriterTxDatabase` (every benchmark
    /// of the run goes through it); `None` opens their plain databases.
    /// sievedb's `Db` has transactions either way.
    pub txn: Option<crate::cli::txn_args::TxnConfig>,
    /// A fixed-length prefix extractor of this many bytes (`--prefix-len`):
    /// sievedb's prefix filters, RocksDB's prefix Bloom (tables and
    /// memtable); the others list it as ignored.
    pub prefix_len: Option<usize>,
}

/// Why a transaction attempt aborted (see [`TxnOutcome`]); each engine maps
/// its own errors onto these.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AbortKind {
    /// Another commit wrote a key it read for update or wrote, after its
    /// snapshot (sievedb `ConflictKind::Write`/`Read`, RocksDB `Busy`,
    /// fjall `Conflict`).
    Conflict,
    /// A lock wait ran out (sievedb `LockTimeout`, RocksDB `TimedOut`).
    LockTimeout,
    /// It would have closed a cycle of lock waits (sievedb `Deadlock`,
    /// RocksDB `Busy` "Deadlock").
    Deadlock,
    /// The memtables no longer reach back to its snapshot, so it could not
    /// be checked (sievedb `TooOld`, RocksDB `TryAgain`).
    TooOld,
}

impl AbortKind {
    /// Every kind, in report order.
    pub const ALL: [AbortKind; 4] = [
        AbortKind::Conflict,
        AbortKind::LockTimeout,
        AbortKind::Deadlock,
        AbortKind::TooOld,
    ];

    /// Its name in the results.
    pub fn name(self) -> &'static str {
        match self {
            AbortKind::Conflict => "conflict",
            AbortKind::LockTimeout => "lock_timeout",
            AbortKind::Deadlock => "deadlock",
            AbortKind::TooOld => "too_old",
        }
    }
}

/// What one transaction attempt came to: committed, or aborted by the
/// engine's concurrency control (retrying may succeed). Other failures are
/// errors.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TxnOutcome {
    /// Its writes are in.
    Committed,
    /// It left nothing behind.
    Aborted(AbortKind),
}

/// The read-modify-write step of [`Engine::txn_update`]: given the index of
/// a key in the transaction and its current value (`None`: missing), writes
/// the key's new value into the buffer (cleared by the caller's step itself).
pub type TxnUpdate<'a> = dyn FnMut(usize, Option<&[u8]>, &mut Vec<u8>) -> EngineResult<()> + 'a;

/// The error of an engine without transactions asked for one.
fn no_transactions(engine: &str) -> BoxError {
    format!("{engine} has no transactions").into()
}

/// The name of keyspace `ks` of a run with `--keyspaces N > 1`: `ks0`, `ks1`, ...
pub fn keyspace_name(ks: usize) -> String {
    format!("ks{ks}")
}

/// The error of an engine without keyspaces asked for keyspace `ks`.
fn no_keyspaces(engine: &str, ks: usize) -> BoxError {
    format!(
        "{engine} has no keyspaces (asked for {})",
        keyspace_name(ks)
    )
    .into()
}

/// Warns (on stderr) that baseline `engine` levels whatever
/// `--compaction-style` asks for.
#[cfg(any(feature = "leveldb", feature = "rocksdb", feature = "fjall"))]
pub(crate) fn warn_if_not_leveling(engine: &str, cfg: &EngineConfig) {
    if cfg.compaction_style != ::sievedb::CompactionStyle::Leveling {
        eprintln!(
            "warning: the {engine} baseline always uses leveled compaction; \
             --compaction-style applies to sievedb only"
        );
    }
}

/// The device and filter-memory flags of `cfg` that baseline `engine` cannot
/// honour (`--io-delay-ns` and a filter memory budget always;
/// `--use-direct-reads` unless `direct_reads`), each warned about on stderr. The engine lists them under `ignored_flags` in its
/// settings and runs as if they were not given.
#[cfg(any(feature = "leveldb", feature = "rocksdb", feature = "fjall"))]
pub(crate) fn ignored_device_flags(
    engine: &str,
    cfg: &EngineConfig,
    direct_reads: bool,
) -> Vec<&'static str> {
    let mut ignored = Vec::new();
    if cfg.use_direct_reads && !direct_reads {
        eprintln!(
            "warning: the {engine} baseline cannot read with O_DIRECT; \
             --use-direct-reads is ignored, its reads go through the page cache"
        );
        ignored.push("--use-direct-reads");
    }
    if cfg.io_delay_ns > 0 {
        eprintln!(
            "warning: the {engine} baseline cannot add an emulated I/O delay; \
             --io-delay-ns applies to sievedb only"
        );
        ignored.push("--io-delay-ns");
    }
    if cfg.compression != ::sievedb::Compression::None {
        eprintln!(
            "warning: the {engine} baseline keeps compression off; \
             --compression applies to sievedb only"
        );
        ignored.push("--compression");
    }
    if cfg.filters.filter_memory() != ::sievedb::FilterMemory::Unlimited {
        let flag = if cfg.filters.filter_memory_bits_per_key.is_some() {
            "--filter-memory-bits-per-key"
        } else {
            "--filter-memory-bytes"
        };
        eprintln!(
            "warning: the {engine} baseline has no filter memory budget; \
             {flag} applies to sievedb only"
        );
        ignored.push(flag);
    }
    ignored
}

/// Background threads of every engine unless `--background-threads` says
/// otherwise: sievedb's default (one flush and one compaction thread), as
/// RocksDB's `max_background_jobs` of 2.
pub const DEFAULT_BACKGROUND_THREADS: usize = 2;

/// A key-value engine under benchmark. Implementations are shared across
/// reader threads (`Arc<dyn Engine>`); writes are issued without sync.
pub trait Engine: Send + Sync {
    /// Short name (`sievedb`, `leveldb`, `rocksdb`, `fjall`).
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
    /// Whether the engine opens with a merge operator, so that
    /// [`Engine::merge`] works (sievedb and RocksDB; LevelDB and fjall have
    /// none, and `mergerandom` is skipped for them).
    fn supports_merge(&self) -> bool {
        false
    }
    /// Merges `operand` into `key` through the engine's u64-add merge
    /// operator: the value becomes the wrapping sum of the little-endian
    /// u64 value (0 when missing) and the 8-byte little-endian `operand`;
    /// a value or operand of another size fails the read of the key.
    /// Engines without a merge operator answer an error.
    fn merge(&self, key: &[u8], operand: &[u8]) -> EngineResult<()> {
        let _ = (key, operand);
        Err(format!("{} has no merge operator", self.name()).into())
    }
    /// Writes `entries` atomically as one batch into keyspace `ks` (an index
    /// into the [`EngineConfig::keyspaces`] named keyspaces the engine was
    /// opened with, `--keyspaces N > 1`; with one keyspace the benchmarks
    /// call [`Engine::write_batch`]). Engines without keyspaces answer an error.
    fn write_batch_in(&self, ks: usize, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let _ = entries;
        Err(no_keyspaces(self.name(), ks))
    }
    /// [`Engine::get`] in keyspace `ks` (see [`Engine::write_batch_in`]).
    fn get_in(&self, ks: usize, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        let _ = key;
        Err(no_keyspaces(self.name(), ks))
    }
    /// [`Engine::get_len`] in keyspace `ks` (see [`Engine::write_batch_in`]).
    fn get_len_in(&self, ks: usize, key: &[u8]) -> EngineResult<Option<usize>> {
        Ok(self.get_in(ks, key)?.map(|v| v.len()))
    }
    /// [`Engine::merge`] in keyspace `ks` (see [`Engine::write_batch_in`]).
    fn merge_in(&self, ks: usize, key: &[u8], operand: &[u8]) -> EngineResult<()> {
        let _ = (key, operand);
        Err(no_keyspaces(self.name(), ks))
    }
    /// Reads every entry in key order; returns the number of entries read.
    /// With several keyspaces, every keyspace in turn (each in key order).
    fn scan_all(&self) -> EngineResult<u64>;
    /// Seeks to `key` and reads the entry there and up to `nexts` more (db_bench's
    /// `seekrandom`), stopping before `upper` (exclusive) and, when the engine
    /// has a prefix extractor (`--prefix-len`), at the end of `key`'s prefix
    /// (`prefix_same_as_start`); returns the entries read.
    fn seek(&self, key: &[u8], nexts: usize, upper: Option<&[u8]>) -> EngineResult<u64> {
        let _ = (key, nexts, upper);
        Err(format!("{} has no seek benchmark", self.name()).into())
    }
    /// Moves memtable contents into table files and waits until they are there
    /// (LevelDB: a full manual compaction, its C API has no plain flush).
    fn flush(&self) -> EngineResult<()>;
    /// Flushes, then waits until no compaction is running or due, so reads
    /// see a settled tree. Engines without such a wait only flush.
    fn wait_for_compactions(&self) -> EngineResult<()> {
        self.flush()
    }
    /// The settings the engine actually runs with, as a JSON object.
    /// (Flush, the waits and [`Engine::files_per_level`] cover every keyspace;
    /// files per level are summed over them.)
    fn settings(&self) -> serde_json::Value;
    /// The engine's statistics, when it keeps any (sievedb does; the baselines' are not collected).
    fn stats(&self) -> Option<::sievedb::Stats> {
        None
    }
    /// Table files per level (level 0 first), as the engine reports them:
    /// the shape of the tree the reads ran against.
    fn files_per_level(&self) -> Option<Vec<u64>> {
        None
    }
    /// Bytes compaction must still rewrite before no level is over its
    /// size, by the engine's own estimate (sievedb's
    /// `Stats::pending_compaction_bytes`, RocksDB's
    /// `rocksdb.estimate-pending-compaction-bytes` summed over the column
    /// families written); `None` for an engine that keeps no such estimate.
    fn pending_compaction_bytes(&self) -> Option<u64> {
        None
    }
    /// The sievedb database behind the engine (sievedb only), for the
    /// benchmarks that measure its internals (`filterprobe`).
    fn sievedb(&self) -> Option<&::sievedb::Db> {
        None
    }
    /// Whether [`Engine::flush`] and [`Engine::wait_for_compactions`] work
    /// (all but RocksDB's `TransactionDB`, which the `rocksdb` crate 0.20.1
    /// gives no flush; `flush` and `waitforcompaction` are then skipped).
    fn supports_flush(&self) -> bool {
        true
    }
    /// Whether the engine runs transactions ([`Engine::txn_update`],
    /// [`Engine::txn_get_lens`]): sievedb always, RocksDB and fjall when
    /// opened with [`EngineConfig::txn`]; LevelDB never (the transactional
    /// benchmarks are skipped for it).
    fn supports_txn(&self) -> bool {
        false
    }
    /// One attempt of a read-modify-write transaction over `keys` (distinct,
    /// in the default keyspace), with the concurrency control of
    /// [`EngineConfig::txn`] (sievedb: of `--txn-mode`): begins; reads every
    /// key for update (a pessimistic transaction locks it), passing its value
    /// to `update`, which writes the new one into `values[i]`; then writes
    /// every key and commits (synced with `--sync`). Reads are at the
    /// transaction's snapshot. An abort of the concurrency control is
    /// [`TxnOutcome::Aborted`], and nothing of the attempt stays; any other
    /// failure is an error.
    fn txn_update(
        &self,
        keys: &[&[u8]],
        values: &mut [Vec<u8>],
        update: &mut TxnUpdate<'_>,
    ) -> EngineResult<TxnOutcome> {
        let _ = (keys, values, update);
        Err(no_transactions(self.name()))
    }
    /// One read-only transaction: begins, looks up every key of `keys` at its
    /// snapshot (`lens[i]`: the length of key i's value, if any), ends.
    fn txn_get_lens(&self, keys: &[&[u8]], lens: &mut [Option<usize>]) -> EngineResult<()> {
        let _ = (keys, lens);
        Err(no_transactions(self.name()))
    }
}

/// The engines this crate knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineKind {
    /// The sievedb engine of this workspace.
    Sievedb,
    /// LevelDB through its C API (feature `leveldb`).
    Leveldb,
    /// RocksDB through the `rocksdb` crate, linked to the system library (feature `rocksdb`).
    Rocksdb,
    /// fjall, a pure-Rust LSM-tree engine (feature `fjall`).
    Fjall,
}

impl EngineKind {
    /// Every engine, in the order `--engine all` runs them (sievedb first).
    pub const ALL: [EngineKind; 4] = [
        EngineKind::Sievedb,
        EngineKind::Leveldb,
        EngineKind::Rocksdb,
        EngineKind::Fjall,
    ];

    /// Short name, also the name of the engine's database directory.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Sievedb => "sievedb",
            EngineKind::Leveldb => "leveldb",
            EngineKind::Rocksdb => "rocksdb",
            EngineKind::Fjall => "fjall",
        }
    }

    /// Whether this build contains the engine.
    pub fn available(self) -> bool {
        match self {
            EngineKind::Sievedb => true,
            EngineKind::Leveldb => cfg!(feature = "leveldb"),
            EngineKind::Rocksdb => cfg!(feature = "rocksdb"),
            EngineKind::Fjall => cfg!(feature = "fjall"),
        }
    }

    /// The engines this build contains, in [`EngineKind::ALL`] order.
    pub fn built() -> Vec<EngineKind> {
        EngineKind::ALL
            .into_iter()
            .filter(|k| k.available())
            .collect()
    }

    /// Whether the engine can spread the keys over named keyspaces
    /// (`--keyspaces N > 1`): sievedb (its keyspaces), RocksDB (column
    /// families) and fjall (keyspaces); LevelDB has nothing of the kind, and
    /// a run with several keyspaces skips it.
    pub fn supports_keyspaces(self) -> bool {
        !matches!(self, EngineKind::Leveldb)
    }

    /// Opens (creating if missing) the engine's database at `path`.
    pub fn open(self, path: &Path, cfg: &EngineConfig) -> EngineResult<Arc<dyn Engine>> {
        match self {
            EngineKind::Sievedb => Ok(Arc::new(sievedb::SieveDb::open(path, cfg)?)),
            #[cfg(feature = "leveldb")]
            EngineKind::Leveldb => Ok(Arc::new(leveldb::LevelDb::open(path, cfg)?)),
            #[cfg(feature = "rocksdb")]
            EngineKind::Rocksdb => match cfg.txn {
                None => Ok(Arc::new(self::rocksdb::RocksDb::open(path, cfg)?)),
                Some(txn) => Ok(Arc::new(rocksdb_txn::RocksTxnDb::open(path, cfg, txn)?)),
            },
            #[cfg(feature = "fjall")]
            EngineKind::Fjall => Ok(Arc::new(self::fjall::Fjall::open(path, cfg)?)),
            #[allow(unreachable_patterns)]
            other => Err(other.not_built().into()),
        }
    }

    /// The error for this engine requested in a build without it: names the
    /// cargo feature to build with and what it needs from the system.
    pub fn not_built(self) -> String {
        let (feature, needs) = match self {
            EngineKind::Sievedb => return "the sievedb engine is always built in".to_string(),
            EngineKind::Leveldb => (
                "leveldb",
                "needs the system LevelDB library, Debian package libleveldb-dev",
            ),
            EngineKind::Rocksdb => (
                "rocksdb",
                "needs the system RocksDB library and libclang for its bindings, \
                 Debian packages librocksdb-dev and libclang-dev",
            ),
            EngineKind::Fjall => (
                "fjall",
                "pure Rust from crates.io, no system package needed",
            ),
        };
        format!(
            "the {name} engine is not built in: rebuild with `--features {feature}` \
             (e.g. `cargo run --release -p sievedb-cli --features {feature} -- bench --engine {name}`; \
             {needs})",
            name = self.name()
        )
    }
}

/// Whether the directory `path` holds a database of one of the engines: a
/// `CURRENT` file (sievedb, LevelDB, RocksDB) or fjall's `version` marker next
/// to its `keyspaces` directory (fjall 3; fjall 2, the baseline of earlier
/// runs, had `partitions` instead). Used before emptying a database directory.
pub fn looks_like_db(path: &Path) -> bool {
    path.join("CURRENT").is_file()
        || (path.join("version").is_file()
            && (path.join("keyspaces").is_dir() || path.join("partitions").is_dir()))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Writes keys 0..30 (4-byte big-endian, value `value`), key `i` into
    /// keyspace `i % 3` (the engine opened with `keyspaces: 3`).
    pub(crate) fn write_one_key_per_keyspace(db: &dyn Engine) {
        for i in 0..30u32 {
            db.write_batch_in(i as usize % 3, &[(&i.to_be_bytes(), b"value")])
                .unwrap();
        }
    }

    /// Every key of [`write_one_key_per_keyspace`] is in its keyspace only,
    /// none in the default one.
    pub(crate) fn check_each_key_in_its_keyspace_only(db: &dyn Engine) {
        for i in 0..30u32 {
            for ks in 0..3 {
                let want = (ks == i as usize % 3).then_some(5);
                assert_eq!(db.get_len_in(ks, &i.to_be_bytes()).unwrap(), want);
            }
            assert_eq!(db.get_len(&i.to_be_bytes()).unwrap(), None);
        }
    }

    #[test]
    fn looks_like_db_knows_every_engines_layout() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path();
        assert!(!looks_like_db(p));
        // A lone `version` file is not enough to look like fjall.
        std::fs::write(p.join("version"), b"x").unwrap();
        assert!(!looks_like_db(p));
        std::fs::create_dir(p.join("keyspaces")).unwrap();
        assert!(looks_like_db(p));
        // fjall 2's layout, left by runs of the earlier baseline.
        std::fs::remove_dir(p.join("keyspaces")).unwrap();
        std::fs::create_dir(p.join("partitions")).unwrap();
        assert!(looks_like_db(p));

        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("CURRENT"), b"MANIFEST-000001\n").unwrap();
        assert!(looks_like_db(dir.path()));
    }

    /// Every built engine's own directory is recognised, once opened and once reopened.
    #[test]
    fn looks_like_db_recognises_every_built_engines_directory() {
        let cfg = crate::BenchArgs::default().engine_config();
        for kind in EngineKind::built() {
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join(kind.name());
            let engine = kind.open(&path, &cfg).unwrap();
            engine.put(b"key", b"value").unwrap();
            engine.flush().unwrap();
            drop(engine);
            assert!(looks_like_db(&path), "{}", kind.name());
            drop(kind.open(&path, &cfg).unwrap());
            assert!(looks_like_db(&path), "{}", kind.name());
        }
    }

    #[test]
    fn not_built_names_feature_and_package() {
        let msg = EngineKind::Rocksdb.not_built();
        assert!(msg.contains("--features rocksdb") && msg.contains("librocksdb-dev"));
        assert!(msg.contains("--engine rocksdb"), "{msg}");
        let msg = EngineKind::Fjall.not_built();
        assert!(msg.contains("--features fjall") && msg.contains("no system package"));
        assert!(EngineKind::Leveldb.not_built().contains("libleveldb-dev"));
    }
}
