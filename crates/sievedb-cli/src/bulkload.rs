//! `sievedb bulkload`: builds a new database of full levels from generated
//! benchmark entries or a sorted input file; with `--engine rocksdb`, the
//! same generated entries in the same shape as a RocksDB database.

use std::error::Error;
use std::io::{self, BufRead, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use sievedb::bulk::{BulkLoad, BulkLoadReport};
use sievedb_bench::workload::bulk::{self as bench_bulk, BulkConfig, Progress};
use sievedb_bench::FilterArgs;

use crate::commands::{check_creatable, in_dir, CmdResult, Message};
use crate::escape;

/// Flags of `sievedb bulkload`.
#[derive(clap::Args, Debug, Clone, PartialEq)]
pub struct BulkloadArgs {
    /// Directory of the new database (created if missing; an existing one must
    /// be empty: no database, no other files). `sievedb bench --use-existing-db --db DIR` reads DIR/sievedb
    #[arg(value_name = "DB")]
    pub db: PathBuf,
    /// Entries to generate: the keys and values the fill benchmarks write for
    /// indices 0..N
    #[arg(long, value_name = "N", default_value_t = sievedb_bench::DEFAULT_NUM, conflicts_with = "input")]
    pub num: u64,
    /// Key size in bytes of the generated keys (zero-padded decimal index plus a marker byte)
    #[arg(long, value_name = "B", default_value_t = sievedb_bench::DEFAULT_KEY_SIZE, conflicts_with = "input")]
    pub key_size: usize,
    /// Value size in bytes of the generated values
    #[arg(long, value_name = "B", default_value_t = sievedb_bench::DEFAULT_VALUE_SIZE, conflicts_with = "input")]
    pub value_size: usize,
    /// Seed of the generated values (use the --seed the benchmark reads with)
    #[arg(long, value_name = "S", default_value_t = sievedb_bench::DEFAULT_SEED, conflicts_with = "input")]
    pub seed: u64,
    /// Levels that receive data (levels 1..=L; level 0 stays empty)
    #[arg(long, value_name = "L", default_value_t = bench_bulk::DEFAULT_LEVELS)]
    pub levels: usize,
    /// Size ratio T: level i receives a share of the entries proportional to T^(i-1)
    #[arg(long, value_name = "T", default_value_t = sievedb_bench::DEFAULT_SIZE_RATIO)]
    pub size_ratio: usize,
    /// Size at which table files are cut, in bytes
    #[arg(long, value_name = "BYTES", default_value_t = sievedb_bench::DEFAULT_TARGET_FILE_SIZE)]
    pub target_file_size: u64,
    /// The filter flags, the same as `sievedb bench`'s
    #[command(flatten)]
    pub filters: FilterArgs,
    /// Load `KEY<TAB>VALUE` lines (both %XX-escaped, keys strictly increasing)
    /// from FILE instead of generating entries
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    /// Engine of the new database: sievedb, or rocksdb (RocksDB's own tables
    /// of the same generated entries in the same levels, ingested deepest
    /// first; of the filter flags only --bits-per-key applies; needs a build
    /// with the `rocksdb` feature). `sievedb bench --engine rocksdb
    /// --use-existing-db --db DIR` reads DIR/rocksdb
    #[arg(long, value_enum, default_value_t = BulkEngine::Sievedb, conflicts_with = "input")]
    pub engine: BulkEngine,
    /// Print the summary as one JSON line
    #[arg(long)]
    pub json: bool,
}

/// The engines `sievedb bulkload` builds databases of.
#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum BulkEngine {
    /// sievedb's own bulk load.
    Sievedb,
    /// RocksDB, in the shape of sievedb's bulk load.
    Rocksdb,
}

impl BulkloadArgs {
    fn config(&self) -> BulkConfig {
        BulkConfig {
            num: self.num,
            key_size: self.key_size,
            value_size: self.value_size,
            seed: self.seed,
            levels: self.levels,
            size_ratio: self.size_ratio,
            target_file_size: self.target_file_size,
            filters: self.filters.clone(),
        }
    }
}

/// `sievedb bulkload`: builds a new database of full levels from generated
/// benchmark entries or a sorted input file, with a progress bar on stderr
/// (when it is a terminal) and a summary on stdout.
pub fn bulkload(args: &BulkloadArgs) -> CmdResult {
    let cfg = args.config();
    cfg.validate().map_err(Message)?;
    if args.engine == BulkEngine::Rocksdb {
        return rocksdb(args, &cfg);
    }
    check_creatable(&args.db)?;
    let show = io::stderr().is_terminal();
    let total = args.input.is_none().then_some(args.num);
    let progress = Progress::new(show, total, "bulkload");
    let result = match &args.input {
        None => bench_bulk::load_generated(&args.db, &cfg, progress.callback())
            .map_err(|e| -> Box<dyn Error> { e }),
        Some(file) => load_file(&args.db, file, &cfg, progress.callback()),
    };
    progress.finish();
    // Input errors name their file and line; the engine's get the database's name.
    let report = result.map_err(|e| -> Box<dyn Error> {
        if e.is::<Message>() {
            e
        } else {
            Box::new(in_dir(&args.db, e))
        }
    })?;
    if args.json {
        print_summary(&bench_bulk::summary_json(&report, &args.db).to_string())
    } else {
        print_summary(bench_bulk::summary_text(&report, &args.db).trim_end())
    }
}

/// Prints a load's summary (one JSON line, or the text) on stdout.
fn print_summary(text: &str) -> CmdResult {
    let mut out = io::stdout().lock();
    writeln!(out, "{text}")?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}

/// `sievedb bulkload --engine rocksdb`.
#[cfg(feature = "rocksdb")]
fn rocksdb(args: &BulkloadArgs, cfg: &BulkConfig) -> CmdResult {
    use sievedb_bench::workload::bulk::rocksdb as rocks;
    let engine = sievedb_bench::BenchArgs {
        filters: args.filters.clone(),
        target_file_size: args.target_file_size,
        size_ratio: args.size_ratio,
        ..sievedb_bench::BenchArgs::default()
    }
    .engine_config();
    let progress = Progress::new(io::stderr().is_terminal(), Some(args.num), "bulkload");
    let report = rocks::load_generated(&args.db, cfg, &engine, progress.callback());
    progress.finish();
    let report = report.map_err(|e| in_dir(&args.db, e))?;
    if args.json {
        print_summary(&rocks::summary_json(&report, &args.db).to_string())
    } else {
        print_summary(rocks::summary_text(&report, &args.db).trim_end())
    }
}

/// `sievedb bulkload --engine rocksdb` in a build without RocksDB.
#[cfg(not(feature = "rocksdb"))]
fn rocksdb(_: &BulkloadArgs, _: &BulkConfig) -> CmdResult {
    Err(Box::new(Message(
        "this sievedb was built without RocksDB: build it with `--features rocksdb` to bulk \
         load RocksDB databases"
            .into(),
    )))
}

/// Bulk-loads the `KEY<TAB>VALUE` lines of `file`.
fn load_file(
    db: &Path,
    file: &Path,
    cfg: &BulkConfig,
    progress: impl FnMut(u64) + Send + 'static,
) -> Result<BulkLoadReport, Box<dyn Error>> {
    let f = std::fs::File::open(file)
        .map_err(|e| Message(format!("cannot open input {}: {e}", file.display())))?;
    let mut reader = io::BufReader::with_capacity(1 << 20, f);
    // Dropping the writer on an error deletes what it wrote.
    let mut w = BulkLoad::new(db, cfg.options(), cfg.shape()?)
        .on_progress(progress)
        .start()?;
    let mut line = Vec::new();
    let mut lineno = 0u64;
    loop {
        line.clear();
        let n = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| Message(format!("cannot read input {}: {e}", file.display())))?;
        if n == 0 {
            break;
        }
        lineno += 1;
        let at = |m: &dyn std::fmt::Display| Message(format!("{}:{lineno}: {m}", file.display()));
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let Some(tab) = text.iter().position(|&b| b == b'\t') else {
            return Err(Box::new(at(&"expected KEY<TAB>VALUE")));
        };
        let key = escape::decode(&text[..tab]).map_err(|e| at(&format!("key: {e}")))?;
        let value = escape::decode(&text[tab + 1..]).map_err(|e| at(&format!("value: {e}")))?;
        w.add(&key, &value).map_err(|e| at(&e))?;
    }
    Ok(w.finish()?)
}
