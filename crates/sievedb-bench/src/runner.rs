//! The benchmarks themselves: timed loops over an [`Engine`].

use crate::engines::{BoxError, Engine, EngineResult};
use crate::keys::{KeyGen, ValueGen};
use crate::progress::{Progress, ProgressMode};
use rand::{rngs::SmallRng, seq::SliceRandom, Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
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
    /// The single-filter micro-benchmark (no database; see [`crate::filterbench`]).
    FilterBench,
    /// `reads` lookups of existing keys (or lookups for `duration`) while one
    /// writer thread overwrites random keys of the key space until they end.
    ReadWhileWriting,
    /// YCSB workload A: `reads` operations, half lookups and half updates.
    YcsbA,
    /// YCSB workload B: `reads` operations, 95% lookups and 5% updates.
    YcsbB,
    /// `readmissing`'s keys: lookups against the digest and filter probes
    /// alone, interleaved (sievedb only; see [`crate::filterprobe`]).
    FilterProbe,
}

impl Benchmark {
    /// Every benchmark, in the default order.
    pub const ALL: [Benchmark; 13] = [
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
                "flush, then wait until no compaction is due (elapsed time only)"
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
        )
    }

    /// Whether the benchmark does point lookups at all (the point reads, the
    /// YCSB mixes and `filterprobe`).
    pub fn does_lookups(self) -> bool {
        self.is_point_read()
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
    /// `readwhilewriting`: read for this long instead of `reads` lookups.
    pub duration: Option<Duration>,
    /// `readwhilewriting`: sample the engine's statistics this often (when
    /// it keeps any) for the peak filter memory; `None` = no sampling.
    pub sample_interval: Option<Duration>,
}

impl Workload {
    /// A key chooser of this workload's distribution (one per reader).
    pub fn chooser(&self) -> Result<KeyChooser, String> {
        KeyChooser::new(self.distribution, self.num, self.zipf_s)?
            .with_hot_shift(self.hot_shift_every)
    }
}

pub use crate::workload::distribution::{KeyChooser, KeyDistribution};

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
        Benchmark::YcsbA => ycsb(engine.as_ref(), w, YCSB_A_READS, label),
        Benchmark::YcsbB => ycsb(engine.as_ref(), w, YCSB_B_READS, label),
        Benchmark::Flush => timed_once(|| engine.flush()),
        Benchmark::WaitForCompaction => timed_once(|| engine.wait_for_compactions()),
        Benchmark::FilterProbe => filter_probe(engine.as_ref(), w, label),
        Benchmark::FilterBench => {
            let pb = Progress::start(w.progress, w.reads, label);
            let r = crate::filterbench::run(&w.filter, &w.keys, w.num, w.reads, &pb)?;
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
    let r = crate::filterprobe::run(engine, db, &w.keys, &mut chooser, w.reads, seed, &pb)?;
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

/// Writes every key once, in `order` (ascending when `None`), one key per batch.
fn fill(
    engine: &dyn Engine,
    w: &Workload,
    order: Option<&[u64]>,
    label: String,
) -> EngineResult<Measurement> {
    let pb = Progress::start(w.progress, w.num, label);
    let mut key = vec![0u8; w.keys.key_size()];
    let start = Instant::now();
    for j in 0..w.num {
        let i = match order {
            Some(o) => o[j as usize],
            None => j,
        };
        w.keys.fill(&mut key, i, false);
        engine.write_batch(&[(&key, w.values.value(i))])?;
        if j % PROGRESS_STEP == PROGRESS_STEP - 1 {
            pb.inc(PROGRESS_STEP);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    pb.finish();
    Ok(Measurement {
        ops: w.num,
        seconds,
        found: None,
        threads: 1,
        extra: None,
        note: None,
    })
}

/// Seed of reader thread `t` of a read benchmark (distinct streams per benchmark and thread,
/// identical across repeats and engines).
fn reader_seed(base: u64, kind: ReadKind, t: usize) -> u64 {
    let salt: u64 = match kind {
        ReadKind::Existing => 0x4ead_0000,
        ReadKind::Missing => 0x6d15_5100,
        ReadKind::Mixed(_) => 0x3172_ed00,
    };
    base.wrapping_add(salt).wrapping_add(1000 * (t as u64 + 1))
}

/// When a reader thread stops.
#[derive(Clone, Copy)]
struct ReadLimit<'a> {
    /// After this many lookups.
    n: u64,
    /// Or at this instant (checked every [`DEADLINE_STEP`] lookups).
    deadline: Option<Instant>,
    /// Or once this flag is set (another thread failed).
    stop: Option<&'a AtomicBool>,
}

impl ReadLimit<'_> {
    fn lookups(n: u64) -> Self {
        ReadLimit {
            n,
            deadline: None,
            stop: None,
        }
    }
}

/// Lookups between two checks of a reader's deadline and stop flag.
const DEADLINE_STEP: u64 = 64;

/// Checks that a value read for a benchmark key has the generated length.
fn check_len(engine: &dyn Engine, key: &[u8], len: usize, expected: usize) -> EngineResult<()> {
    if len == expected {
        return Ok(());
    }
    Err(format!(
        "{} returned a {len}-byte value for key {:?}, expected {expected} bytes \
         (with --use-existing-db, pass the --value-size the database was filled with)",
        engine.name(),
        String::from_utf8_lossy(key)
    )
    .into())
}

/// One reader thread: lookups of random keys until `limit`; returns the
/// lookups done and how many found a value.
fn read_loop(
    engine: &dyn Engine,
    w: &Workload,
    kind: ReadKind,
    limit: ReadLimit<'_>,
    seed: u64,
    pb: &Progress,
) -> EngineResult<(u64, u64)> {
    if w.num == 0 {
        return Err("read benchmarks need --num >= 1".into());
    }
    let mut chooser = w.chooser()?;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut key = vec![0u8; w.keys.key_size()];
    w.keys.fill(&mut key, 0, false);
    let mut found = 0u64;
    let expected = w.values.size();
    let checks = limit.deadline.is_some() || limit.stop.is_some();
    let mut j = 0u64;
    while j < limit.n {
        if checks
            && j.is_multiple_of(DEADLINE_STEP)
            && (limit.deadline.is_some_and(|d| Instant::now() >= d)
                || limit.stop.is_some_and(|s| s.load(Ordering::Relaxed)))
        {
            break;
        }
        let i = chooser.next(&mut rng);
        let missing = match kind {
            ReadKind::Existing => false,
            ReadKind::Missing => true,
            ReadKind::Mixed(alpha) => !rng.gen_bool(alpha),
        };
        w.keys.refill(&mut key, i, missing);
        if let Some(len) = engine.get_len(&key)? {
            check_len(engine, &key, len, expected)?;
            found += 1;
        }
        if j % PROGRESS_STEP == PROGRESS_STEP - 1 {
            pb.inc(PROGRESS_STEP);
        }
        j += 1;
    }
    Ok((j, found))
}

/// `w.reads` lookups split across `w.threads` threads.
fn read_random(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    kind: ReadKind,
    label: String,
) -> EngineResult<Measurement> {
    let pb = Progress::start(w.progress, w.reads, label);
    let threads = w.threads.max(1);
    let share =
        |t: usize| w.reads / threads as u64 + u64::from((t as u64) < w.reads % threads as u64);
    let start = Instant::now();
    let found = if threads == 1 {
        read_loop(
            engine.as_ref(),
            w,
            kind,
            ReadLimit::lookups(w.reads),
            reader_seed(w.seed, kind, 0),
            &pb,
        )?
        .1
    } else {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (engine, w, pb) = (Arc::clone(engine), w.clone(), pb.clone());
                let n = share(t);
                std::thread::spawn(move || {
                    read_loop(
                        engine.as_ref(),
                        &w,
                        kind,
                        ReadLimit::lookups(n),
                        reader_seed(w.seed, kind, t),
                        &pb,
                    )
                    .map(|(_, found)| found)
                })
            })
            .collect();
        join_sum(handles)?
    };
    let seconds = start.elapsed().as_secs_f64();
    pb.finish();
    Ok(Measurement {
        ops: w.reads,
        seconds,
        found: Some(found),
        threads,
        extra: None,
        note: None,
    })
}

/// A full scan per thread (as db_bench's readseq with several threads); ops = entries read.
fn read_seq(engine: &Arc<dyn Engine>, w: &Workload, label: String) -> EngineResult<Measurement> {
    let threads = w.threads.max(1);
    let pb = Progress::start(w.progress, 0, label);
    pb.tick_steadily();
    let start = Instant::now();
    let entries = if threads == 1 {
        engine.scan_all()?
    } else {
        let handles: Vec<_> = (0..threads)
            .map(|_| {
                let engine = Arc::clone(engine);
                std::thread::spawn(move || engine.scan_all())
            })
            .collect();
        join_sum(handles)?
    };
    let seconds = start.elapsed().as_secs_f64();
    pb.finish();
    Ok(Measurement {
        ops: entries,
        seconds,
        found: Some(entries),
        threads,
        extra: None,
        note: None,
    })
}

/// Share of lookups in YCSB workload A (the rest are updates).
const YCSB_A_READS: f64 = 0.5;
/// Share of lookups in YCSB workload B (the rest are updates).
const YCSB_B_READS: f64 = 0.95;

/// The peak filter memory seen by a [`Sampler`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FilterMemoryPeak {
    /// Statistics snapshots taken.
    pub samples: u64,
    /// Largest `filter_memory_bytes` seen.
    pub max_bytes: u64,
    /// Largest `filter_memory_bytes − filter_memory_budget_bytes` seen (negative
    /// while always under budget), over the snapshots that had a budget.
    pub max_over_budget_bytes: Option<i64>,
}

impl FilterMemoryPeak {
    /// Adds one snapshot.
    pub fn add(&mut self, s: &sievedb::Stats) {
        self.samples += 1;
        self.max_bytes = self.max_bytes.max(s.filter_memory_bytes);
        if let Some(budget) = s.filter_memory_budget_bytes {
            let over = (i128::from(s.filter_memory_bytes) - i128::from(budget))
                .clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
            self.max_over_budget_bytes =
                Some(self.max_over_budget_bytes.map_or(over, |m| m.max(over)));
        }
    }
}

/// A thread that snapshots an engine's statistics at a fixed interval (at its
/// start, then every interval, and once more when stopped).
struct Sampler {
    stop: Arc<AtomicBool>,
    handle: std::thread::JoinHandle<FilterMemoryPeak>,
}

impl Sampler {
    /// Starts sampling `engine` every `every`; `None` when the engine keeps
    /// no statistics.
    fn start(engine: &Arc<dyn Engine>, every: Duration) -> Option<Sampler> {
        let first = engine.stats()?;
        let stop = Arc::new(AtomicBool::new(false));
        let (engine, flag) = (Arc::clone(engine), Arc::clone(&stop));
        let handle = std::thread::spawn(move || {
            let mut peak = FilterMemoryPeak::default();
            peak.add(&first);
            loop {
                let next = Instant::now() + every;
                while !flag.load(Ordering::Acquire) {
                    let now = Instant::now();
                    if now >= next {
                        break;
                    }
                    std::thread::park_timeout(next - now);
                }
                if let Some(s) = engine.stats() {
                    peak.add(&s);
                }
                if flag.load(Ordering::Acquire) {
                    return peak;
                }
            }
        });
        Some(Sampler { stop, handle })
    }

    /// Stops the thread after one last snapshot and returns what it saw.
    fn finish(self) -> EngineResult<FilterMemoryPeak> {
        self.stop.store(true, Ordering::Release);
        self.handle.thread().unpark();
        self.handle
            .join()
            .map_err(|_| "the statistics sampler panicked".into())
    }
}

/// The writer of `readwhilewriting`: one-key batches of uniformly random keys
/// of `0..num` (each with its generated value) until `stop`; returns the
/// writes done and the seconds it wrote for. It meets the readers' starter at
/// `started` before its first write and writes at least once, so a run whose
/// readers finish at once still writes. Sets `stop` itself on an error, so
/// the readers end too.
fn write_until(
    engine: &dyn Engine,
    w: &Workload,
    started: &Barrier,
    stop: &AtomicBool,
) -> EngineResult<(u64, f64)> {
    let mut rng = SmallRng::seed_from_u64(w.seed.wrapping_add(0x3717_e000));
    let mut key = vec![0u8; w.keys.key_size()];
    w.keys.fill(&mut key, 0, false);
    started.wait();
    let start = Instant::now();
    let mut n = 0u64;
    loop {
        let i = rng.gen_range(0..w.num);
        w.keys.refill(&mut key, i, false);
        if let Err(e) = engine.write_batch(&[(&key, w.values.value(i))]) {
            stop.store(true, Ordering::Relaxed);
            return Err(e);
        }
        n += 1;
        if stop.load(Ordering::Relaxed) {
            break;
        }
    }
    Ok((n, start.elapsed().as_secs_f64()))
}

/// `readwhilewriting`: `w.threads` readers look up existing keys (`w.reads`
/// lookups in all, or for `w.duration`) while one writer overwrites random
/// keys; the writer stops when the readers are done. The measurement is the
/// readers'; the writer's count and rate, and the peak filter memory the
/// sampler saw, are in `extra`.
fn read_while_writing(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    label: String,
) -> EngineResult<Measurement> {
    if w.num == 0 {
        return Err("readwhilewriting needs --num >= 1".into());
    }
    let threads = w.threads.max(1);
    let pb = match w.duration {
        Some(_) => {
            let pb = Progress::start(w.progress, 0, label);
            pb.tick_steadily();
            pb
        }
        None => Progress::start(w.progress, w.reads, label),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let sampler = w
        .sample_interval
        .and_then(|every| Sampler::start(engine, every));
    let started = Arc::new(Barrier::new(2));
    let writer = {
        let (engine, w, stop) = (Arc::clone(engine), w.clone(), Arc::clone(&stop));
        let started = Arc::clone(&started);
        std::thread::spawn(move || write_until(engine.as_ref(), &w, &started, &stop))
    };
    started.wait();
    let start = Instant::now();
    let deadline = w.duration.map(|d| start + d);
    let share = |t: usize| match deadline {
        Some(_) => u64::MAX,
        None => w.reads / threads as u64 + u64::from((t as u64) < w.reads % threads as u64),
    };
    let kind = ReadKind::Existing;
    let readers: Vec<_> = (0..threads)
        .map(|t| {
            let (engine, w, pb, stop) =
                (Arc::clone(engine), w.clone(), pb.clone(), Arc::clone(&stop));
            let n = share(t);
            std::thread::spawn(move || {
                let limit = ReadLimit {
                    n,
                    deadline,
                    stop: Some(&stop),
                };
                let seed = reader_seed(w.seed, kind, t).wrapping_add(0x5e00_0000);
                read_loop(engine.as_ref(), &w, kind, limit, seed, &pb)
            })
        })
        .collect();
    let results = join_all(readers);
    let seconds = start.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let written = writer
        .join()
        .map_err(|_| -> crate::engines::BoxError { "the writer thread panicked".into() });
    let peak = sampler.map(Sampler::finish).transpose();
    pb.finish();
    let (writes, write_seconds) = written??;
    let peak = peak?;
    let mut ops = 0u64;
    let mut found = 0u64;
    for (n, f) in results? {
        ops += n;
        found += f;
    }
    let write_rate = if write_seconds > 0.0 {
        writes as f64 / write_seconds
    } else {
        0.0
    };
    let mut note = format!("writer {writes} writes, {write_rate:.0} writes/sec");
    if let Some(p) = &peak {
        note.push_str(&format!("; filter memory max {} bytes", p.max_bytes));
        if let Some(o) = p.max_over_budget_bytes {
            note.push_str(&format!(" ({o:+} vs budget)"));
        }
    }
    Ok(Measurement {
        ops,
        seconds,
        found: Some(found),
        threads,
        extra: Some(serde_json::json!({
            "writer_ops": writes,
            "writer_seconds": write_seconds,
            "writer_ops_per_sec": write_rate,
            "duration_secs": w.duration.map(|d| d.as_secs_f64()),
            "stats_samples": peak.map(|p| p.samples),
            "filter_memory_max_bytes": peak.map(|p| p.max_bytes),
            "filter_memory_max_over_budget_bytes": peak.and_then(|p| p.max_over_budget_bytes),
        })),
        note: Some(note),
    })
}

/// A YCSB core workload on one thread: `w.reads` operations on keys of the
/// configured distribution, each a lookup with probability `read_share`,
/// else an update (the key rewritten with its generated value).
fn ycsb(
    engine: &dyn Engine,
    w: &Workload,
    read_share: f64,
    label: String,
) -> EngineResult<Measurement> {
    let mut chooser = w.chooser()?;
    let pb = Progress::start(w.progress, w.reads, label);
    let mut rng = SmallRng::seed_from_u64(w.seed.wrapping_add(0x7c5b_0000));
    let mut key = vec![0u8; w.keys.key_size()];
    w.keys.fill(&mut key, 0, false);
    let expected = w.values.size();
    let (mut reads, mut updates, mut found) = (0u64, 0u64, 0u64);
    let start = Instant::now();
    for j in 0..w.reads {
        let i = chooser.next(&mut rng);
        w.keys.refill(&mut key, i, false);
        if rng.gen_bool(read_share) {
            reads += 1;
            if let Some(len) = engine.get_len(&key)? {
                check_len(engine, &key, len, expected)?;
                found += 1;
            }
        } else {
            updates += 1;
            engine.write_batch(&[(&key, w.values.value(i))])?;
        }
        if j % PROGRESS_STEP == PROGRESS_STEP - 1 {
            pb.inc(PROGRESS_STEP);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    pb.finish();
    Ok(Measurement {
        ops: w.reads,
        seconds,
        found: Some(found),
        threads: 1,
        extra: Some(serde_json::json!({
            "reads": reads,
            "updates": updates,
            "read_found": found,
        })),
        note: Some(format!("{reads} reads ({found} found), {updates} updates")),
    })
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
    fn filter_memory_peak_keeps_the_maxima() {
        let snap = |bytes: u64, budget: Option<u64>| sievedb::Stats {
            filter_memory_bytes: bytes,
            filter_memory_budget_bytes: budget,
            ..sievedb::Stats::default()
        };
        let mut p = FilterMemoryPeak::default();
        p.add(&snap(500, None));
        assert_eq!(
            (p.samples, p.max_bytes, p.max_over_budget_bytes),
            (1, 500, None)
        );
        p.add(&snap(300, Some(1000)));
        assert_eq!(p.max_over_budget_bytes, Some(-700));
        p.add(&snap(1200, Some(1000)));
        p.add(&snap(900, Some(1000)));
        assert_eq!(
            (p.samples, p.max_bytes, p.max_over_budget_bytes),
            (4, 1200, Some(200))
        );
        let mut p = FilterMemoryPeak::default();
        p.add(&snap(0, Some(u64::MAX)));
        assert_eq!(p.max_over_budget_bytes, Some(i64::MIN));
    }

    #[test]
    fn reader_seeds_differ_per_thread_and_kind() {
        let a = reader_seed(301, ReadKind::Existing, 0);
        assert_ne!(a, reader_seed(301, ReadKind::Existing, 1));
        assert_ne!(a, reader_seed(301, ReadKind::Missing, 0));
        assert_ne!(a, reader_seed(301, ReadKind::Mixed(0.5), 0));
        assert_eq!(a, reader_seed(301, ReadKind::Existing, 0));
    }
}
