//! The db_bench-style benchmarks: the [`Benchmark`] list, the [`Workload`]
//! they run on, the [`Measurement`] each returns, and [`run_benchmark`],
//! which dispatches to the timed loops of `fill` (writes), `merge`
//! (`mergerandom`), `read` (lookups and scans) and `mixed` (reads with
//! concurrent writes, the YCSB mixes). `runner` runs a whole `sievedb bench`
//! invocation and writes its report. `device_io` measures the device reads of
//! any engine, `page_cache` (with `cgroup`) drops and bounds the page cache
//! of the read benchmarks. `filterbench` (one filter, no database) and
//! `filterprobe` (a lookup against its filter work alone) are the two
//! micro-benchmarks of the list.

pub mod cgroup;
pub mod device_io;
mod fill;
pub mod filterbench;
pub mod filterprobe;
mod merge;
mod mixed;
pub mod page_cache;
mod read;
pub(crate) mod runner;
pub mod txn;
mod wait;

pub use mixed::FilterMemoryPeak;

use crate::engines::{BoxError, Engine, EngineResult};
use crate::progress::{Progress, ProgressMode};
use crate::workload::keys::{KeyGen, ValueGen};
use fill::fill;
use mixed::{read_while_writing, ycsb, YCSB_A_READS, YCSB_B_READS};
use rand::{rngs::SmallRng, seq::SliceRandom, SeedableRng};
use read::{read_random, read_seq, reader_seed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One benchmark of the `--benchmarks` list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Benchmark {
    /// Writes `num` keys in ascending order.
    FillSeq,
    /// Writes `num` keys in a seeded random order (a permutation: each key once).
    FillRandom,
    /// `reads` lookups of uniformly chosen existing keys.
    ReadRandom,
    /// `reads` lookups of keys that were never written (interleaved with existing ones).
    ReadMissing,
    /// `reads` lookups, a fraction `alpha` of existing keys, the rest missing.
    ReadMixed,
    /// A full forward scan of the database.
    ReadSeq,
    /// Flushes the memtable.
    Flush,
    /// Flushes, then waits until no compaction is due.
    WaitForCompaction,
    /// The single-filter micro-benchmark (no database; see [`crate::bench::filterbench`]).
    FilterBench,
    /// `reads` lookups of existing keys (or lookups for `duration`) while one
    /// writer thread overwrites random keys of the key space until they end.
    ReadWhileWriting,
    /// YCSB workload A: `reads` operations, half lookups and half updates.
    YcsbA,
    /// YCSB workload B: `reads` operations, 95% lookups and 5% updates.
    YcsbB,
    /// `readmissing`'s keys: lookups against the digest and filter probes
    /// alone, interleaved (sievedb only; see [`crate::bench::filterprobe`]).
    FilterProbe,
    /// `num` merges of a u64 add of 1 into uniformly random counters of their
    /// own key space (engines with a merge operator: sievedb, RocksDB).
    MergeRandom,
    /// Read-modify-write transactions of `--txn-keys` keys drawn from all
    /// of `num` (low contention; see [`crate::bench::txn`]).
    TxnRandom,
    /// [`Benchmark::TxnRandom`] on a hot set of `--txn-hot-keys` keys (high
    /// contention).
    TxnRandomHot,
    /// `reads` lookups of existing keys, `--txn-keys` per read-only transaction.
    TxnReadRandom,
    /// `reads` seeks to random written keys, each then `--seek-nexts` steps.
    SeekRandom,
    /// `reads` seeks to prefixes never written (`--keys-per-prefix`), each
    /// then up to `--seek-nexts` steps within the prefix.
    SeekMissing,
}

impl Benchmark {
    /// Every benchmark, in the default order.
    pub const ALL: [Benchmark; 19] = [
        Benchmark::FillSeq,
        Benchmark::FillRandom,
        Benchmark::ReadRandom,
        Benchmark::ReadMissing,
        Benchmark::ReadMixed,
        Benchmark::ReadSeq,
        Benchmark::Flush,
        Benchmark::WaitForCompaction,
        Benchmark::FilterBench,
        Benchmark::ReadWhileWriting,
        Benchmark::YcsbA,
        Benchmark::YcsbB,
        Benchmark::FilterProbe,
        Benchmark::MergeRandom,
        Benchmark::TxnRandom,
        Benchmark::TxnRandomHot,
        Benchmark::TxnReadRandom,
        Benchmark::SeekRandom,
        Benchmark::SeekMissing,
    ];

    /// The db_bench name.
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::FillSeq => "fillseq",
            Benchmark::FillRandom => "fillrandom",
            Benchmark::ReadRandom => "readrandom",
            Benchmark::ReadMissing => "readmissing",
            Benchmark::ReadMixed => "readmixed",
            Benchmark::ReadSeq => "readseq",
            Benchmark::Flush => "flush",
            Benchmark::WaitForCompaction => "waitforcompaction",
            Benchmark::FilterBench => "filterbench",
            Benchmark::ReadWhileWriting => "readwhilewriting",
            Benchmark::YcsbA => "ycsba",
            Benchmark::YcsbB => "ycsbb",
            Benchmark::FilterProbe => "filterprobe",
            Benchmark::MergeRandom => "mergerandom",
            Benchmark::TxnRandom => "txnrandom",
            Benchmark::TxnRandomHot => "txnrandomhot",
            Benchmark::TxnReadRandom => "txnreadrandom",
            Benchmark::SeekRandom => "seekrandom",
            Benchmark::SeekMissing => "seekmissing",
        }
    }

    /// One line saying what the benchmark does (`sievedb bench --help`).
    pub fn description(self) -> &'static str {
        match self {
            Benchmark::FillSeq => "write --num keys in ascending order (starts on an empty database)",
            Benchmark::FillRandom => {
                "write --num keys in a seeded random order, each once (starts on an empty database)"
            }
            Benchmark::ReadRandom => "--reads lookups of existing keys (--distribution)",
            Benchmark::ReadMissing => {
                "--reads lookups of never-written keys that sort between written ones"
            }
            Benchmark::ReadMixed => {
                "--reads lookups, a fraction --alpha of existing keys, the rest missing"
            }
            Benchmark::ReadSeq => "one full forward scan per thread (ops = entries read)",
            Benchmark::Flush => "flush the memtable (elapsed time only)",
            Benchmark::WaitForCompaction => {
                "flush, then wait until no compaction is due (elapsed time only; \
                 --stats-interval: the compaction owed, per line)"
            }
            Benchmark::FilterBench => {
                "one filter over --num keys, --reads empty queries: FPR and ns/query (no database)"
            }
            Benchmark::ReadWhileWriting => {
                "--threads readers do --reads lookups (or read --duration s) while one writer overwrites"
            }
            Benchmark::YcsbA => "YCSB A: --reads operations, 50% lookups, 50% updates",
            Benchmark::YcsbB => "YCSB B: --reads operations, 95% lookups, 5% updates",
            Benchmark::FilterProbe => {
                "readmissing's keys: lookup vs one digest + its filter probes, ns and ratio (sievedb)"
            }
            Benchmark::MergeRandom => {
                "--num u64-add merges of 1 into random counters of their own keys (sievedb, rocksdb)"
            }
            Benchmark::TxnRandom => {
                "--threads run transactions reading then writing --txn-keys random keys \
                 (--txn-mode; --reads commits or --duration s): commits/s, aborts/s, p50/p99"
            }
            Benchmark::TxnRandomHot => {
                "txnrandom with its keys from a hot set of --txn-hot-keys keys (high contention)"
            }
            Benchmark::TxnReadRandom => {
                "readrandom's lookups through read-only transactions of --txn-keys lookups each"
            }
            Benchmark::SeekRandom => {
                "--reads seeks to written keys, each then --seek-nexts next() steps \
                 (within the key's prefix with --prefix-len or --keys-per-prefix)"
            }
            Benchmark::SeekMissing => {
                "--reads seeks to prefixes never written (--keys-per-prefix), each then \
                 --seek-nexts steps within the prefix"
            }
        }
    }

    /// Whether the benchmark is a step measured by its elapsed time only
    /// (no ops/sec, micros/op or MB/s: it is one operation of no fixed size).
    pub fn is_elapsed_only(self) -> bool {
        matches!(self, Benchmark::Flush | Benchmark::WaitForCompaction)
    }

    /// Whether the benchmark reads the database's entries, so that running it
    /// on an empty database measures nothing (it is refused).
    pub fn needs_data(self) -> bool {
        self.does_lookups() || self == Benchmark::ReadSeq
    }

    /// Whether the benchmark measures sievedb's own filters, so that it runs
    /// for sievedb only (once per repeat).
    pub fn is_sievedb_only(self) -> bool {
        matches!(self, Benchmark::FilterBench | Benchmark::FilterProbe)
    }

    /// Whether the benchmark needs the engine's merge operator, so that it
    /// is skipped (with a note) for the engines without one.
    pub fn needs_merge(self) -> bool {
        self == Benchmark::MergeRandom
    }

    /// Whether the benchmark runs transactions, so that it is skipped (with
    /// a note) for the engines without them, and RocksDB and fjall open
    /// their transactional databases for the run.
    pub fn needs_txn(self) -> bool {
        matches!(
            self,
            Benchmark::TxnRandom | Benchmark::TxnRandomHot | Benchmark::TxnReadRandom
        )
    }

    /// Whether the benchmark writes read-modify-write transactions (ops
    /// are commits, each of `--txn-keys` writes).
    pub fn is_txn_write(self) -> bool {
        matches!(self, Benchmark::TxnRandom | Benchmark::TxnRandomHot)
    }

    /// Key plus value bytes of one operation, for MB/s: a merge writes an
    /// 8-byte operand, the other writes and the reads a `value_size` value.
    pub fn bytes_per_op(self, key_size: usize, value_size: usize) -> u64 {
        let value = if self.needs_merge() { 8 } else { value_size };
        (key_size + value) as u64
    }

    /// The `--benchmarks` part of `sievedb bench --help`: every benchmark
    /// [`Benchmark::parse_list`] accepts, with its description, one a line.
    pub fn help_list() -> String {
        let w = Benchmark::ALL
            .iter()
            .map(|b| b.name().len())
            .max()
            .unwrap_or(0);
        let mut s = String::from("Benchmarks (--benchmarks, comma-separated, run in order):\n");
        for b in Benchmark::ALL {
            s.push_str(&format!("  {:<w$}  {}\n", b.name(), b.description()));
        }
        s
    }

    /// Whether the benchmark writes (and therefore starts on an empty database).
    pub fn is_fill(self) -> bool {
        matches!(self, Benchmark::FillSeq | Benchmark::FillRandom)
    }

    /// Whether the benchmark's operations are all point lookups (its `ops`
    /// are lookups and `found` counts the ones that found a value).
    pub fn is_point_read(self) -> bool {
        matches!(
            self,
            Benchmark::ReadRandom
                | Benchmark::ReadMissing
                | Benchmark::ReadMixed
                | Benchmark::ReadWhileWriting
                | Benchmark::TxnReadRandom
        )
    }

    /// Whether the benchmark does point lookups at all (the point reads, the
    /// YCSB mixes, `filterprobe` and the transactions' reads).
    pub fn does_lookups(self) -> bool {
        self.is_point_read()
            || self.is_txn_write()
            || matches!(
                self,
                Benchmark::YcsbA | Benchmark::YcsbB | Benchmark::FilterProbe
            )
    }

    /// Parses a comma-separated list; empty items are ignored.
    pub fn parse_list(s: &str) -> Result<Vec<Benchmark>, String> {
        let mut out = Vec::new();
        for item in s.split(',').map(str::trim).filter(|i| !i.is_empty()) {
            match Benchmark::ALL.iter().find(|b| b.name() == item) {
                Some(b) => out.push(*b),
                None => {
                    let names: Vec<&str> = Benchmark::ALL.iter().map(|b| b.name()).collect();
                    return Err(format!(
                        "unknown benchmark {item:?}; known: {}",
                        names.join(",")
                    ));
                }
            }
        }
        if out.is_empty() {
            return Err("--benchmarks names no benchmark".into());
        }
        Ok(out)
    }
}

/// Everything a benchmark needs besides the engine.
#[derive(Clone)]
pub struct Workload {
    /// Key generator.
    pub keys: KeyGen,
    /// Value generator.
    pub values: Arc<ValueGen>,
    /// Entries written by the fill benchmarks.
    pub num: u64,
    /// Lookups of each read benchmark (all threads together).
    pub reads: u64,
    /// Reader threads.
    pub threads: usize,
    /// Base seed.
    pub seed: u64,
    /// How to show progress (on stderr).
    pub progress: ProgressMode,
    /// Fraction of `readmixed` lookups that hit existing keys.
    pub alpha: f64,
    /// Filter settings of `filterbench`.
    pub filter: sievedb::FilterOptions,
    /// Popularity of the keys the read benchmarks look up.
    pub distribution: KeyDistribution,
    /// Exponent of the zipfian distribution.
    pub zipf_s: f64,
    /// Lookups per phase of a moving hot set (`None`: it stays).
    pub hot_shift_every: Option<u64>,
    /// `hotspot`: the share of the key indices in the hot range and the
    /// share of the lookups that go there.
    pub hotspot: (f64, f64),
    /// `readwhilewriting`: read for this long instead of `reads` lookups.
    pub duration: Option<Duration>,
    /// `readwhilewriting`: sample the engine's statistics this often (when
    /// it keeps any) for the peak filter memory; `None` = no sampling.
    pub sample_interval: Option<Duration>,
    /// Keyspaces the keys are spread over (`--keyspaces`): 1 = the default
    /// keyspace; N > 1 = key (and counter) `i` in keyspace `i % N`.
    pub keyspaces: usize,
    /// The transactional benchmarks' flags (`--txn-*`).
    pub txn: crate::cli::txn_args::TxnArgs,
    /// `seekrandom`, `seekmissing`: next() steps after each seek.
    pub seek_nexts: usize,
}

impl Workload {
    /// What a result needs to be rerun: sizes, counts, the key popularity and
    /// the seed (the `workload` object of every JSON result).
    pub fn describe(&self) -> serde_json::Value {
        let skewed = matches!(
            self.distribution,
            KeyDistribution::Zipfian | KeyDistribution::Latest
        );
        let hotspot = self.distribution == KeyDistribution::Hotspot;
        serde_json::json!({
            "num": self.num,
            "reads": self.reads,
            "threads": self.threads,
            "seed": self.seed,
            "alpha": self.alpha,
            "distribution": format!("{:?}", self.distribution).to_lowercase(),
            "zipf_s": skewed.then_some(self.zipf_s),
            "hot_data_fraction": hotspot.then_some(self.hotspot.0),
            "hot_op_fraction": hotspot.then_some(self.hotspot.1),
            "hot_shift_every": self.hot_shift_every,
            "keyspaces": self.keyspaces,
        })
    }

    /// A key chooser of this workload's distribution (one per reader).
    pub fn chooser(&self) -> Result<KeyChooser, String> {
        let c = KeyChooser::new(self.distribution, self.num, self.zipf_s)?;
        let c = if self.distribution == KeyDistribution::Hotspot {
            c.with_hotspot(self.hotspot.0, self.hotspot.1)?
        } else {
            c
        };
        c.with_hot_shift(self.hot_shift_every)
    }

    /// The keyspace of key (or counter) index `i`: `None` with one keyspace
    /// (the engine's default keyspace, through the plain [`Engine`] calls),
    /// else `Some(i % keyspaces)`. A missing key goes where the written key
    /// of its index went.
    #[inline]
    pub fn keyspace_of(&self, i: u64) -> Option<usize> {
        (self.keyspaces > 1).then(|| (i % self.keyspaces as u64) as usize)
    }
}

/// Writes `key` = `value` as a one-key batch into keyspace `ks` (see
/// [`Workload::keyspace_of`]).
#[inline]
pub(crate) fn write_one(
    engine: &dyn Engine,
    ks: Option<usize>,
    key: &[u8],
    value: &[u8],
) -> EngineResult<()> {
    match ks {
        None => engine.write_batch(&[(key, value)]),
        Some(ks) => engine.write_batch_in(ks, &[(key, value)]),
    }
}

/// [`Engine::get_len`] in keyspace `ks`.
#[inline]
pub(crate) fn get_len(
    engine: &dyn Engine,
    ks: Option<usize>,
    key: &[u8],
) -> EngineResult<Option<usize>> {
    match ks {
        None => engine.get_len(key),
        Some(ks) => engine.get_len_in(ks, key),
    }
}

/// [`Engine::get`] in keyspace `ks`.
#[inline]
pub(crate) fn get(
    engine: &dyn Engine,
    ks: Option<usize>,
    key: &[u8],
) -> EngineResult<Option<Vec<u8>>> {
    match ks {
        None => engine.get(key),
        Some(ks) => engine.get_in(ks, key),
    }
}

/// [`Engine::merge`] in keyspace `ks`.
#[inline]
pub(crate) fn merge(
    engine: &dyn Engine,
    ks: Option<usize>,
    key: &[u8],
    operand: &[u8],
) -> EngineResult<()> {
    match ks {
        None => engine.merge(key, operand),
        Some(ks) => engine.merge_in(ks, key, operand),
    }
}

pub use crate::workload::distribution::{
    KeyChooser, KeyDistribution, DEFAULT_HOT_DATA_FRACTION, DEFAULT_HOT_OP_FRACTION,
};

/// What one benchmark measured.
#[derive(Clone, Debug)]
pub struct Measurement {
    /// Operations done (writes, lookups, or entries scanned).
    pub ops: u64,
    /// Wall-clock seconds of the timed part.
    pub seconds: f64,
    /// Lookups that found a value (read benchmarks), entries read (readseq); `None` for fills.
    pub found: Option<u64>,
    /// Threads that ran the operations.
    pub threads: usize,
    /// Benchmark-specific results (filterbench's FPR figures), as JSON fields.
    pub extra: Option<serde_json::Value>,
    /// Text appended to the benchmark's line.
    pub note: Option<String>,
}

/// Operations between progress-bar updates.
const PROGRESS_STEP: u64 = 1024;

/// Runs `bench` against `engine`.
pub fn run_benchmark(
    engine: &Arc<dyn Engine>,
    bench: Benchmark,
    w: &Workload,
) -> EngineResult<Measurement> {
    let label = format!("{} {}", engine.name(), bench.name());
    match bench {
        Benchmark::FillSeq => fill(engine.as_ref(), w, None, label),
        Benchmark::FillRandom => {
            let mut order: Vec<u64> = (0..w.num).collect();
            order.shuffle(&mut SmallRng::seed_from_u64(w.seed));
            fill(engine.as_ref(), w, Some(&order), label)
        }
        Benchmark::ReadRandom => read_random(engine, w, ReadKind::Existing, label),
        Benchmark::ReadMissing => read_random(engine, w, ReadKind::Missing, label),
        Benchmark::ReadMixed => read_random(engine, w, ReadKind::Mixed(w.alpha), label),
        Benchmark::ReadSeq => read_seq(engine, w, label),
        Benchmark::ReadWhileWriting => read_while_writing(engine, w, label),
        Benchmark::YcsbA => ycsb(engine, w, YCSB_A_READS, label),
        Benchmark::YcsbB => ycsb(engine, w, YCSB_B_READS, label),
        Benchmark::Flush => timed_once(|| engine.flush()),
        Benchmark::WaitForCompaction => wait::wait_for_compactions(engine, w, label),
        Benchmark::FilterProbe => filter_probe(engine.as_ref(), w, label),
        Benchmark::MergeRandom => merge::merge_random(engine.as_ref(), w, label),
        Benchmark::TxnRandom => txn::txn_random(engine, w, false, label),
        Benchmark::TxnRandomHot => txn::txn_random(engine, w, true, label),
        Benchmark::TxnReadRandom => txn::txn_read_random(engine, w, label),
        Benchmark::SeekRandom => read::seek_random(engine, w, ReadKind::Existing, label),
        Benchmark::SeekMissing => read::seek_random(engine, w, ReadKind::Missing, label),
        Benchmark::FilterBench => {
            let pb = Progress::start(w.progress, w.reads, label);
            let r = crate::bench::filterbench::run(&w.filter, &w.keys, w.num, w.reads, &pb)?;
            pb.finish();
            Ok(Measurement {
                ops: r.queries,
                seconds: r.query_seconds,
                found: Some(r.false_positives),
                threads: 1,
                extra: Some(r.to_json()),
                note: Some(r.text()),
            })
        }
    }
}

/// `filterprobe` on `readmissing`'s keys (its first thread's).
fn filter_probe(engine: &dyn Engine, w: &Workload, label: String) -> EngineResult<Measurement> {
    let db = engine
        .sievedb()
        .ok_or("filterprobe measures sievedb's own filters (sievedb only)")?;
    let mut chooser = w.chooser()?;
    let seed = reader_seed(w.seed, ReadKind::Missing, 0);
    let pb = Progress::start(w.progress, w.reads, label);
    let r = crate::bench::filterprobe::run(engine, db, &w.keys, &mut chooser, w.reads, seed, &pb)?;
    pb.finish();
    Ok(Measurement {
        ops: r.keys,
        seconds: r.reference_ns() * r.keys as f64 / 1e9,
        found: Some(r.found),
        threads: 1,
        extra: Some(r.to_json()),
        note: Some(r.text()),
    })
}

/// Runs `f` once; ops = 1.
fn timed_once(f: impl FnOnce() -> EngineResult<()>) -> EngineResult<Measurement> {
    let start = Instant::now();
    f()?;
    Ok(Measurement {
        ops: 1,
        seconds: start.elapsed().as_secs_f64(),
        found: None,
        threads: 1,
        extra: None,
        note: None,
    })
}

/// Which keys a read benchmark looks up.
#[derive(Clone, Copy, Debug, PartialEq)]
enum ReadKind {
    /// Only written keys.
    Existing,
    /// Only never-written keys.
    Missing,
    /// Written keys with this probability, else never-written ones.
    Mixed(f64),
}

/// Thread `t`'s share of `total` operations split over `threads` threads
/// (the first `total % threads` threads do one more).
fn thread_share(total: u64, threads: usize, t: usize) -> u64 {
    let threads = threads.max(1) as u64;
    total / threads + u64::from((t as u64) < total % threads)
}

/// Runs `f(engine, w, n, t, pb)` for every thread `t` of `w.threads`, `n` its
/// share of `total` operations: inline with one thread, else each on a
/// thread of its own; the results in thread order, the first error wins.
fn split_over_threads<T, F>(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    total: u64,
    pb: &Progress,
    f: F,
) -> EngineResult<Vec<T>>
where
    T: Send + 'static,
    F: Fn(&dyn Engine, &Workload, u64, usize, &Progress) -> EngineResult<T> + Copy + Send + 'static,
{
    let threads = w.threads.max(1);
    if threads == 1 {
        return Ok(vec![f(engine.as_ref(), w, total, 0, pb)?]);
    }
    let handles = (0..threads)
        .map(|t| {
            let (engine, w, pb) = (Arc::clone(engine), w.clone(), pb.clone());
            let n = thread_share(total, threads, t);
            std::thread::spawn(move || f(engine.as_ref(), &w, n, t, &pb))
        })
        .collect();
    join_all(handles)
}

/// The progress bar of a benchmark that runs `w.reads` operations, or for
/// `--duration` (then it ticks with the time, as its end is not a count).
fn progress_of(w: &Workload, label: String) -> Progress {
    match w.duration {
        Some(_) => {
            let pb = Progress::start(w.progress, 0, label);
            pb.tick_steadily();
            pb
        }
        None => Progress::start(w.progress, w.reads, label),
    }
}

/// Joins worker threads; the first error wins.
fn join_all<T>(handles: Vec<std::thread::JoinHandle<EngineResult<T>>>) -> EngineResult<Vec<T>> {
    let mut out = Vec::with_capacity(handles.len());
    let mut first_err: Option<BoxError> = None;
    for h in handles {
        match h.join() {
            Ok(Ok(v)) => out.push(v),
            Ok(Err(e)) => {
                first_err.get_or_insert(e);
            }
            Err(_) => {
                first_err.get_or_insert_with(|| "a benchmark thread panicked".into());
            }
        }
    }
    match first_err {
        Some(e) => Err(e),
        None => Ok(out),
    }
}

/// Joins worker threads and sums their results; the first error wins.
fn join_sum(handles: Vec<std::thread::JoinHandle<EngineResult<u64>>>) -> EngineResult<u64> {
    Ok(join_all(handles)?.into_iter().sum())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_benchmark_lists() {
        assert_eq!(
            Benchmark::parse_list("fillseq, readrandom,,readseq").unwrap(),
            vec![
                Benchmark::FillSeq,
                Benchmark::ReadRandom,
                Benchmark::ReadSeq
            ]
        );
        assert!(Benchmark::parse_list("fillseq,bogus").is_err());
        assert!(Benchmark::parse_list(" , ").is_err());
        assert!(Benchmark::FillRandom.is_fill() && !Benchmark::ReadSeq.is_fill());
    }

    #[test]
    fn help_lists_every_benchmark_the_parser_accepts() {
        let help = Benchmark::help_list();
        let listed: Vec<&str> = help
            .lines()
            .skip(1)
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        let all: Vec<&str> = Benchmark::ALL.iter().map(|b| b.name()).collect();
        assert_eq!(listed, all);
        for name in listed {
            assert_eq!(Benchmark::parse_list(name).unwrap().len(), 1, "{name}");
        }
        assert!(Benchmark::ALL.iter().all(|b| !b.description().is_empty()));
    }

    #[test]
    fn classes_of_benchmarks() {
        let elapsed: Vec<Benchmark> = Benchmark::ALL
            .into_iter()
            .filter(|b| b.is_elapsed_only())
            .collect();
        assert_eq!(elapsed, [Benchmark::Flush, Benchmark::WaitForCompaction]);
        for b in Benchmark::ALL {
            let reads = b.needs_data();
            assert_eq!(reads, b.does_lookups() || b == Benchmark::ReadSeq, "{b:?}");
            assert!(!(reads && (b.is_fill() || b.is_elapsed_only())), "{b:?}");
        }
        assert!(!Benchmark::FilterBench.needs_data());
    }

    #[test]
    fn new_benchmarks_have_db_bench_names() {
        assert_eq!(
            Benchmark::parse_list("readwhilewriting,ycsba,ycsbb").unwrap(),
            vec![
                Benchmark::ReadWhileWriting,
                Benchmark::YcsbA,
                Benchmark::YcsbB
            ]
        );
        assert!(Benchmark::ReadWhileWriting.is_point_read());
        assert!(!Benchmark::YcsbA.is_point_read() && Benchmark::YcsbB.does_lookups());
        assert!(!Benchmark::ReadWhileWriting.is_fill());
    }

    #[test]
    fn mergerandom_round_trips_and_needs_a_merge_operator() {
        let b = Benchmark::parse_list("mergerandom").unwrap();
        assert_eq!(b, [Benchmark::MergeRandom]);
        assert_eq!(Benchmark::MergeRandom.name(), "mergerandom");
        let merging: Vec<Benchmark> = Benchmark::ALL
            .into_iter()
            .filter(|b| b.needs_merge())
            .collect();
        assert_eq!(merging, [Benchmark::MergeRandom]);
        let m = Benchmark::MergeRandom;
        assert!(!m.is_fill() && !m.needs_data() && !m.does_lookups() && !m.is_elapsed_only());
        assert!(!m.is_sievedb_only());
        assert_eq!(m.bytes_per_op(16, 100), 24);
        assert_eq!(Benchmark::FillRandom.bytes_per_op(16, 100), 116);
    }
}
