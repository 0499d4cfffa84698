//! `Db::delete_range` and `WriteBatch::delete_range`: one range tombstone
//! hides every older entry of its range from reads (`get`, `multi_get`,
//! iterators, snapshots) across flushes, compactions, reopens and repair.

mod common;

use std::ops::Bound;

use common::{assert_db_equals, collect_all, small_options, Model};
use sievedb::{CompactionStyle, Db, Options, WriteBatch};

fn k(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn opts() -> Options {
    small_options(CompactionStyle::Leveling)
}

/// Puts keys `0..n` with value `v{i}`; returns the model.
fn fill(db: &Db, n: u32) -> Model {
    let mut m = Model::new();
    for i in 0..n {
        let v = format!("v{i}").into_bytes();
        db.put(k(i), &v).unwrap();
        m.insert(k(i), v);
    }
    m
}

/// The model with `[lo, hi)` removed.
fn remove_range(m: &mut Model, lo: u32, hi: u32) {
    m.retain(|key, _| !(key.as_slice() >= k(lo).as_slice() && key.as_slice() < k(hi).as_slice()));
}

/// Everything `db` holds agrees with `m`: full iteration, a sub-range, and
/// `get`/`multi_get` of every key in `0..n`.
fn check(db: &Db, m: &Model, n: u32, ctx: &str) {
    assert_db_equals(db, m, ctx);
    let keys: Vec<_> = (0..n).map(k).collect();
    let got = db.multi_get(&keys).unwrap();
    for (key, g) in keys.iter().zip(got) {
        assert_eq!(g.as_ref(), m.get(key), "{ctx}: multi_get {key:?}");
    }
    let lo = k(n / 3);
    let hi = k(2 * n / 3);
    let got = collect_all(db.range(lo.as_slice()..hi.as_slice()), ctx);
    let want: Vec<_> = m
        .range(lo.clone()..hi.clone())
        .map(|(a, b)| (a.clone(), b.clone()))
        .collect();
    assert_eq!(got, want, "{ctx}: range");
}

fn range_tombstones(db: &Db) -> u64 {
    db.stats().levels.iter().map(|l| l.range_tombstones).sum()
}

#[test]
fn reads_honour_a_tombstone_in_the_memtable_files_and_after_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let n = 2000;
    let mut m = fill(&db, n);
    db.flush().unwrap();
    db.delete_range(k(100)..k(900)).unwrap();
    remove_range(&mut m, 100, 900);
    check(&db, &m, n, "tombstone in the memtable");
    db.flush().unwrap();
    assert!(range_tombstones(&db) >= 1);
    check(&db, &m, n, "tombstone flushed");
    db.compact_range::<&[u8], _>(..).unwrap();
    check(&db, &m, n, "after compact_range");
    db.wait_for_compactions().unwrap();
    drop(db);
    let db = Db::open(dir.path(), opts()).unwrap();
    check(&db, &m, n, "after reopen");
}

/// Iterators skip the files' tombstones only where no file of a run has
/// any (the runs count them): a tombstone in a file above the data it
/// hides still hides it after a reopen (the version rebuilt from the
/// MANIFEST) and after compactions move it down over that data (a snapshot
/// keeping it there).
#[test]
fn a_tombstone_in_a_file_hides_older_files_after_reopen_and_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let n = 2000;
    let mut m = fill(&db, n);
    db.compact_range::<&[u8], _>(..).unwrap();
    db.delete_range(k(300)..k(1200)).unwrap();
    remove_range(&mut m, 300, 1200);
    db.flush().unwrap();
    assert!(range_tombstones(&db) >= 1);
    check(&db, &m, n, "tombstone in a file");
    drop(db);
    let db = Db::open(dir.path(), opts()).unwrap();
    assert!(range_tombstones(&db) >= 1);
    check(&db, &m, n, "after reopen");
    // A second tombstone, which the snapshot keeps through the compactions
    // that writes elsewhere bring, down over the data it hides.
    let snap = db.snapshot();
    db.delete_range(k(1500)..k(1800)).unwrap();
    remove_range(&mut m, 1500, 1800);
    for round in 0..6u32 {
        for i in 0..300 {
            let key = format!("later{round}-{i:04}").into_bytes();
            db.put(&key, b"x").unwrap();
            m.insert(key, b"x".to_vec());
        }
        db.flush().unwrap();
    }
    db.wait_for_compactions().unwrap();
    assert!(
        range_tombstones(&db) >= 1,
        "the snapshot keeps the tombstone"
    );
    check(&db, &m, n, "after compactions");
    assert_eq!(snap.get(k(1600)).unwrap(), Some(b"v1600".to_vec()));
    drop(snap);
    drop(db);
    let db = Db::open(dir.path(), opts()).unwrap();
    check(&db, &m, n, "after compactions and reopen");
}

#[test]
fn bounds_are_normalised() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let mut m = fill(&db, 100);
    db.delete_range(k(10)..=k(20)).unwrap();
    remove_range(&mut m, 10, 21);
    db.delete_range((Bound::Excluded(k(30)), Bound::Included(k(40))))
        .unwrap();
    remove_range(&mut m, 31, 41);
    db.delete_range(..k(3)).unwrap();
    remove_range(&mut m, 0, 3);
    db.delete_range(k(95)..).unwrap();
    remove_range(&mut m, 95, 100);
    // Empty ranges are no-ops.
    db.delete_range(k(50)..k(50)).unwrap();
    db.delete_range(k(60)..k(55)).unwrap();
    // A bound too long for a key is refused.
    assert!(db.delete_range(vec![b'a'; 70_000]..).is_err());
    check(&db, &m, 100, "memtable");
    db.flush().unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    check(&db, &m, 100, "compacted");
    db.delete_range::<&[u8], _>(..).unwrap();
    check(&db, &Model::new(), 100, "everything deleted");
    db.put(k(7), b"back").unwrap();
    m.clear();
    m.insert(k(7), b"back".to_vec());
    db.compact_range::<&[u8], _>(..).unwrap();
    check(&db, &m, 100, "re-put after delete of everything");
}

#[test]
fn puts_after_the_tombstone_survive_and_batches_apply_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let mut m = fill(&db, 500);
    db.flush().unwrap();
    let mut b = WriteBatch::new();
    b.put(k(150), b"before");
    b.delete_range(k(100)..k(200));
    b.put(k(120), b"after");
    db.write(b).unwrap();
    remove_range(&mut m, 100, 200);
    m.insert(k(120), b"after".to_vec());
    check(&db, &m, 500, "batch in the memtable");
    for i in (100..200).step_by(7) {
        db.put(k(i), b"again").unwrap();
        m.insert(k(i), b"again".to_vec());
    }
    check(&db, &m, 500, "re-puts in the memtable");
    db.flush().unwrap();
    check(&db, &m, 500, "flushed");
    db.compact_range::<&[u8], _>(..).unwrap();
    check(&db, &m, 500, "compacted");
}

#[test]
fn snapshots_see_what_was_there_before_the_tombstone() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let before = fill(&db, 800);
    db.flush().unwrap();
    let snap = db.snapshot();
    db.delete_range(k(0)..k(600)).unwrap();
    let mut m = before.clone();
    remove_range(&mut m, 0, 600);
    let snap_check = |ctx: &str| {
        assert_eq!(snap.get(k(5)).unwrap(), Some(b"v5".to_vec()), "{ctx}");
        let got = collect_all(snap.iter(), ctx);
        assert_eq!(got.len(), before.len(), "{ctx}");
    };
    snap_check("tombstone in the memtable");
    check(&db, &m, 800, "live, memtable");
    db.flush().unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    snap_check("after compaction under the snapshot");
    check(&db, &m, 800, "live, compacted");
    assert!(
        range_tombstones(&db) >= 1,
        "the snapshot keeps the tombstone"
    );
    drop(snap);
    db.compact_range::<&[u8], _>(..).unwrap();
    check(&db, &m, 800, "after the snapshot is gone");
}

#[test]
fn a_tombstone_at_the_bottom_is_dropped_with_the_data_it_hides() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let mut m = fill(&db, 1500);
    db.compact_range::<&[u8], _>(..).unwrap();
    let entries_before: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    db.delete_range(k(200)..k(1200)).unwrap();
    remove_range(&mut m, 200, 1200);
    db.flush().unwrap();
    assert_eq!(range_tombstones(&db), 1);
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(range_tombstones(&db), 0, "tombstone dropped at the bottom");
    let entries_after: u64 = db.stats().levels.iter().map(|l| l.entries).sum();
    assert!(
        entries_after + 1000 <= entries_before,
        "covered entries dropped: {entries_before} -> {entries_after}"
    );
    check(&db, &m, 1500, "after the bottom compaction");
    drop(db);
    let db = Db::open(dir.path(), opts()).unwrap();
    check(&db, &m, 1500, "after reopen");
}

#[test]
fn an_unflushed_tombstone_is_replayed_from_the_wal() {
    let dir = tempfile::tempdir().unwrap();
    let mut m;
    {
        let db = Db::open(dir.path(), opts()).unwrap();
        m = fill(&db, 400);
        db.flush().unwrap();
        let mut b = WriteBatch::new();
        b.delete_range(k(50)..k(150));
        b.put(k(60), b"kept");
        db.write(b).unwrap();
        db.delete_range(k(390)..).unwrap();
        // Dropped without flushing: the tombstones live only in the WAL.
    }
    remove_range(&mut m, 50, 150);
    remove_range(&mut m, 390, 400);
    m.insert(k(60), b"kept".to_vec());
    let db = Db::open(dir.path(), opts()).unwrap();
    check(&db, &m, 400, "after WAL replay");
    drop(db);
    let ro = Db::open_read_only(dir.path(), opts()).unwrap();
    check(&ro, &m, 400, "read-only");
}

/// Once a tombstone visible to the read covers the key, older levels are not
/// consulted: their filters (which say "maybe" for a key they hold) are not
/// even probed.
#[test]
fn a_covering_tombstone_stops_the_lookup_before_older_levels() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let m = fill(&db, 1000);
    db.compact_range::<&[u8], _>(..).unwrap();
    assert!(db.stats().levels[0].files == 0);
    let probes = |db: &Db| -> u64 { db.stats().levels.iter().map(|l| l.filter_probes).sum() };
    // The keys are in lower levels, whose filters say "maybe".
    let p0 = probes(&db);
    assert_eq!(db.get(k(500)).unwrap(), m.get(&k(500)).cloned());
    assert!(probes(&db) > p0, "lower filters probed for a live key");
    db.delete_range(k(400)..k(600)).unwrap();
    let p1 = probes(&db);
    for i in 400..600 {
        assert_eq!(db.get(k(i)).unwrap(), None);
    }
    assert_eq!(
        probes(&db),
        p1,
        "tombstone in the memtable: no SST filter probed"
    );
    db.flush().unwrap();
    let l0_before: Vec<u64> = db.stats().levels.iter().map(|l| l.filter_probes).collect();
    for i in 400..600 {
        assert_eq!(db.get(k(i)).unwrap(), None);
    }
    let after: Vec<u64> = db.stats().levels.iter().map(|l| l.filter_probes).collect();
    assert_eq!(
        after[1..],
        l0_before[1..],
        "tombstone in L0: no deeper filter probed"
    );
    assert_eq!(db.get(k(399)).unwrap(), m.get(&k(399)).cloned());
    assert_eq!(db.get(k(600)).unwrap(), m.get(&k(600)).cloned());
}

#[test]
fn many_tombstones_across_levels_and_compactions() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let n = 3000;
    let mut m = Model::new();
    for round in 0..6u32 {
        for i in (round..n).step_by(3) {
            let v = format!("r{round}-{i}").into_bytes();
            db.put(k(i), &v).unwrap();
            m.insert(k(i), v);
        }
        let lo = (round * 449) % n;
        let hi = (lo + 250).min(n);
        db.delete_range(k(lo)..k(hi)).unwrap();
        remove_range(&mut m, lo, hi);
        if round % 2 == 0 {
            db.flush().unwrap();
        }
    }
    check(&db, &m, n, "before waiting");
    db.wait_for_compactions().unwrap();
    check(&db, &m, n, "after wait_for_compactions");
    db.compact_range(k(500)..k(2000)).unwrap();
    check(&db, &m, n, "after a partial compact_range");
    db.compact_range::<&[u8], _>(..).unwrap();
    check(&db, &m, n, "after a full compact_range");
}

#[test]
fn repair_keeps_range_deleted_data_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let mut m;
    {
        let db = Db::open(dir.path(), opts()).unwrap();
        m = fill(&db, 1000);
        db.compact_range::<&[u8], _>(..).unwrap();
        db.delete_range(k(100)..k(300)).unwrap();
        db.flush().unwrap();
        db.delete_range(k(700)..k(800)).unwrap(); // only in the WAL
        db.close().unwrap();
    }
    remove_range(&mut m, 100, 300);
    remove_range(&mut m, 700, 800);
    for f in common::manifest_files(dir.path()) {
        std::fs::remove_file(f).unwrap();
    }
    Db::repair(dir.path(), opts()).unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    check(&db, &m, 1000, "after repair");
}

/// Tombstones ending exactly where compaction cuts its outputs: a file may end
/// at a tombstone's end sentinel and the next start at that very user key.
/// Lookups, seeks and reopen must all find the next file's entries.
#[test]
fn outputs_cut_at_tombstone_ends_stay_disjoint_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let n = 3000;
    let before = fill(&db, n);
    db.compact_range::<&[u8], _>(..).unwrap();
    // Held from before the tombstones: they and the entries they hide stay.
    let snap = db.snapshot();
    let mut m = before.clone();
    for i in (0..n).step_by(2) {
        db.delete_range(k(i)..k(i + 1)).unwrap();
        m.remove(&k(i));
    }
    db.compact_range::<&[u8], _>(..).unwrap();
    let s = db.stats();
    let deep_files: usize = s.levels[1..].iter().map(|l| l.files).sum();
    assert!(deep_files > 2, "several outputs: {s:?}");
    assert_eq!(range_tombstones(&db), u64::from(n / 2));
    check(&db, &m, n, "after compaction");
    for i in (1..n).step_by(2) {
        let mut it = db.range(k(i)..).unwrap();
        assert_eq!(it.next().unwrap().unwrap().0, k(i), "seek to {i}");
    }
    assert_eq!(collect_all(snap.iter(), "snapshot").len(), before.len());
    drop(snap);
    drop(db);
    let db = Db::open(dir.path(), opts()).unwrap();
    check(&db, &m, n, "after reopen");
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(
        range_tombstones(&db),
        0,
        "dropped once no snapshot needs them"
    );
    check(&db, &m, n, "after the last compaction");
}

/// A tombstone kept by a snapshot and spanning many output files' worth of
/// entries: compaction must not cut inside it, or a later file would overlap
/// the one holding it and newer puts inside the range would be lost to reads.
#[test]
fn a_long_kept_tombstone_is_not_cut() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let n = 3000;
    let mut m = fill(&db, n);
    db.compact_range::<&[u8], _>(..).unwrap();
    let snap = db.snapshot();
    db.delete_range(k(100)..k(2900)).unwrap();
    remove_range(&mut m, 100, 2900);
    for i in (150..2850).step_by(50) {
        db.put(k(i), b"new").unwrap();
        m.insert(k(i), b"new".to_vec());
    }
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(range_tombstones(&db), 1);
    check(&db, &m, n, "after compaction");
    assert_eq!(snap.get(k(1000)).unwrap(), Some(b"v1000".to_vec()));
    drop(snap);
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(range_tombstones(&db), 0);
    check(&db, &m, n, "after the tombstone is dropped");
}

/// Two `delete_range(..)` of a young database (sequence numbers below 128)
/// flush to a table every read can use: each such tombstone encodes in 3
/// bytes (a one-byte sequence, an empty start's length, the end flag); the
/// block decoder took 4 as the least and refused the table ("range
/// tombstone count exceeds the block"). Found by the fuzz `model` target:
/// `Put(0, [])`, a batch of two `DeleteRange(175, 175, 175)` (unbounded
/// both sides) and a `Delete`, `Reopen` (its recovery flush), then any read.
#[test]
fn two_unbounded_range_deletes_flush_to_a_readable_table() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put("a", "1").unwrap();
    db.delete_range::<&[u8], _>(..).unwrap();
    db.delete_range::<&[u8], _>(..).unwrap();
    db.put("b", "2").unwrap();
    db.flush().unwrap();
    let got: Vec<_> = db.iter().unwrap().map(|kv| kv.unwrap()).collect();
    assert_eq!(got, [(b"b".to_vec(), b"2".to_vec())]);
    assert_eq!(db.get("a").unwrap(), None);
}
