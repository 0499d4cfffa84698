//! Bulk-loading the benchmarks' key space into RocksDB, in the shape of
//! sievedb's bulk load ([`super::load_generated`]).
//!
//! The entries are the same (key `i`, value `i` for `i` in `0..num`) and are
//! dealt to the same levels by sievedb's own [`LevelPicker`]. Each level is
//! written as sorted, non-overlapping tables by RocksDB's `SstFileWriter`
//! (with the options the benchmark opens RocksDB with: the same filter, block
//! size and table size), then the levels are ingested deepest first. RocksDB
//! puts an ingested table at the lowest level where its key range overlaps
//! nothing at or above it: the deepest level lands at the last level (L6)
//! and every shallower one right above the one it overlaps, so shape level
//! `i` of `L` becomes RocksDB level `6 − (L − i)`. The load checks that it
//! did (table counts per level) and fails otherwise.
//!
//! This stands in for filling RocksDB by its own writes where only the tree
//! matters (the baselines of paper 001's experiments): at 100M entries its
//! `fillrandom` took an hour on a 2-core machine, this takes the time of
//! writing the data once. The tree differs from a written one in having no
//! L0 tables and no overwritten versions, as sievedb's bulk load does.

use std::path::{Path, PathBuf};
use std::time::Instant;

use ::rocksdb::{IngestExternalFileOptions, Options, SstFileWriter, DB};
use sievedb::bulk::LevelPicker;

use super::BulkConfig;
use crate::engines::rocksdb::{db_options, NUM_LEVELS};
use crate::engines::{EngineConfig, EngineResult};
use crate::workload::keys::{KeyGen, ValueGen};

/// Entries between two calls of the progress callback.
const PROGRESS_EVERY: u64 = 1 << 16;

/// One level of a RocksDB bulk load.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RocksLevel {
    /// RocksDB's level number (1..=6).
    pub level: usize,
    /// Entries of the level.
    pub entries: u64,
    /// Table files of the level.
    pub files: usize,
    /// Bytes of its table files.
    pub bytes: u64,
}

/// What a RocksDB bulk load built.
#[derive(Clone, Debug, PartialEq)]
pub struct RocksBulkReport {
    /// The levels, shallowest first.
    pub levels: Vec<RocksLevel>,
    /// `max_bytes_for_level_base` that keeps every level under its target
    /// size (so opening with it schedules no compaction): open with it.
    pub level1_size: u64,
    /// Whether RocksDB had a compaction to do right after the load
    /// (`rocksdb.compaction-pending`; never, with `level1_size`).
    pub compaction_pending: bool,
    /// Wall time of the whole load (writing and ingesting), in seconds.
    pub seconds: f64,
}

impl RocksBulkReport {
    /// Entries of every level.
    pub fn entries(&self) -> u64 {
        self.levels.iter().map(|l| l.entries).sum()
    }

    /// Table files of every level.
    pub fn files(&self) -> usize {
        self.levels.iter().map(|l| l.files).sum()
    }

    /// Bytes of every table file.
    pub fn bytes(&self) -> u64 {
        self.levels.iter().map(|l| l.bytes).sum()
    }
}

/// The tables of one level being written: the open writer and the files
/// finished so far.
struct LevelTables<'a> {
    /// Directory of the level's table files.
    dir: PathBuf,
    opts: &'a Options,
    writer: Option<SstFileWriter<'a>>,
    files: Vec<PathBuf>,
    entries: u64,
    bytes: u64,
}

impl<'a> LevelTables<'a> {
    fn new(dir: PathBuf, opts: &'a Options) -> Self {
        LevelTables {
            dir,
            opts,
            writer: None,
            files: Vec::new(),
            entries: 0,
            bytes: 0,
        }
    }

    /// Appends an entry (keys in increasing order), cutting the table once
    /// it reaches `target` bytes.
    fn add(&mut self, key: &[u8], value: &[u8], target: u64) -> EngineResult<()> {
        let w = match &mut self.writer {
            Some(w) => w,
            None => {
                let path = self.dir.join(format!("{:06}.sst", self.files.len()));
                let w = SstFileWriter::create(self.opts);
                w.open(&path).map_err(rocks_err)?;
                self.files.push(path);
                self.writer.insert(w)
            }
        };
        w.put(key, value).map_err(rocks_err)?;
        self.entries += 1;
        if w.file_size() >= target {
            self.finish_table()?;
        }
        Ok(())
    }

    /// Finishes the open table, if any.
    fn finish_table(&mut self) -> EngineResult<()> {
        if let Some(mut w) = self.writer.take() {
            w.finish().map_err(rocks_err)?;
            let last = self
                .files
                .last()
                .ok_or("rocksdb bulk load: no table path")?;
            self.bytes += std::fs::metadata(last)?.len();
        }
        Ok(())
    }
}

fn rocks_err(e: ::rocksdb::Error) -> crate::engines::BoxError {
    format!("rocksdb bulk load: {e}").into()
}

/// The RocksDB level that shape level `i` (1-based) of `levels` lands at.
fn rocksdb_level(i: usize, levels: usize) -> usize {
    (NUM_LEVELS as usize - 1) - (levels - i)
}

/// Bulk-loads the benchmark key space of `bulk` (its shape, table size,
/// key and value sizes and seed) into a new RocksDB database at `path`,
/// opened with `cfg` (filter bits per key, block size, cache; its
/// `level1_size` is raised to what the shape needs). The tables are
/// written into `path` with the extension `ingest` first, then moved in.
/// Fails if `path` is neither missing nor an empty directory, if that
/// staging directory exists, or if the shape has more levels than RocksDB
/// has below L0; on failure nothing it wrote is left behind.
pub fn load_generated(
    path: &Path,
    bulk: &BulkConfig,
    cfg: &EngineConfig,
    progress: impl FnMut(u64),
) -> EngineResult<RocksBulkReport> {
    let existed = path.exists();
    if existed && std::fs::read_dir(path).map_or(true, |mut d| d.next().is_some()) {
        return Err(format!(
            "rocksdb bulk load: {} exists and is not an empty directory; a bulk load builds \
             a new database",
            path.display()
        )
        .into());
    }
    // The tables are written beside the database first. A directory of
    // that name is never taken over (it may be someone's, or what an
    // interrupted load left: its tables are not worth trusting either).
    let staging = path.with_extension("ingest");
    if staging.exists() {
        return Err(format!(
            "rocksdb bulk load: {} exists (left by an interrupted load?); remove it first",
            staging.display()
        )
        .into());
    }
    let r = load_inner(path, &staging, bulk, cfg, progress);
    // Ingestion moved (hard-linked) the tables into the database; the
    // staging directory only holds what is left of them.
    let _ = std::fs::remove_dir_all(&staging);
    if r.is_err() {
        let _ = std::fs::remove_dir_all(path);
        if existed {
            let _ = std::fs::create_dir(path);
        }
    }
    r
}

/// The human-readable summary of a RocksDB bulk load into `path`.
pub fn summary_text(r: &RocksBulkReport, path: &Path) -> String {
    let mut t = format!(
        "Bulk load:  {} entries into RocksDB, {} tables, {:.1} MB, in {:.3} s\n\
         Database:   {}\n{:<5}  {:>7}  {:>12}  {:>14}\n",
        r.entries(),
        r.files(),
        r.bytes() as f64 / 1e6,
        r.seconds,
        path.display(),
        "level",
        "files",
        "entries",
        "bytes"
    );
    for l in &r.levels {
        t.push_str(&format!(
            "{:<5}  {:>7}  {:>12}  {:>14}\n",
            format!("L{}", l.level),
            l.files,
            l.entries,
            l.bytes
        ));
    }
    t.push_str(&format!(
        "Open with:  max_bytes_for_level_base = {0} (sievedb bench --engine rocksdb: \
         --level1-size {0})\n",
        r.level1_size
    ));
    t
}

/// The summary of a RocksDB bulk load as one JSON object.
pub fn summary_json(r: &RocksBulkReport, path: &Path) -> serde_json::Value {
    serde_json::json!({
        "type": "bulkload",
        "engine": "rocksdb",
        "db": path.display().to_string(),
        "entries": r.entries(),
        "files": r.files(),
        "bytes": r.bytes(),
        "seconds": r.seconds,
        "level1_size": r.level1_size,
        "compaction_pending": r.compaction_pending,
        "per_level": r.levels.iter().map(|l| serde_json::json!({
            "level": l.level,
            "files": l.files,
            "entries": l.entries,
            "bytes": l.bytes,
        })).collect::<Vec<_>>(),
    })
}

fn load_inner(
    path: &Path,
    staging: &Path,
    bulk: &BulkConfig,
    cfg: &EngineConfig,
    mut progress: impl FnMut(u64),
) -> EngineResult<RocksBulkReport> {
    if bulk.num == 0 {
        return Err("--num must be at least 1".into());
    }
    let shape = bulk.shape()?;
    if shape.levels >= NUM_LEVELS as usize {
        return Err(format!(
            "rocksdb bulk load: {} levels do not fit RocksDB's {} levels below L0",
            shape.levels,
            NUM_LEVELS - 1
        )
        .into());
    }
    let start = Instant::now();
    let keys = KeyGen::new(bulk.key_size, bulk.num)?;
    let values = ValueGen::new(bulk.value_size, bulk.seed);
    let (table_opts, _cache) = db_options(cfg)?;
    let mut tables = Vec::with_capacity(shape.levels);
    for i in 1..=shape.levels {
        let dir = staging.join(format!("L{i}"));
        std::fs::create_dir_all(&dir)?;
        tables.push(LevelTables::new(dir, &table_opts));
    }
    let mut picker = LevelPicker::new(&shape)?;
    let mut key = vec![0u8; keys.key_size()];
    for i in 0..bulk.num {
        keys.fill(&mut key, i, false);
        tables[picker.next()].add(&key, values.value(i), bulk.target_file_size)?;
        if (i + 1) % PROGRESS_EVERY == 0 {
            progress(i + 1);
        }
    }
    for t in &mut tables {
        t.finish_table()?;
    }
    progress(bulk.num);

    // Level targets that hold every level: RocksDB level j's is
    // level1_size × T^(j−1).
    let ratio = shape.size_ratio as u64;
    let mut level1_size = cfg.level1_size.max(1);
    for (i, t) in tables.iter().enumerate() {
        let scale = ratio.saturating_pow((rocksdb_level(i + 1, shape.levels) - 1) as u32);
        level1_size = level1_size.max(t.bytes.div_ceil(scale.max(1)));
    }
    let open_cfg = EngineConfig {
        level1_size,
        ..cfg.clone()
    };
    let (mut o, _cache) = db_options(&open_cfg)?;
    o.set_error_if_exists(true);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent)?;
    }
    let db = DB::open(&o, path).map_err(rocks_err)?;
    let mut ingest = IngestExternalFileOptions::default();
    ingest.set_move_files(true);
    for t in tables.iter().rev().filter(|t| !t.files.is_empty()) {
        db.ingest_external_file_opts(&ingest, t.files.clone())
            .map_err(rocks_err)?;
    }
    let mut levels = Vec::with_capacity(shape.levels);
    for (i, t) in tables.iter().enumerate() {
        let level = rocksdb_level(i + 1, shape.levels);
        let prop = format!("rocksdb.num-files-at-level{level}");
        let got = db
            .property_int_value(&prop)
            .map_err(rocks_err)?
            .unwrap_or(0);
        if got != t.files.len() as u64 {
            return Err(format!(
                "rocksdb bulk load: shape level {} should be RocksDB level {level} with {} \
                 tables; it has {got}",
                i + 1,
                t.files.len()
            )
            .into());
        }
        levels.push(RocksLevel {
            level,
            entries: t.entries,
            files: t.files.len(),
            bytes: t.bytes,
        });
    }
    let pending = db
        .property_int_value("rocksdb.compaction-pending")
        .map_err(rocks_err)?;
    drop(db);
    Ok(RocksBulkReport {
        levels,
        level1_size,
        compaction_pending: pending.unwrap_or(0) > 0,
        seconds: start.elapsed().as_secs_f64(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::rocksdb::RocksDb;
    use crate::engines::Engine;
    use crate::DEFAULT_SEED;

    fn config(bits: f64) -> EngineConfig {
        EngineConfig {
            bits_per_key: bits,
            target_file_size: 16 << 10,
            size_ratio: 4,
            ..crate::BenchArgs::default().engine_config()
        }
    }

    #[test]
    fn loads_every_entry_into_the_shape_and_schedules_no_compaction() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("rocksdb");
        let bulk = BulkConfig {
            num: 20_000,
            key_size: 16,
            value_size: 50,
            seed: 3,
            levels: 3,
            size_ratio: 4,
            target_file_size: 16 << 10,
            ..BulkConfig::default()
        };
        let cfg = config(10.0);
        let mut calls = 0;
        let r = load_generated(&path, &bulk, &cfg, |_| calls += 1).unwrap();
        assert!(calls > 0);
        assert_eq!(r.entries(), 20_000);
        // 1 : 4 : 16 of the entries (within one period of 21), at RocksDB
        // levels 4, 5 and 6.
        let got: Vec<usize> = r.levels.iter().map(|l| l.level).collect();
        assert_eq!(got, vec![4, 5, 6]);
        for (l, w) in r.levels.iter().zip([1.0, 4.0, 16.0]) {
            let want = 20_000.0 * w / 21.0;
            assert!((l.entries as f64 - want).abs() <= 21.0, "{r:?}");
        }
        assert!(r.levels[2].files > 10, "{r:?}");
        assert!(!path.with_extension("ingest").exists());
        assert!(!r.compaction_pending);

        let open = EngineConfig {
            level1_size: r.level1_size,
            ..cfg.clone()
        };
        let db = RocksDb::open(&path, &open).unwrap();
        let keys = KeyGen::new(16, 20_000).unwrap();
        let values = ValueGen::new(50, 3);
        for i in 0..20_000 {
            assert_eq!(
                db.get(&keys.key(i, false)).unwrap().as_deref(),
                Some(values.value(i)),
                "{i}"
            );
            assert_eq!(db.get(&keys.key(i, true)).unwrap(), None, "{i}");
        }
        drop(db);
        // Opened with the report's level1_size, every level is under its
        // target: nothing to compact, and each level keeps its tables.
        let (o, _cache) = db_options(&open).unwrap();
        let raw = DB::open(&o, &path).unwrap();
        let int = |p: &str| raw.property_int_value(p).unwrap();
        assert_eq!(int("rocksdb.compaction-pending"), Some(0));
        for l in &r.levels {
            let files = int(&format!("rocksdb.num-files-at-level{}", l.level));
            assert_eq!(files, Some(l.files as u64), "{r:?}");
        }
        drop(raw);

        let text = summary_text(&r, &path);
        assert!(
            text.contains("L6") && text.contains("--level1-size"),
            "{text}"
        );
        assert_eq!(summary_json(&r, &path)["entries"], 20_000);

        // A second load into the same directory is refused and leaves it be.
        let e = load_generated(&path, &bulk, &cfg, |_| {}).unwrap_err();
        assert!(e.to_string().contains("not an empty directory"), "{e}");
        assert!(path.join("CURRENT").exists());
    }

    #[test]
    fn refuses_more_levels_than_rocksdb_has_and_leaves_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("rocksdb");
        let bulk = BulkConfig {
            num: 1000,
            seed: DEFAULT_SEED,
            levels: 7,
            size_ratio: 2,
            ..BulkConfig::default()
        };
        let e = load_generated(&path, &bulk, &config(4.0), |_| {}).unwrap_err();
        assert!(e.to_string().contains("levels"), "{e}");
        assert!(!path.exists());
        assert!(!path.with_extension("ingest").exists());
        // A staging directory that exists is never taken over.
        let staging = path.with_extension("ingest");
        std::fs::create_dir(&staging).unwrap();
        std::fs::write(staging.join("mine"), b"x").unwrap();
        let e = load_generated(&path, &bulk, &config(4.0), |_| {}).unwrap_err();
        assert!(e.to_string().contains("remove it first"), "{e}");
        assert!(staging.join("mine").exists());
        std::fs::remove_dir_all(&staging).unwrap();
        // An empty directory of the user's is loaded into, and kept on failure.
        std::fs::create_dir(&path).unwrap();
        load_generated(&path, &bulk, &config(4.0), |_| {}).unwrap_err();
        assert!(path.is_dir());
        let ok = BulkConfig { levels: 2, ..bulk };
        let r = load_generated(&path, &ok, &config(4.0), |_| {}).unwrap();
        assert_eq!(r.entries(), 1000);
    }
}
