//! The transactional benchmarks (engines with transactions: sievedb,
//! RocksDB, fjall; skipped with a note for LevelDB), on the keys of a fill:
//!
//! - `txnrandom` (db_bench's `RandomTransaction`, low contention) and
//!   `txnrandomhot` (high contention): `--threads` threads each run
//!   read-modify-write transactions of `--txn-keys` K distinct keys: read
//!   every key for update (sievedb and RocksDB `get_for_update`, fjall `get`,
//!   which its optimistic transactions track), add 1 to a little-endian
//!   u64 counter in the first 8 bytes of its value (the value keeps its
//!   size), write every key, commit (synced with `--sync`). `txnrandom`
//!   draws the keys from all of `--num` (`--distribution`, uniform by
//!   default); `txnrandomhot` uniformly from a hot set of `--txn-hot-keys`
//!   keys spread evenly over `--num`. The concurrency control is
//!   `--txn-mode`'s (see [`crate::cli::txn_args::TxnMode`]).
//!
//!   An abort of the concurrency control (a conflict at commit, a lock
//!   wait that timed out, a deadlock victim, a snapshot the memtables no
//!   longer reach back to) is counted by kind and the transaction is
//!   retried at once with the same keys, as an application would redo its
//!   work, until it commits; db_bench instead counts the failure and moves
//!   on to new keys. Every committed transaction therefore is the next of
//!   its thread's seeded stream, so the stream can be replayed. The run
//!   ends after `--reads` commits in all (split over the threads) or after
//!   `--duration` seconds; a transaction still retrying then is abandoned
//!   (counted, never committed).
//!
//!   Reported: commits (ops, so ops/sec is commits/s), aborts and aborts/s,
//!   and the latency of a committed transaction from its first begin to its
//!   commit, retries included (p50, p90, p99, p99.9, max, mean, from a
//!   log-linear histogram within 1.6%). MB/s counts K keys and values per
//!   commit. After the timed part, the counters of up to 65,536 keys (every
//!   hot key; else an even sample of `--num`) are read back: each must have
//!   grown by exactly the commits that touched it, replayed from the
//!   threads' streams, or the run fails (a lost update, or a commit that
//!   was not atomic, would show).
//! - `txnreadrandom`: `readrandom` through read-only transactions: the same
//!   lookups (the same seeded key stream per thread as `readrandom`), each
//!   K of them in one transaction (begin, K gets at its snapshot, end:
//!   sievedb `db.transaction()`, `tx.get`, `commit`; RocksDB a transaction
//!   with a snapshot; fjall `read_tx`). ops = lookups, so micros/op compares
//!   with `readrandom`'s directly.

use super::read::{check_len, reader_seed};
use super::{
    join_all, progress_of, split_over_threads, thread_share, Measurement, ReadKind, Workload,
    PROGRESS_STEP,
};
use crate::engines::{AbortKind, Engine, EngineResult, TxnOutcome};
use crate::progress::Progress;
use crate::workload::distribution::KeyChooser;
use rand::{rngs::SmallRng, Rng, SeedableRng};
use serde_json::json;
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Barrier};
use std::time::Instant;

/// Keys whose counters are checked after a run, at most.
const CHECKED_KEYS: u64 = 65_536;

/// Attempts of one transaction before the run gives up on it (a livelock).
const MAX_ATTEMPTS: u64 = 1_000_000;

/// Draws of a key before a transaction's keys count as impossible to make
/// distinct (per key).
const MAX_DRAWS_PER_KEY: usize = 10_000;

/// How the keys of a transaction are drawn.
#[derive(Clone)]
enum Source {
    /// From all of `--num`, by the workload's distribution (low contention).
    All(KeyChooser),
    /// Uniformly from `n` keys spread evenly over `num` (high contention).
    Hot { n: u64, num: u64 },
}

/// The seeded stream of one thread's transactions: each a set of distinct
/// key indices, drawn the same way in the run and in its replay.
#[derive(Clone)]
struct KeyStream {
    source: Source,
    rng: SmallRng,
    keys: usize,
}

impl KeyStream {
    fn new(w: &Workload, hot: bool, t: usize) -> EngineResult<Self> {
        let salt: u64 = if hot { 0x7a11_4000 } else { 0x7a11_0000 };
        let seed = w
            .seed
            .wrapping_add(salt)
            .wrapping_add(1000 * (t as u64 + 1));
        let source = if hot {
            Source::Hot {
                n: hot_keys(w),
                num: w.num,
            }
        } else {
            Source::All(w.chooser()?)
        };
        Ok(KeyStream {
            source,
            rng: SmallRng::seed_from_u64(seed),
            keys: w.txn.txn_keys,
        })
    }

    fn draw(&mut self) -> u64 {
        match &mut self.source {
            Source::All(c) => c.next(&mut self.rng),
            Source::Hot { n, num } => hot_index(self.rng.gen_range(0..*n), *n, *num),
        }
    }

    /// The next transaction's key indices, into `out`.
    fn next_set(&mut self, out: &mut Vec<u64>) -> EngineResult<()> {
        out.clear();
        let mut draws = 0;
        while out.len() < self.keys {
            let i = self.draw();
            if !out.contains(&i) {
                out.push(i);
            }
            draws += 1;
            if draws > MAX_DRAWS_PER_KEY * self.keys {
                return Err(format!(
                    "cannot draw {} distinct keys for a transaction from this distribution",
                    self.keys
                )
                .into());
            }
        }
        Ok(())
    }
}

/// Size of the hot set of `txnrandomhot` (at most `--num`).
fn hot_keys(w: &Workload) -> u64 {
    w.txn.txn_hot_keys.min(w.num).max(1)
}

/// Key index of hot key `j` of `n` spread over `num`.
fn hot_index(j: u64, n: u64, num: u64) -> u64 {
    (u128::from(j) * u128::from(num) / u128::from(n)) as u64
}

/// Latencies in nanoseconds, in log-linear buckets: exact below 64 ns, then
/// 64 buckets per power of two (each within 1.6% of its values).
#[derive(Clone, Debug)]
pub struct Histogram {
    counts: Vec<u64>,
    n: u64,
    sum: u128,
    max: u64,
}

/// Sub-buckets per power of two, as a power of two.
const SUB_BITS: u32 = 6;

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: vec![0; ((64 - SUB_BITS as usize) + 1) << SUB_BITS],
            n: 0,
            sum: 0,
            max: 0,
        }
    }
}

impl Histogram {
    fn index(v: u64) -> usize {
        if v < (1 << SUB_BITS) {
            return v as usize;
        }
        let msb = 63 - v.leading_zeros();
        let shift = msb - SUB_BITS;
        let sub = ((v >> shift) & ((1 << SUB_BITS) - 1)) as usize;
        ((shift as usize + 1) << SUB_BITS) + sub
    }

    /// The value bucket `i` stands for (the middle of its values).
    fn value(i: usize) -> u64 {
        if i < (1 << SUB_BITS) {
            return i as u64;
        }
        let shift = (i >> SUB_BITS) - 1;
        let sub = (i & ((1 << SUB_BITS) - 1)) as u64;
        (((1 << SUB_BITS) + sub) << shift) + ((1u64 << shift) >> 1)
    }

    /// Counts one latency of `ns` nanoseconds.
    pub fn record(&mut self, ns: u64) {
        self.counts[Self::index(ns)] += 1;
        self.n += 1;
        self.sum += u128::from(ns);
        self.max = self.max.max(ns);
    }

    /// Adds every latency of `other`.
    pub fn merge(&mut self, other: &Histogram) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.n += other.n;
        self.sum += other.sum;
        self.max = self.max.max(other.max);
    }

    /// Latencies counted.
    pub fn count(&self) -> u64 {
        self.n
    }

    /// The `q`-quantile (0 < q ≤ 1) in nanoseconds; 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.n == 0 {
            return 0;
        }
        #[expect(
            clippy::cast_sign_loss,
            reason = "q is clamped to (0, 1] and n is a count, so the product is not negative"
        )]
        let rank =
            ((q.clamp(f64::MIN_POSITIVE, 1.0) * self.n as f64).ceil() as u64).clamp(1, self.n);
        if rank == self.n {
            return self.max;
        }
        let mut seen = 0;
        for (i, c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::value(i).min(self.max);
            }
        }
        self.max
    }

    /// Mean in nanoseconds; 0 when empty.
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum as f64 / self.n as f64
        }
    }
}

/// What one thread of `txnrandom` did.
#[derive(Default)]
struct ThreadResult {
    commits: u64,
    aborts: [u64; AbortKind::ALL.len()],
    abandoned: u64,
    most_attempts: u64,
    latency: Histogram,
}

/// When the threads stop.
#[derive(Clone, Copy)]
struct Limit<'a> {
    commits: u64,
    deadline: Option<Instant>,
    stop: &'a AtomicBool,
}

impl Limit<'_> {
    fn over(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d) || self.stop.load(Ordering::Relaxed)
    }
}

/// Adds 1 to the little-endian u64 in the first 8 bytes of `old` and writes
/// the result into `out`; `old` must be a value of `expected` bytes.
fn bump(
    engine: &dyn Engine,
    old: Option<&[u8]>,
    out: &mut Vec<u8>,
    expected: usize,
) -> EngineResult<()> {
    let old = old.ok_or_else(|| {
        format!(
            "txnrandom: {} has no value for a key of the fill (run a fill first)",
            engine.name()
        )
    })?;
    check_len(engine, b"(a txnrandom key)", old.len(), expected)?;
    out.extend_from_slice(old);
    let mut c = [0u8; 8];
    c.copy_from_slice(&out[..8]);
    out[..8].copy_from_slice(&u64::from_le_bytes(c).wrapping_add(1).to_le_bytes());
    Ok(())
}

/// One thread of `txnrandom`: its stream's transactions until `limit`.
fn txn_thread(
    engine: &dyn Engine,
    w: &Workload,
    mut stream: KeyStream,
    limit: Limit<'_>,
    pb: &Progress,
) -> EngineResult<ThreadResult> {
    let k = w.txn.txn_keys;
    let expected = w.values.size();
    let mut bufs: Vec<Vec<u8>> = (0..k)
        .map(|_| {
            let mut b = vec![0u8; w.keys.key_size()];
            w.keys.fill(&mut b, 0, false);
            b
        })
        .collect();
    let mut values: Vec<Vec<u8>> = vec![Vec::with_capacity(expected); k];
    let mut set = Vec::with_capacity(k);
    let mut r = ThreadResult::default();
    let mut update =
        |_: usize, old: Option<&[u8]>, out: &mut Vec<u8>| bump(engine, old, out, expected);
    'txns: while r.commits < limit.commits {
        if limit.over() {
            break;
        }
        stream.next_set(&mut set)?;
        for (b, &i) in bufs.iter_mut().zip(&set) {
            w.keys.refill(b, i, false);
        }
        let keys: Vec<&[u8]> = bufs.iter().map(Vec::as_slice).collect();
        let start = Instant::now();
        let mut attempts = 0u64;
        loop {
            attempts += 1;
            match engine.txn_update(&keys, &mut values, &mut update)? {
                TxnOutcome::Committed => break,
                TxnOutcome::Aborted(kind) => {
                    r.aborts[kind as usize] += 1;
                    if limit.over() {
                        r.abandoned += 1;
                        break 'txns;
                    }
                    if attempts >= MAX_ATTEMPTS {
                        return Err(format!(
                            "txnrandom: {} aborted one transaction {attempts} times in a row",
                            engine.name()
                        )
                        .into());
                    }
                }
            }
        }
        r.latency
            .record(u64::try_from(start.elapsed().as_nanos()).unwrap_or(u64::MAX));
        r.most_attempts = r.most_attempts.max(attempts);
        r.commits += 1;
        if r.commits % PROGRESS_STEP == 0 {
            pb.inc(PROGRESS_STEP);
        }
    }
    Ok(r)
}

/// The keys whose counters are checked: every hot key, or every
/// `ceil(num / CHECKED_KEYS)`-th key; index → slot.
fn checked_keys(w: &Workload, hot: bool) -> HashMap<u64, usize> {
    let indices: Vec<u64> = if hot {
        let n = hot_keys(w);
        let stride = n.div_ceil(CHECKED_KEYS).max(1);
        (0..n)
            .step_by(stride as usize)
            .map(|j| hot_index(j, n, w.num))
            .collect()
    } else {
        let stride = w.num.div_ceil(CHECKED_KEYS).max(1);
        (0..w.num).step_by(stride as usize).collect()
    };
    indices
        .into_iter()
        .enumerate()
        .map(|(s, i)| (i, s))
        .collect()
}

/// The counters of the checked keys, by slot.
fn read_counters(
    engine: &dyn Engine,
    w: &Workload,
    checked: &HashMap<u64, usize>,
) -> EngineResult<Vec<u64>> {
    let mut out = vec![0u64; checked.len()];
    for (&i, &s) in checked {
        let key = w.keys.key(i, false);
        let v = engine.get(&key)?.ok_or_else(|| {
            format!(
                "txnrandom: {} has no value for key {:?} of the fill",
                engine.name(),
                String::from_utf8_lossy(&key)
            )
        })?;
        let mut c = [0u8; 8];
        c.copy_from_slice(
            v.get(..8)
                .ok_or("txnrandom: a value shorter than 8 bytes")?,
        );
        out[s] = u64::from_le_bytes(c);
    }
    Ok(out)
}

/// `txnrandom` (`hot`: `txnrandomhot`); see the module docs.
pub(super) fn txn_random(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    hot: bool,
    label: String,
) -> EngineResult<Measurement> {
    if !engine.supports_txn() {
        return Err(format!("{} has no transactions", engine.name()).into());
    }
    let threads = w.threads.max(1);
    let streams: Vec<KeyStream> = (0..threads)
        .map(|t| KeyStream::new(w, hot, t))
        .collect::<EngineResult<_>>()?;
    let checked = checked_keys(w, hot);
    let before = read_counters(engine.as_ref(), w, &checked)?;

    let pb = progress_of(w, label);
    let stop = Arc::new(AtomicBool::new(false));
    let started = Arc::new(Barrier::new(threads + 1));
    let share = |t: usize| match w.duration {
        Some(_) => u64::MAX,
        None => thread_share(w.reads, threads, t),
    };
    // The deadline is set once every thread is ready, through this slot.
    let deadline_slot = Arc::new(std::sync::OnceLock::<Option<Instant>>::new());
    let handles: Vec<_> = streams
        .iter()
        .cloned()
        .enumerate()
        .map(|(t, stream)| {
            let (engine, w, pb, stop) =
                (Arc::clone(engine), w.clone(), pb.clone(), Arc::clone(&stop));
            let (started, slot) = (Arc::clone(&started), Arc::clone(&deadline_slot));
            let commits = share(t);
            std::thread::spawn(move || {
                started.wait();
                let limit = Limit {
                    commits,
                    deadline: slot.get().copied().flatten(),
                    stop: &stop,
                };
                let r = txn_thread(engine.as_ref(), &w, stream, limit, &pb);
                if r.is_err() {
                    stop.store(true, Ordering::Relaxed);
                }
                r
            })
        })
        .collect();
    let start = Instant::now();
    let _ = deadline_slot.set(w.duration.map(|d| start + d));
    started.wait();
    let results = join_all(handles);
    let seconds = start.elapsed().as_secs_f64();
    pb.finish();
    let results = results?;

    // Untimed: replay each thread's committed transactions onto the checked keys.
    let mut grew = vec![0u64; checked.len()];
    let mut set = Vec::new();
    for (stream, r) in streams.into_iter().zip(&results) {
        let mut stream = stream;
        for _ in 0..r.commits {
            stream.next_set(&mut set)?;
            for i in &set {
                if let Some(&s) = checked.get(i) {
                    grew[s] += 1;
                }
            }
        }
    }
    let after = read_counters(engine.as_ref(), w, &checked)?;
    for (&i, &s) in &checked {
        if after[s] != before[s].wrapping_add(grew[s]) {
            return Err(format!(
                "txnrandom: {} key {:?} counts {} after {} committed increment(s) of {} \
                 (a lost update or a torn commit)",
                engine.name(),
                String::from_utf8_lossy(&w.keys.key(i, false)),
                after[s],
                grew[s],
                before[s]
            )
            .into());
        }
    }

    let mut latency = Histogram::default();
    let mut aborts = [0u64; AbortKind::ALL.len()];
    let (mut commits, mut abandoned, mut most_attempts) = (0u64, 0u64, 0u64);
    for r in &results {
        latency.merge(&r.latency);
        for (a, b) in aborts.iter_mut().zip(&r.aborts) {
            *a += b;
        }
        commits += r.commits;
        abandoned += r.abandoned;
        most_attempts = most_attempts.max(r.most_attempts);
    }
    let aborted: u64 = aborts.iter().sum();
    let per_sec = |n: u64| {
        if seconds > 0.0 {
            n as f64 / seconds
        } else {
            0.0
        }
    };
    let us = |ns: u64| ns as f64 / 1000.0;
    let (p50, p99) = (us(latency.quantile(0.50)), us(latency.quantile(0.99)));
    let mut extra = json!({
        "txn_mode": w.txn.txn_mode.name(),
        "contention": if hot { "high" } else { "low" },
        "txn_keys": w.txn.txn_keys,
        "hot_keys": hot.then(|| hot_keys(w)),
        "commits": commits,
        "aborts": aborted,
        "attempts": commits + aborted,
        "abandoned": abandoned,
        "most_attempts": most_attempts,
        "commits_per_sec": per_sec(commits),
        "aborts_per_sec": per_sec(aborted),
        "abort_ratio": if commits + aborted > 0 {
            aborted as f64 / (commits + aborted) as f64
        } else {
            0.0
        },
        "latency_of": "a committed transaction, first begin to commit, retries included",
        "p50_us": p50,
        "p90_us": us(latency.quantile(0.90)),
        "p99_us": p99,
        "p999_us": us(latency.quantile(0.999)),
        "max_us": us(latency.max),
        "mean_us": latency.mean() / 1000.0,
        "retry": "at once, same keys, until it commits (abandoned at the deadline)",
        "duration_secs": w.duration.map(|d| d.as_secs_f64()),
        "counters_checked": checked.len(),
        "increments_checked": grew.iter().sum::<u64>(),
    });
    for (kind, n) in AbortKind::ALL.iter().zip(aborts) {
        extra[format!("aborts_{}", kind.name())] = json!(n);
    }
    let note = format!(
        "{commits} commits, {aborted} aborts ({:.0}/s), p50 {p50:.1} us, p99 {p99:.1} us",
        per_sec(aborted)
    );
    Ok(Measurement {
        ops: commits,
        seconds,
        found: None,
        threads,
        extra: Some(extra),
        note: Some(note),
    })
}

/// One reader of `txnreadrandom`: `n` lookups, `k` per read-only
/// transaction; returns the lookups that found a value.
fn txn_read_loop(
    engine: &dyn Engine,
    w: &Workload,
    n: u64,
    seed: u64,
    pb: &Progress,
) -> EngineResult<u64> {
    let mut chooser = w.chooser()?;
    let mut rng = SmallRng::seed_from_u64(seed);
    let k = w.txn.txn_keys.max(1);
    let mut bufs: Vec<Vec<u8>> = (0..k)
        .map(|_| {
            let mut b = vec![0u8; w.keys.key_size()];
            w.keys.fill(&mut b, 0, false);
            b
        })
        .collect();
    let mut lens = vec![None; k];
    let expected = w.values.size();
    let (mut done, mut found) = (0u64, 0u64);
    let mut since_progress = 0u64;
    while done < n {
        let batch = (n - done).min(k as u64) as usize;
        for b in &mut bufs[..batch] {
            w.keys.refill(b, chooser.next(&mut rng), false);
        }
        let keys: Vec<&[u8]> = bufs[..batch].iter().map(Vec::as_slice).collect();
        engine.txn_get_lens(&keys, &mut lens[..batch])?;
        for (key, len) in keys.iter().zip(&lens[..batch]) {
            if let Some(len) = *len {
                check_len(engine, key, len, expected)?;
                found += 1;
            }
        }
        done += batch as u64;
        since_progress += batch as u64;
        if since_progress >= PROGRESS_STEP {
            pb.inc(since_progress);
            since_progress = 0;
        }
    }
    Ok(found)
}

/// `txnreadrandom`: `w.reads` lookups through read-only transactions of
/// `--txn-keys` lookups each, split across `w.threads` threads.
pub(super) fn txn_read_random(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    label: String,
) -> EngineResult<Measurement> {
    if !engine.supports_txn() {
        return Err(format!("{} has no transactions", engine.name()).into());
    }
    if w.num == 0 {
        return Err("read benchmarks need --num >= 1".into());
    }
    let pb = Progress::start(w.progress, w.reads, label);
    let threads = w.threads.max(1);
    let start = Instant::now();
    let found: u64 = split_over_threads(engine, w, w.reads, &pb, |engine, w, n, t, pb| {
        // readrandom's stream of keys, thread by thread.
        let seed = reader_seed(w.seed, ReadKind::Existing, t);
        txn_read_loop(engine, w, n, seed, pb)
    })?
    .into_iter()
    .sum();
    let seconds = start.elapsed().as_secs_f64();
    pb.finish();
    let k = w.txn.txn_keys.max(1) as u64;
    Ok(Measurement {
        ops: w.reads,
        seconds,
        found: Some(found),
        threads,
        extra: Some(json!({
            "txn_keys": k,
            "lookups_per_txn": k,
            "txns": w.reads.div_ceil(k),
        })),
        note: Some(format!("{k} lookup(s) per read-only transaction")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_within_its_precision() {
        let mut h = Histogram::default();
        assert_eq!((h.quantile(0.5), h.count()), (0, 0));
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        for (q, want) in [(0.5, 5_000_000.0), (0.99, 9_900_000.0), (1.0, 10_000_000.0)] {
            let got = h.quantile(q) as f64;
            assert!((got - want).abs() / want < 0.016, "q {q}: {got} vs {want}");
        }
        assert_eq!(h.max, 10_000_000);
        let mut g = Histogram::default();
        g.record(7);
        g.record(u64::MAX);
        assert_eq!(g.quantile(0.5), 7);
        assert_eq!(g.quantile(1.0), u64::MAX);
        h.merge(&g);
        assert_eq!(h.count(), 10_002);
        // Every bucket's value maps back to the bucket.
        for i in 0..h.counts.len() {
            assert_eq!(Histogram::index(Histogram::value(i)), i, "{i}");
        }
    }

    #[test]
    fn hot_keys_are_distinct_and_spread() {
        let idx: Vec<u64> = (0..4).map(|j| hot_index(j, 4, 1000)).collect();
        assert_eq!(idx, [0, 250, 500, 750]);
        assert_eq!(hot_index(99, 100, 100), 99);
        assert_eq!(hot_index(1, 3, u64::MAX), u64::MAX / 3);
    }

    #[test]
    fn bump_adds_one_to_the_counter_and_keeps_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let cfg = crate::BenchArgs::default().engine_config();
        let e = crate::engines::sievedb::SieveDb::open(&dir.path().join("s"), &cfg).unwrap();
        let mut old = u64::MAX.to_le_bytes().to_vec();
        old.extend_from_slice(b"tail");
        let mut out = Vec::new();
        bump(&e, Some(&old), &mut out, 12).unwrap();
        assert_eq!(&out[..8], &0u64.to_le_bytes());
        assert_eq!(&out[8..], b"tail");
        assert!(bump(&e, None, &mut Vec::new(), 12).is_err());
        assert!(bump(&e, Some(&old), &mut Vec::new(), 100).is_err());
    }
}
