//! Merge operators: `Db::merge` and `WriteBatch::merge` resolved by gets,
//! multi-gets, iterators (both directions) and snapshots, across the
//! memtable, flushes, compactions, deletes, range deletes and reopens; a
//! missing or failing operator is an error and never loses an operand, and
//! a merge into a keyspace without an operator is refused when written.

mod common;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use common::{collect_all, small_options};
use sievedb::merge::{Append, MergeOperator, U64Add};
use sievedb::{CompactionStyle, Db, Error, Options, WriteBatch};

fn le(n: u64) -> [u8; 8] {
    n.to_le_bytes()
}

fn counter_opts() -> Options {
    let mut o = small_options(CompactionStyle::Leveling);
    o.merge_operator = Some(Arc::new(U64Add));
    o
}

fn append_opts() -> Options {
    let mut o = small_options(CompactionStyle::Leveling);
    o.merge_operator = Some(Arc::new(Append::new(",")));
    o
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// Every read path sees `want` for `k`.
fn check_everywhere(db: &Db, k: &[u8], want: Option<&[u8]>, ctx: &str) {
    assert_eq!(db.get(k).unwrap().as_deref(), want, "{ctx}: get");
    let got = db.multi_get([k]).unwrap();
    assert_eq!(got[0].as_deref(), want, "{ctx}: multi_get");
    let fwd: Vec<_> = collect_all(db.iter(), ctx)
        .into_iter()
        .filter(|(x, _)| x == k)
        .collect();
    assert_eq!(fwd.first().map(|(_, v)| v.as_slice()), want, "{ctx}: iter");
    let back: Vec<_> = db
        .iter()
        .unwrap()
        .rev()
        .map(Result::unwrap)
        .filter(|(x, _)| x == k)
        .collect();
    assert_eq!(
        back.first().map(|(_, v)| v.as_slice()),
        want,
        "{ctx}: rev iter"
    );
}

#[test]
fn counters_add_up_through_memtable_flush_and_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), counter_opts()).unwrap();
    let n = 200u32;
    let mut want = vec![0u64; n as usize];
    for round in 0..6u64 {
        for i in 0..n {
            if (u64::from(i) + round) % 3 != 0 {
                db.merge(key(i), le(round + 1)).unwrap();
                want[i as usize] += round + 1;
            }
        }
        match round {
            1 | 3 => db.flush().unwrap(),
            4 => db.compact_range::<&[u8], _>(..).unwrap(),
            _ => {}
        }
    }
    for i in 0..n {
        let w = (want[i as usize] > 0).then(|| le(want[i as usize]).to_vec());
        assert_eq!(db.get(key(i)).unwrap(), w, "key {i}");
    }
    let items = collect_all(db.iter(), "iter");
    let back: Vec<_> = db.iter().unwrap().rev().map(Result::unwrap).collect();
    assert_eq!(items.len(), want.iter().filter(|w| **w > 0).count());
    assert_eq!(items, back.into_iter().rev().collect::<Vec<_>>());
    let written: u64 = (0..6u64)
        .map(|r| (0..n).filter(|i| (u64::from(*i) + r) % 3 != 0).count() as u64)
        .sum();
    assert_eq!(db.stats().merges, written);
    // Reopen: the WAL replays the operands of the memtable.
    drop(db);
    let db = Db::open(dir.path(), counter_opts()).unwrap();
    for i in 0..n {
        let w = (want[i as usize] > 0).then(|| le(want[i as usize]).to_vec());
        assert_eq!(db.get(key(i)).unwrap(), w, "after reopen, key {i}");
    }
}

#[test]
fn operands_meet_puts_deletes_and_range_deletes_at_every_level() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), append_opts()).unwrap();
    let k = b"k";
    db.put(k, "base").unwrap();
    db.compact_range::<&[u8], _>(..).unwrap(); // base at the bottom
    db.merge(k, "a").unwrap();
    db.flush().unwrap(); // operand in L0, base below
    db.merge(k, "b").unwrap(); // operand in the memtable
    check_everywhere(&db, k, Some(b"base,a,b"), "over a base two levels down");
    db.delete(k).unwrap();
    db.merge(k, "c").unwrap();
    check_everywhere(&db, k, Some(b"c"), "over a delete");
    db.flush().unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    check_everywhere(&db, k, Some(b"c"), "over a delete, compacted");
    db.merge(k, "d").unwrap();
    db.delete_range(b"a".as_slice()..b"z".as_slice()).unwrap();
    db.merge(k, "e").unwrap();
    check_everywhere(&db, k, Some(b"e"), "over a range delete");
    db.flush().unwrap();
    check_everywhere(&db, k, Some(b"e"), "over a range delete, flushed");
    db.compact_range::<&[u8], _>(..).unwrap();
    check_everywhere(&db, k, Some(b"e"), "over a range delete, compacted");
    // A batch mixes merges with puts of the same key, in order.
    let mut b = WriteBatch::new();
    b.merge(k, "f");
    b.put(k, "p");
    b.merge(k, "g");
    db.write(b).unwrap();
    check_everywhere(&db, k, Some(b"p,g"), "a batch");
    // Neighbours stay apart, both directions, with bounds.
    db.merge(b"j", "1").unwrap();
    db.merge(b"l", "2").unwrap();
    db.put(b"l", "L").unwrap();
    db.merge(b"l", "3").unwrap();
    let items = collect_all(db.range(b"j".as_slice()..=b"l".as_slice()), "range");
    let v = |s: &str| s.as_bytes().to_vec();
    assert_eq!(
        items,
        vec![(v("j"), v("1")), (v("k"), v("p,g")), (v("l"), v("L,3"))]
    );
    let back: Vec<_> = db
        .range(b"j".as_slice()..=b"l".as_slice())
        .unwrap()
        .rev()
        .map(Result::unwrap)
        .collect();
    assert_eq!(back, items.iter().rev().cloned().collect::<Vec<_>>());
    // A cursor turning around on a merged key.
    let mut it = db.iter().unwrap();
    it.seek(b"k").unwrap();
    assert_eq!((it.key(), it.value()), (&b"k"[..], &b"p,g"[..]));
    assert_eq!(it.next_ref().unwrap(), Some((&b"k"[..], &b"p,g"[..])));
    assert_eq!(it.next_ref().unwrap(), Some((&b"l"[..], &b"L,3"[..])));
    assert_eq!(it.prev_ref().unwrap(), Some((&b"k"[..], &b"p,g"[..])));
    assert_eq!(it.prev_ref().unwrap(), Some((&b"j"[..], &b"1"[..])));
    assert_eq!(it.next_ref().unwrap(), Some((&b"k"[..], &b"p,g"[..])));
}

#[test]
fn snapshots_keep_the_value_of_their_time_through_compaction() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), append_opts()).unwrap();
    db.put("k", "0").unwrap();
    db.merge("k", "1").unwrap();
    let s1 = db.snapshot();
    db.merge("k", "2").unwrap();
    let s2 = db.snapshot();
    db.merge("k", "3").unwrap();
    db.flush().unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(s1.get("k").unwrap().as_deref(), Some(&b"0,1"[..]));
    assert_eq!(s2.get("k").unwrap().as_deref(), Some(&b"0,1,2"[..]));
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"0,1,2,3"[..]));
    let snap_items = collect_all(s1.iter(), "snapshot iter");
    assert_eq!(snap_items, vec![(b"k".to_vec(), b"0,1".to_vec())]);
    drop((s1, s2));
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"0,1,2,3"[..]));
}

#[test]
fn compaction_at_the_bottom_folds_operands_into_one_value() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), counter_opts()).unwrap();
    for round in 0..5 {
        for i in 0..100u32 {
            db.merge(key(i), le(1)).unwrap();
        }
        if round % 2 == 1 {
            db.flush().unwrap();
        }
    }
    db.compact_range::<&[u8], _>(..).unwrap();
    let s = db.stats();
    let entries: u64 = s.levels.iter().map(|l| l.entries).sum();
    assert_eq!(entries, 100, "one entry per key once folded: {s}");
    for i in 0..100u32 {
        assert_eq!(db.get(key(i)).unwrap(), Some(le(5).to_vec()));
    }
}

#[test]
fn without_an_operator_reads_fail_and_compaction_keeps_the_operands() {
    // Operands written with an operator, read by a database reopened
    // without one (a merge into it is refused, see below).
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), counter_opts()).unwrap();
    db.put("a", "plain").unwrap();
    db.put("k", le(10)).unwrap();
    db.merge("k", le(5)).unwrap();
    db.close().unwrap();
    let plain = small_options(CompactionStyle::Leveling);
    let db = Db::open(dir.path(), plain.clone()).unwrap();
    match db.get("k") {
        Err(Error::MergeFailed { key, .. }) => assert_eq!(key, b"k"),
        other => panic!("get without an operator: {other:?}"),
    }
    assert!(matches!(
        db.iter().unwrap().find(Result::is_err),
        Some(Err(Error::MergeFailed { .. }))
    ));
    assert!(matches!(
        db.iter().unwrap().rev().find(Result::is_err),
        Some(Err(Error::MergeFailed { .. }))
    ));
    assert_eq!(db.get("a").unwrap().as_deref(), Some(&b"plain"[..]));
    db.flush().unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    db.close().unwrap();
    let db = Db::open(dir.path(), counter_opts()).unwrap();
    assert_eq!(db.get("k").unwrap(), Some(le(15).to_vec()));
}

/// Asserts that `r` is the refusal of a merge into keyspace `name`.
fn assert_refused(r: sievedb::Result<()>, name: &str, what: &str) {
    match r {
        Err(Error::InvalidArgument(m)) => {
            assert!(
                m.contains(&format!("keyspace {name:?} has no merge operator"))
                    && m.contains("set `merge_operator`"),
                "{what}: {m}"
            );
        }
        other => panic!("{what}: expected a refused merge, got {other:?}"),
    }
}

#[test]
fn merges_into_a_keyspace_without_an_operator_are_refused_and_write_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options(CompactionStyle::Leveling)).unwrap();
    let plain = db.keyspace("x").unwrap();
    let counters = db
        .keyspace_with(
            "counters",
            sievedb::KeyspaceOptions::default().merge_operator(Arc::new(U64Add)),
        )
        .unwrap();
    db.put("k", "v").unwrap();
    plain.put("k", "v").unwrap();
    let seq = db.stats().last_sequence;

    assert_refused(db.merge("k", le(1)), "default", "Db::merge");
    let wo = sievedb::WriteOptions { sync: true };
    assert_refused(db.merge_with("k", le(1), &wo), "default", "Db::merge_with");
    assert_refused(plain.merge("k", le(1)), "x", "Keyspace::merge");
    assert_refused(
        plain.merge_with("k", le(1), &wo),
        "x",
        "Keyspace::merge_with",
    );
    // A batch: refused at `write`, nothing of it applied.
    let mut b = WriteBatch::new();
    b.put("before", "v");
    b.merge_cf(&counters, "hits", le(1));
    b.merge_cf(&plain, "k", le(1));
    b.put_cf(&plain, "after", "v");
    assert_refused(db.write(b), "x", "a batch merging into x");
    let mut b = WriteBatch::new();
    b.merge_cf(&counters, "hits", le(1));
    b.merge("k", le(1));
    assert_refused(db.write(b), "default", "a batch merging into default");
    assert_eq!(db.stats().last_sequence, seq, "nothing was written");
    assert_eq!(db.get("before").unwrap(), None);
    assert_eq!(plain.get("after").unwrap(), None);
    assert_eq!(counters.get("hits").unwrap(), None);
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"v"[..]));
    assert_eq!(plain.get("k").unwrap().as_deref(), Some(&b"v"[..]));

    // The keyspace with an operator merges, alone or in a batch.
    counters.merge("hits", le(2)).unwrap();
    let mut b = WriteBatch::new();
    b.merge_cf(&counters, "hits", le(3));
    b.put("k", "w");
    db.write(b).unwrap();
    assert_eq!(counters.get("hits").unwrap(), Some(le(5).to_vec()));
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"w"[..]));
}

#[test]
fn transactions_refuse_a_merge_at_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), small_options(CompactionStyle::Leveling)).unwrap();
    let plain = db.keyspace("x").unwrap();
    let counters = db
        .keyspace_with(
            "counters",
            sievedb::KeyspaceOptions::default().merge_operator(Arc::new(U64Add)),
        )
        .unwrap();
    for pessimistic in [false, true] {
        let opts = sievedb::TransactionOptions::default().pessimistic(pessimistic);
        let mut t = db.transaction_opt(&opts);
        t.put("k", "t").unwrap();
        assert_refused(t.merge("k", le(1)), "default", "Transaction::merge");
        assert_refused(t.merge_cf(&plain, "k", le(1)), "x", "Transaction::merge_cf");
        // The refused call left nothing pending, and the transaction goes on.
        t.merge_cf(&counters, "hits", le(1)).unwrap();
        assert_eq!(t.get("k").unwrap().as_deref(), Some(&b"t"[..]));
        assert_eq!(t.get_cf(&plain, "k").unwrap(), None);
        t.commit().unwrap();
        assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"t"[..]));
        assert_eq!(plain.get("k").unwrap(), None);
        // A pessimistic transaction took no lock for the refused merge.
        let mut other = db.transaction_opt(&opts);
        other.put_cf(&plain, "k", "other").unwrap();
        other.commit().unwrap();
        plain.delete("k").unwrap();
    }
    assert_eq!(counters.get("hits").unwrap(), Some(le(2).to_vec()));
}

/// Fails every merge while `refuse` is set.
struct Flaky {
    refuse: AtomicBool,
}

impl MergeOperator for Flaky {
    fn name(&self) -> &str {
        "flaky"
    }

    fn full_merge(&self, k: &[u8], base: Option<&[u8]>, ops: &[&[u8]]) -> Option<Vec<u8>> {
        if self.refuse.load(Ordering::SeqCst) {
            return None;
        }
        U64Add.full_merge(k, base, ops)
    }
}

#[test]
fn a_refusing_operator_is_an_error_and_loses_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let flaky = Arc::new(Flaky {
        refuse: AtomicBool::new(true),
    });
    let mut o = small_options(CompactionStyle::Leveling);
    o.merge_operator = Some(flaky.clone());
    let db = Db::open(dir.path(), o).unwrap();
    db.put("k", le(1)).unwrap();
    db.merge("k", le(2)).unwrap();
    db.merge("k", le(3)).unwrap();
    let e = db.get("k").unwrap_err();
    assert!(e.to_string().contains("flaky"), "{e}");
    db.flush().unwrap();
    db.compact_range::<&[u8], _>(..).unwrap(); // refused: entries kept as they are
    assert!(db.get("k").is_err());
    flaky.refuse.store(false, Ordering::SeqCst);
    assert_eq!(db.get("k").unwrap(), Some(le(6).to_vec()));
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(db.get("k").unwrap(), Some(le(6).to_vec()));
}

#[test]
fn tiering_and_read_only_resolve_merges_too() {
    let dir = tempfile::tempdir().unwrap();
    let mut o = small_options(CompactionStyle::Tiering);
    o.merge_operator = Some(Arc::new(Append::new("")));
    let db = Db::open(dir.path(), o.clone()).unwrap();
    for r in 0..4 {
        for i in 0..300u32 {
            db.merge(key(i), format!("{r}")).unwrap();
        }
        db.flush().unwrap();
    }
    db.wait_for_compactions().unwrap();
    for i in (0..300u32).step_by(37) {
        assert_eq!(db.get(key(i)).unwrap().as_deref(), Some(&b"0123"[..]));
    }
    db.merge(key(0), "x").unwrap();
    db.close().unwrap();
    let ro = Db::open_read_only(dir.path(), o).unwrap();
    assert_eq!(ro.get(key(0)).unwrap().as_deref(), Some(&b"0123x"[..]));
    assert_eq!(collect_all(ro.iter(), "read-only").len(), 300);
}

/// Readers racing flushes never see an operand twice (a flushed memtable and
/// the file it became are never in one view) nor miss an acknowledged one.
#[test]
fn reads_during_flushes_count_each_operand_once() {
    use std::sync::atomic::AtomicU64;
    let dir = tempfile::tempdir().unwrap();
    let mut o = counter_opts();
    o.write_buffer_size = 4096;
    let db = Arc::new(Db::open(dir.path(), o).unwrap());
    let (issued, acked) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
    let stop = Arc::new(AtomicBool::new(false));
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (db, issued, acked, stop) =
                (db.clone(), issued.clone(), acked.clone(), stop.clone());
            std::thread::spawn(move || {
                let mut reads = 0u64;
                while !stop.load(Ordering::SeqCst) {
                    let lo = acked.load(Ordering::SeqCst);
                    let v = if r == 0 {
                        db.get(b"c").unwrap()
                    } else {
                        db.iter().unwrap().next().map(|kv| kv.unwrap().1)
                    };
                    let v = v.map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
                    let hi = issued.load(Ordering::SeqCst);
                    assert!(
                        lo <= v && v <= hi,
                        "read {v}, acknowledged {lo}, issued {hi}"
                    );
                    reads += 1;
                }
                reads
            })
        })
        .collect();
    for i in 0..3000u64 {
        issued.fetch_add(1, Ordering::SeqCst);
        db.merge(b"c", le(1)).unwrap();
        acked.fetch_add(1, Ordering::SeqCst);
        // Padding fills the small memtables: many flushes.
        db.put(format!("pad{i:06}"), [0u8; 100]).unwrap();
    }
    stop.store(true, Ordering::SeqCst);
    for r in readers {
        assert!(r.join().unwrap() > 0);
    }
    assert!(db.stats().flushes > 20);
    assert_eq!(db.get(b"c").unwrap(), Some(le(3000).to_vec()));
}

/// Repair skips a WAL that was flushed but not removed (its operands are in
/// the file it was flushed to) when a MANIFEST says so, and folds operands
/// over their base.
#[test]
fn repair_applies_each_operand_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), counter_opts()).unwrap();
    db.put("k", le(100)).unwrap();
    for _ in 0..5 {
        db.merge("k", le(1)).unwrap();
        db.merge("j", le(2)).unwrap();
    }
    let wals = common::wal_files(dir.path());
    let saved: Vec<_> = wals
        .iter()
        .map(|w| (w.clone(), std::fs::read(w).unwrap()))
        .collect();
    db.flush().unwrap();
    db.merge("j", le(7)).unwrap(); // in the newest WAL only
    db.close().unwrap();
    for (path, bytes) in saved {
        std::fs::write(path, bytes).unwrap();
    }
    let report = Db::repair(dir.path(), counter_opts()).unwrap();
    assert_eq!(report.wals_stale, 1, "{report:?}");
    let db = Db::open(dir.path(), counter_opts()).unwrap();
    assert_eq!(db.get("k").unwrap(), Some(le(105).to_vec()));
    assert_eq!(db.get("j").unwrap(), Some(le(17).to_vec()));
}
