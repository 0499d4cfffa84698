//! fjall (a pure-Rust LSM-tree engine from crates.io) as a baseline engine:
//! one keyspace holding one partition.
//!
//! Not every setting can be matched (fjall 2.11's own rules, stated in
//! [`Engine::settings`]): filters of levels 0 and 1 are sized for a false
//! positive rate rather than by bits per key, level 1 holds
//! `l0_threshold · target_file_size`, and block checksums are not verified on
//! reads.

use super::{Engine, EngineConfig, EngineResult};
use ::fjall::compaction::{Leveled, Strategy};
use ::fjall::{
    AbstractTree, CompressionType, Config, Keyspace, PartitionCreateOptions, PartitionHandle,
};
use serde_json::json;
use std::path::Path;
use std::time::{Duration, Instant};

/// The fjall version this crate is pinned to (`=2.11.2` in Cargo.toml).
pub const VERSION: &str = "2.11.2";
/// Name of the benchmark's partition.
const PARTITION: &str = "bench";
/// Level-0 segments that trigger a compaction into level 1 (as in every other engine).
const L0_THRESHOLD: u8 = 4;
/// Level-0 runs at which fjall slows writes down and stops them (fixed in fjall 2.11).
const L0_STALL_HALT: [u8; 2] = [20, 32];
/// Levels of the tree (fjall's default).
const LEVEL_COUNT: u8 = 7;
/// Largest bits per key fjall accepts.
const MAX_BITS_PER_KEY: u8 = 20;
/// Flush workers plus compaction workers: two background threads, like the others.
const FLUSH_WORKERS: usize = 1;
/// See [`FLUSH_WORKERS`].
const COMPACTION_WORKERS: usize = 1;
/// How long [`Engine::flush`] waits for the flush workers before giving up
/// (they stop for good if a flush fails).
const FLUSH_TIMEOUT: Duration = Duration::from_secs(300);
/// fjall's default cap on all memtables together (64 MiB for its default 16 MiB memtables).
const DEFAULT_MAX_WRITE_BUFFER: u64 = 64 << 20;

/// A fjall keyspace with one partition, opened for benchmarking.
pub struct Fjall {
    // Dropped first: the partition handle refers to the keyspace's internals.
    partition: PartitionHandle,
    keyspace: Keyspace,
    /// The compaction strategy, also run by `wait_for_compactions`.
    leveled: Leveled,
    settings: serde_json::Value,
}

/// Prefixes fjall errors with the engine name.
fn err(e: impl std::fmt::Display) -> super::BoxError {
    format!("fjall: {e}").into()
}

impl Fjall {
    /// Opens (or creates) the keyspace at `path` with the run's settings.
    pub fn open(path: &Path, cfg: &EngineConfig) -> EngineResult<Self> {
        super::warn_if_not_leveling("fjall", cfg);
        let ignored = super::ignored_device_flags("fjall", cfg, false);
        let bits = cfg
            .bits_per_key
            .round()
            .clamp(0.0, f64::from(MAX_BITS_PER_KEY)) as u8;
        if f64::from(bits) != cfg.bits_per_key {
            eprintln!(
                "warning: fjall takes whole bits per key up to {MAX_BITS_PER_KEY}; \
                 using {bits} instead of {}",
                cfg.bits_per_key
            );
        }
        let ratio = u8::try_from(cfg.size_ratio)
            .ok()
            .filter(|r| *r >= 2)
            .ok_or_else(|| {
                format!(
                    "fjall: --size-ratio must be 2..=255, not {}",
                    cfg.size_ratio
                )
            })?;
        let target = u32::try_from(cfg.target_file_size).map_err(|_| {
            format!(
                "fjall: --target-file-size must be below 4 GiB, not {}",
                cfg.target_file_size
            )
        })?;
        let memtable = u32::try_from(cfg.write_buffer_size).map_err(|_| {
            format!(
                "fjall: --write-buffer-size must be below 4 GiB, not {}",
                cfg.write_buffer_size
            )
        })?;
        let block = u32::try_from(cfg.block_size)
            .ok()
            .filter(|b| (1024..=512 * 1024).contains(b))
            .ok_or_else(|| {
                format!(
                    "fjall: block size must be 1 KiB..=512 KiB, not {}",
                    cfg.block_size
                )
            })?;
        if cfg.max_open_files < 2 {
            return Err(err("max open files must be at least 2"));
        }
        let level1 = u64::from(target) * u64::from(L0_THRESHOLD);
        if level1 != cfg.level1_size {
            eprintln!(
                "warning: fjall's level 1 holds {L0_THRESHOLD} · target file size = {level1} bytes; \
                 --level1-size {} cannot be set separately",
                cfg.level1_size
            );
        }
        // Keep fjall's own headroom (4 memtables) for larger memtables.
        let max_write_buffer = DEFAULT_MAX_WRITE_BUFFER.max(4 * u64::from(memtable));

        let keyspace = Config::new(path)
            .cache_size(cfg.block_cache_size)
            .max_open_files(cfg.max_open_files)
            .max_write_buffer_size(max_write_buffer)
            .flush_workers(FLUSH_WORKERS)
            .compaction_workers(COMPACTION_WORKERS)
            .manual_journal_persist(false)
            .fsync_ms(None)
            .open()
            .map_err(err)?;
        let leveled = Leveled {
            l0_threshold: L0_THRESHOLD,
            target_size: target,
            level_ratio: ratio,
        };
        let strategy = Strategy::Leveled(leveled.clone());
        let opts = PartitionCreateOptions::default()
            .max_memtable_size(memtable)
            .block_size(block)
            .compression(CompressionType::None)
            .bloom_filter_bits((bits > 0).then_some(bits))
            .compaction_strategy(strategy)
            .manual_journal_persist(false);
        let partition = keyspace.open_partition(PARTITION, opts).map_err(err)?;

        let settings = json!({
            "engine": "fjall",
            "version": VERSION,
            "bits_per_key": bits,
            "filter": if bits > 0 {
                "bloom; bits per key on levels 2+ only, fjall sizes level-0 filters for \
                 a 0.001% and level-1 filters for a 0.05% false positive rate"
            } else {
                "none"
            },
            "block_cache_bytes": cfg.block_cache_size,
            "index_filter_blocks": "filters and top-level index held in memory per table; \
                 index blocks in the block cache",
            "block_size": cfg.block_size,
            "compression": "none",
            "verify_checksums": false,
            "checksums": "written per block, but fjall 2.11 does not verify them on reads",
            "file_access": "buffered reads (page cache), no mmap, no O_DIRECT",
            "use_direct_reads": false,
            "io_delay_ns": 0,
            "ignored_flags": ignored,
            "write_buffer_size": cfg.write_buffer_size,
            "memtables_max_bytes": max_write_buffer,
            "wal": true,
            "sync": false,
            "target_file_size": cfg.target_file_size,
            "size_ratio": ratio,
            "level1_size": level1,
            "level_count": LEVEL_COUNT,
            "compaction_style": "leveling",
            "level0_triggers": [L0_THRESHOLD, L0_STALL_HALT[0], L0_STALL_HALT[1]],
            "max_open_files": cfg.max_open_files,
            "background_threads": FLUSH_WORKERS + COMPACTION_WORKERS,
        });
        Ok(Fjall {
            partition,
            keyspace,
            leveled,
            settings,
        })
    }
}

impl Engine for Fjall {
    fn name(&self) -> &'static str {
        "fjall"
    }

    fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
        self.partition.insert(key, value).map_err(err)
    }

    fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
        Ok(self.partition.get(key).map_err(err)?.map(|v| v.to_vec()))
    }

    fn get_len(&self, key: &[u8]) -> EngineResult<Option<usize>> {
        // fjall hands out a reference-counted slice; its length needs no further copy.
        Ok(self.partition.get(key).map_err(err)?.map(|v| v.len()))
    }

    fn write_batch(&self, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
        // The keyspace's batch flushes the journal to the OS on commit (no fsync).
        let mut batch = self.keyspace.batch();
        for (k, v) in entries {
            batch.insert(&self.partition, *k, *v);
        }
        batch.commit().map_err(err)
    }

    fn scan_all(&self) -> EngineResult<u64> {
        let mut n = 0u64;
        for item in self.partition.iter() {
            let (k, v) = item.map_err(err)?;
            std::hint::black_box((k, v));
            n += 1;
        }
        Ok(n)
    }

    fn flush(&self) -> EngineResult<()> {
        // Seal the active memtable (if it holds anything) and wait until every
        // sealed memtable, also those sealed by writes, is in a table file.
        self.partition.rotate_memtable().map_err(err)?;
        let start = Instant::now();
        while self.partition.tree.sealed_memtable_count() > 0 {
            if start.elapsed() > FLUSH_TIMEOUT {
                return Err(err(format!(
                    "memtables still unflushed after {} s",
                    FLUSH_TIMEOUT.as_secs()
                )));
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        Ok(())
    }

    /// Flushes, then runs the leveled strategy in the calling thread until
    /// it has nothing left to do (fjall 2 has no call to wait for its
    /// background compactions; this one returns once none is due).
    fn wait_for_compactions(&self) -> EngineResult<()> {
        self.flush()?;
        let start = Instant::now();
        loop {
            let before = self.files_per_level();
            self.partition
                .tree
                .compact(std::sync::Arc::new(self.leveled.clone()), 0)
                .map_err(err)?;
            if self.files_per_level() == before {
                return Ok(());
            }
            if start.elapsed() > FLUSH_TIMEOUT {
                return Err(err(format!(
                    "compactions still due after {} s",
                    FLUSH_TIMEOUT.as_secs()
                )));
            }
        }
    }

    fn files_per_level(&self) -> Option<Vec<u64>> {
        (0..usize::from(LEVEL_COUNT))
            .map(|l| self.partition.tree.level_segment_count(l).map(|n| n as u64))
            .collect()
    }

    fn settings(&self) -> serde_json::Value {
        self.settings.clone()
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
        assert_eq!(db.partition.segment_count(), 0);
        db.flush().unwrap();
        assert_eq!(db.partition.segment_count(), 1);
        assert_eq!(db.partition.tree.active_memtable_size(), 0);
        assert_eq!(db.partition.tree.sealed_memtable_count(), 0);
        db.flush().unwrap(); // nothing left to flush: returns at once
        assert_eq!(db.get_len(&7u32.to_be_bytes()).unwrap(), Some(5));
    }
}
