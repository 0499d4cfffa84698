//! Running a `sievedb bench` invocation: the engines of `--engine`, the
//! benchmarks of `--benchmarks`, `--repeats` times, each engine on its own
//! database ([`run`], [`run_with_output`], [`run_records`]), and the text or
//! JSON report (header, settings, one line per measurement, medians).

use crate::bench::device_io::{DeviceProbe, ReadAhead};
use crate::bench::page_cache::{self, PageCacheMode};
use crate::bench::{self, Benchmark, Workload};
use crate::engines::{self, EngineKind, EngineResult};
use crate::progress;
use crate::report::{self, MedianRow, Record};
use crate::workload::keys::{KeyGen, ValueGen};
use crate::BenchArgs;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

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
        if bench::get_len(engine, w.keyspace_of(i), &key)?.is_some() {
            return Ok(());
        }
    }
    Err(format!(
        "{}: database {} is empty (none of the keys 0, {}, {} of --num {} is there): run \
         fillseq or fillrandom first (e.g. --benchmarks fillrandom,{}), or use \
         --use-existing-db --db DIR with a database loaded with the same --num, --key-size \
         and --keyspaces",
        bench.name(),
        path.display(),
        w.num / 2,
        w.num.saturating_sub(1),
        w.num,
        bench.name()
    )
    .into())
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
    if args.runs_txn() {
        writeln!(
            out,
            "Txns:       {}, {} keys each, hot set {} keys, lock timeout {} ms{}",
            args.txn.txn_mode.name(),
            args.txn.txn_keys,
            args.txn.txn_hot_keys,
            args.txn.txn_lock_timeout_ms,
            if args.sync { ", synced commits" } else { "" }
        )?;
    }
    if args.keyspaces > 1 {
        writeln!(
            out,
            "Keyspaces:  {} (ks0..ks{}; key and counter i in ks(i mod {}))",
            args.keyspaces,
            args.keyspaces - 1,
            args.keyspaces
        )?;
    }
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

/// The line of a benchmark skipped for `kind` (a JSON object with `--json`,
/// else `[engine #repeat] benchmark : skipped (reason)`).
fn write_skipped(
    out: &mut dyn Write,
    args: &BenchArgs,
    kind: EngineKind,
    bench: Benchmark,
    rep: usize,
    prefix: bool,
    reason: &str,
) -> std::io::Result<()> {
    if args.json {
        let line = serde_json::json!({"type": "skipped", "engine": kind.name(),
            "benchmark": bench.name(), "repeat": rep, "keyspaces": args.keyspaces,
            "reason": reason});
        writeln!(out, "{line}")
    } else {
        let who = if prefix {
            format!("{:<8} #{:<2} ", kind.name(), rep)
        } else {
            String::new()
        };
        writeln!(out, "{who}{:<12} : skipped ({reason})", bench.name())
    }
}

fn execute(args: &BenchArgs, out: &mut dyn Write) -> EngineResult<Vec<Record>> {
    args.validate()?;
    let kinds = args.engines()?;
    let benches = Benchmark::parse_list(&args.benchmarks)?;
    let keys = if args.keys_per_prefix > 0 {
        let p = args.prefix_len.unwrap_or(args.key_size / 2);
        KeyGen::grouped(args.key_size, args.num, p, args.keys_per_prefix)?
    } else {
        KeyGen::new(args.key_size, args.num)?
    };
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
        hotspot: (args.hot_data_fraction, args.hot_op_fraction),
        duration: (args.duration > 0).then(|| std::time::Duration::from_secs(args.duration)),
        sample_interval: (args.sample_interval_ms > 0)
            .then(|| std::time::Duration::from_millis(args.sample_interval_ms)),
        keyspaces: args.keyspaces,
        txn: args.txn.clone(),
        seek_nexts: args.seek_nexts,
    };
    let cfg = args.engine_config();
    let page_mode = args.page_cache_mode();
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
            if args.keyspaces > 1 && !kind.supports_keyspaces() {
                let reason = format!(
                    "{} has no keyspaces or column families for --keyspaces {}",
                    kind.name(),
                    args.keyspaces
                );
                for &bench in benches.iter().filter(|b| !b.is_sievedb_only()) {
                    write_skipped(out, args, kind, bench, rep, prefix, &reason)?;
                }
                continue;
            }
            let loc = DbLocation::new(args, kind)?;
            if !args.use_existing_db {
                destroy_db(&loc.path)?;
            }
            let mut engine = kind.open(&loc.path, &cfg)?;
            let probe = DeviceProbe::new(&loc.path);
            if let (Err(why), false) = (probe.device(), page_mode == PageCacheMode::Keep) {
                eprintln!("warning: {why}");
            }
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
                    write_skipped(out, args, kind, bench, rep, prefix, &reason)?;
                    continue;
                }
                if bench.needs_txn() && !engine.supports_txn() {
                    let reason = format!("{} has no transactions", kind.name());
                    write_skipped(out, args, kind, bench, rep, prefix, &reason)?;
                    continue;
                }
                if bench.is_elapsed_only() && !engine.supports_flush() {
                    let reason = format!(
                        "{} cannot flush here (the rocksdb crate 0.20.1 has no flush for a \
                         TransactionDB, opened for --txn-mode pessimistic)",
                        kind.name()
                    );
                    write_skipped(out, args, kind, bench, rep, prefix, &reason)?;
                    continue;
                }
                if bench == Benchmark::FilterProbe && args.keyspaces > 1 {
                    let reason = format!(
                        "filterprobe probes the default keyspace's filters, which \
                         --keyspaces {} leaves empty",
                        args.keyspaces
                    );
                    write_skipped(out, args, kind, bench, rep, prefix, &reason)?;
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
                // Merges and transactions write: a later fill starts on an
                // emptied database again.
                fresh &= !bench.needs_merge() && !bench.is_txn_write();
                let cache = match bench.needs_data() {
                    true => page_cache::prepare(&loc.path, page_mode)?,
                    false => None,
                };
                let _read_ahead = match (args.read_ahead_kb, probe.device()) {
                    (Some(kb), Ok(dev)) if bench.needs_data() => ReadAhead::set(dev, kb)
                        .map_err(|e| eprintln!("warning: {e}"))
                        .ok(),
                    _ => None,
                };
                let before = engine.stats();
                let io_before = probe.snapshot();
                let m = bench::run_benchmark(&engine, bench, &workload)?;
                let device = probe.reads_since(&io_before);
                let stats = match (before, engine.stats()) {
                    (Some(b), Some(a)) => Some(a.delta_since(&b)),
                    _ => None,
                };
                let page_cache = cache.map(page_cache::PageCacheRun::finish);
                let rec = Record {
                    engine: kind.name(),
                    benchmark: bench,
                    repeat: rep,
                    m,
                    // A commit writes --txn-keys keys and values.
                    bytes_per_op: bench.bytes_per_op(args.key_size, args.value_size)
                        * if bench.is_txn_write() {
                            args.txn.txn_keys as u64
                        } else {
                            1
                        },
                    settings: settings.clone(),
                    workload: workload.describe(),
                    stats,
                    files_per_level: engine.files_per_level(),
                    keyspaces: args.keyspaces,
                    device: Some(device),
                    page_cache,
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
    if let Some(path) = &args.csv {
        report::records_table(&records)
            .write_csv(path)
            .map_err(|e| format!("--csv: {e}"))?;
    }
    Ok(records)
}

#[cfg(test)]
mod tests {
    use super::*;

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
