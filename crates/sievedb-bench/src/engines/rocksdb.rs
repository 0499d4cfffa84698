//! RocksDB as a baseline engine, through the `rocksdb` crate linked to the
//! system library (Debian's `librocksdb-dev`; see `.cargo/config.toml`).

use super::{Engine, EngineConfig, EngineResult};
use ::rocksdb::{
    BlockBasedOptions, Cache, ColumnFamily, ColumnFamilyDescriptor, DBCompactionStyle,
    DBCompressionType, MergeOperands, Options, ReadOptions, WriteBatch, WriteOptions, DB,
    DEFAULT_COLUMN_FAMILY_NAME,
};
use serde_json::json;
use std::ffi::c_int;
use std::path::Path;

/// Level-0 file counts that trigger compaction, slow writes down and stop them
/// (RocksDB's defaults, set explicitly so that the reported settings are the real ones).
const LEVEL0_TRIGGERS: [c_int; 3] = [4, 20, 36];
/// Memtables per column family: the active one plus one being flushed (RocksDB's default).
const MAX_WRITE_BUFFER_NUMBER: c_int = 2;
/// Levels of the tree (RocksDB's default).
pub(crate) const NUM_LEVELS: c_int = 7;
/// Keys between restart points in a data block (RocksDB's and LevelDB's default).
const BLOCK_RESTART_INTERVAL: i32 = 16;
/// Table format version (RocksDB 7.x's default; 5 gives the cache-local full Bloom filter).
const FORMAT_VERSION: i32 = 5;

/// The version of the RocksDB library that opened the database at `path`, as
/// it wrote it into the `LOG` file (`RocksDB version: 7.8.3`).
fn version_from_log(path: &Path) -> Option<String> {
    let log = std::fs::read_to_string(path.join("LOG")).ok()?;
    let (_, rest) = log.split_once("RocksDB version: ")?;
    Some(rest.lines().next()?.trim().to_string())
}

/// The version of the RocksDB headers the bindings were generated from, read
/// by build.rs from `$ROCKSDB_INCLUDE_DIR/rocksdb/version.h` (`unknown` if absent).
const HEADER_VERSION: &str = env!("SIEVEDB_ROCKSDB_HEADER_VERSION");

/// How long `waitforcompaction` waits for RocksDB's compactions.
const WAIT_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3600);

/// A RocksDB database opened for benchmarking, with the same settings as sievedb.
pub struct RocksDb {
    db: DB,
    /// The column families `ks0..ks{N-1}` of `--keyspaces N > 1` (empty with
    /// one keyspace: the default column family, through the plain calls).
    /// Their handles live in `db` and are looked up by name per operation
    /// (the crate hands out only borrowed handles).
    cfs: Vec<String>,
    /// Options of every lookup (shared by the reader threads; RocksDB only reads them).
    read: ReadOptions,
    write: WriteOptions,
    /// Keeps the block cache alive as long as the database (it is shared by reference).
    _cache: Cache,
    settings: serde_json::Value,
    /// Opened with a prefix extractor (`--prefix-len`): seeks keep to their prefix.
    prefix: bool,
}

/// Name of [`u64_add`] in RocksDB (its OPTIONS file and errors).
const MERGE_OPERATOR: &str = "u64add";

/// RocksDB's merge operator for `mergerandom`, the same as sievedb's
/// `merge::U64Add`: the wrapping sum of the little-endian u64 value (0 when
/// missing) and the 8-byte little-endian operands; `None` (the read fails)
/// when the value or an operand is not 8 bytes. Associative, so RocksDB uses
/// it for partial merges too (with no value).
fn u64_add(_key: &[u8], existing: Option<&[u8]>, operands: &MergeOperands) -> Option<Vec<u8>> {
    let le = |b: &[u8]| Some(u64::from_le_bytes(b.try_into().ok()?));
    let mut sum = match existing {
        Some(v) => le(v)?,
        None => 0,
    };
    for op in operands {
        sum = sum.wrapping_add(le(op)?);
    }
    Some(sum.to_le_bytes().to_vec())
}

/// Reads every entry of `it` from the first on (each key and value touched),
/// and counts them.
pub(crate) fn count_entries<D: ::rocksdb::DBAccess>(
    mut it: ::rocksdb::DBRawIteratorWithThreadMode<'_, D>,
) -> EngineResult<u64> {
    let mut n = 0u64;
    it.seek_to_first();
    while let Some((k, v)) = it.item() {
        std::hint::black_box((k, v));
        n += 1;
        it.next();
    }
    it.status().map_err(err)?;
    Ok(n)
}

/// Read options of lookups and scans: checksums verified, blocks cached.
pub(crate) fn read_options() -> ReadOptions {
    let mut r = ReadOptions::default();
    r.set_verify_checksums(true);
    r.fill_cache(true);
    r
}

/// The options every RocksDB database of the benchmark is opened (and its
/// bulk-loaded tables written) with, and the block cache they share.
pub(crate) fn db_options(cfg: &EngineConfig) -> EngineResult<(Options, Cache)> {
    let bits = cfg.bits_per_key.max(0.0);
    let max_open = c_int::try_from(cfg.max_open_files).unwrap_or(c_int::MAX);
    let cache_bytes = usize::try_from(cfg.block_cache_size).unwrap_or(usize::MAX);
    let cache = Cache::new_lru_cache(cache_bytes)?;

    let mut table = BlockBasedOptions::default();
    table.set_block_size(cfg.block_size);
    table.set_block_restart_interval(BLOCK_RESTART_INTERVAL);
    table.set_format_version(FORMAT_VERSION);
    table.set_block_cache(&cache);
    table.set_cache_index_and_filter_blocks(false);
    if bits > 0.0 {
        // A full (whole-table) filter over whole keys, not the legacy block-based one.
        table.set_bloom_filter(bits, false);
        table.set_whole_key_filtering(true);
    }

    let mut o = Options::default();
    o.create_if_missing(true);
    o.set_paranoid_checks(false);
    o.set_block_based_table_factory(&table);
    o.set_compression_type(DBCompressionType::None);
    o.set_bottommost_compression_type(DBCompressionType::None);
    o.set_write_buffer_size(cfg.write_buffer_size);
    o.set_max_write_buffer_number(MAX_WRITE_BUFFER_NUMBER);
    o.set_min_write_buffer_number_to_merge(1);
    o.set_compaction_style(DBCompactionStyle::Level);
    o.set_num_levels(NUM_LEVELS);
    o.set_target_file_size_base(cfg.target_file_size);
    o.set_target_file_size_multiplier(1);
    o.set_max_bytes_for_level_base(cfg.level1_size);
    o.set_max_bytes_for_level_multiplier(cfg.size_ratio as f64);
    o.set_level_compaction_dynamic_level_bytes(false);
    o.set_level_zero_file_num_compaction_trigger(LEVEL0_TRIGGERS[0]);
    o.set_level_zero_slowdown_writes_trigger(LEVEL0_TRIGGERS[1]);
    o.set_level_zero_stop_writes_trigger(LEVEL0_TRIGGERS[2]);
    // Flushes plus compactions running at once (RocksDB's default is 2).
    o.set_max_background_jobs(c_int::try_from(cfg.background_threads).unwrap_or(c_int::MAX));
    o.set_max_open_files(max_open);
    o.set_use_direct_reads(cfg.use_direct_reads);
    o.set_use_direct_io_for_flush_and_compaction(false);
    o.set_allow_mmap_reads(false);
    o.set_allow_mmap_writes(false);
    // For `mergerandom`; RocksDB calls it only for keys that have operands.
    o.set_merge_operator_associative(MERGE_OPERATOR, u64_add);
    if let Some(n) = cfg.prefix_len {
        // The table filters then hold the prefixes too (beside whole keys),
        // and the memtable gets a prefix Bloom of 10% of its size.
        o.set_prefix_extractor(::rocksdb::SliceTransform::create_fixed_prefix(n));
        o.set_memtable_prefix_bloom_ratio(0.1);
    }
    Ok((o, cache))
}

/// The error of a failed open of the database at `path`.
pub(crate) fn open_error(e: ::rocksdb::Error, path: &Path, cfg: &EngineConfig) -> String {
    if cfg.use_direct_reads {
        format!(
            "rocksdb: {e} (with --use-direct-reads: does the file system of {} \
             support O_DIRECT?)",
            path.display()
        )
    } else {
        format!("rocksdb: {e}")
    }
}

/// The settings of a RocksDB database opened at `path` with `cfg` (after
/// the open, so that its `LOG` names the library), `ignored` the flags it
/// cannot honour.
pub(crate) fn settings(
    path: &Path,
    cfg: &EngineConfig,
    ignored: Vec<&'static str>,
) -> serde_json::Value {
    // The LOG names the library that actually ran; the headers' version
    // stands in if the LOG cannot be read.
    let version = version_from_log(path).unwrap_or_else(|| HEADER_VERSION.into());
    let bits = cfg.bits_per_key.max(0.0);
    let max_open = c_int::try_from(cfg.max_open_files).unwrap_or(c_int::MAX);
    json!({
        "engine": "rocksdb",
        "version": version,
        "header_version": HEADER_VERSION,
        "library": "system librocksdb (ROCKSDB_LIB_DIR), through the rust-rocksdb crate 0.20.1",
        "bits_per_key": bits,
        "filter": if bits > 0.0 {
            "bloom, full filter per table over whole keys (format_version 5)"
        } else {
            "none"
        },
        "block_cache_bytes": cfg.block_cache_size,
        "index_filter_blocks": "held by the open table readers, outside the block cache",
        "block_size": cfg.block_size,
        "restart_interval": BLOCK_RESTART_INTERVAL,
        "compression": "none",
        "verify_checksums": true,
        "file_access": if cfg.use_direct_reads {
            "O_DIRECT reads (use_direct_reads), no mmap"
        } else {
            "buffered pread (page cache), no mmap, no O_DIRECT"
        },
        "use_direct_reads": cfg.use_direct_reads,
        "io_delay_ns": 0,
        "ignored_flags": ignored,
        "write_buffer_size": cfg.write_buffer_size,
        "max_memtables": MAX_WRITE_BUFFER_NUMBER,
        "wal": true,
        "sync": cfg.sync,
        "target_file_size": cfg.target_file_size,
        "size_ratio": cfg.size_ratio,
        "level1_size": cfg.level1_size,
        "dynamic_level_bytes": false,
        "num_levels": NUM_LEVELS,
        "compaction_style": "leveling",
        "level0_triggers": LEVEL0_TRIGGERS,
        "max_open_files": max_open,
        "background_threads": cfg.background_threads,
        "paranoid_checks": false,
        "merge_operator": MERGE_OPERATOR,
        "prefix_extractor": cfg.prefix_len.map(|n| format!(
            "fixed {n} bytes, prefix Bloom in the table filters and the memtable (ratio 0.1)"
        )),
    })
}

impl RocksDb {
    /// Opens (or creates) the database at `path` with the run's settings.
    pub fn open(path: &Path, cfg: &EngineConfig) -> EngineResult<Self> {
        super::warn_if_not_leveling("rocksdb", cfg);
        let ignored = super::ignored_device_flags("rocksdb", cfg, true);
        let (mut o, cache) = db_options(cfg)?;

        let mut write = WriteOptions::default();
        write.set_sync(cfg.sync);
        write.disable_wal(false);

        // RocksDB creates only the last path component itself.
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        // --keyspaces N > 1: N column families created at open, each with the
        // options above (merge operator included); the default column family
        // (always there) gets them too and stays empty.
        let cfs: Vec<String> = if cfg.keyspaces > 1 {
            (0..cfg.keyspaces).map(super::keyspace_name).collect()
        } else {
            Vec::new()
        };
        let opened = if cfs.is_empty() {
            DB::open(&o, path)
        } else {
            o.create_missing_column_families(true);
            let descriptors = std::iter::once(DEFAULT_COLUMN_FAMILY_NAME.to_string())
                .chain(cfs.iter().cloned())
                .map(|name| ColumnFamilyDescriptor::new(name, o.clone()));
            DB::open_cf_descriptors(&o, path, descriptors)
        };
        let db = opened.map_err(|e| open_error(e, path, cfg))?;
        let mut settings = settings(path, cfg, ignored);
        if !cfs.is_empty() {
            settings["column_families"] = json!(format!(
                "{} ({}..{}), created at open, each with the options above; one WAL; \
                 the default column family stays empty",
                cfs.len(),
                cfs[0],
                cfs[cfs.len() - 1]
            ));
        }
        Ok(RocksDb {
            db,
            cfs,
            read: read_options(),
            write,
            prefix: cfg.prefix_len.is_some(),
            _cache: cache,
            settings,
        })
    }
}

/// Prefixes RocksDB errors with the engine name.
pub(crate) fn err(e: ::rocksdb::Error) -> super::BoxError {
    format!("rocksdb: {e}").into()
}

impl RocksDb {
    /// The handle of column family `ks` (of `--keyspaces`).
    fn cf(&self, ks: usize) -> EngineResult<&ColumnFamily> {
        self.cfs
            .get(ks)
            .and_then(|name| self.db.cf_handle(name))
            .ok_or_else(|| {
                format!(
                    "rocksdb: no column family {} (opened with {})",
                    super::keyspace_name(ks),
                    self.cfs.len()
                )
                .into()
            })
    }

    /// Every column family the benchmark writes: `None` for the default one
    /// (one keyspace: the plain calls), else `ks0..`.
    fn written_cfs(&self) -> EngineResult<Vec<Option<&ColumnFamily>>> {
        if self.cfs.is_empty() {
            return Ok(vec![None]);
        }
        (0..self.cfs.len())
            .map(|ks| self.cf(ks).map(Some))
            .collect()
    }

    /// Integer property `name` of column family `cf` (`None`: the default
    /// one, or a property of the whole database), if RocksDB has it.
    fn property_opt(
        &self,
        cf: Option<&ColumnFamily>,
        name: &str,
    ) -> Result<Option<u64>, ::rocksdb::Error> {
        match cf {
            None => self.db.property_int_value(name),
            Some(cf) => self.db.property_int_value_cf(cf, name),
        }
    }

    /// [`RocksDb::property_opt`], 0 when missing.
    fn property(&self, cf: Option<&ColumnFamily>, name: &str) -> EngineResult<u64> {
        Ok(self.property_opt(cf, name).map_err(err)?.unwrap_or(0))
    }
}

impl Engine for RocksDb {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        self.db.put_opt(key, value, &self.write).map_err(err)
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self
            .db
            .get_pinned_opt(key, &self.read)
            .map_err(err)?
            .map(|v| v.to_vec()))
    }

    fn get_len(&self, key: &[u8]) -> EngineResult<Option<usize>> {
        // The pinned slice points into the block cache (or memtable): no copy.
        Ok(self
            .db
            .get_pinned_opt(key, &self.read)
            .map_err(err)?
            .map(|v| v.len()))
    }

    fn write_batch(&self, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let mut batch = WriteBatch::default();
        for (k, v) in entries {
            batch.put(k, v);
        }
        self.db.write_opt(batch, &self.write).map_err(err)
    }

    fn supports_merge(&self) -> bool {
        true
    }

    fn merge(&self, key: &[u8], operand: &[u8]) -> EngineResult<()> {
        self.db.merge_opt(key, operand, &self.write).map_err(err)
    }

    fn write_batch_in(&self, ks: usize, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let cf = self.cf(ks)?;
        let mut batch = WriteBatch::default();
        for (k, v) in entries {
            batch.put_cf(cf, k, v);
        }
        self.db.write_opt(batch, &self.write).map_err(err)
    }

    fn get_in(&self, ks: usize, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self
            .db
            .get_pinned_cf_opt(self.cf(ks)?, key, &self.read)
            .map_err(err)?
            .map(|v| v.to_vec()))
    }

    fn get_len_in(&self, ks: usize, key: &[u8]) -> EngineResult<Option<usize>> {
        Ok(self
            .db
            .get_pinned_cf_opt(self.cf(ks)?, key, &self.read)
            .map_err(err)?
            .map(|v| v.len()))
    }

    fn merge_in(&self, ks: usize, key: &[u8], operand: &[u8]) -> EngineResult<()> {
        self.db
            .merge_cf_opt(self.cf(ks)?, key, operand, &self.write)
            .map_err(err)
    }

    fn seek(&self, key: &[u8], nexts: usize, upper: Option<&[u8]>) -> EngineResult<u64> {
        let mut ro = read_options();
        if let Some(u) = upper {
            ro.set_iterate_upper_bound(u.to_vec());
        }
        ro.set_prefix_same_as_start(self.prefix);
        let mut it = self.db.raw_iterator_opt(ro);
        it.seek(key);
        let mut n = 0u64;
        while n <= nexts as u64 && it.valid() {
            std::hint::black_box((it.key(), it.value()));
            n += 1;
            it.next();
        }
        it.status().map_err(err)?;
        Ok(n)
    }

    fn scan_all(&self) -> EngineResult<u64> {
        let mut n = 0u64;
        for cf in self.written_cfs()? {
            let it = match cf {
                None => self.db.raw_iterator_opt(read_options()),
                Some(cf) => self.db.raw_iterator_cf_opt(cf, read_options()),
            };
            n += count_entries(it)?;
        }
        Ok(n)
    }

    fn flush(&self) -> EngineResult<()> {
        // Waits until the memtable is written to a level-0 table.
        for cf in self.written_cfs()? {
            match cf {
                None => self.db.flush(),
                Some(cf) => self.db.flush_cf(cf),
            }
            .map_err(err)?;
        }
        Ok(())
    }

    fn wait_for_compactions(&self) -> EngineResult<()> {
        self.flush()?;
        let start = std::time::Instant::now();
        let cfs = self.written_cfs()?;
        // Whether a compaction is due in some column family (the running
        // counts below are the database's).
        let pending = || -> EngineResult<bool> {
            for cf in &cfs {
                if self.property(*cf, "rocksdb.compaction-pending")? != 0 {
                    return Ok(true);
                }
            }
            Ok(false)
        };
        // Nothing due (no level over its size, L0 under its trigger) and nothing running.
        while pending()?
            || self.property(None, "rocksdb.num-running-compactions")? != 0
            || self.property(None, "rocksdb.num-running-flushes")? != 0
        {
            if start.elapsed() > WAIT_TIMEOUT {
                return Err(format!(
                    "rocksdb: compactions still due after {} s",
                    WAIT_TIMEOUT.as_secs()
                )
                .into());
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        Ok(())
    }

    fn pending_compaction_bytes(&self) -> Option<u64> {
        let cfs = self.written_cfs().ok()?;
        cfs.iter()
            .map(|cf| {
                self.property_opt(*cf, "rocksdb.estimate-pending-compaction-bytes")
                    .ok()
                    .flatten()
            })
            .sum()
    }

    fn files_per_level(&self) -> Option<Vec<u64>> {
        let cfs = self.written_cfs().ok()?;
        (0..NUM_LEVELS)
            .map(|l| {
                let name = format!("rocksdb.num-files-at-level{l}");
                cfs.iter()
                    .map(|cf| self.property_opt(*cf, &name).ok().flatten())
                    .sum::<Option<u64>>()
            })
            .collect()
    }

    fn settings(&self) -> serde_json::Value {
        self.settings.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table_files(dir: &Path) -> usize {
        std::fs::read_dir(dir)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension() == Some("sst".as_ref()))
            .count()
    }

    #[test]
    fn flush_moves_the_memtable_into_a_table_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rocksdb");
        let cfg = crate::BenchArgs::default().engine_config();
        let db = RocksDb::open(&path, &cfg).unwrap();
        for i in 0..100u32 {
            db.put(&i.to_be_bytes(), b"value").unwrap();
        }
        assert_eq!(table_files(&path), 0);
        db.flush().unwrap();
        assert_eq!(table_files(&path), 1);
        assert_eq!(db.get_len(&7u32.to_be_bytes()).unwrap(), Some(5));
        assert_eq!(db.settings()["version"], version_from_log(&path).unwrap());
        // The library that ran is the one whose headers the bindings were built from.
        assert_eq!(db.settings()["header_version"], db.settings()["version"]);
    }

    /// `--keyspaces 3`: three column families besides the empty default
    /// one, each key only in the one it was written to, merges per family.
    #[test]
    fn keyspaces_are_column_families() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rocksdb");
        let cfg = EngineConfig {
            keyspaces: 3,
            ..crate::BenchArgs::default().engine_config()
        };
        let db = RocksDb::open(&path, &cfg).unwrap();
        crate::engines::tests::write_one_key_per_keyspace(&db);
        let one = 1u64.to_le_bytes();
        db.merge_in(2, b"c", &one).unwrap();
        db.merge_in(2, b"c", &one).unwrap();
        crate::engines::tests::check_each_key_in_its_keyspace_only(&db);
        assert_eq!(
            db.get_in(2, b"c").unwrap(),
            Some(2u64.to_le_bytes().to_vec())
        );
        assert_eq!(db.get_in(1, b"c").unwrap(), None);
        assert!(db.get_in(3, b"c").is_err());
        assert_eq!(db.scan_all().unwrap(), 31);
        db.wait_for_compactions().unwrap();
        // One table per keyspace after the flush, summed over them.
        assert_eq!(db.files_per_level().unwrap().iter().sum::<u64>(), 3);
        assert!(db.settings()["column_families"]
            .as_str()
            .unwrap()
            .starts_with("3 (ks0..ks2)"));
        drop(db);
        let mut names = DB::list_cf(&Options::default(), &path).unwrap();
        names.sort();
        assert_eq!(names, ["default", "ks0", "ks1", "ks2"]);
    }

    #[test]
    fn merges_add_little_endian_u64s() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = crate::BenchArgs::default().engine_config();
        let db = RocksDb::open(&dir.path().join("rocksdb"), &cfg).unwrap();
        assert!(db.supports_merge());
        let one = 1u64.to_le_bytes();
        for _ in 0..3 {
            db.merge(b"c", &one).unwrap();
        }
        assert_eq!(db.get(b"c").unwrap(), Some(3u64.to_le_bytes().to_vec()));
        db.flush().unwrap();
        db.merge(b"c", &u64::MAX.to_le_bytes()).unwrap(); // wraps: 3 - 1
        db.put(b"base", &40u64.to_le_bytes()).unwrap();
        db.merge(b"base", &2u64.to_le_bytes()).unwrap();
        db.flush().unwrap();
        db.merge(b"base", &one).unwrap();
        assert_eq!(db.get(b"c").unwrap(), Some(2u64.to_le_bytes().to_vec()));
        assert_eq!(db.get(b"base").unwrap(), Some(43u64.to_le_bytes().to_vec()));
        // A value or an operand that is not 8 bytes fails the read.
        db.put(b"text", b"abc").unwrap();
        db.merge(b"text", &one).unwrap();
        assert!(db.get(b"text").is_err());
        db.merge(b"short", b"1").unwrap();
        assert!(db.get(b"short").is_err());
    }
}
