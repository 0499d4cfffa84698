//! `mergerandom` (db_bench's): `--num` merges of a u64 add of 1 into
//! uniformly random counters of their own key space (counter `i` in the
//! keyspace of key `i`, with `--keyspaces`), then an untimed check that the
//! counters hold what was merged into them.

use super::{Measurement, Workload, PROGRESS_STEP};
use crate::engines::{Engine, EngineResult};
use crate::progress::Progress;
use rand::{rngs::SmallRng, Rng, SeedableRng};
use std::time::Instant;

/// Counters read back after the merges at most: every counter up to this
/// `--num`, else every `ceil(num / CHECKED_COUNTERS)`-th.
const CHECKED_COUNTERS: u64 = 65_536;

/// Added to `--seed` for the stream of counters `mergerandom` merges into.
const MERGE_SALT: u64 = 0x3e76_e000;

/// The operand of every merge: 1 as a little-endian u64.
const ONE: [u8; 8] = 1u64.to_le_bytes();

/// The counter of each merge: uniform over `0..num`, from a stream of its
/// own (the same in every repeat and engine, and replayed by the check).
fn counters(w: &Workload) -> impl Iterator<Item = u64> {
    let mut rng = SmallRng::seed_from_u64(w.seed.wrapping_add(MERGE_SALT));
    let num = w.num;
    (0..num).map(move |_| rng.gen_range(0..num))
}

/// The counters the check reads back: every `stride`-th of `0..num`.
struct Checked {
    stride: u64,
    len: usize,
}

impl Checked {
    fn new(num: u64) -> Self {
        let stride = num.div_ceil(CHECKED_COUNTERS).max(1);
        Checked {
            stride,
            len: num.div_ceil(stride) as usize,
        }
    }

    /// The slot of counter `i`, if it is checked.
    fn slot(&self, i: u64) -> Option<usize> {
        i.is_multiple_of(self.stride)
            .then_some((i / self.stride) as usize)
    }

    /// The value of each checked counter (0 when missing), each read from
    /// its keyspace.
    fn read(&self, engine: &dyn Engine, w: &Workload) -> EngineResult<Vec<u64>> {
        let mut key = vec![0u8; w.keys.key_size()];
        (0..self.len as u64)
            .map(|s| {
                let i = s * self.stride;
                w.keys.fill_counter(&mut key, i);
                read_counter(engine, w.keyspace_of(i), &key)
            })
            .collect()
    }
}

/// The value of counter `key` in keyspace `ks`: 0 when missing, else its
/// 8-byte little-endian u64.
fn read_counter(engine: &dyn Engine, ks: Option<usize>, key: &[u8]) -> EngineResult<u64> {
    match super::get(engine, ks, key)? {
        None => Ok(0),
        Some(v) => match <[u8; 8]>::try_from(v.as_slice()) {
            Ok(b) => Ok(u64::from_le_bytes(b)),
            Err(_) => Err(format!(
                "mergerandom: {} returned a {}-byte value for counter {:?}, expected 8 bytes",
                engine.name(),
                v.len(),
                String::from_utf8_lossy(key)
            )
            .into()),
        },
    }
}

/// `mergerandom`: `w.num` one-operand merges (no sync, like the fills'
/// writes) on one thread; ops = merges. Before and after the timed part the
/// checked counters are read; each must have grown by the merges it got, or
/// the run fails.
pub(super) fn merge_random(
    engine: &dyn Engine,
    w: &Workload,
    label: String,
) -> EngineResult<Measurement> {
    if !engine.supports_merge() {
        return Err(format!(
            "mergerandom needs a merge operator, which {} lacks",
            engine.name()
        )
        .into());
    }
    if w.num == 0 {
        return Err("mergerandom needs --num >= 1".into());
    }
    let checked = Checked::new(w.num);
    // What the counters held before (an earlier mergerandom, --use-existing-db).
    let before = checked.read(engine, w)?;

    let pb = Progress::start(w.progress, w.num, label);
    let mut key = vec![0u8; w.keys.key_size()];
    let start = Instant::now();
    for (j, i) in counters(w).enumerate() {
        w.keys.fill_counter(&mut key, i);
        super::merge(engine, w.keyspace_of(i), &key, &ONE)?;
        if j as u64 % PROGRESS_STEP == PROGRESS_STEP - 1 {
            pb.inc(PROGRESS_STEP);
        }
    }
    let seconds = start.elapsed().as_secs_f64();
    pb.finish();

    // Untimed: replay the stream to count the merges of each checked counter.
    let mut merged = vec![0u64; checked.len];
    for i in counters(w) {
        if let Some(s) = checked.slot(i) {
            merged[s] += 1;
        }
    }
    let after = checked.read(engine, w)?;
    for (s, ((b, a), m)) in before.iter().zip(&after).zip(&merged).enumerate() {
        if *a != b.wrapping_add(*m) {
            return Err(format!(
                "mergerandom: {} counter {:?} holds {a} after {m} merge(s) of 1 onto {b}",
                engine.name(),
                String::from_utf8_lossy(&w.keys.counter_key(s as u64 * checked.stride)),
            )
            .into());
        }
    }
    let merges_checked: u64 = merged.iter().sum();
    let note = if checked.stride == 1 {
        format!(
            "all {} counters checked ({merges_checked} merges)",
            checked.len
        )
    } else {
        format!(
            "{} of {} counters checked ({merges_checked} merges)",
            checked.len, w.num
        )
    };
    Ok(Measurement {
        ops: w.num,
        seconds,
        found: None,
        threads: 1,
        extra: Some(serde_json::json!({
            "counters": w.num,
            "counters_checked": checked.len,
            "merges_checked": merges_checked,
        })),
        note: Some(note),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::sievedb::SieveDb;
    use crate::engines::BoxError;
    use crate::workload::keys::{KeyGen, ValueGen};
    use std::sync::Arc;

    fn workload(num: u64) -> Workload {
        Workload {
            keys: KeyGen::new(16, num).unwrap(),
            values: Arc::new(ValueGen::new(100, 301)),
            num,
            reads: 0,
            threads: 1,
            seed: 301,
            progress: crate::progress::ProgressMode::Hidden,
            alpha: 0.5,
            filter: sievedb::FilterOptions::default(),
            distribution: crate::bench::KeyDistribution::Uniform,
            zipf_s: 0.99,
            hot_shift_every: None,
            hotspot: (
                crate::bench::DEFAULT_HOT_DATA_FRACTION,
                crate::bench::DEFAULT_HOT_OP_FRACTION,
            ),
            duration: None,
            sample_interval: None,
            keyspaces: 1,
            txn: crate::cli::txn_args::TxnArgs::default(),
            seek_nexts: 0,
        }
    }

    fn open(dir: &std::path::Path) -> SieveDb {
        let cfg = crate::BenchArgs {
            write_buffer_size: 16 << 10,
            ..crate::BenchArgs::default()
        }
        .engine_config();
        SieveDb::open(&dir.join("sievedb"), &cfg).unwrap()
    }

    #[test]
    fn checked_counters_cover_small_runs_and_sample_large_ones() {
        let c = Checked::new(1000);
        assert_eq!((c.stride, c.len), (1, 1000));
        assert_eq!(c.slot(999), Some(999));
        let c = Checked::new(CHECKED_COUNTERS * 3 + 1);
        assert_eq!((c.stride, c.len as u64), (4, CHECKED_COUNTERS * 3 / 4 + 1));
        assert_eq!((c.slot(8), c.slot(9)), (Some(2), None));
        assert_eq!(c.slot(CHECKED_COUNTERS * 3), Some(c.len - 1));
    }

    #[test]
    fn merges_every_operand_into_its_counter() {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path());
        let w = workload(3000);
        let m = merge_random(&db, &w, "t".into()).unwrap();
        assert_eq!((m.ops, m.threads), (3000, 1));
        assert_eq!(m.extra.as_ref().unwrap()["merges_checked"], 3000);
        // Every counter, flushed or not, adds up to the merges.
        let sum: u64 = (0..3000)
            .map(|i| read_counter(&db, None, &w.keys.counter_key(i)).unwrap())
            .sum();
        assert_eq!(sum, 3000);
        let st = db.stats().unwrap();
        assert_eq!((st.merges, st.puts), (3000, 0));
        // A second run counts on from what the first left.
        let m = merge_random(&db, &w, "t".into()).unwrap();
        assert!(m.note.unwrap().starts_with("all 3000 counters checked"));
        // No key a fill writes, or a missing one, was touched.
        for i in 0..3000 {
            assert_eq!(db.get(&w.keys.key(i, false)).unwrap(), None);
            assert_eq!(db.get(&w.keys.key(i, true)).unwrap(), None);
        }
    }

    /// An engine whose merge overwrites instead of adding (last writer wins).
    struct Overwrites(SieveDb);

    impl Engine for Overwrites {
        fn name(&self) -> &'static str {
            "overwrites"
        }
        fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
            self.0.put(key, value)
        }
        fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
            self.0.get(key)
        }
        fn write_batch(&self, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
            self.0.write_batch(entries)
        }
        fn scan_all(&self) -> EngineResult<u64> {
            self.0.scan_all()
        }
        fn flush(&self) -> EngineResult<()> {
            self.0.flush()
        }
        fn settings(&self) -> serde_json::Value {
            self.0.settings()
        }
        fn supports_merge(&self) -> bool {
            true
        }
        fn merge(&self, key: &[u8], operand: &[u8]) -> EngineResult<()> {
            self.0.put(key, operand)
        }
    }

    #[test]
    fn a_wrong_merge_fails_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let w = workload(500);
        let e: BoxError = merge_random(&Overwrites(open(dir.path())), &w, "t".into()).unwrap_err();
        assert!(e.to_string().contains("overwrites counter"), "{e}");
    }

    #[test]
    fn engines_without_merge_are_refused() {
        struct NoMerge(SieveDb);
        impl Engine for NoMerge {
            fn name(&self) -> &'static str {
                "nomerge"
            }
            fn put(&self, key: &[u8], value: &[u8]) -> EngineResult<()> {
                self.0.put(key, value)
            }
            fn get(&self, key: &[u8]) -> EngineResult<Option<Vec<u8>>> {
                self.0.get(key)
            }
            fn write_batch(&self, entries: &[(&[u8], &[u8])]) -> EngineResult<()> {
                self.0.write_batch(entries)
            }
            fn scan_all(&self) -> EngineResult<u64> {
                self.0.scan_all()
            }
            fn flush(&self) -> EngineResult<()> {
                self.0.flush()
            }
            fn settings(&self) -> serde_json::Value {
                self.0.settings()
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let e = NoMerge(open(dir.path()));
        assert!(!e.supports_merge());
        assert!(e
            .merge(b"k", &ONE)
            .unwrap_err()
            .to_string()
            .contains("no merge operator"));
        let err = merge_random(&e, &workload(10), "t".into()).unwrap_err();
        assert!(err.to_string().contains("needs a merge operator"), "{err}");
    }
}
