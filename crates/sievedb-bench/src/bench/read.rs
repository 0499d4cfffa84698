//! The read benchmarks: random point lookups (`readrandom`, `readmissing`,
//! `readmixed`) split across reader threads, full scans (`readseq`), and
//! seeks (`seekrandom`, `seekmissing`).

use super::{join_sum, split_over_threads, Measurement, ReadKind, Workload, PROGRESS_STEP};
use crate::engines::{Engine, EngineResult};
use crate::progress::Progress;
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

/// Seed of reader thread `t` of a read benchmark (distinct streams per benchmark and thread,
/// identical across repeats and engines).
pub(super) fn reader_seed(base: u64, kind: ReadKind, t: usize) -> u64 {
    let salt: u64 = match kind {
        ReadKind::Existing => 0x4ead_0000,
        ReadKind::Missing => 0x6d15_5100,
        ReadKind::Mixed(_) => 0x3172_ed00,
    };
    base.wrapping_add(salt).wrapping_add(1000 * (t as u64 + 1))
}

/// When a reader thread stops.
#[derive(Clone, Copy)]
pub(super) struct ReadLimit<'a> {
    /// After this many lookups.
    pub(super) n: u64,
    /// Or at this instant (checked every [`DEADLINE_STEP`] lookups).
    pub(super) deadline: Option<Instant>,
    /// Or once this flag is set (another thread failed).
    pub(super) stop: Option<&'a AtomicBool>,
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
pub(super) fn check_len(
    engine: &dyn Engine,
    key: &[u8],
    len: usize,
    expected: usize,
) -> EngineResult<()> {
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
pub(super) fn read_loop(
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
        if let Some(len) = super::get_len(engine, w.keyspace_of(i), &key)? {
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
pub(super) fn read_random(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    kind: ReadKind,
    label: String,
) -> EngineResult<Measurement> {
    let pb = Progress::start(w.progress, w.reads, label);
    let threads = w.threads.max(1);
    let start = Instant::now();
    let found: u64 = split_over_threads(engine, w, w.reads, &pb, move |engine, w, n, t, pb| {
        let seed = reader_seed(w.seed, kind, t);
        read_loop(engine, w, kind, ReadLimit::lookups(n), seed, pb).map(|(_, found)| found)
    })?
    .into_iter()
    .sum();
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

/// `w.reads` seeks split across `w.threads` threads (`seekrandom`: to
/// written keys; `seekmissing`: to missing ones, whose prefix is never
/// written under the grouped key layout), each reading the entry there and
/// up to `w.seek_nexts` more, before the end of the key's prefix under the
/// grouped layout; `found` counts the seeks that read an entry.
pub(super) fn seek_random(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    kind: ReadKind,
    label: String,
) -> EngineResult<Measurement> {
    if w.num == 0 {
        return Err("seek benchmarks need --num >= 1".into());
    }
    if kind == ReadKind::Missing && w.keys.prefix_len().is_none() {
        return Err("seekmissing needs --keys-per-prefix (keys grouped by prefix)".into());
    }
    let pb = Progress::start(w.progress, w.reads, label);
    let threads = w.threads.max(1);
    let start = Instant::now();
    let found: u64 = split_over_threads(engine, w, w.reads, &pb, move |engine, w, n, t, pb| {
        let mut chooser = w.chooser()?;
        let mut rng = SmallRng::seed_from_u64(reader_seed(w.seed, kind, t) ^ 0x5eec);
        let mut key = w.keys.key(0, false);
        let mut upper = Vec::new();
        let mut found = 0u64;
        for j in 0..n {
            let i = chooser.next(&mut rng);
            w.keys.refill(&mut key, i, kind == ReadKind::Missing);
            let bound = w.keys.prefix_len().and_then(|p| {
                upper.clear();
                upper.extend_from_slice(&key[..p]);
                // The digits and marker are never 0xFF: one increment suffices.
                let last = upper.last_mut()?;
                *last += 1;
                Some(upper.as_slice())
            });
            if engine.seek(&key, w.seek_nexts, bound)? > 0 {
                found += 1;
            }
            if j % PROGRESS_STEP == PROGRESS_STEP - 1 {
                pb.inc(PROGRESS_STEP);
            }
        }
        Ok(found)
    })?
    .into_iter()
    .sum();
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
pub(super) fn read_seq(
    engine: &Arc<dyn Engine>,
    w: &Workload,
    label: String,
) -> EngineResult<Measurement> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reader_seeds_differ_per_thread_and_kind() {
        let a = reader_seed(301, ReadKind::Existing, 0);
        assert_ne!(a, reader_seed(301, ReadKind::Existing, 1));
        assert_ne!(a, reader_seed(301, ReadKind::Missing, 0));
        assert_ne!(a, reader_seed(301, ReadKind::Mixed(0.5), 0));
        assert_eq!(a, reader_seed(301, ReadKind::Existing, 0));
    }
}
