//! The benchmarks themselves: timed loops over an [`Engine`].

use crate::engines::{BoxError, Engine, EngineResult};
use crate::keys::{KeyGen, ValueGen};
use indicatif::{ProgressBar, ProgressStyle};
use rand::{rngs::SmallRng, seq::SliceRandom, Rng, SeedableRng};
use std::sync::Arc;
use std::time::Instant;

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
}

impl Benchmark {
    /// Every benchmark, in the default order.
    pub const ALL: [Benchmark; 9] = [
        Benchmark::FillSeq,
        Benchmark::FillRandom,
        Benchmark::ReadRandom,
        Benchmark::ReadMissing,
        Benchmark::ReadMixed,
        Benchmark::ReadSeq,
        Benchmark::Flush,
        Benchmark::WaitForCompaction,
        Benchmark::FilterBench,
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
        }
    }

    /// Whether the benchmark writes (and therefore starts on an empty database).
    pub fn is_fill(self) -> bool {
        matches!(self, Benchmark::FillSeq | Benchmark::FillRandom)
    }

    /// Whether the benchmark does point lookups.
    pub fn is_point_read(self) -> bool {
        matches!(
            self,
            Benchmark::ReadRandom | Benchmark::ReadMissing | Benchmark::ReadMixed
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
    /// Whether to draw progress bars (on stderr).
    pub progress: bool,
    /// Fraction of `readmixed` lookups that hit existing keys.
    pub alpha: f64,
    /// Filter settings of `filterbench`.
    pub filter: sievedb::FilterOptions,
    /// Popularity of the keys the read benchmarks look up.
    pub distribution: KeyDistribution,
    /// Exponent of the zipfian distribution.
    pub zipf_s: f64,
}

/// Popularity of the keys the read benchmarks look up (`--distribution`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KeyDistribution {
    /// Every key index equally likely.
    #[default]
    Uniform,
    /// Zipfian over ranks `1..=num` (rank r with probability ∝ 1/r^s); rank
    /// r maps to key index `(r − 1)·a mod num` for an `a` coprime with `num`,
    /// so the hot keys are scattered over the key space (and over the files
    /// of every level) rather than packed at its start.
    Zipfian,
}

/// Draws key indices in `0..num` from a [`KeyDistribution`].
#[derive(Clone, Debug)]
pub struct KeyChooser {
    num: u64,
    zipf: Option<(rand_distr::Zipf<f64>, u64)>,
}

impl KeyChooser {
    /// A chooser over `0..num` (`num` ≥ 1); `s` is the zipfian exponent.
    pub fn new(dist: KeyDistribution, num: u64, s: f64) -> Result<Self, String> {
        if num == 0 {
            return Err("read benchmarks need --num >= 1".into());
        }
        let zipf = match dist {
            KeyDistribution::Uniform => None,
            KeyDistribution::Zipfian => {
                let z = rand_distr::Zipf::new(num, s)
                    .map_err(|e| format!("--distribution zipfian: {e}"))?;
                Some((z, scatter_multiplier(num)))
            }
        };
        Ok(KeyChooser { num, zipf })
    }

    /// The next key index.
    #[inline]
    pub fn next(&self, rng: &mut SmallRng) -> u64 {
        match &self.zipf {
            None => rng.gen_range(0..self.num),
            Some((z, a)) => {
                let rank = (rng.sample(z) as u64).clamp(1, self.num) - 1;
                ((u128::from(rank) * u128::from(*a)) % u128::from(self.num)) as u64
            }
        }
    }
}

/// An odd multiplier near `0.618·num` coprime with `num` (a bijection of `0..num`).
fn scatter_multiplier(num: u64) -> u64 {
    fn gcd(mut a: u64, mut b: u64) -> u64 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }
    let mut a = ((num as f64 * 0.618_033_988_7) as u64).max(1) | 1;
    while gcd(a, num) != 1 {
        a += 2;
    }
    a
}

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

fn progress_bar(show: bool, len: u64, label: String) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let pb = ProgressBar::new(len);
    if let Ok(style) =
        ProgressStyle::with_template("{prefix:<20} [{bar:40}] {pos:>9}/{len:9} {per_sec} eta {eta}")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix(label);
    pb
}

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
        Benchmark::Flush => timed_once(|| engine.flush()),
        Benchmark::WaitForCompaction => timed_once(|| engine.wait_for_compactions()),
        Benchmark::FilterBench => {
            let pb = progress_bar(w.progress, w.reads, label);
            let r = crate::filterbench::run(&w.filter, &w.keys, w.num, w.reads, &pb)?;
            pb.finish_and_clear();
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
    let pb = progress_bar(w.progress, w.num, label);
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
    pb.finish_and_clear();
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

/// One reader thread: `n` lookups of random keys; returns how many were found.
fn read_loop(
    engine: &dyn Engine,
    w: &Workload,
    kind: ReadKind,
    n: u64,
    seed: u64,
    pb: &ProgressBar,
) -> EngineResult<u64> {
    if w.num == 0 {
        return Err("read benchmarks need --num >= 1".into());
    }
    let chooser = KeyChooser::new(w.distribution, w.num, w.zipf_s)?;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut key = vec![0u8; w.keys.key_size()];
    w.keys.fill(&mut key, 0, false);
    let mut found = 0u64;
    let expected = w.values.size();
    for j in 0..n {
        let i = chooser.next(&mut rng);
        let missing = match kind {
            ReadKind::Existing => false,
            ReadKind::Missing => true,
            ReadKind::Mixed(alpha) => !rng.gen_bool(alpha),
        };
        w.keys.refill(&mut key, i, missing);
        if let Some(len) = engine.get_len(&key)? {
            if len != expected {
                return Err(format!(
                    "{} returned a {len}-byte value for key {:?}, expected {expected} bytes \
                     (with --use-existing-db, pass the --value-size the database was filled with)",
                    engine.name(),
                    String::from_utf8_lossy(&key)
                )
                .into());
            }
            found += 1;
        }
        if j % PROGRESS_STEP == PROGRESS_STEP - 1 {
            pb.inc(PROGRESS_STEP);
        }
    }
    Ok(found)
}

/// `w.reads` lookups split across `w.threads` threads.
fn read_random(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    kind: ReadKind,
    label: String,
) -> EngineResult<Measurement> {
    let pb = progress_bar(w.progress, w.reads, label);
    let threads = w.threads.max(1);
    let share =
        |t: usize| w.reads / threads as u64 + u64::from((t as u64) < w.reads % threads as u64);
    let start = Instant::now();
    let found = if threads == 1 {
        read_loop(
            engine.as_ref(),
            w,
            kind,
            w.reads,
            reader_seed(w.seed, kind, 0),
            &pb,
        )?
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
                        n,
                        reader_seed(w.seed, kind, t),
                        &pb,
                    )
                })
            })
            .collect();
        join_sum(handles)?
    };
    let seconds = start.elapsed().as_secs_f64();
    pb.finish_and_clear();
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
    let pb = progress_bar(w.progress, 0, label);
    if w.progress {
        pb.enable_steady_tick(std::time::Duration::from_millis(200));
    }
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
    pb.finish_and_clear();
    Ok(Measurement {
        ops: entries,
        seconds,
        found: Some(entries),
        threads,
        extra: None,
        note: None,
    })
}

/// Joins worker threads and sums their results; the first error wins.
fn join_sum(handles: Vec<std::thread::JoinHandle<EngineResult<u64>>>) -> EngineResult<u64> {
    let mut sum = 0u64;
    let mut first_err: Option<BoxError> = None;
    for h in handles {
        match h.join() {
            Ok(Ok(n)) => sum += n,
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
        None => Ok(sum),
    }
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
    fn zipfian_chooser_is_skewed_and_in_range() {
        for num in [1u64, 2, 10, 1000, 1 << 20] {
            let a = scatter_multiplier(num);
            let mut seen = std::collections::HashSet::new();
            for r in 0..num.min(5000) {
                assert!(seen.insert((u128::from(r) * u128::from(a) % u128::from(num)) as u64));
            }
        }
        let c = KeyChooser::new(KeyDistribution::Zipfian, 10_000, 0.99).unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..100_000 {
            let i = c.next(&mut rng);
            assert!(i < 10_000);
            *counts.entry(i).or_insert(0u32) += 1;
        }
        // Rank 1 (index 0) is the most popular key, far above the uniform 10.
        let top = counts[&0];
        assert!(top > 5_000, "{top}");
        assert!(counts.values().all(|&c| c <= top));
        let u = KeyChooser::new(KeyDistribution::Uniform, 10_000, 0.99).unwrap();
        assert!((0..1000).all(|_| u.next(&mut rng) < 10_000));
        assert!(KeyChooser::new(KeyDistribution::Uniform, 0, 0.99).is_err());
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
