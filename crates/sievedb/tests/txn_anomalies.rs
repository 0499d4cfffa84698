//! The isolation anomalies of Adya and Berenson et al., as Kleppmann's
//! hermitage suite tests them (each scenario step by step: two
//! transactions on one thread where no step blocks; a second thread where a
//! pessimistic transaction waits for a lock). The table: keys "1" and "2"
//! with values 10 and 20. Every mode (optimistic, pessimistic) and isolation
//! level (snapshot, serializable) runs each scenario; G2-item and G2 (write
//! skew) are allowed under snapshot isolation and refused when serializable.

use std::sync::Arc;
use std::time::Duration;

use sievedb::{Db, Error, Isolation, Options, Transaction, TransactionOptions};

const MODES: [(bool, Isolation); 4] = [
    (false, Isolation::Snapshot),
    (false, Isolation::Serializable),
    (true, Isolation::Snapshot),
    (true, Isolation::Serializable),
];

struct Table {
    _dir: tempfile::TempDir,
    db: Arc<Db>,
}

fn table() -> Table {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put("1", "10").unwrap();
    db.put("2", "20").unwrap();
    Table {
        _dir: dir,
        db: Arc::new(db),
    }
}

fn begin(db: &Db, (pessimistic, isolation): (bool, Isolation)) -> Transaction {
    db.transaction_opt(
        &TransactionOptions::default()
            .pessimistic(pessimistic)
            .isolation(isolation)
            .lock_timeout(Duration::from_secs(10)),
    )
}

fn get(tx: &mut Transaction, k: &str) -> Option<String> {
    tx.get(k).unwrap().map(|v| String::from_utf8(v).unwrap())
}

fn committed(db: &Db, k: &str) -> Option<String> {
    db.get(k).unwrap().map(|v| String::from_utf8(v).unwrap())
}

/// Runs `f` on another thread once `tx` is handed over (a step that may
/// block on a lock), returning the transaction and the step's result.
fn blocking<T: Send + 'static>(
    mut tx: Transaction,
    f: impl FnOnce(&mut Transaction) -> sievedb::Result<T> + Send + 'static,
) -> std::thread::JoinHandle<(Transaction, sievedb::Result<T>)> {
    std::thread::spawn(move || {
        let r = f(&mut tx);
        (tx, r)
    })
}

/// G0, write cycles (dirty writes): two transactions write both rows; the
/// result is one's or the other's, never a mix.
#[test]
fn g0_no_write_cycles() {
    for mode in MODES {
        let t = table();
        let mut t1 = begin(&t.db, mode);
        let mut t2 = begin(&t.db, mode);
        t1.put("1", "11").unwrap();
        if mode.0 {
            // t2 waits for t1's lock on "1".
            let h = blocking(t2, |t2| t2.put("1", "12"));
            std::thread::sleep(Duration::from_millis(30));
            t1.put("2", "21").unwrap();
            t1.commit().unwrap();
            let (mut t2, r) = h.join().unwrap();
            // Its snapshot predates t1's commit: the write conflicts.
            assert!(r.unwrap_err().is_conflict(), "{mode:?}");
            assert!(t2.commit().is_err());
        } else {
            t2.put("1", "12").unwrap();
            t1.put("2", "21").unwrap();
            t1.commit().unwrap();
            t2.put("2", "22").unwrap();
            assert!(t2.commit().unwrap_err().is_conflict(), "{mode:?}");
        }
        assert_eq!(committed(&t.db, "1").as_deref(), Some("11"), "{mode:?}");
        assert_eq!(committed(&t.db, "2").as_deref(), Some("21"), "{mode:?}");
    }
}

/// G1a, aborted reads: a rolled-back write is never seen.
#[test]
fn g1a_no_aborted_reads() {
    for mode in MODES {
        let t = table();
        let mut t1 = begin(&t.db, mode);
        let mut t2 = begin(&t.db, mode);
        t1.put("1", "101").unwrap();
        assert_eq!(get(&mut t2, "1").as_deref(), Some("10"), "{mode:?}");
        t1.rollback().unwrap();
        assert_eq!(get(&mut t2, "1").as_deref(), Some("10"), "{mode:?}");
        t2.commit().unwrap();
        assert_eq!(committed(&t.db, "1").as_deref(), Some("10"));
    }
}

/// G1b, intermediate reads: only a committed final value is ever seen.
#[test]
fn g1b_no_intermediate_reads() {
    for mode in MODES {
        let t = table();
        let mut t1 = begin(&t.db, mode);
        let mut t2 = begin(&t.db, mode);
        t1.put("1", "101").unwrap();
        assert_eq!(get(&mut t2, "1").as_deref(), Some("10"), "{mode:?}");
        t1.put("1", "11").unwrap();
        t1.commit().unwrap();
        assert_eq!(get(&mut t2, "1").as_deref(), Some("10"), "{mode:?}");
        t2.commit().unwrap();
        let mut t3 = begin(&t.db, mode);
        assert_eq!(get(&mut t3, "1").as_deref(), Some("11"));
    }
}

/// G1c, circular information flow: neither sees the other's writes.
#[test]
fn g1c_no_circular_information_flow() {
    for mode in MODES {
        let t = table();
        let mut t1 = begin(&t.db, mode);
        let mut t2 = begin(&t.db, mode);
        t1.put("1", "11").unwrap();
        t2.put("2", "22").unwrap();
        assert_eq!(get(&mut t1, "2").as_deref(), Some("20"), "{mode:?}");
        assert_eq!(get(&mut t2, "1").as_deref(), Some("10"), "{mode:?}");
        let r1 = t1.commit();
        let r2 = t2.commit();
        // Under snapshot isolation both commit; serializable refuses the
        // second (each read a key the other wrote).
        match mode.1 {
            Isolation::Snapshot => assert!(r1.is_ok() && r2.is_ok(), "{mode:?}"),
            Isolation::Serializable => assert!(r1.is_ok() && r2.is_err(), "{mode:?}"),
        }
    }
}

/// OTV, observed transaction vanishes: a reader that saw a committed
/// transaction's writes keeps seeing them, whatever a conflicting writer does.
#[test]
fn otv_no_observed_transaction_vanishes() {
    for mode in MODES {
        let t = table();
        let mut t1 = begin(&t.db, mode);
        let mut t2 = begin(&t.db, mode);
        t1.put("1", "11").unwrap();
        t1.put("2", "19").unwrap();
        let (t2, h) = if mode.0 {
            (None, Some(blocking(t2, |t2| t2.put("1", "12"))))
        } else {
            t2.put("1", "12").unwrap();
            (Some(t2), None)
        };
        std::thread::sleep(Duration::from_millis(20));
        t1.commit().unwrap();
        let mut t3 = begin(&t.db, mode);
        assert_eq!(get(&mut t3, "1").as_deref(), Some("11"), "{mode:?}");
        let mut t2 = match h {
            Some(h) => {
                let (t2, r) = h.join().unwrap();
                assert!(r.unwrap_err().is_conflict());
                t2
            }
            None => t2.expect("not handed over"),
        };
        let _ = t2.put("2", "18");
        assert_eq!(get(&mut t3, "2").as_deref(), Some("19"), "{mode:?}");
        assert!(t2.commit().is_err(), "{mode:?}");
        assert_eq!(get(&mut t3, "2").as_deref(), Some("19"));
        assert_eq!(get(&mut t3, "1").as_deref(), Some("11"));
        t3.commit().unwrap();
    }
}

/// PMP, predicate-many-preceders: a predicate read keeps its snapshot's
/// answer, and a write conflicting with a concurrent predicate write fails.
#[test]
fn pmp_no_predicate_many_preceders() {
    for mode in MODES {
        let t = table();
        let mut t1 = begin(&t.db, mode);
        let thirty = |tx: &mut Transaction| -> usize {
            tx.iter()
                .unwrap()
                .map(|r| r.unwrap())
                .filter(|(_, v)| v.as_slice() == b"30")
                .count()
        };
        assert_eq!(thirty(&mut t1), 0);
        let mut t2 = begin(&t.db, mode);
        t2.put("3", "30").unwrap();
        t2.commit().unwrap();
        assert_eq!(thirty(&mut t1), 0, "{mode:?}: the snapshot's answer");
        // Read-only: it serializes at its snapshot, before t2.
        t1.commit().unwrap();
        // Writing on that answer, serializable refuses: t2's row is a phantom.
        let mut t1 = begin(&t.db, mode);
        assert_eq!(thirty(&mut t1), 1);
        let mut t2 = begin(&t.db, mode);
        t2.put("5", "30").unwrap();
        t2.commit().unwrap();
        assert_eq!(thirty(&mut t1), 1, "{mode:?}: the snapshot's answer");
        t1.put("count-of-30", "1").unwrap();
        let r = t1.commit();
        assert_eq!(r.is_ok(), mode.1 == Isolation::Snapshot, "{mode:?}: {r:?}");
        // PMP with writes: t1 raises every row, t2 deletes a row t1 raised.
        let t = table();
        let mut t1 = begin(&t.db, mode);
        let mut t2 = begin(&t.db, mode);
        for (k, v) in t1.iter().unwrap().map(|r| r.unwrap()).collect::<Vec<_>>() {
            let n: u32 = String::from_utf8(v).unwrap().parse().unwrap();
            t1.put(k, (n + 10).to_string()).unwrap();
        }
        let (t2, h) = if mode.0 {
            (None, Some(blocking(t2, |t2| t2.delete("2"))))
        } else {
            t2.delete("2").unwrap();
            (Some(t2), None)
        };
        std::thread::sleep(Duration::from_millis(20));
        t1.commit().unwrap();
        let r = match h {
            Some(h) => {
                let (mut t2, r) = h.join().unwrap();
                r.and_then(|()| t2.commit())
            }
            None => t2.expect("not handed over").commit(),
        };
        assert!(r.unwrap_err().is_conflict(), "{mode:?}");
        assert_eq!(committed(&t.db, "2").as_deref(), Some("30"));
    }
}

/// P4, lost update: of two read-modify-writes of one key, the second fails.
#[test]
fn p4_no_lost_update() {
    for mode in MODES {
        for for_update in [false, true] {
            let t = table();
            let mut t1 = begin(&t.db, mode);
            let mut t2 = begin(&t.db, mode);
            let read = |tx: &mut Transaction| {
                if for_update {
                    tx.get_for_update("1").unwrap()
                } else {
                    tx.get("1").unwrap()
                }
            };
            assert!(read(&mut t1).is_some());
            if mode.0 && for_update {
                // t2's read for update waits for t1's lock, then conflicts.
                let h = blocking(t2, |t2| t2.get_for_update("1"));
                std::thread::sleep(Duration::from_millis(20));
                t1.put("1", "11").unwrap();
                t1.commit().unwrap();
                let (_, r) = h.join().unwrap();
                assert!(r.unwrap_err().is_conflict(), "{mode:?}");
            } else {
                assert!(read(&mut t2).is_some());
                t1.put("1", "11").unwrap();
                let (t2, h) = if mode.0 {
                    (None, Some(blocking(t2, |t2| t2.put("1", "11"))))
                } else {
                    t2.put("1", "11").unwrap();
                    (Some(t2), None)
                };
                std::thread::sleep(Duration::from_millis(20));
                t1.commit().unwrap();
                let r = match h {
                    Some(h) => {
                        let (mut t2, r) = h.join().unwrap();
                        r.and_then(|()| t2.commit())
                    }
                    None => t2.expect("not handed over").commit(),
                };
                assert!(
                    r.unwrap_err().is_conflict(),
                    "{mode:?} for_update {for_update}"
                );
            }
        }
    }
}

/// G-single, read skew: a transaction sees both rows as of its snapshot,
/// never one before and one after another's commit.
#[test]
fn g_single_no_read_skew() {
    for mode in MODES {
        let t = table();
        let mut t1 = begin(&t.db, mode);
        let mut t2 = begin(&t.db, mode);
        assert_eq!(get(&mut t1, "1").as_deref(), Some("10"));
        assert_eq!(get(&mut t2, "1").as_deref(), Some("10"));
        assert_eq!(get(&mut t2, "2").as_deref(), Some("20"));
        t2.put("1", "12").unwrap();
        t2.put("2", "18").unwrap();
        t2.commit().unwrap();
        assert_eq!(get(&mut t1, "2").as_deref(), Some("20"), "{mode:?}");
        // Read-only: it serializes at its snapshot, before t2.
        t1.commit().unwrap();
        // With a write depending on the skewed read, every mode refuses.
        let t = table();
        let mut t1 = begin(&t.db, mode);
        let mut t2 = begin(&t.db, mode);
        assert_eq!(get(&mut t1, "1").as_deref(), Some("10"));
        t2.put("1", "12").unwrap();
        t2.put("2", "18").unwrap();
        t2.commit().unwrap();
        assert_eq!(get(&mut t1, "2").as_deref(), Some("20"));
        let r = t1.put("2", "30").and_then(|()| t1.commit());
        assert!(r.unwrap_err().is_conflict(), "{mode:?}");
    }
}

/// G2-item, write skew: allowed under snapshot isolation, refused when
/// serializable.
#[test]
fn g2_item_write_skew_only_under_snapshot() {
    for mode in MODES {
        let t = table();
        let mut t1 = begin(&t.db, mode);
        let mut t2 = begin(&t.db, mode);
        for tx in [&mut t1, &mut t2] {
            assert!(get(tx, "1").is_some() && get(tx, "2").is_some());
        }
        t1.put("1", "11").unwrap();
        t2.put("2", "21").unwrap();
        t1.commit().unwrap();
        let r = t2.commit();
        assert_eq!(r.is_ok(), mode.1 == Isolation::Snapshot, "{mode:?}: {r:?}");
    }
}

/// G2, anti-dependency cycles over a predicate: two transactions each count
/// the rows divisible by 3 and insert one; snapshot isolation lets both
/// commit, serializable refuses the second.
#[test]
fn g2_predicate_write_skew_only_under_snapshot() {
    for mode in MODES {
        let t = table();
        let mut t1 = begin(&t.db, mode);
        let mut t2 = begin(&t.db, mode);
        let divisible = |tx: &mut Transaction| -> usize {
            tx.iter()
                .unwrap()
                .map(|r| r.unwrap())
                .filter(|(_, v)| String::from_utf8_lossy(v).parse::<u32>().unwrap() % 3 == 0)
                .count()
        };
        assert_eq!(divisible(&mut t1), 0);
        assert_eq!(divisible(&mut t2), 0);
        t1.put("3", "30").unwrap();
        t2.put("4", "42").unwrap();
        t1.commit().unwrap();
        let r = t2.commit();
        assert_eq!(r.is_ok(), mode.1 == Isolation::Snapshot, "{mode:?}: {r:?}");
        if let Err(e) = r {
            assert!(matches!(e, Error::Conflict { .. }));
        }
    }
}
