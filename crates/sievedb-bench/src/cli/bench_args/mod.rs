//! The flags of `sievedb bench` ([`BenchArgs`], db_bench names), their
//! defaults, and what they select: the engines and the engine settings.

use crate::bench::page_cache::PageCacheMode;
use crate::bench::{
    Benchmark, KeyDistribution, DEFAULT_HOT_DATA_FRACTION, DEFAULT_HOT_OP_FRACTION,
};
use crate::cli::txn_args::TxnArgs;
use crate::engines::{EngineConfig, EngineKind};
use crate::FilterArgs;
use sievedb::{Compression, FilterOptions};
use std::path::PathBuf;

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
/// Smallest `--page-cache-limit` (1 MiB).
pub const MIN_PAGE_CACHE_LIMIT: u64 = 1 << 20;
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
    /// space), latest (YCSB-D: zipfian over recency, the last written keys
    /// hottest) or hotspot (YCSB's: --hot-op-fraction of the lookups go
    /// uniformly to a contiguous --hot-data-fraction of the keys)
    #[arg(long, value_enum, default_value_t = KeyDistribution::Uniform)]
    pub distribution: KeyDistribution,
    /// Exponent s of --distribution zipfian and latest
    #[arg(long, value_name = "S", default_value_t = DEFAULT_ZIPF_S)]
    pub zipf_s: f64,
    /// Move the hot keys every N lookups (per reader thread): each phase adds
    /// ⌊0.382·num⌋ to every key index drawn (mod num), so the popular keys of
    /// the next phase live in other files; with --distribution zipfian, latest or
    /// hotspot
    #[arg(long, value_name = "N")]
    pub hot_shift_every: Option<u64>,
    /// Share of the key indices in the hot range of --distribution hotspot
    #[arg(long, value_name = "F", default_value_t = DEFAULT_HOT_DATA_FRACTION)]
    pub hot_data_fraction: f64,
    /// Share of the lookups that go to the hot range of --distribution hotspot
    #[arg(long, value_name = "F", default_value_t = DEFAULT_HOT_OP_FRACTION)]
    pub hot_op_fraction: f64,
    /// A fixed-length prefix extractor of N bytes: sievedb's
    /// `Options::prefix_extractor` (prefix filters per file and memtable) and
    /// RocksDB's (prefix Bloom in its table filters and memtable); the seek
    /// benchmarks then keep to the target's prefix (`prefix_same_as_start`)
    #[arg(long, value_name = "N")]
    pub prefix_len: Option<usize>,
    /// Keys come in groups of K sharing their first --prefix-len bytes (half
    /// the key size without it), so that `seekmissing` seeks to prefixes
    /// never written; 0 = the plain layout
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub keys_per_prefix: u64,
    /// next() steps after each seek of `seekrandom` and `seekmissing`
    /// (db_bench's --seek_nexts)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seek_nexts: usize,
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
    /// The flags of the transactional benchmarks (`--txn-*`).
    #[command(flatten)]
    pub txn: TxnArgs,
    /// Time one lookup in N phase by phase and report breakdown_ns
    /// {hash, filter, index, data, other} per lookup (sievedb)
    #[arg(long)]
    pub breakdown: bool,
    /// With --breakdown, time one lookup in this many
    #[arg(long, value_name = "N", default_value_t = DEFAULT_BREAKDOWN_EVERY)]
    pub breakdown_every: u32,
    /// readwhilewriting: read for SECS seconds instead of --reads lookups;
    /// txnrandom, txnrandomhot: run transactions for SECS seconds instead of
    /// committing --reads of them (0 = until --reads are done)
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
    /// Make every write durable before it returns (db_bench's --sync): each
    /// put or batch waits for an fsync of the WAL (fjall: of its journal)
    #[arg(long)]
    pub sync: bool,
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
    /// Table files each engine keeps open (db_bench's `--open_files`;
    /// sievedb's `Options::max_open_files`, at least 16; LevelDB clamps it
    /// into 74..=50000). A tree of more files than this reopens tables on
    /// table-cache misses, and the results count what those opens read
    #[arg(long, value_name = "N", default_value_t = MAX_OPEN_FILES)]
    pub max_open_files: usize,
    /// Bytes of table metadata (indexes, properties, filter indexes) sievedb
    /// keeps past its open files (`Options::table_meta_cache_capacity`; 0:
    /// read again at every table-cache miss, as LevelDB does)
    #[arg(long, value_name = "BYTES",
          default_value_t = sievedb::Options::default().table_meta_cache_capacity)]
    pub table_meta_cache_size: u64,
    /// Spread the keys over N keyspaces: key (and mergerandom counter) i is
    /// written to and read from keyspace `ks{i mod N}` (sievedb's keyspaces,
    /// RocksDB's column families, fjall's keyspaces, each with the same
    /// settings; LevelDB has none and is skipped). 1 = the default keyspace only
    #[arg(long, value_name = "N", default_value_t = 1)]
    pub keyspaces: usize,
    /// Background threads for flushes and compactions (db_bench's
    /// `--max_background_jobs`): sievedb's `Options::background_threads`
    /// (one flushes, the rest compact), RocksDB's `max_background_jobs`,
    /// fjall's worker threads; LevelDB has one and ignores it
    #[arg(long, value_name = "N", default_value_t = crate::engines::DEFAULT_BACKGROUND_THREADS,
          value_parser = background_threads_parser())]
    pub background_threads: usize,
    /// Before each benchmark that reads (the lookups, readseq, the YCSB mixes),
    /// drop the page-cache pages of every file of the database with
    /// posix_fadvise(POSIX_FADV_DONTNEED), so its reads start cold. Pages that
    /// are dirty or mapped into the process (LevelDB's and sievedb's table maps)
    /// stay; the result's page_cache object reports what stayed (mincore)
    #[arg(long)]
    pub drop_caches: bool,
    /// --drop-caches, then run each read benchmark in a fresh memory cgroup
    /// (v2 if the memory controller is enabled for the bench's cgroup's
    /// children, else v1; needs root) limited to the memory charged to it at
    /// entry plus BYTES, so the page cache the reads bring in stays bounded
    /// (BYTES must also cover the heap the engine grows while reading). After
    /// the benchmark the process moves back and the cgroup's pages are
    /// reclaimed (mapped ones too) before it is removed. Without usable
    /// cgroups: a warning, the drop alone, and a page_cache.note in the result.
    /// Every result carries device_read_bytes (/proc/self/io) and
    /// device_read_requests (/proc/diskstats of the database's device, every
    /// process's requests), with or without these flags
    #[arg(long, value_name = "BYTES")]
    pub page_cache_limit: Option<u64>,
    /// Set the readahead (`queue/read_ahead_kb`) of the database's block
    /// device to KB for each benchmark that reads, and restore it after
    /// (needs root; on failure a warning, and the run goes on with the
    /// device's own). An engine reading through mmap (LevelDB) reads that
    /// much around every page fault; 16 KiB covers one of its blocks
    #[arg(long, value_name = "KB")]
    pub read_ahead_kb: Option<u64>,
    /// Also write every result as one CSV row to FILE (the JSON line's rate,
    /// device-read and page-cache fields)
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
}

/// The values `--background-threads` accepts (`bench` and `experiment`):
/// 1 (a flush thread must exist) to 64.
pub(crate) fn background_threads_parser() -> clap::builder::RangedU64ValueParser<usize> {
    clap::builder::RangedU64ValueParser::<usize>::new().range(1..=64)
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
            hot_data_fraction: DEFAULT_HOT_DATA_FRACTION,
            hot_op_fraction: DEFAULT_HOT_OP_FRACTION,
            prefix_len: None,
            keys_per_prefix: 0,
            seek_nexts: 0,
            repeats: 1,
            json: false,
            stats_interval: 0,
            filters: FilterArgs::default(),
            txn: TxnArgs::default(),
            breakdown: false,
            breakdown_every: DEFAULT_BREAKDOWN_EVERY,
            duration: 0,
            sample_interval_ms: DEFAULT_SAMPLE_INTERVAL_MS,
            alpha: 0.5,
            use_direct_reads: false,
            mmap_reads: sievedb::Options::default().use_mmap_reads,
            sync: false,
            io_delay_ns: 0,
            max_open_files: MAX_OPEN_FILES,
            table_meta_cache_size: sievedb::Options::default().table_meta_cache_capacity,
            compression: Compression::None,
            compression_ratio: 1.0,
            keyspaces: 1,
            background_threads: crate::engines::DEFAULT_BACKGROUND_THREADS,
            drop_caches: false,
            page_cache_limit: None,
            read_ahead_kb: None,
            csv: None,
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
            max_open_files: self.max_open_files,
            filters: self.filters.clone(),
            lookup_breakdown_every: if self.breakdown {
                self.breakdown_every
            } else {
                0
            },
            use_direct_reads: self.use_direct_reads,
            use_mmap_reads: self.mmap_reads,
            sync: self.sync,
            io_delay_ns: self.io_delay_ns,
            table_meta_cache_size: self.table_meta_cache_size,
            compression: self.compression,
            keyspaces: self.keyspaces,
            background_threads: self.background_threads,
            txn: self.runs_txn().then(|| self.txn.config()),
            prefix_len: self.prefix_len,
        }
    }

    /// Whether `--benchmarks` names a transactional benchmark, so that the
    /// baselines open their transactional databases.
    pub fn runs_txn(&self) -> bool {
        Benchmark::parse_list(&self.benchmarks).is_ok_and(|l| l.iter().any(|b| b.needs_txn()))
    }

    /// What `--drop-caches` and `--page-cache-limit` ask for.
    pub fn page_cache_mode(&self) -> PageCacheMode {
        match (self.page_cache_limit, self.drop_caches) {
            (Some(bytes), _) => PageCacheMode::Bounded(bytes),
            (None, true) => PageCacheMode::Drop,
            (None, false) => PageCacheMode::Keep,
        }
    }

    /// The sievedb filter settings these flags ask for.
    pub fn filter_options(&self) -> FilterOptions {
        self.filters.filter_options()
    }

    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.num == 0 {
            return Err("--num must be at least 1".into());
        }
        if self.threads == 0 {
            return Err("--threads must be at least 1".into());
        }
        if self.repeats == 0 {
            return Err("--repeats must be at least 1".into());
        }
        if self.keyspaces == 0 {
            return Err("--keyspaces must be at least 1".into());
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
        crate::workload::distribution::check_hotspot(self.hot_data_fraction, self.hot_op_fraction)?;
        if self.hot_shift_every == Some(0) {
            return Err("--hot-shift-every must be at least 1".into());
        }
        if self
            .page_cache_limit
            .is_some_and(|b| b < MIN_PAGE_CACHE_LIMIT)
        {
            return Err(format!(
                "--page-cache-limit must be at least {MIN_PAGE_CACHE_LIMIT} bytes (1 MiB): \
                 the bound covers the engine's heap growth too"
            ));
        }
        if self.breakdown && self.breakdown_every == 0 {
            return Err("--breakdown-every must be at least 1".into());
        }
        if self.runs_txn() {
            self.txn
                .validate(self.num, self.value_size, self.keyspaces)?;
        }
        self.filters.validate()
    }
}

/// `clap` command `cmd` (the `bench` subcommand) with the list of
/// benchmarks and their descriptions after its flags in `--help`: the list
/// is [`Benchmark::help_list`], built from the table `--benchmarks` is
/// parsed with, so it cannot drift from what runs.
pub fn with_benchmark_list(cmd: clap::Command) -> clap::Command {
    cmd.after_help(Benchmark::help_list())
}

#[cfg(test)]
mod tests;
