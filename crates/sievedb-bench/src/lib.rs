//! # sievedb-bench
//!
//! db_bench-style benchmarks of the sievedb storage engine, with LevelDB (the
//! system library, feature `leveldb`) as a baseline measured in the same run.
//!
//! The `sievedb` CLI exposes this crate as `sievedb bench`; [`BenchArgs`] are its
//! flags and [`run`] prints the report to stdout.
//!
//! Benchmarks (`--benchmarks`, run in the order given):
//! - `fillseq`: `--num` writes in ascending key order;
//! - `fillrandom`: `--num` writes in a seeded random order (each key once);
//! - `readrandom`: `--reads` lookups of uniformly chosen existing keys;
//! - `readmissing`: `--reads` lookups of keys that were never written but sort
//!   between written keys (so they must be rejected by the filters);
//! - `readmixed`: `--reads` lookups, a fraction `--alpha` of existing keys and
//!   the rest of missing ones (the papers' α);
//! - `readseq`: one full forward scan (ops = entries read);
//! - `readwhilewriting`: `--threads` readers do `--reads` lookups of existing
//!   keys (or read for `--duration` seconds) while one writer thread
//!   overwrites uniformly random keys of `0..--num` with one-key batches; the
//!   writer stops when the readers are done. ops, found and the rates are the
//!   readers'; `writer_ops` and `writer_ops_per_sec` are the writer's. Every
//!   `--sample-interval-ms` a sampler snapshots sievedb's statistics and
//!   reports the peak `filter_memory_max_bytes` and
//!   `filter_memory_max_over_budget_bytes` (resident filter bytes minus the
//!   budget; `null` without a budget);
//! - `ycsba`, `ycsbb`: YCSB core workloads A (50% lookups, 50% updates) and B
//!   (95% / 5%) on one thread, `--reads` operations on existing keys drawn
//!   from `--distribution` (YCSB's own is zipfian); an update rewrites the
//!   key with its value. `reads`, `updates` and `read_found` count the kinds;
//! - `flush`, `waitforcompaction`: flush the memtable / flush and wait until no
//!   compaction is due (RocksDB db_bench's names), to read a settled tree;
//!   reported by their elapsed time only (no ops/sec, micros/op or MB/s, in
//!   text and JSON alike);
//! - `filterbench`: the papers' single-filter micro-benchmark, no database:
//!   one filter over `--num` keys, `--reads` empty queries with hashing
//!   (measured and theoretical FPR, ns per query);
//! - `filterprobe` (sievedb only): `readmissing`'s keys, in batches, each
//!   batch timed three ways, interleaved: the lookups, a reference doing only
//!   the one digest and the probes of the filters those lookups would probe
//!   (each run's candidate file, through the engine's own filter objects),
//!   and the key generation (subtracted from both). Reports ns per key of
//!   each and the ratio lookup ÷ reference ([`filterprobe`]);
//! - `mergerandom` (db_bench's; engines with a merge operator: sievedb and
//!   RocksDB, skipped with a note for LevelDB and fjall): `--num` merges on
//!   one thread, each of an 8-byte little-endian 1 through a u64-add
//!   operator into a uniformly random counter of `0..--num`. The counters
//!   have keys of their own (`m` and the index, [`keys::KeyGen::fill_counter`]),
//!   so the reads of the fills' keys find what they found before (`readseq`
//!   counts the counters too). After the timed part every counter (up to
//!   65,536 of them, else an even sample) is read back and must have grown
//!   by the merges it got, or the run fails. MB/s counts key + 8 bytes.
//!
//! The benchmarks that read entries (the lookups, `readseq`, the YCSB mixes,
//! `readwhilewriting`) are refused on a database that holds none of the keys
//! 0, N/2 and N−1 of `--num N`, instead of measuring nothing ("0 of N found").
//! `sievedb bench --help` lists every benchmark ([`bench::Benchmark::help_list`]).
//! Progress goes to stderr ([`progress`]): a bar on a terminal, or a line
//! every `--stats-interval` seconds.
//!
//! Each `fill*` benchmark starts on a freshly emptied database (like db_bench);
//! with `--use-existing-db` the fills are skipped and the reads run against the
//! existing database. Reads run against whatever the last fill produced
//! (`readwhilewriting` and the YCSB workloads write into it, also with
//! `--use-existing-db`). Writes
//! are one-key batches without sync (db_bench's defaults); reads are split
//! across `--threads` threads.
//!
//! `sievedb devices` ([`devices`]) measures the papers' Table 1 on this
//! machine: 4 KiB read latency per access mode (page cache, O_DIRECT, tmpfs,
//! the emulated latencies of `--io-delay-ns`) and the cost of each hash function.

#![warn(missing_docs)]

pub mod bench;
pub mod bulk;
pub mod devices;
pub mod engines;
pub mod experiment;
pub mod filter_args;
pub mod filterbench;
pub mod filterprobe;
pub mod keys;
pub mod progress;
pub mod report;
pub mod workload;

use bench::{Benchmark, KeyDistribution, Workload};
use engines::{EngineConfig, EngineKind, EngineResult};
pub use filter_args::FilterArgs;
use keys::{KeyGen, ValueGen};
use report::{MedianRow, Record};
use sievedb::{Compression, FilterOptions};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Default `--benchmarks`.
pub const DEFAULT_BENCHMARKS: &str = "fillseq,fillrandom,readrandom,readmissing,readseq";
/// Default `--num`.
pub const DEFAULT_NUM: u64 = 200_000;
/// Default `--reads`.
pub const DEFAULT_READS: u64 = 100_000;
/// Default `--key-size`.
pub const DEFAULT_KEY_SIZE: usize = 16;
/// Default `--value-size`.
pub const DEFAULT_VALUE_SIZE: usize = 100;
/// Default `--bits-per-key`.
pub const DEFAULT_BITS_PER_KEY: f64 = 10.0;
/// Default `--size-ratio`.
pub const DEFAULT_SIZE_RATIO: usize = 10;
/// Default `--write-buffer-size` (4 MiB).
pub const DEFAULT_WRITE_BUFFER_SIZE: usize = 4 << 20;
/// Default `--target-file-size` (2 MiB).
pub const DEFAULT_TARGET_FILE_SIZE: u64 = 2 << 20;
/// Default `--block-cache-size` (8 MiB).
pub const DEFAULT_BLOCK_CACHE_SIZE: u64 = 8 << 20;
/// Default `--seed`.
pub const DEFAULT_SEED: u64 = 301;
/// Default `--zipf-s`, the exponent of zipfian key popularity (YCSB's 0.99).
pub const DEFAULT_ZIPF_S: f64 = 0.99;
/// Default `--max-levels` (L0 plus six), sievedb's default.
pub const DEFAULT_MAX_LEVELS: usize = 7;
/// Default `--breakdown-every`.
pub const DEFAULT_BREAKDOWN_EVERY: u32 = 8;
/// Default `--level1-size` (bytes), the engines' usual 10 MiB.
pub const DEFAULT_LEVEL1_SIZE: u64 = 10 << 20;
/// Default `--sample-interval-ms`.
pub const DEFAULT_SAMPLE_INTERVAL_MS: u64 = 100;
/// Data block size of every engine.
pub const BLOCK_SIZE: usize = 4096;
/// Table files every engine keeps open.
pub const MAX_OPEN_FILES: usize = 1000;

/// Which engine(s) to benchmark.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EngineChoice {
    /// sievedb only.
    Sievedb,
    /// LevelDB only (needs feature `leveldb`).
    Leveldb,
    /// RocksDB only (needs feature `rocksdb`).
    Rocksdb,
    /// fjall only (needs feature `fjall`).
    Fjall,
    /// Every engine built into this binary (sievedb first), interleaved per repeat.
    All,
}

/// Compaction style of sievedb.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum CompactionStyleArg {
    /// One sorted run per level.
    Leveling,
    /// Up to size-ratio runs per level.
    Tiering,
}

impl From<CompactionStyleArg> for sievedb::CompactionStyle {
    fn from(c: CompactionStyleArg) -> Self {
        match c {
            CompactionStyleArg::Leveling => sievedb::CompactionStyle::Leveling,
            CompactionStyleArg::Tiering => sievedb::CompactionStyle::Tiering,
        }
    }
}

/// Flags of the benchmark (db_bench names).
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct BenchArgs {
    /// Directory for the databases: each engine uses `DIR/<engine>` (default: a fresh
    /// temporary directory per engine, deleted afterwards)
    #[arg(long, value_name = "DIR")]
    pub db: Option<PathBuf>,
    /// Comma-separated benchmarks, run in order (listed with a description
    /// under "Benchmarks" below)
    #[arg(long, value_name = "LIST", default_value = DEFAULT_BENCHMARKS)]
    pub benchmarks: String,
    /// Engine(s) to benchmark; leveldb, rocksdb and fjall need a build with the
    /// cargo feature of that name; all = every engine built into this binary
    #[arg(long, value_enum, default_value_t = EngineChoice::Sievedb)]
    pub engine: EngineChoice,
    /// Entries written by each fill benchmark
    #[arg(long, value_name = "N", default_value_t = DEFAULT_NUM)]
    pub num: u64,
    /// Lookups of each read benchmark (all threads together)
    #[arg(long, value_name = "N", default_value_t = DEFAULT_READS)]
    pub reads: u64,
    /// Key size in bytes (zero-padded decimal index plus a marker byte)
    #[arg(long, value_name = "B", default_value_t = DEFAULT_KEY_SIZE)]
    pub key_size: usize,
    /// Value size in bytes (pseudo-random, incompressible)
    #[arg(long, value_name = "B", default_value_t = DEFAULT_VALUE_SIZE)]
    pub value_size: usize,
    /// Size ratio between levels (LevelDB's is fixed at 10)
    #[arg(long, value_name = "T", default_value_t = DEFAULT_SIZE_RATIO)]
    pub size_ratio: usize,
    /// Capacity of level 1 in bytes (level i holds level1-size · T^(i-1)); small
    /// values build deep trees from little data (LevelDB's is fixed)
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_LEVEL1_SIZE)]
    pub level1_size: u64,
    /// Levels including L0 (sievedb only); raise it to read bulk-loaded trees
    /// deeper than 6 levels
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_LEVELS)]
    pub max_levels: usize,
    /// Memtable size in bytes, the same for every engine
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_WRITE_BUFFER_SIZE)]
    pub write_buffer_size: usize,
    /// Table file size in bytes, the same for every engine
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_TARGET_FILE_SIZE)]
    pub target_file_size: u64,
    /// Block cache size in bytes, the same for every engine
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_BLOCK_CACHE_SIZE)]
    pub block_cache_size: u64,
    /// Compaction style (sievedb only; the baselines always level)
    #[arg(long, value_enum, default_value_t = CompactionStyleArg::Leveling)]
    pub compaction_style: CompactionStyleArg,
    /// Do not empty the database: skip the fill benchmarks and read the existing
    /// database in --db (fill it first with the same --num, --key-size, --value-size)
    #[arg(long)]
    pub use_existing_db: bool,
    /// Threads for the read benchmarks (writes always use one thread)
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub threads: usize,
    /// Seed of the random key orders
    #[arg(long, value_name = "S", default_value_t = DEFAULT_SEED)]
    pub seed: u64,
    /// Popularity of the keys the read benchmarks look up: uniform, zipfian
    /// (rank r drawn with probability ∝ 1/r^s, ranks scattered over the key
    /// space) or latest (YCSB-D: zipfian over recency, the last written keys
    /// hottest)
    #[arg(long, value_enum, default_value_t = KeyDistribution::Uniform)]
    pub distribution: KeyDistribution,
    /// Exponent s of --distribution zipfian and latest
    #[arg(long, value_name = "S", default_value_t = DEFAULT_ZIPF_S)]
    pub zipf_s: f64,
    /// Move the hot keys every N lookups (per reader thread): each phase adds
    /// ⌊0.382·num⌋ to every key index drawn (mod num), so the popular keys of
    /// the next phase live in other files; with --distribution zipfian or latest
    #[arg(long, value_name = "N")]
    pub hot_shift_every: Option<u64>,
    /// Repeat the whole benchmark list N times (engines interleaved per repeat) and
    /// report medians
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub repeats: usize,
    /// Print one JSON object per line instead of text
    #[arg(long)]
    pub json: bool,
    /// Print a progress line to stderr every SECS seconds while a benchmark
    /// runs (ops done, ops/s in the interval and overall; db_bench's
    /// --stats_interval_seconds). 0 = none: a progress bar when stderr is a
    /// terminal, else no progress output
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub stats_interval: u64,
    /// The filter flags, shared with `sievedb bulkload`.
    #[command(flatten)]
    pub filters: FilterArgs,
    /// Time one lookup in N phase by phase and report breakdown_ns
    /// {hash, filter, index, data, other} per lookup (sievedb)
    #[arg(long)]
    pub breakdown: bool,
    /// With --breakdown, time one lookup in this many
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BREAKDOWN_EVERY)]
    pub breakdown_every: u32,
    /// readwhilewriting: read for SECS seconds instead of --reads lookups
    /// (0 = until --reads lookups are done)
    #[arg(long, value_name = "SECS", default_value_t = 0)]
    pub duration: u64,
    /// readwhilewriting: snapshot sievedb's statistics every MS milliseconds
    /// for the peak filter memory (filter_memory_max_bytes,
    /// filter_memory_max_over_budget_bytes); 0 = no sampling
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_SAMPLE_INTERVAL_MS)]
    pub sample_interval_ms: u64,
    /// Fraction of readmixed lookups that hit existing keys (0..=1)
    #[arg(long, value_name = "A", default_value_t = 0.5)]
    pub alpha: f64,
    /// Read table files with O_DIRECT, bypassing the page cache (sievedb and
    /// RocksDB; LevelDB and fjall ignore it and say so in their settings). Fails
    /// at open when the file system of --db refuses O_DIRECT
    #[arg(long)]
    pub use_direct_reads: bool,
    /// sievedb: read table files through a read-only memory map
    /// (`Options::use_mmap_reads`; --use-direct-reads takes precedence). The
    /// baselines keep their own file access (listed in their settings)
    #[arg(long, value_name = "BOOL", default_value_t = sievedb::Options::default().use_mmap_reads,
          action = clap::ArgAction::Set)]
    pub mmap_reads: bool,
    /// Block compression of every level (sievedb only; the baselines keep theirs
    /// off): none, lz4, zstd (level 3) or zstd:LEVEL
    #[arg(long, value_name = "C", default_value = "none", value_parser = parse_compression)]
    pub compression: Compression,
    /// Values compress to about this fraction of their size (db_bench's
    /// --compression_ratio); 1 = incompressible random bytes
    #[arg(long, value_name = "R", default_value_t = 1.0)]
    pub compression_ratio: f64,
    /// Emulated device latency (sievedb only): busy-wait N ns on every data block
    /// read from a file, i.e. every block-cache miss (e.g. 70 for NVM, 10000 for a
    /// PCIe SSD, 113000 for a SATA SSD); counted in the breakdown's data phase
    #[arg(long, value_name = "NS", default_value_t = 0)]
    pub io_delay_ns: u64,
    /// Bytes of table metadata (indexes, properties, filter indexes) sievedb
    /// keeps past its open files (`Options::table_meta_cache_capacity`; 0:
    /// read again at every table-cache miss, as LevelDB does)
    #[arg(long, value_name = "BYTES",
          default_value_t = sievedb::Options::default().table_meta_cache_capacity)]
    pub table_meta_cache_size: u64,
}

impl Default for BenchArgs {
    fn default() -> Self {
        BenchArgs {
            db: None,
            benchmarks: DEFAULT_BENCHMARKS.to_string(),
            engine: EngineChoice::Sievedb,
            num: DEFAULT_NUM,
            reads: DEFAULT_READS,
            key_size: DEFAULT_KEY_SIZE,
            value_size: DEFAULT_VALUE_SIZE,
            size_ratio: DEFAULT_SIZE_RATIO,
            level1_size: DEFAULT_LEVEL1_SIZE,
            max_levels: DEFAULT_MAX_LEVELS,
            write_buffer_size: DEFAULT_WRITE_BUFFER_SIZE,
            target_file_size: DEFAULT_TARGET_FILE_SIZE,
            block_cache_size: DEFAULT_BLOCK_CACHE_SIZE,
            compaction_style: CompactionStyleArg::Leveling,
            use_existing_db: false,
            threads: 1,
            seed: DEFAULT_SEED,
            distribution: KeyDistribution::Uniform,
            zipf_s: DEFAULT_ZIPF_S,
            hot_shift_every: None,
            repeats: 1,
            json: false,
            stats_interval: 0,
            filters: FilterArgs::default(),
            breakdown: false,
            breakdown_every: DEFAULT_BREAKDOWN_EVERY,
            duration: 0,
            sample_interval_ms: DEFAULT_SAMPLE_INTERVAL_MS,
            alpha: 0.5,
            use_direct_reads: false,
            mmap_reads: sievedb::Options::default().use_mmap_reads,
            io_delay_ns: 0,
            table_meta_cache_size: sievedb::Options::default().table_meta_cache_capacity,
            compression: Compression::None,
            compression_ratio: 1.0,
        }
    }
}

/// Parses `--compression` with sievedb's names (`none`, `lz4`, `zstd`, `zstd:LEVEL`).
fn parse_compression(s: &str) -> Result<Compression, String> {
    s.parse().map_err(|e: sievedb::Error| e.to_string())
}

impl BenchArgs {
    /// The engines selected by `--engine`, or an error if one is not built in.
    pub fn engines(&self) -> Result<Vec<EngineKind>, String> {
        let kind = match self.engine {
            EngineChoice::Sievedb => EngineKind::Sievedb,
            EngineChoice::Leveldb => EngineKind::Leveldb,
            EngineChoice::Rocksdb => EngineKind::Rocksdb,
            EngineChoice::Fjall => EngineKind::Fjall,
            EngineChoice::All => return Ok(EngineKind::built()),
        };
        if !kind.available() {
            return Err(kind.not_built());
        }
        Ok(vec![kind])
    }

    /// The engine settings these flags ask for.
    pub fn engine_config(&self) -> EngineConfig {
        EngineConfig {
            write_buffer_size: self.write_buffer_size,
            bits_per_key: self.filters.bits_per_key,
            block_cache_size: self.block_cache_size,
            target_file_size: self.target_file_size,
            size_ratio: self.size_ratio,
            level1_size: self.level1_size,
            max_levels: self.max_levels,
            compaction_style: self.compaction_style.into(),
            block_size: BLOCK_SIZE,
            max_open_files: MAX_OPEN_FILES,
            filters: self.filters.clone(),
            lookup_breakdown_every: if self.breakdown {
                self.breakdown_every
            } else {
                0
            },
            use_direct_reads: self.use_direct_reads,
            use_mmap_reads: self.mmap_reads,
            io_delay_ns: self.io_delay_ns,
            table_meta_cache_size: self.table_meta_cache_size,
            compression: self.compression,
        }
    }

    /// The sievedb filter settings these flags ask for.
    pub fn filter_options(&self) -> FilterOptions {
        self.filters.filter_options()
    }

    fn validate(&self) -> Result<(), String> {
        if self.num == 0 {
            return Err("--num must be at least 1".into());
        }
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        if self.repeats == 0 {
            return Err("--repeats must be at least 1".into());
        }
        if !(self.compression_ratio > 0.0 && self.compression_ratio <= 1.0) {
            return Err("--compression-ratio must be in (0, 1]".into());
        }
        if self.use_existing_db && self.db.is_none() {
            return Err("--use-existing-db needs --db DIR".into());
        }
        if !(0.0..=1.0).contains(&self.alpha) {
            return Err("--alpha must be between 0 and 1".into());
        }
        if !(self.zipf_s.is_finite() && self.zipf_s > 0.0) {
            return Err("--zipf-s must be above 0".into());
        }
        if self.hot_shift_every == Some(0) {
            return Err("--hot-shift-every must be at least 1".into());
        }
        if self.breakdown && self.breakdown_every == 0 {
            return Err("--breakdown-every must be at least 1".into());
        }
        self.filters.validate()
    }
}

/// Runs the benchmarks selected by `args` and prints the report to stdout.
pub fn run(args: &BenchArgs) -> Result<(), Box<dyn std::error::Error>> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    run_with_output(args, &mut out)
}

/// Like [`run`], writing the report to `out` (progress bars still go to stderr
/// when it is a terminal).
pub fn run_with_output(
    args: &BenchArgs,
    out: &mut dyn Write,
) -> Result<(), Box<dyn std::error::Error>> {
    execute(args, out)
        .map(drop)
        .map_err(|e| -> Box<dyn std::error::Error> { e })
}

/// Runs the benchmarks selected by `args` without printing a report and
/// returns every measured [`Record`] (per engine, benchmark and repeat), for
/// callers that post-process results (the experiments). Progress bars still
/// go to stderr when it is a terminal.
pub fn run_records(args: &BenchArgs) -> EngineResult<Vec<Record>> {
    execute(args, &mut std::io::sink())
}

/// Where one engine's database lives during one repeat.
struct DbLocation {
    path: PathBuf,
    /// Keeps a temporary directory alive (and deletes it on drop).
    _temp: Option<tempfile::TempDir>,
}

impl DbLocation {
    fn new(args: &BenchArgs, kind: EngineKind) -> EngineResult<Self> {
        match &args.db {
            Some(dir) => {
                // LevelDB and RocksDB create only the last component of a
                // path: make `DIR` itself, as sievedb would.
                std::fs::create_dir_all(dir).map_err(|e| format!("--db {}: {e}", dir.display()))?;
                Ok(DbLocation {
                    path: dir.join(kind.name()),
                    _temp: None,
                })
            }
            None => {
                let temp = tempfile::Builder::new()
                    .prefix(&format!("sievedb-bench-{}-", kind.name()))
                    .tempdir()?;
                Ok(DbLocation {
                    path: temp.path().join(kind.name()),
                    _temp: Some(temp),
                })
            }
        }
    }
}

/// Deletes the database at `path`, refusing to touch a non-empty directory that
/// does not look like a database (see [`engines::looks_like_db`]).
fn destroy_db(path: &Path) -> EngineResult<()> {
    let meta = match std::fs::symlink_metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    if !meta.is_dir() {
        return Err(format!("{} exists and is not a directory", path.display()).into());
    }
    let empty = std::fs::read_dir(path)?.next().is_none();
    if !empty && !engines::looks_like_db(path) {
        return Err(format!(
            "refusing to empty {}: it is not empty and does not look like a database",
            path.display()
        )
        .into());
    }
    std::fs::remove_dir_all(path)?;
    Ok(())
}

/// Fails when the database of `engine` holds none of the keys 0, N/2 and
/// N−1 of the workload (N = `--num`): empty, or filled with other
/// `--num`/`--key-size`. A read benchmark there would measure nothing. Three
/// lookups, before the benchmark's statistics are taken.
fn refuse_if_empty(
    engine: &dyn engines::Engine,
    bench: Benchmark,
    w: &Workload,
    path: &Path,
) -> EngineResult<()> {
    let mut key = vec![0u8; w.keys.key_size()];
    for i in [0, w.num / 2, w.num.saturating_sub(1)] {
        w.keys.fill(&mut key, i, false);
        if engine.get_len(&key)?.is_some() {
            return Ok(());
        }
    }
    Err(format!(
        "{}: database {} is empty (none of the keys 0, {}, {} of --num {} is there): run \
         fillseq or fillrandom first (e.g. --benchmarks fillrandom,{}), or use \
         --use-existing-db --db DIR with a database loaded with the same --num and --key-size",
        bench.name(),
        path.display(),
        w.num / 2,
        w.num.saturating_sub(1),
        w.num,
        bench.name()
    )
    .into())
}

/// `clap` command `cmd` (the `bench` subcommand) with the list of
/// benchmarks and their descriptions after its flags in `--help`: the list
/// is [`Benchmark::help_list`], built from the table `--benchmarks` is
/// parsed with, so it cannot drift from what runs.
pub fn with_benchmark_list(cmd: clap::Command) -> clap::Command {
    cmd.after_help(Benchmark::help_list())
}

/// `N * model` of this machine's CPU, from /proc/cpuinfo when available.
pub(crate) fn cpu_description() -> String {
    let n = std::thread::available_parallelism().map_or(1, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, m)| m.trim().to_string())
        })
        .unwrap_or_else(|| "unknown model".into());
    format!("{n} * {model}")
}

fn write_header(
    out: &mut dyn Write,
    args: &BenchArgs,
    benches: &[Benchmark],
    kinds: &[EngineKind],
) -> std::io::Result<()> {
    let raw = (args.key_size + args.value_size) as f64 * args.num as f64 / 1048576.0;
    let names: Vec<&str> = benches.iter().map(|b| b.name()).collect();
    let engines: Vec<&str> = kinds.iter().map(|k| k.name()).collect();
    writeln!(out, "Engines:    {}", engines.join(", "))?;
    writeln!(
        out,
        "Keys:       {} bytes each (zero-padded decimal index + marker byte)",
        args.key_size
    )?;
    writeln!(
        out,
        "Values:     {} bytes each (pseudo-random, compressible to {:.2}; compression {})",
        args.value_size, args.compression_ratio, args.compression
    )?;
    writeln!(out, "Entries:    {}", args.num)?;
    writeln!(
        out,
        "Reads:      {} per read benchmark, {} thread(s)",
        args.reads, args.threads
    )?;
    writeln!(out, "RawSize:    {raw:.1} MB (estimated)")?;
    writeln!(out, "CPU:        {}", cpu_description())?;
    writeln!(out, "Benchmarks: {}", names.join(","))?;
    writeln!(out, "Repeats:    {}", args.repeats)?;
    match &args.db {
        Some(d) => writeln!(out, "Database:   {}/<engine>", d.display())?,
        None => writeln!(
            out,
            "Database:   fresh temporary directory per engine and repeat"
        )?,
    }
    writeln!(out, "------------------------------------------------")
}

fn write_settings(
    out: &mut dyn Write,
    name: &str,
    settings: &serde_json::Value,
) -> std::io::Result<()> {
    writeln!(out, "{name} settings:")?;
    if let Some(map) = settings.as_object() {
        for (k, v) in map {
            let shown = match v {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            writeln!(out, "  {k:<20} {shown}")?;
        }
    }
    Ok(())
}

fn execute(args: &BenchArgs, out: &mut dyn Write) -> EngineResult<Vec<Record>> {
    args.validate()?;
    let kinds = args.engines()?;
    let benches = Benchmark::parse_list(&args.benchmarks)?;
    let keys = KeyGen::new(args.key_size, args.num)?;
    let workload = Workload {
        keys,
        values: Arc::new(ValueGen::with_compression_ratio(
            args.value_size,
            args.seed,
            args.compression_ratio,
        )),
        num: args.num,
        reads: args.reads,
        threads: args.threads,
        seed: args.seed,
        progress: progress::ProgressMode::choose(
            args.stats_interval,
            std::io::stderr().is_terminal(),
        ),
        alpha: args.alpha,
        filter: args.filter_options(),
        distribution: args.distribution,
        zipf_s: args.zipf_s,
        hot_shift_every: args.hot_shift_every,
        duration: (args.duration > 0).then(|| std::time::Duration::from_secs(args.duration)),
        sample_interval: (args.sample_interval_ms > 0)
            .then(|| std::time::Duration::from_millis(args.sample_interval_ms)),
    };
    let cfg = args.engine_config();
    let prefix = kinds.len() > 1 || args.repeats > 1;

    if !args.json {
        write_header(out, args, &benches, &kinds)?;
    }
    let mut records: Vec<Record> = Vec::new();
    let mut settings_shown = vec![false; kinds.len()];
    for rep in 1..=args.repeats {
        // Alternate which engine goes first, so neither always runs on a "cold" machine.
        let mut order: Vec<usize> = (0..kinds.len()).collect();
        if rep % 2 == 0 {
            order.reverse();
        }
        for idx in order {
            let kind = kinds[idx];
            let loc = DbLocation::new(args, kind)?;
            if !args.use_existing_db {
                destroy_db(&loc.path)?;
            }
            let mut engine = kind.open(&loc.path, &cfg)?;
            let settings = engine.settings();
            if !args.json && !settings_shown[idx] {
                write_settings(out, kind.name(), &settings)?;
                writeln!(out, "------------------------------------------------")?;
                settings_shown[idx] = true;
            }
            let mut fresh = true;
            // Whether the database is known to hold entries (a fill ran, or a probe found some).
            let mut has_data = false;
            for &bench in &benches {
                if bench.is_sievedb_only() && kind != EngineKind::Sievedb {
                    continue; // sievedb's own filters, measured once per repeat
                }
                if bench.needs_merge() && !engine.supports_merge() {
                    let reason = format!("{} has no merge operator", kind.name());
                    if args.json {
                        let line = serde_json::json!({"type": "skipped", "engine": kind.name(),
                            "benchmark": bench.name(), "repeat": rep, "reason": reason});
                        writeln!(out, "{line}")?;
                    } else {
                        let who = if prefix {
                            format!("{:<8} #{:<2} ", kind.name(), rep)
                        } else {
                            String::new()
                        };
                        writeln!(out, "{who}{:<12} : skipped ({reason})", bench.name())?;
                    }
                    continue;
                }
                if bench.is_fill() {
                    if args.use_existing_db {
                        if args.json {
                            let line = serde_json::json!({"type": "skipped", "engine": kind.name(),
                                "benchmark": bench.name(), "repeat": rep,
                                "reason": "--use-existing-db"});
                            writeln!(out, "{line}")?;
                        } else {
                            writeln!(out, "{:<12} : skipped (--use-existing-db)", bench.name())?;
                        }
                        continue;
                    }
                    if !fresh {
                        drop(engine);
                        destroy_db(&loc.path)?;
                        engine = kind.open(&loc.path, &cfg)?;
                    }
                    fresh = false;
                }
                if bench.needs_data() && !has_data {
                    refuse_if_empty(engine.as_ref(), bench, &workload, &loc.path)?;
                }
                has_data |= bench.is_fill() || bench.needs_data();
                // Merges write: a later fill starts on an emptied database again.
                fresh &= !bench.needs_merge();
                let before = engine.stats();
                let m = bench::run_benchmark(&engine, bench, &workload)?;
                let stats = match (before, engine.stats()) {
                    (Some(b), Some(a)) => Some(a.delta_since(&b)),
                    _ => None,
                };
                let rec = Record {
                    engine: kind.name(),
                    benchmark: bench,
                    repeat: rep,
                    m,
                    bytes_per_op: bench.bytes_per_op(args.key_size, args.value_size),
                    settings: settings.clone(),
                    stats,
                    files_per_level: engine.files_per_level(),
                };
                if args.json {
                    writeln!(out, "{}", rec.to_json())?;
                } else {
                    writeln!(out, "{}", rec.text_line(prefix))?;
                }
                out.flush()?;
                records.push(rec);
            }
            drop(engine);
        }
    }

    if prefix {
        let names: Vec<&'static str> = kinds.iter().map(|k| k.name()).collect();
        let rows: Vec<MedianRow> = report::medians(&records, &names, &benches);
        if args.json {
            for row in &rows {
                writeln!(out, "{}", row.to_json())?;
            }
        } else if !rows.is_empty() {
            writeln!(out, "------------------------------------------------")?;
            writeln!(out, "{}", report::median_header(args.repeats))?;
            for row in &rows {
                writeln!(out, "{}", row.text_line())?;
            }
        }
    }
    out.flush()?;
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use sievedb::{FilterLayout, HashFn, HashSharing, IndexScheme};

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        args: BenchArgs,
    }

    #[test]
    fn clap_defaults_match_default_impl() {
        let parsed = Cli::try_parse_from(["bench"]).unwrap().args;
        assert_eq!(parsed, BenchArgs::default());
        let d = BenchArgs::default();
        assert_eq!(d.num, 200_000);
        assert_eq!(d.reads, 100_000);
        assert_eq!(d.key_size, 16);
        assert_eq!(d.value_size, 100);
        assert_eq!(d.filters.bits_per_key, 10.0);
        assert_eq!(d.write_buffer_size, 4 << 20);
        assert_eq!(d.seed, 301);
        assert_eq!(d.repeats, 1);
        assert_eq!(d.engine, EngineChoice::Sievedb);
        assert!(!d.use_direct_reads);
        assert_eq!(d.mmap_reads, sievedb::Options::default().use_mmap_reads);
        assert_eq!(d.io_delay_ns, 0);
        assert_eq!(
            Benchmark::parse_list(&d.benchmarks).unwrap(),
            Benchmark::ALL[..6]
                .iter()
                .copied()
                .filter(|b| *b != Benchmark::ReadMixed)
                .collect::<Vec<_>>()
        );
        assert_eq!(d.filter_options(), sievedb::FilterOptions::default());
    }

    #[test]
    fn parses_db_bench_flags() {
        let a = Cli::try_parse_from([
            "bench",
            "--db",
            "/tmp/x",
            "--benchmarks",
            "fillrandom,readrandom",
            "--num",
            "10",
            "--reads",
            "5",
            "--key-size",
            "24",
            "--value-size",
            "8",
            "--bits-per-key",
            "5.5",
            "--size-ratio",
            "4",
            "--write-buffer-size",
            "65536",
            "--target-file-size",
            "65536",
            "--block-cache-size",
            "0",
            "--compaction-style",
            "tiering",
            "--use-existing-db",
            "--threads",
            "2",
            "--seed",
            "7",
            "--json",
            "--engine",
            "all",
            "--repeats",
            "3",
            "--use-direct-reads",
            "--io-delay-ns",
            "10000",
        ])
        .unwrap()
        .args;
        assert!(a.use_direct_reads);
        assert_eq!(a.io_delay_ns, 10_000);
        for (flag, on) in [("false", false), ("true", true)] {
            let m = Cli::try_parse_from(["bench", "--mmap-reads", flag])
                .unwrap()
                .args;
            assert_eq!((m.mmap_reads, m.engine_config().use_mmap_reads), (on, on));
        }
        assert!(Cli::try_parse_from(["bench", "--mmap-reads", "maybe"]).is_err());
        assert_eq!(
            (a.compression, a.compression_ratio),
            (Compression::None, 1.0)
        );
        let c = Cli::try_parse_from([
            "bench",
            "--compression",
            "zstd:5",
            "--compression-ratio",
            "0.5",
        ])
        .unwrap()
        .args;
        assert_eq!(
            (c.compression, c.compression_ratio),
            (Compression::Zstd(5), 0.5)
        );
        assert_eq!(c.engine_config().compression, Compression::Zstd(5));
        assert!(c.validate().is_ok());
        assert!(Cli::try_parse_from(["bench", "--compression", "snappy"]).is_err());
        let bad = BenchArgs {
            compression_ratio: 0.0,
            ..BenchArgs::default()
        };
        assert!(bad.validate().is_err());
        let d = BenchArgs::default();
        assert_eq!((d.duration, d.sample_interval_ms), (0, 100));
        let a2 = Cli::try_parse_from([
            "bench",
            "--benchmarks",
            "readwhilewriting,ycsba,ycsbb",
            "--duration",
            "60",
            "--sample-interval-ms",
            "0",
        ])
        .unwrap()
        .args;
        assert_eq!((a2.duration, a2.sample_interval_ms), (60, 0));
        assert_eq!(Benchmark::parse_list(&a2.benchmarks).unwrap().len(), 3);
        let cfg = a.engine_config();
        assert!(cfg.use_direct_reads);
        assert_eq!(cfg.io_delay_ns, 10_000);
        assert_eq!(a.db.as_deref(), Some(Path::new("/tmp/x")));
        assert_eq!(a.compaction_style, CompactionStyleArg::Tiering);
        assert_eq!(a.engine, EngineChoice::All);
        assert!(a.use_existing_db && a.json);
        assert_eq!((a.threads, a.seed, a.repeats), (2, 7, 3));
        assert!(Cli::try_parse_from(["bench", "--engine", "nope"]).is_err());
        for (name, choice) in [
            ("rocksdb", EngineChoice::Rocksdb),
            ("fjall", EngineChoice::Fjall),
        ] {
            let a = Cli::try_parse_from(["bench", "--engine", name])
                .unwrap()
                .args;
            assert_eq!(a.engine, choice);
        }
    }

    #[test]
    fn rejects_bad_arguments() {
        let bad = |f: fn(&mut BenchArgs)| {
            let mut a = BenchArgs::default();
            f(&mut a);
            run_with_output(&a, &mut Vec::new())
                .unwrap_err()
                .to_string()
        };
        assert!(bad(|a| a.threads = 0).contains("--threads"));
        assert!(bad(|a| a.use_existing_db = true).contains("--db"));
        assert!(bad(|a| a.benchmarks = "nope".into()).contains("unknown benchmark"));
        assert!(bad(|a| a.key_size = 3).contains("--key-size"));
        assert!(bad(|a| a.alpha = 1.5).contains("--alpha"));
        assert!(bad(|a| a.filters.filter_units = 0).contains("units"));
        assert!(Cli::try_parse_from(["bench", "--hash", "blake3"]).is_err());
        let a = Cli::try_parse_from([
            "bench",
            "--hash",
            "xxh3",
            "--index-scheme",
            "enhanced-double",
            "--filter",
            "units",
            "--filter-units",
            "4",
            "--hash-sharing",
            "filter",
            "--memtable-filter",
            "--breakdown",
            "--alpha",
            "0.25",
        ])
        .unwrap()
        .args;
        let f = a.filter_options();
        assert_eq!(
            (
                f.hash,
                f.scheme,
                f.layout,
                f.units,
                f.sharing,
                f.memtable_filter
            ),
            (
                HashFn::Xxh3,
                IndexScheme::EnhancedDouble,
                FilterLayout::Units,
                4,
                HashSharing::Filter,
                true
            )
        );
        assert_eq!(a.engine_config().lookup_breakdown_every, 8);
        assert_eq!(a.alpha, 0.25);
    }

    #[test]
    fn engines_not_built_in_are_clear_errors() {
        for (choice, kind, package) in [
            (EngineChoice::Leveldb, EngineKind::Leveldb, "libleveldb-dev"),
            (EngineChoice::Rocksdb, EngineKind::Rocksdb, "librocksdb-dev"),
            (EngineChoice::Fjall, EngineKind::Fjall, "no system package"),
        ] {
            let a = BenchArgs {
                engine: choice,
                ..BenchArgs::default()
            };
            if kind.available() {
                assert_eq!(a.engines().unwrap(), vec![kind]);
                continue;
            }
            let msg = run_with_output(&a, &mut Vec::new())
                .unwrap_err()
                .to_string();
            let feature = format!("--features {}", kind.name());
            assert!(msg.contains(&feature) && msg.contains(package), "{msg}");
        }
    }

    #[test]
    fn all_is_every_built_engine_sievedb_first() {
        let a = BenchArgs {
            engine: EngineChoice::All,
            ..BenchArgs::default()
        };
        let kinds = a.engines().unwrap();
        assert_eq!(kinds[0], EngineKind::Sievedb);
        let expected: Vec<EngineKind> = EngineKind::ALL
            .into_iter()
            .filter(|k| match k {
                EngineKind::Sievedb => true,
                EngineKind::Leveldb => cfg!(feature = "leveldb"),
                EngineKind::Rocksdb => cfg!(feature = "rocksdb"),
                EngineKind::Fjall => cfg!(feature = "fjall"),
            })
            .collect();
        assert_eq!(kinds, expected);
    }

    #[test]
    fn refuses_to_empty_foreign_directories() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("sievedb");
        std::fs::create_dir(&p).unwrap();
        std::fs::write(p.join("precious.txt"), b"x").unwrap();
        assert!(destroy_db(&p).is_err());
        assert!(p.join("precious.txt").exists());
        std::fs::write(p.join("CURRENT"), b"MANIFEST-000001\n").unwrap();
        destroy_db(&p).unwrap();
        assert!(!p.exists());
        destroy_db(&p).unwrap(); // missing is fine
    }
}
