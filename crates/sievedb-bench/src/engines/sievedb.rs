//! The sievedb engine.

use super::{AbortKind, Engine, EngineConfig, EngineResult, TxnOutcome, TxnUpdate};
use crate::cli::txn_args::TxnMode;
use serde_json::json;
use sievedb::{
    Compression, ConflictKind, Db, Error, FilterLayout, FilterMemory, FilterOptions, IndexScheme,
    Keyspace, Options, Stats, TransactionOptions, WriteBatch, WriteOptions,
};
use std::path::Path;
use std::sync::Arc;

/// A sievedb database opened for benchmarking.
pub struct SieveDb {
    // Dropped first: a keyspace handle keeps the database open.
    /// The keyspaces `ks0..ks{N-1}` of `--keyspaces N > 1`, each with the
    /// database's options (empty with one keyspace: `db`'s own methods, the
    /// default keyspace, hold every key).
    keyspaces: Vec<Keyspace>,
    db: Db,
    /// Every write's options (`--sync`), commits' too.
    write: WriteOptions,
    /// The options of every read-write transaction (`--txn-mode`; optimistic
    /// without [`EngineConfig::txn`]).
    txn: TransactionOptions,
    /// Its mode, for the settings.
    txn_mode: TxnMode,
}

impl SieveDb {
    /// Opens (or creates) the database at `path` with the run's settings.
    pub fn open(path: &Path, cfg: &EngineConfig) -> EngineResult<Self> {
        let mut opts = Options::builder()
            .create_if_missing(true)
            .write_buffer_size(cfg.write_buffer_size)
            .lookup_breakdown_every(cfg.lookup_breakdown_every)
            .block_cache_capacity(cfg.block_cache_size)
            .target_file_size(cfg.target_file_size)
            .size_ratio(cfg.size_ratio)
            .level1_size(cfg.level1_size)
            .max_levels(cfg.max_levels)
            .compaction_style(cfg.compaction_style)
            .block_size(cfg.block_size)
            .max_open_files(cfg.max_open_files)
            .background_threads(cfg.background_threads)
            .table_meta_cache_capacity(cfg.table_meta_cache_size)
            .compression_per_level(vec![cfg.compression])
            .verify_checksums(true)
            .use_direct_reads(cfg.use_direct_reads)
            .use_mmap_reads(cfg.use_mmap_reads)
            .io_delay_ns(cfg.io_delay_ns)
            // For `mergerandom`; it costs nothing while no key has operands.
            .merge_operator(Arc::new(sievedb::merge::U64Add))
            .build();
        cfg.filters.apply(&mut opts);
        opts.filter.bits_per_key = cfg.bits_per_key;
        opts.prefix_extractor = cfg
            .prefix_len
            .map(|n| Arc::new(sievedb::FixedPrefix::new(n)) as Arc<dyn sievedb::PrefixExtractor>);
        let db = Db::open(path, opts)?;
        // `Db::keyspace` opens or creates a keyspace with the database's
        // options (the merge operator above included): every keyspace is
        // configured alike, with one WAL and one filter memory budget.
        let keyspaces = if cfg.keyspaces > 1 {
            (0..cfg.keyspaces)
                .map(|ks| db.keyspace(&super::keyspace_name(ks)))
                .collect::<Result<Vec<_>, _>>()?
        } else {
            Vec::new()
        };
        let write = WriteOptions { sync: cfg.sync };
        let txn_mode = cfg.txn.map_or(TxnMode::Optimistic, |t| t.mode);
        let txn = match cfg.txn {
            Some(t) if t.mode == TxnMode::Pessimistic => TransactionOptions::default()
                .pessimistic(true)
                .lock_timeout(t.lock_timeout),
            _ => TransactionOptions::default(),
        };
        Ok(SieveDb {
            keyspaces,
            db,
            write,
            txn,
            txn_mode,
        })
    }
}

impl SieveDb {
    /// Keyspace `ks` of `--keyspaces`.
    fn ks(&self, ks: usize) -> EngineResult<&Keyspace> {
        self.keyspaces.get(ks).ok_or_else(|| {
            format!(
                "sievedb: no keyspace {} (opened with {})",
                super::keyspace_name(ks),
                self.keyspaces.len()
            )
            .into()
        })
    }
}

impl Engine for SieveDb {
    fn name(&self) -> &'static str {
        "sievedb"
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        Ok(self.db.put_with(key, value, &self.write)?)
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self.db.get(key)?)
    }

    fn write_batch(&self, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let mut batch = WriteBatch::new();
        for (k, v) in entries {
            batch.put(k, v);
        }
        Ok(self.db.write_with(batch, &self.write)?)
    }

    fn supports_merge(&self) -> bool {
        true
    }

    fn merge(&self, key: &[u8], operand: &[u8]) -> EngineResult<()> {
        Ok(self.db.merge_with(key, operand, &self.write)?)
    }

    fn write_batch_in(&self, ks: usize, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let keyspace = self.ks(ks)?;
        let mut batch = WriteBatch::new();
        for (k, v) in entries {
            batch.put_cf(keyspace, k, v);
        }
        Ok(self.db.write_with(batch, &self.write)?)
    }

    fn get_in(&self, ks: usize, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self.ks(ks)?.get(key)?)
    }

    fn merge_in(&self, ks: usize, key: &[u8], operand: &[u8]) -> EngineResult<()> {
        Ok(self.ks(ks)?.merge_with(key, operand, &self.write)?)
    }

    fn scan_all(&self) -> EngineResult<u64> {
        let mut n = 0u64;
        if self.keyspaces.is_empty() {
            for item in self.db.iter()? {
                let (k, v) = item?;
                std::hint::black_box((k, v));
                n += 1;
            }
        }
        for keyspace in &self.keyspaces {
            for item in keyspace.iter()? {
                let (k, v) = item?;
                std::hint::black_box((k, v));
                n += 1;
            }
        }
        Ok(n)
    }

    fn seek(&self, key: &[u8], nexts: usize, upper: Option<&[u8]>) -> EngineResult<u64> {
        let mut ro = sievedb::ReadOptions::default()
            .prefix_same_as_start(self.db.options().prefix_extractor.is_some());
        if let Some(u) = upper {
            ro = ro.upper_bound(u);
        }
        let mut it = self.db.iter_opt(&ro)?;
        it.seek(key)?;
        let mut n = 0u64;
        while n <= nexts as u64 {
            match it.next_ref()? {
                Some(kv) => std::hint::black_box(kv),
                None => break,
            };
            n += 1;
        }
        Ok(n)
    }

    fn flush(&self) -> EngineResult<()> {
        Ok(self.db.flush()?)
    }

    fn wait_for_compactions(&self) -> EngineResult<()> {
        Ok(self.db.wait_for_compactions()?)
    }

    fn settings(&self) -> serde_json::Value {
        let o = self.db.options();
        let compression: Vec<String> = o
            .compression_per_level
            .iter()
            .map(Compression::to_string)
            .collect();
        let mut settings = json!({
            "engine": "sievedb",
            "version": env!("CARGO_PKG_VERSION"),
            "bits_per_key": o.filter.bits_per_key,
            "filter": filter_description(&o.filter),
            "hash_sharing": o.filter.sharing.name(),
            "memtable_filter": o.filter.memtable_filter,
            "filter_memory": filter_memory_description(o.filter_memory),
            "filter_policy": o.filter_policy.name(),
            "merge_operator": o.merge_operator.as_ref().map(|m| m.name().to_string()),
            "filter_lifetime": o.filter_lifetime,
            "filter_access_sample": o.filter_access_sample,
            "initial_units": o.initial_units,
            "lookup_breakdown_every": o.lookup_breakdown_every,
            "block_cache_bytes": o.block_cache_capacity,
            "block_size": o.block_size,
            "index_partition_bytes": o.index_partition_bytes,
            "compression": compression.join(","),
            "verify_checksums": o.verify_checksums,
            "file_access": if o.use_direct_reads {
                "O_DIRECT reads"
            } else if o.use_mmap_reads {
                "mmap reads (page cache)"
            } else {
                "buffered (page cache)"
            },
            "use_direct_reads": o.use_direct_reads,
            "use_mmap_reads": o.use_mmap_reads,
            "io_delay_ns": o.io_delay_ns,
            "write_buffer_size": o.write_buffer_size,
            "sync": self.write.sync,
            "target_file_size": o.target_file_size,
            "size_ratio": o.size_ratio,
            "level1_size": o.level1_size,
            "max_levels": o.max_levels,
            "compaction_style": format!("{:?}", o.compaction_style).to_lowercase(),
            "level0_triggers": [o.level0_compaction_trigger, o.level0_slowdown_trigger, o.level0_stop_trigger],
            "max_open_files": o.max_open_files,
            "table_meta_cache_bytes": o.table_meta_cache_capacity,
            "background_threads": o.background_threads,
            "txn_mode": self.txn_mode.name(),
            "transactions": match self.txn_mode {
                TxnMode::Optimistic => "Db::transaction (optimistic, snapshot isolation): \
                    get_for_update then put, validated at commit",
                TxnMode::Pessimistic => "Db::transaction_opt(pessimistic(true), \
                    lock_timeout): get_for_update (locks) then put, deadlock detection",
            },
        });
        if let (Some(first), Some(last)) = (self.keyspaces.first(), self.keyspaces.last()) {
            settings["keyspaces"] = json!(format!(
                "{} ({}..{}), each with the options above (Db::keyspace); one WAL, one filter \
                 memory budget; the default keyspace stays empty",
                self.keyspaces.len(),
                first.name(),
                last.name()
            ));
        }
        settings
    }

    fn stats(&self) -> Option<Stats> {
        Some(self.db.stats())
    }

    fn pending_compaction_bytes(&self) -> Option<u64> {
        Some(self.db.stats().pending_compaction_bytes)
    }

    fn sievedb(&self) -> Option<&Db> {
        Some(&self.db)
    }

    fn files_per_level(&self) -> Option<Vec<u64>> {
        Some(
            self.db
                .stats()
                .levels
                .iter()
                .map(|l| l.files as u64)
                .collect(),
        )
    }

    fn supports_txn(&self) -> bool {
        true
    }

    fn txn_update(
        &self,
        keys: &[&[u8]],
        values: &mut [Vec<u8>],
        update: &mut TxnUpdate<'_>,
    ) -> EngineResult<TxnOutcome> {
        // Dropped uncommitted (an abort or an error), it rolls back.
        let mut tx = self.db.transaction_opt(&self.txn);
        for (i, (key, value)) in keys.iter().zip(values.iter_mut()).enumerate() {
            let v = match tx.get_for_update(key) {
                Ok(v) => v,
                Err(e) => return ended(e),
            };
            value.clear();
            update(i, v.as_deref(), value)?;
        }
        for (key, value) in keys.iter().zip(values.iter()) {
            if let Err(e) = tx.put(key, value) {
                return ended(e);
            }
        }
        match tx.commit_opt(&self.write) {
            Ok(()) => Ok(TxnOutcome::Committed),
            Err(e) => ended(e),
        }
    }

    fn txn_get_lens(&self, keys: &[&[u8]], lens: &mut [Option<usize>]) -> EngineResult<()> {
        let mut tx = self.db.transaction();
        for (key, len) in keys.iter().zip(lens.iter_mut()) {
            *len = tx.get(key)?.map(|v| v.len());
        }
        Ok(tx.commit()?)
    }
}

/// A transaction attempt that sievedb ended with `e`: an abort when it is a
/// conflict ([`Error::is_conflict`]), else an error.
fn ended(e: Error) -> EngineResult<TxnOutcome> {
    let kind = match &e {
        Error::Conflict { kind, .. } => match kind {
            ConflictKind::LockTimeout => AbortKind::LockTimeout,
            ConflictKind::Deadlock => AbortKind::Deadlock,
            ConflictKind::TooOld => AbortKind::TooOld,
            _ => AbortKind::Conflict,
        },
        _ => return Err(e.into()),
    };
    debug_assert!(e.is_conflict());
    Ok(TxnOutcome::Aborted(kind))
}

/// The filter memory budget as the settings show it.
fn filter_memory_description(m: FilterMemory) -> String {
    match m {
        FilterMemory::Unlimited => "unlimited".into(),
        FilterMemory::Bytes(n) => format!("{n} bytes"),
        FilterMemory::BitsPerKey(b) => format!("{b} bits per key"),
    }
}

/// `layout, k probes, hash, scheme` of the filters sievedb builds (for
/// Ribbon: `r` result bits of a 1M-key file (of each unit for Ribbon units)
/// and the hash).
fn filter_description(f: &FilterOptions) -> String {
    if f.layout.is_ribbon_family() {
        let mut s = format!(
            "{}, r={} result bits (at 1M keys), {} hash",
            f.layout,
            f.probes_per_unit(),
            f.hash
        );
        if f.layout.is_units() {
            s.push_str(&format!(", {} units", f.effective_units()));
        }
        return s;
    }
    let mut s = format!(
        "{}, k={}, {} hash, {} scheme",
        f.layout,
        f.probes_per_unit(),
        f.hash,
        f.effective_scheme()
    );
    if f.effective_scheme() == IndexScheme::Double {
        s.push_str(&format!(" (second hash {})", f.secondary_hash));
    }
    if f.layout == FilterLayout::Units {
        s.push_str(&format!(
            ", {} units ({} hashing)",
            f.effective_units(),
            f.unit_hashing
        ));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--keyspaces 3`: three keyspaces besides the empty default one, each
    /// key only in the one it was written to; flushes, scans and the files
    /// per level cover all three.
    #[test]
    fn keyspaces_hold_their_own_keys() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = EngineConfig {
            keyspaces: 3,
            ..crate::BenchArgs::default().engine_config()
        };
        let db = SieveDb::open(&dir.path().join("sievedb"), &cfg).unwrap();
        crate::engines::tests::write_one_key_per_keyspace(&db);
        let one = 1u64.to_le_bytes();
        db.merge_in(1, b"c", &one).unwrap();
        db.merge_in(1, b"c", &one).unwrap();
        crate::engines::tests::check_each_key_in_its_keyspace_only(&db);
        assert_eq!(
            db.get_in(1, b"c").unwrap(),
            Some(2u64.to_le_bytes().to_vec())
        );
        assert_eq!(db.get_in(0, b"c").unwrap(), None);
        assert!(db.get_in(3, b"c").is_err());
        assert_eq!(db.scan_all().unwrap(), 31);
        db.flush().unwrap();
        assert_eq!(db.files_per_level().unwrap().iter().sum::<u64>(), 3);
        assert!(db.settings()["keyspaces"]
            .as_str()
            .unwrap()
            .starts_with("3 (ks0..ks2)"));
        let names = db.sievedb().unwrap().list_keyspaces();
        assert_eq!(names, ["default", "ks0", "ks1", "ks2"]);
    }
}
