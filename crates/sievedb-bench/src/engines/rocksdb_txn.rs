//! RocksDB's transactional databases: the `rocksdb` engine of a run whose
//! `--benchmarks` name a transactional benchmark ([`EngineConfig::txn`]),
//! with the options of the plain engine ([`super::rocksdb::db_options`]).
//! `--txn-mode optimistic` opens an `OptimisticTransactionDB`, `pessimistic`
//! a `TransactionDB`; every benchmark of the run (the fill too) goes through
//! it, plain writes as the database's own `Put`/`Write`.
//!
//! Transactions are set up as sievedb's: a snapshot taken at the start
//! (`set_snapshot(true)`), which the reads read at and the conflict check
//! checks against (first committer wins); pessimistic ones detect deadlocks
//! (`set_deadlock_detect(true)`, RocksDB's default is off) and wait
//! `--txn-lock-timeout-ms` for a lock. `Busy` (a conflict, or a deadlock),
//! `TimedOut` (a lock wait) and `TryAgain` (the memtables no longer reach
//! back to the snapshot) are aborts; any other error fails the run.
//!
//! The `rocksdb` crate 0.20.1 has no flush and no properties for a
//! `TransactionDB`: with `--txn-mode pessimistic`, `flush` and
//! `waitforcompaction` are skipped and no files per level are reported.

use super::rocksdb::{
    count_entries, db_options, err, open_error, read_options, settings, NUM_LEVELS,
};
use super::{AbortKind, Engine, EngineConfig, EngineResult, TxnOutcome, TxnUpdate};
use crate::cli::txn_args::{TxnConfig, TxnMode};
use ::rocksdb::{
    Cache, ErrorKind, OptimisticTransactionDB, OptimisticTransactionOptions, ReadOptions,
    Transaction, TransactionDB, TransactionDBOptions, TransactionOptions,
    WriteBatchWithTransaction, WriteOptions,
};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// How long `waitforcompaction` waits for RocksDB's compactions.
const WAIT_TIMEOUT: Duration = Duration::from_secs(3600);

/// The transactional database.
enum TxnDb {
    Optimistic(OptimisticTransactionDB),
    Pessimistic(TransactionDB),
}

/// Runs `$body` with `$db` bound to whichever database is open (both kinds
/// have the methods, with the same signatures).
macro_rules! on_db {
    ($self:expr, $db:ident => $body:expr) => {
        match &$self.db {
            TxnDb::Optimistic($db) => $body,
            TxnDb::Pessimistic($db) => $body,
        }
    };
}

/// A RocksDB transactional database opened for benchmarking.
pub struct RocksTxnDb {
    db: TxnDb,
    /// Options of the lookups outside transactions.
    read: ReadOptions,
    /// Options of every write and commit (`--sync`).
    write: WriteOptions,
    pessimistic: TransactionOptions,
    optimistic: OptimisticTransactionOptions,
    /// Keeps the block cache alive as long as the database.
    _cache: Cache,
    settings: serde_json::Value,
}

/// The abort an error of a transaction stands for, if it is one.
fn abort_kind(e: &::rocksdb::Error) -> Option<AbortKind> {
    match e.kind() {
        ErrorKind::Busy if e.to_string().contains("Deadlock") => Some(AbortKind::Deadlock),
        ErrorKind::Busy => Some(AbortKind::Conflict),
        ErrorKind::TimedOut => Some(AbortKind::LockTimeout),
        ErrorKind::TryAgain => Some(AbortKind::TooOld),
        _ => None,
    }
}

/// An attempt that RocksDB ended with `e`: an abort, or an error.
fn ended(e: ::rocksdb::Error) -> EngineResult<TxnOutcome> {
    match abort_kind(&e) {
        Some(kind) => Ok(TxnOutcome::Aborted(kind)),
        None => Err(err(e)),
    }
}

/// The read-modify-write attempt of [`Engine::txn_update`] in `txn`
/// (either kind): dropped uncommitted, RocksDB rolls it back.
fn update_in<D>(
    txn: Transaction<'_, D>,
    keys: &[&[u8]],
    values: &mut [Vec<u8>],
    update: &mut TxnUpdate<'_>,
) -> EngineResult<TxnOutcome> {
    {
        let snapshot = txn.snapshot();
        let mut ro = read_options();
        ro.set_snapshot(&snapshot);
        for (i, (key, value)) in keys.iter().zip(values.iter_mut()).enumerate() {
            let v = match txn.get_pinned_for_update_opt(key, true, &ro) {
                Ok(v) => v,
                Err(e) => return ended(e),
            };
            value.clear();
            update(i, v.as_deref(), value)?;
        }
    }
    for (key, value) in keys.iter().zip(values.iter()) {
        if let Err(e) = txn.put(key, value) {
            return ended(e);
        }
    }
    match txn.commit() {
        Ok(()) => Ok(TxnOutcome::Committed),
        Err(e) => ended(e),
    }
}

/// The read-only transaction of [`Engine::txn_get_lens`] in `txn`.
fn get_lens_in<D>(
    txn: Transaction<'_, D>,
    keys: &[&[u8]],
    lens: &mut [Option<usize>],
) -> EngineResult<()> {
    {
        let snapshot = txn.snapshot();
        let mut ro = read_options();
        ro.set_snapshot(&snapshot);
        for (key, len) in keys.iter().zip(lens.iter_mut()) {
            *len = txn.get_pinned_opt(key, &ro).map_err(err)?.map(|v| v.len());
        }
    }
    txn.commit().map_err(err)
}

impl RocksTxnDb {
    /// Opens (or creates) the database at `path` with the run's settings, as
    /// the transactional database of `txn.mode`.
    pub fn open(path: &Path, cfg: &EngineConfig, txn: TxnConfig) -> EngineResult<Self> {
        if cfg.keyspaces > 1 {
            return Err(
                "rocksdb: the transactional database is opened with one keyspace \
                        (the default column family) only"
                    .into(),
            );
        }
        super::warn_if_not_leveling("rocksdb", cfg);
        let ignored = super::ignored_device_flags("rocksdb", cfg, true);
        let (o, cache) = db_options(cfg)?;
        let mut write = WriteOptions::default();
        write.set_sync(cfg.sync);
        write.disable_wal(false);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let lock_ms = i64::try_from(txn.lock_timeout.as_millis()).unwrap_or(i64::MAX);
        let mut pessimistic = TransactionOptions::default();
        pessimistic.set_snapshot(true);
        pessimistic.set_deadlock_detect(true);
        pessimistic.set_lock_timeout(lock_ms);
        let mut optimistic = OptimisticTransactionOptions::default();
        optimistic.set_snapshot(true);
        let (db, how) = match txn.mode {
            TxnMode::Optimistic => (
                TxnDb::Optimistic(
                    OptimisticTransactionDB::open(&o, path)
                        .map_err(|e| open_error(e, path, cfg))?,
                ),
                "OptimisticTransactionDB: set_snapshot(true), reads at the snapshot, \
                 get_for_update then put, validated at commit"
                    .to_string(),
            ),
            TxnMode::Pessimistic => {
                let mut t = TransactionDBOptions::default();
                t.set_txn_lock_timeout(lock_ms);
                t.set_default_lock_timeout(lock_ms);
                (
                    TxnDb::Pessimistic(
                        TransactionDB::open(&o, &t, path).map_err(|e| open_error(e, path, cfg))?,
                    ),
                    format!(
                        "TransactionDB: set_snapshot(true), reads at the snapshot, \
                         get_for_update (exclusive lock) then put, deadlock_detect, lock \
                         timeout {lock_ms} ms; no flush or properties in the rocksdb crate \
                         0.20.1 (flush and waitforcompaction are skipped)"
                    ),
                )
            }
        };
        let mut settings = settings(path, cfg, ignored);
        settings["transactions"] = json!(how);
        settings["txn_mode"] = json!(txn.mode.name());
        Ok(RocksTxnDb {
            db,
            read: read_options(),
            write,
            pessimistic,
            optimistic,
            _cache: cache,
            settings,
        })
    }

    /// Integer property `name`, 0 when missing (`OptimisticTransactionDB`
    /// only: the crate has none for a `TransactionDB`).
    fn property(&self, name: &str) -> EngineResult<Option<u64>> {
        match &self.db {
            TxnDb::Optimistic(db) => db.property_int_value(name).map_err(err),
            TxnDb::Pessimistic(_) => Ok(None),
        }
    }

    /// The error of a flush of a `TransactionDB`.
    fn no_flush() -> super::BoxError {
        "rocksdb: the rocksdb crate 0.20.1 has no flush for a TransactionDB \
         (--txn-mode pessimistic)"
            .into()
    }
}

impl Engine for RocksTxnDb {
    fn name(&self) -> &'static str {
        "rocksdb"
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        on_db!(self, db => db.put_opt(key, value, &self.write)).map_err(err)
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        let v =
            on_db!(self, db => db.get_pinned_opt(key, &self.read).map(|v| v.map(|v| v.to_vec())));
        v.map_err(err)
    }

    fn get_len(&self, key: &[u8]) -> EngineResult<Option<usize>> {
        let v = on_db!(self, db => db.get_pinned_opt(key, &self.read).map(|v| v.map(|v| v.len())));
        v.map_err(err)
    }

    fn write_batch(&self, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let mut batch = WriteBatchWithTransaction::<true>::default();
        for (k, v) in entries {
            batch.put(k, v);
        }
        on_db!(self, db => db.write_opt(batch, &self.write)).map_err(err)
    }

    fn supports_merge(&self) -> bool {
        true
    }

    fn merge(&self, key: &[u8], operand: &[u8]) -> EngineResult<()> {
        on_db!(self, db => db.merge_opt(key, operand, &self.write)).map_err(err)
    }

    fn scan_all(&self) -> EngineResult<u64> {
        on_db!(self, db => count_entries(db.raw_iterator_opt(read_options())))
    }

    fn supports_flush(&self) -> bool {
        matches!(self.db, TxnDb::Optimistic(_))
    }

    fn flush(&self) -> EngineResult<()> {
        match &self.db {
            TxnDb::Optimistic(db) => db.flush().map_err(err),
            TxnDb::Pessimistic(_) => Err(Self::no_flush()),
        }
    }

    fn wait_for_compactions(&self) -> EngineResult<()> {
        self.flush()?;
        let start = Instant::now();
        let busy =
            |name: &str| -> EngineResult<bool> { Ok(self.property(name)?.unwrap_or(0) != 0) };
        while busy("rocksdb.compaction-pending")?
            || busy("rocksdb.num-running-compactions")?
            || busy("rocksdb.num-running-flushes")?
        {
            if start.elapsed() > WAIT_TIMEOUT {
                return Err(format!(
                    "rocksdb: compactions still due after {} s",
                    WAIT_TIMEOUT.as_secs()
                )
                .into());
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(())
    }

    fn pending_compaction_bytes(&self) -> Option<u64> {
        self.property("rocksdb.estimate-pending-compaction-bytes")
            .ok()
            .flatten()
    }

    fn files_per_level(&self) -> Option<Vec<u64>> {
        (0..NUM_LEVELS)
            .map(|l| {
                self.property(&format!("rocksdb.num-files-at-level{l}"))
                    .ok()
                    .flatten()
            })
            .collect()
    }

    fn settings(&self) -> serde_json::Value {
        self.settings.clone()
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
        match &self.db {
            TxnDb::Optimistic(db) => update_in(
                db.transaction_opt(&self.write, &self.optimistic),
                keys,
                values,
                update,
            ),
            TxnDb::Pessimistic(db) => update_in(
                db.transaction_opt(&self.write, &self.pessimistic),
                keys,
                values,
                update,
            ),
        }
    }

    fn txn_get_lens(&self, keys: &[&[u8]], lens: &mut [Option<usize>]) -> EngineResult<()> {
        match &self.db {
            TxnDb::Optimistic(db) => get_lens_in(
                db.transaction_opt(&self.write, &self.optimistic),
                keys,
                lens,
            ),
            TxnDb::Pessimistic(db) => get_lens_in(
                db.transaction_opt(&self.write, &self.pessimistic),
                keys,
                lens,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn open(dir: &Path, mode: TxnMode) -> RocksTxnDb {
        let txn = TxnConfig {
            mode,
            lock_timeout: Duration::from_millis(50),
        };
        let cfg = EngineConfig {
            txn: Some(txn),
            ..crate::BenchArgs::default().engine_config()
        };
        RocksTxnDb::open(&dir.join("rocksdb"), &cfg, txn).unwrap()
    }

    fn bump(_: usize, old: Option<&[u8]>, out: &mut Vec<u8>) -> EngineResult<()> {
        let n = old.map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
        out.extend_from_slice(&(n + 1).to_le_bytes());
        Ok(())
    }

    /// Both kinds commit read-modify-writes, read them back in read-only
    /// transactions, and take the plain calls of the other benchmarks.
    #[test]
    fn both_modes_commit_and_read() {
        for mode in [TxnMode::Optimistic, TxnMode::Pessimistic] {
            let dir = tempfile::tempdir().unwrap();
            let db = open(dir.path(), mode);
            assert!(db.supports_txn());
            assert_eq!(db.supports_flush(), mode == TxnMode::Optimistic);
            let keys: [&[u8]; 2] = [b"a", b"b"];
            let mut values = vec![Vec::new(), Vec::new()];
            for _ in 0..3 {
                let o = db.txn_update(&keys, &mut values, &mut bump).unwrap();
                assert_eq!(o, TxnOutcome::Committed);
            }
            assert_eq!(db.get(b"a").unwrap(), Some(3u64.to_le_bytes().to_vec()));
            let mut lens = [None; 3];
            db.txn_get_lens(&[b"a", b"b", b"c"], &mut lens).unwrap();
            assert_eq!(lens, [Some(8), Some(8), None]);
            db.write_batch(&[(b"c", b"xyz")]).unwrap();
            assert_eq!(db.get_len(b"c").unwrap(), Some(3));
            assert_eq!(db.scan_all().unwrap(), 3);
            assert_eq!(db.settings()["txn_mode"], mode.name());
            if mode == TxnMode::Optimistic {
                db.wait_for_compactions().unwrap();
                assert_eq!(db.files_per_level().unwrap()[0], 1);
            } else {
                assert!(db.flush().is_err() && db.files_per_level().is_none());
            }
        }
    }

    /// A write committed after a transaction's snapshot aborts it (first
    /// committer wins), in both modes.
    #[test]
    fn a_write_after_the_snapshot_aborts() {
        for mode in [TxnMode::Optimistic, TxnMode::Pessimistic] {
            let dir = tempfile::tempdir().unwrap();
            let db = open(dir.path(), mode);
            db.put(b"k", &0u64.to_le_bytes()).unwrap();
            let keys: [&[u8]; 1] = [b"k"];
            let mut values = vec![Vec::new()];
            // The step writes the key outside the transaction after its
            // snapshot, before the transaction has read or written it.
            let mut sneaky = |i: usize, old: Option<&[u8]>, out: &mut Vec<u8>| {
                bump(i, old, out)?;
                Ok(())
            };
            let outcome = match &db.db {
                TxnDb::Optimistic(d) => {
                    let txn = d.transaction_opt(&db.write, &db.optimistic);
                    d.put(b"k", 5u64.to_le_bytes()).unwrap();
                    update_in(txn, &keys, &mut values, &mut sneaky).unwrap()
                }
                TxnDb::Pessimistic(d) => {
                    let txn = d.transaction_opt(&db.write, &db.pessimistic);
                    d.put(b"k", 5u64.to_le_bytes()).unwrap();
                    update_in(txn, &keys, &mut values, &mut sneaky).unwrap()
                }
            };
            assert_eq!(
                outcome,
                TxnOutcome::Aborted(AbortKind::Conflict),
                "{mode:?}"
            );
            assert_eq!(db.get(b"k").unwrap(), Some(5u64.to_le_bytes().to_vec()));
        }
    }
}
