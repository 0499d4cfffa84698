//! Readers, writers, snapshot takers and manual flushes/compactions running
//! at once on one database with a tiny write buffer.
//!
//! Scale with `SIEVEDB_CONC_OPS` (write operations per writer, default 1500).

mod common;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{env_usize, show, small_options, StopOnPanic};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sievedb::{CompactionStyle, Db, Error, Options, Snapshot, WriteBatch};

const WRITERS: usize = 2;
/// Keys each writer owns for single puts.
const KEYS_PER_WRITER: usize = 120;
/// Keys each writer always updates together in one batch.
const GROUP: usize = 24;

fn single_key(w: usize, i: usize) -> Vec<u8> {
    format!("w{w}-k{i:03}").into_bytes()
}

fn group_key(w: usize, j: usize) -> Vec<u8> {
    format!("w{w}-g{j:02}").into_bytes()
}

/// `key|version|filler` where the filler depends on key and version.
fn make_value(key: &[u8], version: u64) -> Vec<u8> {
    let mut v = key.to_vec();
    v.extend_from_slice(format!("|{version:010}|").as_bytes());
    let len = 40 + (version as usize * 7 + key.len()) % 120;
    let c = b'a' + (version % 26) as u8;
    v.extend(std::iter::repeat_n(c, len));
    v
}

/// Checks that `value` is well-formed for `key` and returns its version.
fn parse_value(key: &[u8], value: &[u8], ctx: &str) -> u64 {
    let s = std::str::from_utf8(value)
        .unwrap_or_else(|_| panic!("{ctx}: value of {} is not UTF-8", show(key)));
    let mut parts = s.splitn(3, '|');
    let k = parts.next().unwrap_or_default();
    let ver = parts.next().unwrap_or_default();
    assert_eq!(
        k.as_bytes(),
        key,
        "{ctx}: value {} belongs to another key",
        show(value)
    );
    let version: u64 = ver.parse().unwrap_or_else(|_| {
        panic!(
            "{ctx}: bad version in value {} of {}",
            show(value),
            show(key)
        )
    });
    assert_eq!(
        value,
        make_value(key, version),
        "{ctx}: malformed value of {}",
        show(key)
    );
    version
}

fn all_keys() -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    for w in 0..WRITERS {
        keys.extend((0..KEYS_PER_WRITER).map(|i| single_key(w, i)));
        keys.extend((0..GROUP).map(|j| group_key(w, j)));
    }
    keys
}

/// Writer `w`: increasing versions per key; returns its final state.
fn writer(db: &Db, w: usize, ops: usize, stop: &AtomicBool) -> BTreeMap<Vec<u8>, u64> {
    let _guard = StopOnPanic(stop);
    let mut rng = SmallRng::seed_from_u64(1000 + w as u64);
    let mut last: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut group_version = 0u64;
    for op in 0..ops {
        if stop.load(Ordering::SeqCst) {
            // Another thread panicked: give up quickly.
            break;
        }
        match rng.gen_range(0..10) {
            0 => {
                group_version += 1;
                let mut b = WriteBatch::new();
                for j in 0..GROUP {
                    let k = group_key(w, j);
                    b.put(&k, make_value(&k, group_version));
                    last.insert(k, group_version);
                }
                db.write(b)
                    .unwrap_or_else(|e| panic!("writer {w} op {op}: batch: {e}"));
            }
            1 => {
                // A batch of several single keys, each to its next version.
                let mut b = WriteBatch::new();
                let mut staged = Vec::new();
                for _ in 0..rng.gen_range(1..6) {
                    let k = single_key(w, rng.gen_range(0..KEYS_PER_WRITER));
                    let v = last.get(&k).copied().unwrap_or(0)
                        + 1
                        + staged.iter().filter(|(sk, _)| sk == &k).count() as u64;
                    b.put(&k, make_value(&k, v));
                    staged.push((k, v));
                }
                db.write(b)
                    .unwrap_or_else(|e| panic!("writer {w} op {op}: batch: {e}"));
                for (k, v) in staged {
                    last.insert(k, v);
                }
            }
            _ => {
                let k = single_key(w, rng.gen_range(0..KEYS_PER_WRITER));
                let v = last.get(&k).copied().unwrap_or(0) + 1;
                db.put(&k, make_value(&k, v))
                    .unwrap_or_else(|e| panic!("writer {w} op {op}: put {}: {e}", show(&k)));
                last.insert(k, v);
            }
        }
    }
    last
}

/// Reader: versions never go backwards; batches are seen whole.
fn reader(db: &Db, r: usize, stop: &AtomicBool) -> usize {
    let _guard = StopOnPanic(stop);
    let mut rng = SmallRng::seed_from_u64(2000 + r as u64);
    let keys = all_keys();
    let mut seen: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut group_seen = [0u64; WRITERS];
    let mut reads = 0;
    while !stop.load(Ordering::SeqCst) {
        reads += 1;
        if reads % 64 == 0 {
            // Leave the writers and the background threads some CPU.
            std::thread::sleep(Duration::from_millis(1));
        }
        let ctx = format!("reader {r} read {reads}");
        match rng.gen_range(0..10) {
            0 | 1 => {
                // multi_get reads every key at one sequence number: a group
                // written by one batch must come back at one version.
                let w = rng.gen_range(0..WRITERS);
                let gkeys: Vec<Vec<u8>> = (0..GROUP).map(|j| group_key(w, j)).collect();
                let vals = db
                    .multi_get(&gkeys)
                    .unwrap_or_else(|e| panic!("{ctx}: multi_get: {e}"));
                let versions: Vec<u64> = gkeys
                    .iter()
                    .zip(&vals)
                    .map(|(k, v)| v.as_ref().map_or(0, |v| parse_value(k, v, &ctx)))
                    .collect();
                assert!(
                    versions.iter().all(|&v| v == versions[0]),
                    "{ctx}: multi_get of group {w} saw a torn batch: versions {versions:?}"
                );
                assert!(
                    versions[0] >= group_seen[w],
                    "{ctx}: group {w} went back from version {} to {}",
                    group_seen[w],
                    versions[0]
                );
                group_seen[w] = versions[0];
            }
            2 => {
                // The same through a range scan.
                let w = rng.gen_range(0..WRITERS);
                let lo = group_key(w, 0);
                let hi = group_key(w, GROUP - 1);
                let items: Vec<(Vec<u8>, Vec<u8>)> = db
                    .range(lo..=hi)
                    .unwrap_or_else(|e| panic!("{ctx}: range: {e}"))
                    .map(|x| x.unwrap_or_else(|e| panic!("{ctx}: range next: {e}")))
                    .collect();
                let versions: Vec<u64> =
                    items.iter().map(|(k, v)| parse_value(k, v, &ctx)).collect();
                assert!(
                    items.is_empty() || items.len() == GROUP,
                    "{ctx}: range over group {w} returned {} of {GROUP} keys",
                    items.len()
                );
                assert!(
                    versions.iter().all(|&v| v == versions[0]),
                    "{ctx}: range over group {w} saw a torn batch: {versions:?}"
                );
                let v = versions.first().copied().unwrap_or(0);
                assert!(
                    v >= group_seen[w],
                    "{ctx}: group {w} went back from {} to {v}",
                    group_seen[w]
                );
                group_seen[w] = v;
            }
            _ => {
                let k = &keys[rng.gen_range(0..keys.len())];
                let got = db
                    .get(k)
                    .unwrap_or_else(|e| panic!("{ctx}: get {}: {e}", show(k)));
                let prev = seen.get(k).copied().unwrap_or(0);
                match got {
                    Some(v) => {
                        let ver = parse_value(k, &v, &ctx);
                        assert!(
                            ver >= prev,
                            "{ctx}: {} went back from version {prev} to {ver}",
                            show(k)
                        );
                        seen.insert(k.clone(), ver);
                    }
                    None => assert_eq!(
                        prev,
                        0,
                        "{ctx}: {} vanished after version {prev} was seen (keys are never deleted)",
                        show(k)
                    ),
                }
            }
        }
    }
    reads
}

/// Reads a whole snapshot and checks order, uniqueness and well-formedness.
fn read_snapshot(snap: &Snapshot, ctx: &str) -> Vec<(Vec<u8>, u64)> {
    let mut out: Vec<(Vec<u8>, u64)> = Vec::new();
    for item in snap
        .iter()
        .unwrap_or_else(|e| panic!("{ctx}: snapshot iter: {e}"))
    {
        let (k, v) = item.unwrap_or_else(|e| panic!("{ctx}: snapshot next: {e}"));
        if let Some((pk, _)) = out.last() {
            assert!(
                pk < &k,
                "{ctx}: snapshot iteration not strictly ascending: {} then {}",
                show(pk),
                show(&k)
            );
        }
        let ver = parse_value(&k, &v, ctx);
        out.push((k, ver));
    }
    out
}

/// Snapshot taker: iteration is sorted, unique, repeatable, consistent with
/// `get`, and later snapshots never see older versions.
fn snapshotter(db: &Db, stop: &AtomicBool) -> usize {
    let _guard = StopOnPanic(stop);
    let mut rng = SmallRng::seed_from_u64(3000);
    let mut prev: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    let mut rounds = 0;
    while !stop.load(Ordering::SeqCst) {
        rounds += 1;
        let ctx = format!("snapshot round {rounds}");
        let snap = db.snapshot();
        let first = read_snapshot(&snap, &ctx);
        // Let some writes, flushes and compactions happen, then read again.
        std::thread::sleep(Duration::from_millis(rng.gen_range(0..5)));
        let second = read_snapshot(&snap, &ctx);
        assert!(
            first == second,
            "{ctx}: snapshot iteration changed between two reads"
        );
        for _ in 0..10 {
            if first.is_empty() {
                break;
            }
            let (k, ver) = &first[rng.gen_range(0..first.len())];
            let got = snap
                .get(k)
                .unwrap_or_else(|e| panic!("{ctx}: snapshot get: {e}"))
                .unwrap_or_else(|| panic!("{ctx}: snapshot get of {} found nothing", show(k)));
            assert_eq!(
                parse_value(k, &got, &ctx),
                *ver,
                "{ctx}: snapshot get vs iteration for {}",
                show(k)
            );
        }
        for w in 0..WRITERS {
            let g: Vec<u64> = (0..GROUP)
                .filter_map(|j| {
                    first
                        .iter()
                        .find(|(k, _)| *k == group_key(w, j))
                        .map(|(_, v)| *v)
                })
                .collect();
            assert!(
                g.is_empty() || (g.len() == GROUP && g.iter().all(|&v| v == g[0])),
                "{ctx}: snapshot saw a torn batch of group {w}: {g:?}"
            );
        }
        let now: BTreeMap<Vec<u8>, u64> = first.into_iter().collect();
        for (k, v) in &prev {
            let n = now.get(k).copied().unwrap_or(0);
            assert!(
                n >= *v,
                "{ctx}: {} went back from version {v} to {n} between snapshots",
                show(k)
            );
        }
        prev = now;
    }
    rounds
}

/// Manual flushes and range compactions while everything else runs.
fn maintainer(db: &Db, stop: &AtomicBool) -> usize {
    let _guard = StopOnPanic(stop);
    let mut rng = SmallRng::seed_from_u64(4000);
    let mut n = 0;
    while !stop.load(Ordering::SeqCst) {
        n += 1;
        if rng.gen_bool(0.5) {
            db.flush()
                .unwrap_or_else(|e| panic!("maintainer flush {n}: {e}"));
        } else {
            let w = rng.gen_range(0..WRITERS);
            let a = single_key(w, rng.gen_range(0..KEYS_PER_WRITER));
            let b = single_key(w, rng.gen_range(0..KEYS_PER_WRITER));
            let (a, b) = if a <= b { (a, b) } else { (b, a) };
            db.compact_range(a..=b)
                .unwrap_or_else(|e| panic!("maintainer compact_range {n}: {e}"));
        }
        std::thread::sleep(Duration::from_millis(rng.gen_range(1..20)));
    }
    n
}

fn run_concurrent(style: CompactionStyle) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    // Two compaction threads besides the flush thread: flushes and
    // compactions install versions concurrently.
    let opts = Options {
        background_threads: 3,
        ..small_options(style)
    };
    let db = Db::open(&dir, opts.clone()).expect("open");
    let ops = env_usize("SIEVEDB_CONC_OPS", 1500);
    let stop = AtomicBool::new(false);
    let started = Instant::now();

    let (finals, reads, rounds, maint) = std::thread::scope(|s| {
        let ws: Vec<_> = (0..WRITERS)
            .map(|w| {
                let (db, stop) = (&db, &stop);
                s.spawn(move || writer(db, w, ops, stop))
            })
            .collect();
        let rs: Vec<_> = (0..2)
            .map(|r| {
                let (db, stop) = (&db, &stop);
                s.spawn(move || reader(db, r, stop))
            })
            .collect();
        let snap = s.spawn(|| snapshotter(&db, &stop));
        let maint = s.spawn(|| maintainer(&db, &stop));
        // Writers finish first; then everyone else stops.
        let finals: Vec<BTreeMap<Vec<u8>, u64>> = ws
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        stop.store(true, Ordering::SeqCst);
        let reads: Vec<usize> = rs
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
            .collect();
        let rounds = snap.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        let maint = maint
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        (finals, reads, rounds, maint)
    });
    let stats = db.stats();
    eprintln!(
        "{style:?}: {:?} in {:?}; reads {reads:?}, snapshot rounds {rounds}, maintenance ops {maint}; \
         flushes {}, compactions {}",
        ops,
        started.elapsed(),
        stats.flushes,
        stats.compactions
    );
    assert!(
        reads.iter().all(|&r| r > 0) && rounds > 0,
        "readers never ran"
    );

    // Final state equals the writers' last writes.
    let mut expected: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    for m in &finals {
        for (k, v) in m {
            expected.insert(k.clone(), make_value(k, *v));
        }
    }
    let check = |db: &Db, ctx: &str| {
        let got: BTreeMap<Vec<u8>, Vec<u8>> = db
            .iter()
            .unwrap_or_else(|e| panic!("{ctx}: iter: {e}"))
            .map(|x| x.unwrap_or_else(|e| panic!("{ctx}: next: {e}")))
            .collect();
        for (k, v) in &expected {
            let g = got.get(k).map(|g| parse_value(k, g, ctx));
            assert_eq!(
                g,
                Some(parse_value(k, v, ctx)),
                "{ctx}: final version of {}",
                show(k)
            );
        }
        assert_eq!(got.len(), expected.len(), "{ctx}: key count");
        for (k, v) in &expected {
            assert_eq!(
                db.get(k)
                    .unwrap_or_else(|e| panic!("{ctx}: get: {e}"))
                    .as_ref(),
                Some(v)
            );
        }
    };
    check(&db, "final state");
    // The catch-up once writes stop: L0 drains, and the two compaction
    // threads may then share a level (on disjoint keys).
    db.flush().expect("flush");
    db.wait_for_compactions().expect("wait");
    check(&db, "final state after the compactions' catch-up");
    assert!(stats.flushes > 0, "no flush happened: {stats:?}");
    assert!(stats.compactions > 0, "no compaction happened: {stats:?}");
    db.close().expect("close");
    let db = Db::open(&dir, opts).expect("reopen");
    check(&db, "final state after reopen");
}

#[test]
fn concurrent_readers_writers_leveling() {
    run_concurrent(CompactionStyle::Leveling);
}

#[test]
fn concurrent_readers_writers_tiering() {
    run_concurrent(CompactionStyle::Tiering);
}

#[test]
fn db_and_snapshot_are_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Db>();
    assert_send_sync::<Snapshot>();
    assert_send_sync::<std::sync::Arc<Db>>();
}

#[test]
fn second_open_of_same_dir_is_locked() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let db = Db::open(&dir, Options::default()).expect("open");
    db.put(b"k", b"v").expect("put");
    match Db::open(&dir, Options::default()) {
        Err(Error::Locked(p)) => assert!(
            p.ends_with("db") || p.starts_with(&dir),
            "Locked names {p:?}"
        ),
        Err(e) => panic!("second open: expected Error::Locked, got {e:?}"),
        Ok(_) => panic!("second open of a locked directory succeeded"),
    }
    // Also from another thread while the first handle lives.
    let r = std::thread::scope(|s| s.spawn(|| Db::open(&dir, Options::default()).err()).join());
    assert!(
        matches!(r, Ok(Some(Error::Locked(_)))),
        "open from another thread: {r:?}"
    );
    // The first handle is unaffected, and the lock goes away with it.
    assert_eq!(db.get(b"k").expect("get"), Some(b"v".to_vec()));
    db.close().expect("close");
    let db = Db::open(&dir, Options::default()).expect("open after close");
    assert_eq!(db.get(b"k").expect("get"), Some(b"v".to_vec()));
    drop(db);
    let db = Db::open(&dir, Options::default()).expect("open after drop");
    drop(db);
}

/// `multi_get` reads all keys at one sequence number; a flush + compaction
/// running meanwhile must not drop the versions that sequence still needs
/// (a key that always exists must never read as missing).
#[test]
fn multi_get_during_compaction_never_misses_live_keys() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let opts = Options::builder()
        .write_buffer_size(16 << 10)
        .level0_compaction_trigger(2)
        .build();
    let db = Db::open(tmp.path().join("db"), opts).expect("open");
    for i in 0..200 {
        db.put(format!("pad{i:04}"), [b'x'; 100]).expect("put pad");
    }
    db.put(b"zz", b"0").expect("put zz");
    db.compact_range::<&[u8], _>(..).expect("compact");
    // Many lookups before the interesting one widen the window in which the
    // writer below replaces, flushes and compacts `zz`.
    let mut keys: Vec<Vec<u8>> = (0..3000)
        .map(|i| format!("pad{:04}", i % 200).into_bytes())
        .collect();
    keys.push(b"zz".to_vec());
    let rounds = env_usize("SIEVEDB_MULTIGET_ROUNDS", 60);
    let stop = AtomicBool::new(false);
    let misses = std::thread::scope(|s| {
        let _guard = StopOnPanic(&stop);
        s.spawn(|| {
            let _guard = StopOnPanic(&stop);
            let mut v = 0u64;
            while !stop.load(Ordering::SeqCst) {
                v += 1;
                db.put(b"zz", v.to_string()).expect("put zz");
                db.flush().expect("flush");
            }
        });
        let mut misses = Vec::new();
        for round in 0..rounds {
            let got = db.multi_get(&keys).expect("multi_get");
            assert!(
                got[..keys.len() - 1].iter().all(Option::is_some),
                "round {round}: a pad key is missing"
            );
            if got[keys.len() - 1].is_none() {
                misses.push(round);
            }
        }
        stop.store(true, Ordering::SeqCst);
        misses
    });
    let stats = db.stats();
    assert!(stats.compactions > 0, "no compaction ran: {stats:?}");
    assert!(
        misses.is_empty(),
        "multi_get returned None for key \"zz\" (always present) in rounds {misses:?} of {rounds}: \
         versions needed by its read sequence were dropped by a concurrent compaction"
    );
}
