//! fjall (a pure-Rust LSM-tree engine from crates.io) as a baseline engine:
//! one database holding one keyspace (`bench`), or with `--keyspaces N > 1`
//! N keyspaces `ks0..ks{N-1}` (fjall's keyspaces, its column families:
//! one journal, one cache, shared workers).
//!
//! Not every setting can be matched (fjall 3.1's own rules, stated in
//! [`Engine::settings`]): level 1 holds `l0_threshold · target_file_size`
//! whatever `--level1-size` says, the tree always has 7 levels, and the
//! worker threads are shared by flushes and compactions.

use super::{Engine, EngineConfig, EngineResult};
use ::fjall::compaction::Leveled;
use ::fjall::config::{
    BlockSizePolicy, BloomConstructionPolicy, CompressionPolicy, FilterPolicy, FilterPolicyEntry,
    PartitioningPolicy, PinningPolicy, RestartIntervalPolicy,
};
use ::fjall::{AbstractTree, Database, Keyspace, KeyspaceCreateOptions, PersistMode};
use serde_json::json;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// The fjall version this crate is pinned to (`=3.1.13` in Cargo.toml).
pub const VERSION: &str = "3.1.13";
/// Name of the benchmark's keyspace.
const KEYSPACE: &str = "bench";
/// Level-0 tables that trigger a compaction into level 1 (as in every other engine).
const L0_THRESHOLD: u8 = 4;
/// Level-0 runs at which fjall 3.1 starts slowing writes down (a busy loop
/// growing with the count) and at which it stops them (both fixed in fjall).
const L0_STALL_HALT: [u8; 2] = [20, 30];
/// Levels of the tree (fixed at 7 in fjall 3.1).
const LEVEL_COUNT: u8 = 7;
/// Keys between restart points in a data block (RocksDB's and LevelDB's default).
const RESTART_INTERVAL: u8 = 16;
/// Fewest cached file descriptors fjall accepts (it panics below).
const MIN_OPEN_FILES: usize = 10;
/// Data block sizes fjall accepts (it panics outside).
const BLOCK_SIZES: std::ops::RangeInclusive<u32> = 1024..=1024 * 1024;
/// How long [`Engine::flush`] and [`Engine::wait_for_compactions`] wait for
/// the background workers before giving up (they stop for good if a flush fails).
const WAIT_TIMEOUT: Duration = Duration::from_secs(3600);
/// How often the waits poll fjall's counters.
const POLL: Duration = Duration::from_millis(1);

/// How often [`HaltWatch`] looks at level 0.
const HALT_WATCH_EVERY: Duration = Duration::from_millis(50);

/// Unsticks fjall 3.1's write halt when nothing else will.
///
/// fjall halts writes while a keyspace has [`L0_STALL_HALT`]`[1]` level-0
/// runs, until a compaction shrinks level 0; but its workers start
/// compactions only after a flush, and a halted writer causes no flush. If
/// the compactions queued by the last flushes leave level 0 at the halt, the
/// writer sleeps forever beside idle workers (seen at 100M keys; the
/// symptom of fjall-rs/fjall issue #257, open upstream). This thread looks
/// every [`HALT_WATCH_EVERY`]: a written keyspace at the halt for two looks in
/// a row with no compaction running gets rounds of its own compaction
/// strategy, run here as a worker would run them, back to back while the
/// halt lasts and each round changes the tree. It does nothing otherwise, so
/// an unhalted run is fjall's own.
struct HaltWatch {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl HaltWatch {
    /// Starts watching `keyspaces` of `db`.
    fn start(db: Database, keyspaces: Vec<Keyspace>) -> EngineResult<Self> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("fjall-halt-watch".into())
            .spawn(move || Self::watch(&db, &keyspaces, &flag))
            .map_err(err)?;
        Ok(HaltWatch {
            stop,
            thread: Some(thread),
        })
    }

    fn watch(db: &Database, keyspaces: &[Keyspace], stop: &AtomicBool) {
        let mut halted_looks = vec![0u32; keyspaces.len()];
        let mut rounds = 0u64;
        while !stop.load(Ordering::Relaxed) {
            std::thread::sleep(HALT_WATCH_EVERY);
            for (k, looks) in keyspaces.iter().zip(&mut halted_looks) {
                *looks = if Self::stuck(db, k) { *looks + 1 } else { 0 };
                if *looks < 2 {
                    continue;
                }
                *looks = 0;
                if rounds == 0 {
                    eprintln!(
                        "fjall: writes halted at {} level-0 runs with no compaction running; \
                         running the keyspace's compaction from the benchmark (fjall-rs/fjall#257)",
                        k.tree.l0_run_count()
                    );
                }
                // Rounds back to back while the halt lasts and each changes
                // the tree (the strategy may shrink a deeper level first).
                loop {
                    let before = Self::shape(k);
                    rounds += 1;
                    // Sequence number 0: the round drops no old versions, so
                    // a reader's snapshot is never short of one.
                    if let Err(e) = k.tree.compact(k.config.compaction_strategy.clone(), 0) {
                        eprintln!("fjall: the halt watch's compaction failed: {e}");
                        return;
                    }
                    if stop.load(Ordering::Relaxed)
                        || !Self::stuck(db, k)
                        || Self::shape(k) == before
                    {
                        break;
                    }
                }
            }
        }
        if rounds > 0 {
            eprintln!("fjall: the halt watch ran {rounds} compaction round(s)");
        }
    }

    /// Whether `k`'s writes are halted with no compaction running.
    fn stuck(db: &Database, k: &Keyspace) -> bool {
        k.tree.l0_run_count() >= usize::from(L0_STALL_HALT[1]) && db.active_compactions() == 0
    }

    /// Tables per level of `k`, to tell whether a round changed anything.
    fn shape(k: &Keyspace) -> Vec<Option<usize>> {
        (0..usize::from(LEVEL_COUNT))
            .map(|l| k.tree.level_table_count(l))
            .collect()
    }
}

impl Drop for HaltWatch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A fjall database with one keyspace, opened for benchmarking.
pub struct Fjall {
    /// Stopped first, before the handles it holds clones of.
    _halt_watch: HaltWatch,
    // Dropped before `db`: the keyspace handles refer to its internals.
    keyspace: Keyspace,
    /// The keyspaces `ks0..ks{N-1}` of `--keyspaces N > 1` (empty with one:
    /// `keyspace` then holds every key).
    keyspaces: Vec<Keyspace>,
    db: Database,
    /// The transactional database `db` is inside of (`EngineConfig::txn`).
    tx: Option<super::fjall_txn::FjallTx>,
    settings: serde_json::Value,
    /// How each write reaches the journal: to the OS, or synced (`--sync`).
    persist: PersistMode,
}

/// Prefixes fjall errors with the engine name.
fn err(e: impl std::fmt::Display) -> super::BoxError {
    format!("fjall: {e}").into()
}

/// The checked numeric settings of a run, in the types fjall takes.
struct Sizes {
    bits: f32,
    ratio: f32,
    block: u32,
}

/// Checks the settings fjall would panic on (it asserts rather than
/// returning errors) and converts them.
fn check(cfg: &EngineConfig) -> EngineResult<Sizes> {
    if !(cfg.bits_per_key.is_finite() && cfg.bits_per_key >= 0.0) {
        return Err(err(format!(
            "bits per key must be a finite number >= 0, not {}",
            cfg.bits_per_key
        )));
    }
    if cfg.size_ratio < 2 {
        return Err(err(format!(
            "--size-ratio must be at least 2, not {}",
            cfg.size_ratio
        )));
    }
    let block = u32::try_from(cfg.block_size)
        .ok()
        .filter(|b| BLOCK_SIZES.contains(b))
        .ok_or_else(|| {
            err(format!(
                "block size must be 1 KiB..=1 MiB, not {}",
                cfg.block_size
            ))
        })?;
    if cfg.max_open_files < MIN_OPEN_FILES {
        return Err(err(format!(
            "max open files must be at least {MIN_OPEN_FILES}, not {}",
            cfg.max_open_files
        )));
    }
    if cfg.target_file_size == 0 || cfg.write_buffer_size == 0 {
        return Err(err("target file size and write buffer size must be > 0"));
    }
    Ok(Sizes {
        bits: cfg.bits_per_key as f32,
        ratio: cfg.size_ratio as f32,
        block,
    })
}

/// The keyspace's options: the run's sizes, no compression, one Bloom filter
/// policy on every level, every filter and index block pinned in memory and
/// none partitioned (as the other engines' full filters and indexes held by
/// their open tables).
fn keyspace_options(cfg: &EngineConfig, s: &Sizes) -> KeyspaceCreateOptions {
    let filter = if s.bits > 0.0 {
        FilterPolicy::all(FilterPolicyEntry::Bloom(
            BloomConstructionPolicy::BitsPerKey(s.bits),
        ))
    } else {
        FilterPolicy::disabled()
    };
    let leveled = Leveled::default()
        .with_l0_threshold(L0_THRESHOLD)
        .with_table_target_size(cfg.target_file_size)
        .with_level_ratio_policy(vec![s.ratio]);
    KeyspaceCreateOptions::default()
        .max_memtable_size(cfg.write_buffer_size as u64)
        .data_block_size_policy(BlockSizePolicy::all(s.block))
        .data_block_restart_interval_policy(RestartIntervalPolicy::all(RESTART_INTERVAL))
        .data_block_compression_policy(CompressionPolicy::disabled())
        .index_block_compression_policy(CompressionPolicy::disabled())
        .filter_policy(filter)
        // Also the last level keeps its filters (readmissing needs them).
        .expect_point_read_hits(false)
        .filter_block_pinning_policy(PinningPolicy::all(true))
        .index_block_pinning_policy(PinningPolicy::all(true))
        .filter_block_partitioning_policy(PartitioningPolicy::all(false))
        .index_block_partitioning_policy(PartitioningPolicy::all(false))
        .compaction_strategy(Arc::new(leveled))
        // Every write is handed to the OS (no fsync), as in the other engines.
        .manual_journal_persist(false)
}

impl Fjall {
    /// Opens (or creates) the database at `path` with the run's settings.
    pub fn open(path: &Path, cfg: &EngineConfig) -> EngineResult<Self> {
        super::warn_if_not_leveling("fjall", cfg);
        let ignored = super::ignored_device_flags("fjall", cfg, false);
        let sizes = check(cfg)?;
        let level1 = cfg.target_file_size.saturating_mul(u64::from(L0_THRESHOLD));
        if level1 != cfg.level1_size {
            eprintln!(
                "warning: fjall's level 1 holds {L0_THRESHOLD} · target file size = {level1} bytes; \
                 --level1-size {} cannot be set separately",
                cfg.level1_size
            );
        }
        // Plain, or inside the transactional database of `cfg.txn`.
        let (db, mut tx) = super::fjall_txn::open_database(path, cfg)?;
        let keyspace = match &mut tx {
            None => db
                .keyspace(KEYSPACE, || keyspace_options(cfg, &sizes))
                .map_err(err)?,
            Some(t) => t.keyspace(KEYSPACE, || keyspace_options(cfg, &sizes))?,
        };
        let keyspaces = if cfg.keyspaces > 1 {
            (0..cfg.keyspaces)
                .map(|ks| {
                    db.keyspace(&super::keyspace_name(ks), || keyspace_options(cfg, &sizes))
                        .map_err(err)
                })
                .collect::<EngineResult<Vec<_>>>()?
        } else {
            Vec::new()
        };

        let settings = json!({
            "engine": "fjall",
            "version": VERSION,
            "bits_per_key": cfg.bits_per_key,
            "filter": if sizes.bits > 0.0 {
                "bloom, bits per key on every level (also the last), one filter per table, \
                 not partitioned"
            } else {
                "none"
            },
            "block_cache_bytes": cfg.block_cache_size,
            "index_filter_blocks": "pinned in memory per table on every level, outside the \
                 block cache; not partitioned",
            "block_size": cfg.block_size,
            "restart_interval": RESTART_INTERVAL,
            "data_block_hash_index": false,
            "compression": "none",
            "journal_compression": "none",
            "verify_checksums": true,
            "checksums": "xxh3 per block, verified on every block read from a file \
                 (not on block-cache hits)",
            "file_access": "buffered pread (page cache), no mmap, no O_DIRECT",
            "use_direct_reads": false,
            "io_delay_ns": 0,
            "ignored_flags": ignored,
            "write_buffer_size": cfg.write_buffer_size,
            "memtables_max_bytes": "no database-wide cap (fjall 3 default); writes halt at 4 \
                 sealed memtables",
            "wal": true,
            "sync": cfg.sync,
            "write_persist": if cfg.sync {
                "every write is synced (PersistMode::SyncData)"
            } else {
                "every write batch is flushed to the OS (PersistMode::Buffer), no fsync"
            },
            "target_file_size": cfg.target_file_size,
            "size_ratio": cfg.size_ratio,
            "level1_size": level1,
            "level_count": LEVEL_COUNT,
            "compaction_style": "leveling",
            "level0_triggers": [L0_THRESHOLD, L0_STALL_HALT[0], L0_STALL_HALT[1]],
            "halt_watch": "a benchmark thread runs the keyspace's compaction, round after \
                 round, while writes stay halted at the level-0 limit with no compaction \
                 running (fjall-rs/fjall#257); it says so on stderr when it acts",
            "max_open_files": cfg.max_open_files,
            "background_threads": cfg.background_threads,
            "not_matched": [
                "--level1-size (fjall: level 1 = 4 · target file size)",
                "--max-levels (fjall: always 7 levels)",
                "separate flush and compaction threads (fjall: 2 shared workers)",
            ],
        });
        let mut settings = settings;
        if let Some(t) = &tx {
            settings["transactions"] = json!(t.describe());
            settings["txn_mode"] = json!(t.mode().name());
        }
        if !keyspaces.is_empty() {
            settings["keyspaces"] = json!(format!(
                "{} (ks0..ks{}), each with the options above; one journal; the `{KEYSPACE}` \
                 keyspace stays empty",
                keyspaces.len(),
                keyspaces.len() - 1
            ));
        }
        let watched = if keyspaces.is_empty() {
            vec![keyspace.clone()]
        } else {
            keyspaces.clone()
        };
        Ok(Fjall {
            _halt_watch: HaltWatch::start(db.clone(), watched)?,
            keyspace,
            keyspaces,
            db,
            tx,
            settings,
            persist: if cfg.sync {
                PersistMode::SyncData
            } else {
                PersistMode::Buffer
            },
        })
    }

    /// Waits until `done` holds, polling; fails after [`WAIT_TIMEOUT`].
    fn wait(&self, what: &str, done: impl Fn(&Self) -> bool) -> EngineResult<()> {
        let start = Instant::now();
        while !done(self) {
            if start.elapsed() > WAIT_TIMEOUT {
                return Err(err(format!(
                    "{what} still pending after {} s",
                    WAIT_TIMEOUT.as_secs()
                )));
            }
            std::thread::sleep(POLL);
        }
        Ok(())
    }

    /// Whether no flush is queued or running and no compaction is running.
    fn idle(&self) -> bool {
        self.written()
            .iter()
            .all(|k| k.tree.sealed_memtable_count() == 0)
            && self.db.outstanding_flushes() == 0
            && self.db.active_compactions() == 0
    }

    /// The keyspaces the benchmark writes: `bench`, or `ks0..`.
    fn written(&self) -> &[Keyspace] {
        if self.keyspaces.is_empty() {
            std::slice::from_ref(&self.keyspace)
        } else {
            &self.keyspaces
        }
    }

    /// Keyspace `ks` of `--keyspaces`.
    fn ks(&self, ks: usize) -> EngineResult<&Keyspace> {
        self.keyspaces.get(ks).ok_or_else(|| {
            err(format!(
                "no keyspace {} (opened with {})",
                super::keyspace_name(ks),
                self.keyspaces.len()
            ))
        })
    }
}

impl Engine for Fjall {
    fn name(&self) -> &'static str {
        "fjall"
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        // With manual_journal_persist off, insert flushes the journal to the OS.
        self.keyspace.insert(key, value).map_err(err)?;
        if self.persist == PersistMode::SyncData {
            self.db.persist(PersistMode::SyncData).map_err(err)?;
        }
        Ok(())
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self.keyspace.get(key).map_err(err)?.map(|v| v.to_vec()))
    }

    fn get_len(&self, key: &[u8]) -> EngineResult<Option<usize>> {
        // fjall hands out a reference-counted slice; its length needs no further copy.
        Ok(self.keyspace.get(key).map_err(err)?.map(|v| v.len()))
    }

    fn write_batch(&self, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
        // fjall 3's batches leave the journal in its user-space buffer unless
        // given a durability: Buffer hands each batch to the OS (no fsync),
        // as LevelDB and RocksDB do with their unsynced WAL writes.
        let mut batch = self.db.batch().durability(Some(self.persist));
        for (k, v) in entries {
            batch.insert(&self.keyspace, *k, *v);
        }
        batch.commit().map_err(err)
    }

    fn write_batch_in(&self, ks: usize, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
        let keyspace = self.ks(ks)?;
        let mut batch = self.db.batch().durability(Some(self.persist));
        for (k, v) in entries {
            batch.insert(keyspace, *k, *v);
        }
        batch.commit().map_err(err)
    }

    fn get_in(&self, ks: usize, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self.ks(ks)?.get(key).map_err(err)?.map(|v| v.to_vec()))
    }

    fn get_len_in(&self, ks: usize, key: &[u8]) -> EngineResult<Option<usize>> {
        Ok(self.ks(ks)?.get(key).map_err(err)?.map(|v| v.len()))
    }

    fn scan_all(&self) -> EngineResult<u64> {
        let mut n = 0u64;
        for keyspace in self.written() {
            for item in keyspace.iter() {
                let (k, v) = item.into_inner().map_err(err)?;
                std::hint::black_box((k, v));
                n += 1;
            }
        }
        Ok(n)
    }

    fn flush(&self) -> EngineResult<()> {
        // Seal the active memtable (if it holds anything) and wait until every
        // sealed memtable, also those sealed by writes, is in a table file.
        for keyspace in self.written() {
            keyspace.rotate_memtable().map_err(err)?;
        }
        self.wait("memtable flushes", |f| {
            f.written()
                .iter()
                .all(|k| k.tree.sealed_memtable_count() == 0)
        })
    }

    /// Flushes, then runs the keyspace's leveled strategy in the calling
    /// thread until it changes nothing while the workers are idle (fjall's
    /// workers compact once per flush, so a due compaction can wait for the
    /// next flush; fjall has no call that waits for them).
    fn wait_for_compactions(&self) -> EngineResult<()> {
        self.flush()?;
        let start = Instant::now();
        loop {
            self.wait("flushes and compactions", Self::idle)?;
            let before = self.files_per_level();
            // No reader runs during this step, so versions older than the
            // newest visible one are needed by no one (the workers compute
            // the same threshold from their snapshot tracker).
            for keyspace in self.written() {
                keyspace
                    .tree
                    .compact(
                        keyspace.config.compaction_strategy.clone(),
                        self.db.visible_seqno(),
                    )
                    .map_err(err)?;
            }
            if self.files_per_level() == before && self.idle() {
                return Ok(());
            }
            if start.elapsed() > WAIT_TIMEOUT {
                return Err(err(format!(
                    "compactions still due after {} s",
                    WAIT_TIMEOUT.as_secs()
                )));
            }
        }
    }

    fn files_per_level(&self) -> Option<Vec<u64>> {
        (0..usize::from(LEVEL_COUNT))
            .map(|l| {
                self.written()
                    .iter()
                    .map(|k| k.tree.level_table_count(l).map(|n| n as u64))
                    .sum::<Option<u64>>()
            })
            .collect()
    }

    fn settings(&self) -> serde_json::Value {
        self.settings.clone()
    }

    fn supports_txn(&self) -> bool {
        self.tx.is_some()
    }

    fn txn_update(
        &self,
        keys: &[&[u8]],
        values: &mut [Vec<u8>],
        update: &mut super::TxnUpdate<'_>,
    ) -> EngineResult<super::TxnOutcome> {
        self.txs()?
            .update(&self.keyspace, self.persist, keys, values, update)
    }

    fn txn_get_lens(&self, keys: &[&[u8]], lens: &mut [Option<usize>]) -> EngineResult<()> {
        self.txs()?.get_lens(&self.keyspace, keys, lens)
    }
}

impl Fjall {
    /// The transactional database, or the error of a plain one.
    fn txs(&self) -> EngineResult<&super::fjall_txn::FjallTx> {
        self.tx
            .as_ref()
            .ok_or_else(|| err("opened without transactions (no txn* benchmark in the run)"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flush_moves_the_memtable_into_a_table_file() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = crate::BenchArgs::default().engine_config();
        let db = Fjall::open(&dir.path().join("fjall"), &cfg).unwrap();
        for i in 0..100u32 {
            db.put(&i.to_be_bytes(), b"value").unwrap();
        }
        assert_eq!(db.keyspace.table_count(), 0);
        db.flush().unwrap();
        assert_eq!(db.keyspace.table_count(), 1);
        assert_eq!(db.keyspace.tree.sealed_memtable_count(), 0);
        db.flush().unwrap(); // nothing left to flush: returns at once
        assert_eq!(db.keyspace.table_count(), 1);
        assert_eq!(db.get_len(&7u32.to_be_bytes()).unwrap(), Some(5));
    }

    /// `--keyspaces 3`: three fjall keyspaces besides the empty `bench` one,
    /// each key only in the one it was written to.
    #[test]
    fn keyspaces_hold_their_own_keys() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fjall");
        let cfg = EngineConfig {
            keyspaces: 3,
            ..crate::BenchArgs::default().engine_config()
        };
        let db = Fjall::open(&path, &cfg).unwrap();
        crate::engines::tests::write_one_key_per_keyspace(&db);
        crate::engines::tests::check_each_key_in_its_keyspace_only(&db);
        assert!(db.get_in(3, b"x").is_err());
        assert_eq!(db.scan_all().unwrap(), 30);
        db.wait_for_compactions().unwrap();
        // One table per keyspace after the flush, summed over them.
        assert_eq!(db.files_per_level().unwrap().iter().sum::<u64>(), 3);
        assert_eq!(db.keyspace.table_count(), 0);
        for (ks, k) in db.keyspaces.iter().enumerate() {
            assert_eq!(k.name().as_ref(), format!("ks{ks}"));
            assert_eq!((k.table_count(), k.len().unwrap()), (1, 10));
        }
        // No merge operator: mergerandom stays skipped for fjall.
        assert!(!db.supports_merge() && db.merge_in(0, b"c", b"1").is_err());
    }

    #[test]
    fn batches_reach_the_journal_file_without_a_flush() {
        // Durability Buffer: each batch is in the OS's hands when commit returns.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fjall");
        let cfg = crate::BenchArgs::default().engine_config();
        let db = Fjall::open(&path, &cfg).unwrap();
        // The journal file is preallocated: look for the value's bytes in it.
        let value = b"a value only this test writes";
        let in_journal = || {
            let bytes = std::fs::read(path.join("0.jnl")).unwrap();
            bytes.windows(value.len()).any(|w| w == value)
        };
        assert!(!in_journal());
        db.write_batch(&[(b"key", value)]).unwrap();
        assert!(in_journal());
    }

    #[test]
    fn settings_fjall_would_panic_on_are_errors() {
        let base = crate::BenchArgs::default().engine_config();
        let dir = tempfile::tempdir().unwrap();
        for cfg in [
            EngineConfig {
                max_open_files: 5,
                ..base.clone()
            },
            EngineConfig {
                block_size: 512,
                ..base.clone()
            },
            EngineConfig {
                size_ratio: 1,
                ..base.clone()
            },
            EngineConfig {
                bits_per_key: f64::NAN,
                ..base.clone()
            },
        ] {
            assert!(Fjall::open(&dir.path().join("fjall"), &cfg).is_err());
        }
    }
}
