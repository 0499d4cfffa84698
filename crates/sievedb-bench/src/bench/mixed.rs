//! Reads mixed with writes: `readwhilewriting` (readers, one writer and a
//! statistics [`Sampler`]) and the YCSB core workloads A and B.

use super::read::{check_len, read_loop, reader_seed, ReadLimit};
use super::{
    join_all, progress_of, split_over_threads, thread_share, Measurement, ReadKind, Workload,
    PROGRESS_STEP,
};
use crate::engines::{Engine, EngineResult};
use crate::progress::Progress;
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

/// Share of lookups in YCSB workload A (the rest are updates).
pub(super) const YCSB_A_READS: f64 = 0.5;
/// Share of lookups in YCSB workload B (the rest are updates).
pub(super) const YCSB_B_READS: f64 = 0.95;

/// The peak filter memory seen by a `Sampler`.
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
        if let Err(e) = super::write_one(engine, w.keyspace_of(i), &key, w.values.value(i)) {
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
pub(super) fn read_while_writing(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    label: String,
) -> EngineResult<Measurement> {
    if w.num == 0 {
        return Err("readwhilewriting needs --num >= 1".into());
    }
    let threads = w.threads.max(1);
    let pb = progress_of(w, label);
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
        None => thread_share(w.reads, threads, t),
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

/// What one YCSB thread did: reads, reads that found their key, updates.
#[derive(Clone, Copy, Default)]
struct YcsbCounts {
    reads: u64,
    found: u64,
    updates: u64,
}

/// The seed of YCSB thread `t` (thread 0's is the one-thread run's, so a
/// one-thread run draws what it always drew).
fn ycsb_seed(base: u64, t: usize) -> u64 {
    base.wrapping_add(0x7c5b_0000)
        .wrapping_add((t as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
}

/// A YCSB core workload: `w.reads` operations split over `w.threads`
/// threads, on keys of the configured distribution, each a lookup with
/// probability `read_share`, else an update (the key rewritten with its
/// generated value). Each thread draws from its own seeded stream.
pub(super) fn ycsb(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    read_share: f64,
    label: String,
) -> EngineResult<Measurement> {
    let pb = Progress::start(w.progress, w.reads, label);
    let threads = w.threads.max(1);
    let start = Instant::now();
    let counts = split_over_threads(engine, w, w.reads, &pb, move |engine, w, n, t, pb| {
        ycsb_loop(engine, w, read_share, n, ycsb_seed(w.seed, t), pb)
    })?;
    let seconds = start.elapsed().as_secs_f64();
    pb.finish();
    let total = counts
        .iter()
        .fold(YcsbCounts::default(), |a, c| YcsbCounts {
            reads: a.reads + c.reads,
            found: a.found + c.found,
            updates: a.updates + c.updates,
        });
    let YcsbCounts {
        reads,
        found,
        updates,
    } = total;
    Ok(Measurement {
        ops: w.reads,
        seconds,
        found: Some(found),
        threads,
        extra: Some(serde_json::json!({
            "reads": reads,
            "updates": updates,
            "read_found": found,
        })),
        note: Some(format!("{reads} reads ({found} found), {updates} updates")),
    })
}

/// One YCSB thread: `ops` operations drawn with `seed`.
fn ycsb_loop(
    engine: &dyn Engine,
    w: &Workload,
    read_share: f64,
    ops: u64,
    seed: u64,
    pb: &Progress,
) -> EngineResult<YcsbCounts> {
    let mut chooser = w.chooser()?;
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut key = vec![0u8; w.keys.key_size()];
    w.keys.fill(&mut key, 0, false);
    let expected = w.values.size();
    let mut c = YcsbCounts::default();
    for j in 0..ops {
        let i = chooser.next(&mut rng);
        w.keys.refill(&mut key, i, false);
        let ks = w.keyspace_of(i);
        if rng.gen_bool(read_share) {
            c.reads += 1;
            if let Some(len) = super::get_len(engine, ks, &key)? {
                check_len(engine, &key, len, expected)?;
                c.found += 1;
            }
        } else {
            c.updates += 1;
            super::write_one(engine, ks, &key, w.values.value(i))?;
        }
        if j % PROGRESS_STEP == PROGRESS_STEP - 1 {
            pb.inc(PROGRESS_STEP);
        }
    }
    Ok(c)
}

#[cfg(test)]
mod tests {
    use super::*;

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
}
