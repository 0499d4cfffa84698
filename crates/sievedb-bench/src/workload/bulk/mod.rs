//! Bulk-loading the benchmarks' key space (`sievedb bulkload`).
//!
//! [`load_generated`] builds, through [`sievedb::bulk`], a database that holds
//! exactly what the fill benchmarks write for the same `--num`, `--key-size`,
//! `--value-size` and `--seed`: key [`KeyGen::key`]`(i, false)` with value
//! [`ValueGen::value`]`(i)` for every `i` in `0..num`. Keys are zero-padded
//! decimals of a fixed width followed by the same marker byte, so index order
//! is key order and the stream is generated already sorted. The result can be
//! read with `sievedb bench --use-existing-db --db DIR` when it was loaded
//! into `DIR/sievedb`.
//!
//! The tables are built with the settings the benchmark opens sievedb with
//! ([`BLOCK_SIZE`], no compression, `--target-file-size`) and the filters the
//! shared filter flags ([`FilterArgs`]) ask for: `--bits-per-key`, `--filter`
//! (bloom, blocked or units), `--filter-units`, `--hash` and the rest.
//!
//! `rocksdb::load_generated` (feature `rocksdb`) builds RocksDB's tree of
//! the same entries in the same shape, for the baselines of the experiments.

use std::path::Path;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use sievedb::bulk::{BulkLoad, BulkLoadReport, LevelShape};
use sievedb::{Compression, Options};

#[cfg(feature = "rocksdb")]
pub mod rocksdb;

use crate::engines::EngineResult;
use crate::workload::keys::{KeyGen, ValueGen};
use crate::{
    FilterArgs, BLOCK_SIZE, DEFAULT_KEY_SIZE, DEFAULT_NUM, DEFAULT_SEED, DEFAULT_SIZE_RATIO,
    DEFAULT_TARGET_FILE_SIZE, DEFAULT_VALUE_SIZE,
};

/// Default number of levels of a bulk load.
pub const DEFAULT_LEVELS: usize = 5;

/// `max_levels` the benchmark's sievedb engine opens databases with (the
/// engine default): it reads bulk loads of up to `BENCH_MAX_LEVELS - 1` levels.
pub const BENCH_MAX_LEVELS: usize = 7;

/// What to bulk-load and how the tables are built.
#[derive(Clone, Debug, PartialEq)]
pub struct BulkConfig {
    /// Entries (keys `0..num`); ignored for file input.
    pub num: u64,
    /// Key size in bytes; ignored for file input.
    pub key_size: usize,
    /// Value size in bytes; ignored for file input.
    pub value_size: usize,
    /// Seed of the value pool (the benchmark's `--seed`); ignored for file input.
    pub seed: u64,
    /// Levels that receive data (1..=levels).
    pub levels: usize,
    /// Size ratio between adjacent levels.
    pub size_ratio: usize,
    /// Size at which table files are cut, in bytes.
    pub target_file_size: u64,
    /// The filters the tables are built with (every filter flag of
    /// `sievedb bench`; the filter memory budget only matters to the
    /// options the database is opened with, see [`BulkConfig::options`]).
    pub filters: FilterArgs,
}

impl Default for BulkConfig {
    fn default() -> Self {
        BulkConfig {
            num: DEFAULT_NUM,
            key_size: DEFAULT_KEY_SIZE,
            value_size: DEFAULT_VALUE_SIZE,
            seed: DEFAULT_SEED,
            levels: DEFAULT_LEVELS,
            size_ratio: DEFAULT_SIZE_RATIO,
            target_file_size: DEFAULT_TARGET_FILE_SIZE,
            filters: FilterArgs::default(),
        }
    }
}

impl BulkConfig {
    /// Checks the flags that are not the shape's (the engine checks that):
    /// the filter flags, as `sievedb bench` checks them.
    pub fn validate(&self) -> Result<(), String> {
        self.filters.validate()
    }

    /// The shape to load.
    pub fn shape(&self) -> sievedb::Result<LevelShape> {
        LevelShape::new(self.levels, self.size_ratio)
    }

    /// Options with the table settings of the benchmark's sievedb engine
    /// (the filters of [`BulkConfig::filters`]), and room for the shape's levels.
    pub fn options(&self) -> Options {
        let mut opts = Options::builder()
            .target_file_size(self.target_file_size)
            .block_size(BLOCK_SIZE)
            .compression_per_level(vec![Compression::None])
            .build();
        self.filters.apply(&mut opts);
        opts.max_levels = opts.max_levels.max(self.levels + 1);
        opts
    }
}

/// Bulk-loads the benchmark key space of `cfg` into a new database at `path`.
pub fn load_generated(
    path: &Path,
    cfg: &BulkConfig,
    progress: impl FnMut(u64) + Send + 'static,
) -> EngineResult<BulkLoadReport> {
    if cfg.num == 0 {
        return Err("--num must be at least 1".into());
    }
    cfg.validate()?;
    let keys = KeyGen::new(cfg.key_size, cfg.num)?;
    let values = ValueGen::new(cfg.value_size, cfg.seed);
    let mut w = BulkLoad::new(path, cfg.options(), cfg.shape()?)
        .on_progress(progress)
        .start()?;
    let mut key = vec![0u8; keys.key_size()];
    for i in 0..cfg.num {
        keys.fill(&mut key, i, false);
        // On error the writer is dropped, which deletes what it wrote.
        w.add(&key, values.value(i))?;
    }
    Ok(w.finish()?)
}

/// A progress bar on stderr fed by a bulk load's progress callback.
#[derive(Clone)]
pub struct Progress {
    pb: ProgressBar,
}

impl Progress {
    /// A bar over `total` entries (a spinner counting entries when the total
    /// is unknown); hidden unless `show`.
    pub fn new(show: bool, total: Option<u64>, label: &str) -> Self {
        if !show {
            return Progress {
                pb: ProgressBar::hidden(),
            };
        }
        let pb = match total {
            Some(n) => {
                let pb = ProgressBar::new(n);
                if let Ok(s) = ProgressStyle::with_template(
                    "{prefix:<10} [{bar:40}] {pos:>10}/{len:10} {per_sec} eta {eta}",
                ) {
                    pb.set_style(s.progress_chars("=> "));
                }
                pb
            }
            None => {
                let pb = ProgressBar::new_spinner();
                if let Ok(s) = ProgressStyle::with_template(
                    "{prefix:<10} {spinner} {pos:>10} entries {per_sec}",
                ) {
                    pb.set_style(s);
                }
                pb.enable_steady_tick(Duration::from_millis(200));
                pb
            }
        };
        pb.set_prefix(label.to_string());
        Progress { pb }
    }

    /// The callback to hand to the bulk load.
    pub fn callback(&self) -> impl FnMut(u64) + Send + 'static {
        let pb = self.pb.clone();
        move |done| pb.set_position(done)
    }

    /// Removes the bar.
    pub fn finish(&self) {
        self.pb.finish_and_clear();
    }
}

/// Flags that make `sievedb bench` open the loaded database with a level
/// capacity matching its shape (see [`BulkLoadReport::level1_size`]).
pub fn bench_flags(report: &BulkLoadReport) -> String {
    format!(
        "--size-ratio {} --level1-size {}",
        report.shape.size_ratio,
        report.level1_size()
    )
}

/// The human-readable summary of a bulk load into `path`.
pub fn summary_text(report: &BulkLoadReport, path: &Path) -> String {
    let mut t = String::new();
    let s = report.shape;
    t.push_str(&format!(
        "Bulk load:  {} entries, {:.1} MB of keys and values, into {} levels at size ratio {}\n",
        report.entries,
        report.user_bytes as f64 / 1e6,
        s.levels,
        s.size_ratio
    ));
    t.push_str(&format!("Database:   {}\n", path.display()));
    t.push_str(&format!(
        "{:<5}  {:>7}  {:>12}  {:>14}  {:>7}\n",
        "level", "files", "entries", "bytes", "share"
    ));
    let total = report.entries.max(1) as f64;
    for l in &report.levels {
        t.push_str(&format!(
            "{:<5}  {:>7}  {:>12}  {:>14}  {:>6.2}%\n",
            format!("L{}", l.level),
            l.files,
            l.entries,
            l.bytes,
            100.0 * l.entries as f64 / total
        ));
    }
    t.push_str(&format!(
        "{:<5}  {:>7}  {:>12}  {:>14}\n",
        "total",
        report.total_files(),
        report.entries,
        report.total_bytes()
    ));
    t.push_str(&format!(
        "Time:       {:.3} s, {:.1} MB/s, {:.0} entries/s\n",
        report.seconds,
        report.mb_per_second(),
        report.entries as f64 / report.seconds.max(1e-9)
    ));
    t.push_str(&format!(
        "Open with:  size_ratio = {}, level1_size = {}, max_levels >= {} \
         (sievedb bench: {})\n",
        s.size_ratio,
        report.level1_size(),
        s.levels + 1,
        bench_flags(report)
    ));
    if s.levels + 1 > BENCH_MAX_LEVELS {
        t.push_str(&format!(
            "Note:       sievedb bench and the other subcommands open databases with max_levels {} \
             and cannot open this {}-level database\n",
            BENCH_MAX_LEVELS, s.levels
        ));
    }
    t
}

/// The summary of a bulk load as one JSON object.
pub fn summary_json(report: &BulkLoadReport, path: &Path) -> serde_json::Value {
    let levels: Vec<serde_json::Value> = report
        .levels
        .iter()
        .map(|l| {
            json!({
                "level": l.level,
                "files": l.files,
                "entries": l.entries,
                "bytes": l.bytes,
            })
        })
        .collect();
    json!({
        "type": "bulkload",
        "db": path.display().to_string(),
        "levels": report.shape.levels,
        "size_ratio": report.shape.size_ratio,
        "entries": report.entries,
        "user_bytes": report.user_bytes,
        "files": report.total_files(),
        "bytes": report.total_bytes(),
        "last_sequence": report.last_sequence,
        "seconds": report.seconds,
        "mb_per_sec": report.mb_per_second(),
        "level1_size": report.level1_size(),
        "per_level": levels,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_sort_by_index() {
        let g = KeyGen::new(8, 2_000_000).unwrap();
        let digits = [9, 10, 99, 100, 999_999, 1_000_000, 1_999_999];
        for i in (1..2_000_000).step_by(997).chain(digits) {
            assert!(g.key(i, false) > g.key(i - 1, false), "{i}");
        }
    }

    #[test]
    fn loaded_database_matches_what_the_fill_benchmarks_write() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sievedb");
        let cfg = BulkConfig {
            num: 3000,
            key_size: 12,
            value_size: 40,
            seed: 9,
            levels: 3,
            size_ratio: 3,
            target_file_size: 16 << 10,
            filters: FilterArgs::default(),
        };
        let report = load_generated(&path, &cfg, |_| {}).unwrap();
        assert_eq!(report.entries, 3000);
        let text = summary_text(&report, &path);
        assert!(text.contains("L3"), "{text}");
        assert!(text.contains(&bench_flags(&report)), "{text}");
        let j = summary_json(&report, &path);
        assert_eq!(j["entries"], 3000);
        assert_eq!(j["per_level"].as_array().unwrap().len(), 3);

        let keys = KeyGen::new(12, 3000).unwrap();
        let values = ValueGen::new(40, 9);
        let db = sievedb::Db::open(&path, report.open_options(cfg.options())).unwrap();
        for i in 0..3000 {
            assert_eq!(
                db.get(keys.key(i, false)).unwrap().as_deref(),
                Some(values.value(i))
            );
            assert_eq!(db.get(keys.key(i, true)).unwrap(), None);
        }
        db.close().unwrap();

        // Too small a key size for --num is refused before anything is written.
        let bad = BulkConfig {
            key_size: 3,
            ..cfg.clone()
        };
        let e = load_generated(&tmp.path().join("x"), &bad, |_| {}).unwrap_err();
        assert!(e.to_string().contains("--key-size"), "{e}");
        assert!(!tmp.path().join("x").exists());
    }
}
