//! Stress: writers, readers, snapshots, iterators and background compaction
//! at once for a bounded time, checking invariants throughout:
//! read-your-writes, no resurrected deletes, per-key monotonic reads,
//! snapshot stability and iterator order. `SIEVEDB_STRESS_SECS` sets the
//! duration (default 6 s). Two runs hold filter units under a filter
//! memory budget, so that the budget's thread loads and drops units while
//! the readers probe them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

mod common;
use common::{units_under_a_budget, StopOnPanic};

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sievedb::{CompactionStyle, Db, FilterPolicy, Options, WriteBatch};

const WRITERS: usize = 3;
const KEYS_PER_WRITER: usize = 300;

fn key(w: usize, k: usize) -> Vec<u8> {
    format!("w{w}-k{k:05}").into_bytes()
}

/// Values are `w{writer}-c{counter:012}-` plus padding; counters rise per writer.
fn value(w: usize, counter: u64, pad: usize) -> Vec<u8> {
    let mut v = format!("w{w}-c{counter:012}-").into_bytes();
    v.resize(v.len() + pad, b'.');
    v
}

fn counter_of(key: &[u8], v: &[u8]) -> u64 {
    let ks = String::from_utf8_lossy(key);
    let vs = String::from_utf8_lossy(v);
    let w = ks.split('-').next().unwrap();
    let mut parts = vs.splitn(3, '-');
    assert_eq!(
        parts.next(),
        Some(w),
        "value {vs} under key {ks} from the wrong writer"
    );
    let c = parts.next().and_then(|c| c.strip_prefix('c')).unwrap_or("");
    c.parse()
        .unwrap_or_else(|_| panic!("malformed value {vs} for {ks}"))
}

fn options(style: CompactionStyle, budget: Option<FilterPolicy>) -> Options {
    let mut o = Options::builder()
        .write_buffer_size(32 << 10)
        .target_file_size(16 << 10)
        .level1_size(64 << 10)
        .block_size(1024)
        .level0_compaction_trigger(2)
        .compaction_style(style)
        .block_cache_capacity(256 << 10)
        .build();
    if let Some(policy) = budget {
        // Every lookup counted and a short lifeTime: units move between
        // files all along.
        units_under_a_budget(&mut o, policy);
        o.filter_lifetime = Some(64);
        o.filter_access_sample = Some(1);
    }
    o
}

fn stress(style: CompactionStyle, budget: Option<FilterPolicy>) {
    let secs: u64 = std::env::var("SIEVEDB_STRESS_SECS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(6);
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options(style, budget)).unwrap();
    let stop = AtomicBool::new(false);
    let reads = AtomicU64::new(0);
    let deadline = Instant::now() + Duration::from_secs(secs);
    let models: Vec<BTreeMap<Vec<u8>, Vec<u8>>> = std::thread::scope(|s| {
        // A writer's failed check panics the join below.
        let _guard = StopOnPanic(&stop);
        let writers: Vec<_> = (0..WRITERS)
            .map(|w| {
                let db = &db;
                s.spawn(move || {
                    let mut rng = SmallRng::seed_from_u64(w as u64);
                    let mut model = BTreeMap::new();
                    let mut counter = 0u64;
                    while Instant::now() < deadline {
                        counter += 1;
                        let k = key(w, rng.gen_range(0..KEYS_PER_WRITER));
                        match rng.gen_range(0..10) {
                            0 => {
                                db.delete(&k).unwrap();
                                model.remove(&k);
                            }
                            1 => {
                                let mut b = WriteBatch::new();
                                let mut staged = Vec::new();
                                for _ in 0..rng.gen_range(2..8) {
                                    let k = key(w, rng.gen_range(0..KEYS_PER_WRITER));
                                    let v = value(w, counter, rng.gen_range(0..200));
                                    b.put(&k, &v);
                                    staged.push((k, v));
                                }
                                db.write(b).unwrap();
                                model.extend(staged);
                            }
                            _ => {
                                let v = value(w, counter, rng.gen_range(0..200));
                                db.put(&k, &v).unwrap();
                                model.insert(k.clone(), v);
                            }
                        }
                        // Read-your-writes, and a deleted key stays deleted.
                        assert_eq!(db.get(&k).unwrap(), model.get(&k).cloned(), "writer {w}");
                    }
                    model
                })
            })
            .collect();
        for r in 0..2 {
            let (db, stop, reads) = (&db, &stop, &reads);
            s.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(100 + r);
                let mut seen: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
                while !stop.load(Ordering::Relaxed) {
                    let k = key(rng.gen_range(0..WRITERS), rng.gen_range(0..KEYS_PER_WRITER));
                    if let Some(v) = db.get(&k).unwrap() {
                        let c = counter_of(&k, &v);
                        let last = seen.entry(k.clone()).or_insert(0);
                        assert!(c >= *last, "key {k:?} went back from {last} to {c}");
                        *last = c;
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
        {
            let (db, stop) = (&db, &stop);
            s.spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let snap = db.snapshot();
                    let first: Vec<_> = snap.iter().unwrap().map(|r| r.unwrap()).collect();
                    for pair in first.windows(2) {
                        assert!(pair[0].0 < pair[1].0, "snapshot iteration out of order");
                    }
                    for (k, v) in &first {
                        counter_of(k, v);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                    let again: Vec<_> = snap.iter().unwrap().map(|r| r.unwrap()).collect();
                    assert!(first == again, "snapshot changed between two iterations");
                    for (k, v) in first.iter().step_by(17) {
                        assert_eq!(snap.get(k).unwrap().as_ref(), Some(v), "snapshot get");
                    }
                }
            });
        }
        {
            let (db, stop) = (&db, &stop);
            s.spawn(move || {
                let mut rng = SmallRng::seed_from_u64(7);
                while !stop.load(Ordering::Relaxed) {
                    let w = rng.gen_range(0..WRITERS);
                    let lo = key(w, rng.gen_range(0..KEYS_PER_WRITER));
                    let mut prev: Option<Vec<u8>> = None;
                    for item in db.range(lo.clone()..).unwrap().take(200) {
                        let (k, v) = item.unwrap();
                        assert!(k >= lo, "range returned a key below its start");
                        if let Some(p) = &prev {
                            assert!(p < &k, "live iteration out of order");
                        }
                        counter_of(&k, &v);
                        prev = Some(k);
                    }
                }
            });
        }
        {
            let (db, stop) = (&db, &stop);
            s.spawn(move || {
                let mut i = 0;
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(300));
                    i += 1;
                    if i % 4 == 0 {
                        db.compact_range::<&[u8], _>(..).unwrap();
                    } else {
                        db.flush().unwrap();
                    }
                }
            });
        }
        let models = writers.into_iter().map(|h| h.join().unwrap()).collect();
        stop.store(true, Ordering::Relaxed);
        models
    });
    let expected: BTreeMap<_, _> = models.into_iter().flatten().collect();
    let check = |db: &Db, when: &str| {
        let got: BTreeMap<_, _> = db.iter().unwrap().map(|r| r.unwrap()).collect();
        assert!(
            got == expected,
            "final state differs from the writers' models {when}"
        );
    };
    check(&db, "before reopen");
    let stats = db.stats();
    assert!(stats.compactions > 0, "stress ran no compaction");
    assert!(reads.load(Ordering::Relaxed) > 0);
    if budget.is_some() {
        assert!(
            stats.filter_unit_loads > 0 && stats.filter_unit_evictions > 0,
            "the budget moved no unit: {} loads, {} evictions",
            stats.filter_unit_loads,
            stats.filter_unit_evictions
        );
    }
    drop(db);
    let db = Db::open(dir.path(), options(style, budget)).unwrap();
    check(&db, "after reopen");
}

#[test]
fn stress_leveling() {
    stress(CompactionStyle::Leveling, None);
}

#[test]
fn stress_tiering() {
    stress(CompactionStyle::Tiering, None);
}

#[test]
fn stress_units_under_an_elastic_budget() {
    stress(CompactionStyle::Leveling, Some(FilterPolicy::Elastic));
}

#[test]
fn stress_units_under_a_monkey_budget() {
    stress(CompactionStyle::Tiering, Some(FilterPolicy::Monkey));
}
