//! fjall's transactional databases, for a run whose `--benchmarks` name a
//! transactional benchmark ([`EngineConfig::txn`]): `--txn-mode optimistic`
//! opens an `OptimisticTxDatabase` (serializable snapshot isolation,
//! validated at commit: a transaction whose reads another commit wrote
//! after its snapshot gets `Conflict`), `pessimistic` a
//! `SingleWriterTxDatabase` (fjall has no key locks: one write transaction
//! at a time, under a database-wide mutex, so none ever aborts). The
//! [`super::fjall::Fjall`] engine keeps using the plain `Database` and
//! `Keyspace` inside for every other benchmark.

use super::{AbortKind, EngineConfig, EngineResult, TxnOutcome, TxnUpdate};
use crate::cli::txn_args::TxnMode;
use ::fjall::{
    CompressionType, Conflict, Database, Keyspace, KeyspaceCreateOptions, OptimisticTxDatabase,
    PersistMode, Readable, SingleWriterTxDatabase, SingleWriterTxKeyspace,
};
use std::path::Path;

/// Prefixes fjall errors with the engine name.
fn err(e: impl std::fmt::Display) -> super::BoxError {
    format!("fjall: {e}").into()
}

/// `$builder` (a `DatabaseBuilder` of any kind) with the run's database
/// settings (fjall does not export the builder's trait to be generic over).
macro_rules! configured {
    ($builder:expr, $cfg:expr) => {
        $builder
            .cache_size($cfg.block_cache_size)
            .max_cached_files(Some($cfg.max_open_files))
            // Shared by flushes and compactions.
            .worker_threads($cfg.background_threads)
            .journal_compression(CompressionType::None)
    };
}

/// The transactional database around the plain one.
enum Kind {
    Optimistic(OptimisticTxDatabase),
    /// With the handle of the benchmark's keyspace its transactions write
    /// through (set by [`FjallTx::keyspace`]).
    SingleWriter(SingleWriterTxDatabase, Option<SingleWriterTxKeyspace>),
}

/// fjall's transactions of a run.
pub(super) struct FjallTx {
    kind: Kind,
}

/// Opens the database at `path` with the run's settings: plain without
/// [`EngineConfig::txn`], else the transactional database of its mode too.
pub(super) fn open_database(
    path: &Path,
    cfg: &EngineConfig,
) -> EngineResult<(Database, Option<FjallTx>)> {
    let Some(txn) = cfg.txn else {
        let db = configured!(Database::builder(path), cfg)
            .open()
            .map_err(err)?;
        return Ok((db, None));
    };
    let kind = match txn.mode {
        TxnMode::Optimistic => Kind::Optimistic(
            configured!(OptimisticTxDatabase::builder(path), cfg)
                .open()
                .map_err(err)?,
        ),
        TxnMode::Pessimistic => Kind::SingleWriter(
            configured!(SingleWriterTxDatabase::builder(path), cfg)
                .open()
                .map_err(err)?,
            None,
        ),
    };
    let db = match &kind {
        Kind::Optimistic(d) => d.inner().clone(),
        Kind::SingleWriter(d, _) => d.inner().clone(),
    };
    Ok((db, Some(FjallTx { kind })))
}

impl FjallTx {
    /// Opens (or creates with `opts`) keyspace `name` through the
    /// transactional database; returns its plain handle.
    pub(super) fn keyspace(
        &mut self,
        name: &str,
        opts: impl FnOnce() -> KeyspaceCreateOptions,
    ) -> EngineResult<Keyspace> {
        match &mut self.kind {
            Kind::Optimistic(d) => Ok(d.keyspace(name, opts).map_err(err)?.inner().clone()),
            Kind::SingleWriter(d, ks) => {
                let k = d.keyspace(name, opts).map_err(err)?;
                let plain = k.inner().clone();
                *ks = Some(k);
                Ok(plain)
            }
        }
    }

    /// What the settings say of the transactions.
    pub(super) fn describe(&self) -> &'static str {
        match self.kind {
            Kind::Optimistic(_) => {
                "OptimisticTxDatabase: serializable snapshot isolation, get then insert, \
                 validated at commit (Conflict: another commit wrote a key it read)"
            }
            Kind::SingleWriter(..) => {
                "SingleWriterTxDatabase (fjall has no key locks): one write transaction at a \
                 time under a database-wide mutex, get then insert; never aborts"
            }
        }
    }

    /// The mode it was opened for.
    pub(super) fn mode(&self) -> TxnMode {
        match self.kind {
            Kind::Optimistic(_) => TxnMode::Optimistic,
            Kind::SingleWriter(..) => TxnMode::Pessimistic,
        }
    }

    /// [`super::Engine::txn_update`] in `keyspace`, each commit persisted as
    /// `persist` says (the journal handed to the OS, or synced).
    pub(super) fn update(
        &self,
        keyspace: &Keyspace,
        persist: PersistMode,
        keys: &[&[u8]],
        values: &mut [Vec<u8>],
        update: &mut TxnUpdate<'_>,
    ) -> EngineResult<TxnOutcome> {
        match &self.kind {
            Kind::Optimistic(d) => {
                let mut tx = d.write_tx().map_err(err)?.durability(Some(persist));
                for (i, (key, value)) in keys.iter().zip(values.iter_mut()).enumerate() {
                    let v = tx.get(keyspace, key).map_err(err)?;
                    value.clear();
                    update(i, v.as_deref(), value)?;
                }
                for (key, value) in keys.iter().zip(values.iter()) {
                    tx.insert(keyspace, *key, value.as_slice());
                }
                match tx.commit().map_err(err)? {
                    Ok(()) => Ok(TxnOutcome::Committed),
                    Err(Conflict) => Ok(TxnOutcome::Aborted(AbortKind::Conflict)),
                }
            }
            Kind::SingleWriter(d, ks) => {
                let ks = ks
                    .as_ref()
                    .ok_or("fjall: the transactional keyspace was not opened")?;
                let mut tx = d.write_tx().durability(Some(persist));
                for (i, (key, value)) in keys.iter().zip(values.iter_mut()).enumerate() {
                    let v = tx.get(keyspace, key).map_err(err)?;
                    value.clear();
                    update(i, v.as_deref(), value)?;
                }
                for (key, value) in keys.iter().zip(values.iter()) {
                    tx.insert(ks, *key, value.as_slice());
                }
                tx.commit().map_err(err)?;
                Ok(TxnOutcome::Committed)
            }
        }
    }

    /// [`super::Engine::txn_get_lens`] in `keyspace`: the lookups through
    /// a read-only transaction (`read_tx`, a snapshot).
    pub(super) fn get_lens(
        &self,
        keyspace: &Keyspace,
        keys: &[&[u8]],
        lens: &mut [Option<usize>],
    ) -> EngineResult<()> {
        let snapshot = match &self.kind {
            Kind::Optimistic(d) => d.read_tx(),
            Kind::SingleWriter(d, _) => d.read_tx(),
        };
        for (key, len) in keys.iter().zip(lens.iter_mut()) {
            *len = snapshot.get(keyspace, key).map_err(err)?.map(|v| v.len());
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::super::fjall::Fjall;
    use super::super::Engine;
    use super::*;
    use crate::cli::txn_args::TxnConfig;
    use std::time::Duration;

    fn bump(_: usize, old: Option<&[u8]>, out: &mut Vec<u8>) -> EngineResult<()> {
        let n = old.map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
        out.extend_from_slice(&(n + 1).to_le_bytes());
        Ok(())
    }

    #[test]
    fn both_modes_commit_and_read_and_plain_fjall_has_none() {
        let base = crate::BenchArgs::default().engine_config();
        let dir = tempfile::tempdir().unwrap();
        let plain = Fjall::open(&dir.path().join("plain"), &base).unwrap();
        assert!(!plain.supports_txn());
        assert!(plain.txn_get_lens(&[b"a"], &mut [None]).is_err());
        for mode in [TxnMode::Optimistic, TxnMode::Pessimistic] {
            let cfg = EngineConfig {
                txn: Some(TxnConfig {
                    mode,
                    lock_timeout: Duration::from_secs(1),
                }),
                ..base.clone()
            };
            let db = Fjall::open(&dir.path().join(mode.name()), &cfg).unwrap();
            assert!(db.supports_txn());
            assert_eq!(db.settings()["txn_mode"], mode.name());
            let keys: [&[u8]; 2] = [b"a", b"b"];
            let mut values = vec![Vec::new(), Vec::new()];
            for _ in 0..3 {
                let o = db.txn_update(&keys, &mut values, &mut bump).unwrap();
                assert_eq!(o, TxnOutcome::Committed);
            }
            assert_eq!(db.get(b"b").unwrap(), Some(3u64.to_le_bytes().to_vec()));
            let mut lens = [None; 3];
            db.txn_get_lens(&[b"a", b"b", b"c"], &mut lens).unwrap();
            assert_eq!(lens, [Some(8), Some(8), None]);
            db.put(b"c", b"xyz").unwrap();
            db.wait_for_compactions().unwrap();
            assert_eq!(db.scan_all().unwrap(), 3);
        }
    }
}
