//! Transactions: reads at a snapshot that see their own writes, commits
//! validated (optimistic) or locked (pessimistic), isolation levels,
//! savepoints, keyspaces, merge operands, and what a failed transaction
//! leaves (nothing).

mod common;

use std::sync::Arc;
use std::time::{Duration, Instant};

use sievedb::{
    ConflictKind, Db, Error, Isolation, KeyspaceOptions, Options, Transaction, TransactionOptions,
};

fn open(dir: &std::path::Path) -> Db {
    Db::open(dir, Options::default()).unwrap()
}

fn kind(e: &Error) -> ConflictKind {
    match e {
        Error::Conflict { kind, .. } => *kind,
        e => panic!("not a conflict: {e}"),
    }
}

fn opts(pessimistic: bool, isolation: Isolation) -> TransactionOptions {
    TransactionOptions::default()
        .pessimistic(pessimistic)
        .isolation(isolation)
        .lock_timeout(Duration::from_millis(200))
}

fn all(tx: &mut Transaction) -> Vec<(Vec<u8>, Vec<u8>)> {
    tx.iter().unwrap().map(|r| r.unwrap()).collect()
}

fn kv(k: &str, v: &str) -> (Vec<u8>, Vec<u8>) {
    (k.as_bytes().to_vec(), v.as_bytes().to_vec())
}

#[test]
fn a_transaction_reads_its_snapshot_and_its_own_writes() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    db.put("a", "1").unwrap();
    db.put("c", "3").unwrap();
    for pessimistic in [false, true] {
        let mut tx = db.transaction_opt(&opts(pessimistic, Isolation::Snapshot));
        db.put("a", "changed").unwrap(); // after the snapshot
        assert_eq!(tx.get("a").unwrap().as_deref(), Some(&b"1"[..]));
        tx.put("b", "2").unwrap();
        tx.delete("c").unwrap();
        assert_eq!(tx.get("b").unwrap().as_deref(), Some(&b"2"[..]));
        assert_eq!(tx.get("c").unwrap(), None);
        assert_eq!(db.get("b").unwrap(), None, "not committed");
        assert_eq!(all(&mut tx), vec![kv("a", "1"), kv("b", "2")]);
        let back: Vec<_> = tx.iter().unwrap().rev().map(|r| r.unwrap()).collect();
        assert_eq!(back, vec![kv("b", "2"), kv("a", "1")]);
        tx.rollback().unwrap();
        assert_eq!(db.get("b").unwrap(), None);
        db.put("a", "1").unwrap();
    }
}

#[test]
fn the_first_committer_wins_and_the_loser_leaves_no_trace() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    db.put("k", "0").unwrap();
    let mut t1 = db.transaction();
    let mut t2 = db.transaction();
    t1.put("k", "t1").unwrap();
    t2.put("k", "t2").unwrap();
    t2.put("other", "t2").unwrap();
    t1.commit().unwrap();
    let e = t2.commit().unwrap_err();
    assert!(e.is_conflict(), "{e}");
    assert_eq!(kind(&e), ConflictKind::Write);
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"t1"[..]));
    assert_eq!(
        db.get("other").unwrap(),
        None,
        "a failed commit writes nothing"
    );
    // Every later call fails the same way.
    assert_eq!(kind(&t2.get("k").unwrap_err()), ConflictKind::Write);
    assert_eq!(kind(&t2.put("x", "y").unwrap_err()), ConflictKind::Write);
    assert_eq!(kind(&t2.commit().unwrap_err()), ConflictKind::Write);
}

#[test]
fn a_plain_write_after_the_snapshot_fails_the_commit_of_every_kind() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    for pessimistic in [false, true] {
        for isolation in [Isolation::Snapshot, Isolation::Serializable] {
            // Written key.
            let mut tx = db.transaction_opt(&opts(pessimistic, isolation));
            tx.put("w", "tx").unwrap();
            db.put("w", "plain").unwrap();
            let e = tx.commit().unwrap_err();
            assert_eq!(
                kind(&e),
                ConflictKind::Write,
                "{pessimistic} {isolation:?}: {e}"
            );
            assert_eq!(db.get("w").unwrap().as_deref(), Some(&b"plain"[..]));
            // Key read for update (a lost update otherwise).
            let mut tx = db.transaction_opt(&opts(pessimistic, isolation));
            let v = tx.get_for_update("counter").unwrap();
            db.put("counter", "5").unwrap();
            tx.put("counter", format!("{}", v.map_or(0, |v| v.len()) + 1))
                .unwrap();
            assert!(tx.commit().unwrap_err().is_conflict());
            assert_eq!(db.get("counter").unwrap().as_deref(), Some(&b"5"[..]));
        }
    }
}

#[test]
fn a_pessimistic_lock_is_waited_for_then_times_out() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(open(dir.path()));
    let p = opts(true, Isolation::Snapshot).lock_timeout(Duration::from_millis(100));
    let mut holder = db.transaction_opt(&p);
    holder.put("k", "holder").unwrap();
    let mut other = db.transaction_opt(&p);
    let t = Instant::now();
    let e = other.put("k", "other").unwrap_err();
    assert_eq!(kind(&e), ConflictKind::LockTimeout);
    assert!(t.elapsed() >= Duration::from_millis(100));
    // The waiter gets the lock once the holder commits.
    let db2 = db.clone();
    let waiter = std::thread::spawn(move || {
        let mut w = db2.transaction_opt(
            &opts(true, Isolation::Snapshot).lock_timeout(Duration::from_secs(10)),
        );
        let r = w.get_for_update("k");
        (r, w.commit())
    });
    std::thread::sleep(Duration::from_millis(50));
    holder.commit().unwrap();
    let (read, commit) = waiter.join().unwrap();
    // Its snapshot predates the holder's commit: snapshot isolation refuses.
    assert_eq!(kind(&read.unwrap_err()), ConflictKind::Write);
    assert!(commit.is_err());
    // A transaction begun after the commit takes it and commits.
    let mut late = db.transaction_opt(&p);
    assert_eq!(
        late.get_for_update("k").unwrap().as_deref(),
        Some(&b"holder"[..])
    );
    late.put("k", "late").unwrap();
    late.commit().unwrap();
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"late"[..]));
}

#[test]
fn a_deadlock_fails_one_transaction_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(open(dir.path()));
    let p = opts(true, Isolation::Snapshot).lock_timeout(Duration::from_secs(20));
    let mut a = db.transaction_opt(&p);
    let mut b = db.transaction_opt(&p);
    a.put("x", "a").unwrap();
    b.put("y", "b").unwrap();
    let t = Instant::now();
    let waiter = std::thread::spawn(move || {
        let r = a.put("y", "a");
        (r, a)
    });
    std::thread::sleep(Duration::from_millis(50));
    let e = b.put("x", "b").unwrap_err();
    assert_eq!(kind(&e), ConflictKind::Deadlock, "{e}");
    drop(b); // releases y
    let (r, mut a) = waiter.join().unwrap();
    r.unwrap();
    a.commit().unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "no lock timeout was waited out"
    );
    assert_eq!(db.get("y").unwrap().as_deref(), Some(&b"a"[..]));
}

#[test]
fn dropping_a_transaction_rolls_it_back_and_releases_its_locks() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let p = opts(true, Isolation::Snapshot).lock_timeout(Duration::from_millis(50));
    {
        let mut tx = db.transaction_opt(&p);
        tx.put("k", "gone").unwrap();
    }
    assert_eq!(db.get("k").unwrap(), None);
    let mut tx = db.transaction_opt(&p);
    tx.put("k", "v").unwrap();
    tx.commit().unwrap();
    let mut tx = db.transaction_opt(&p);
    tx.put("z", "1").unwrap();
    tx.rollback().unwrap();
    assert!(tx.commit().is_err());
    let mut other = db.transaction_opt(&p);
    other.put("z", "2").unwrap();
    other.commit().unwrap();
}

#[test]
fn write_skew_is_allowed_under_snapshot_and_refused_when_serializable() {
    for pessimistic in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = open(dir.path());
        db.put("x", "1").unwrap();
        db.put("y", "1").unwrap();
        for (isolation, both) in [
            (Isolation::Snapshot, true),
            (Isolation::Serializable, false),
        ] {
            let mut t1 = db.transaction_opt(&opts(pessimistic, isolation));
            let mut t2 = db.transaction_opt(&opts(pessimistic, isolation));
            // Each reads both and, seeing both on duty, takes one off.
            assert!(t1.get("x").unwrap().is_some() && t1.get("y").unwrap().is_some());
            assert!(t2.get("x").unwrap().is_some() && t2.get("y").unwrap().is_some());
            t1.put("x", "0").unwrap();
            t2.put("y", "0").unwrap();
            t1.commit().unwrap();
            let r = t2.commit();
            assert_eq!(r.is_ok(), both, "{pessimistic} {isolation:?}: {r:?}");
            if let Err(e) = r {
                assert_eq!(kind(&e), ConflictKind::Read);
            }
            db.put("x", "1").unwrap();
            db.put("y", "1").unwrap();
        }
    }
}

#[test]
fn a_phantom_in_a_scanned_range_fails_a_serializable_commit() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    db.put("emp:1", "a").unwrap();
    for pessimistic in [false, true] {
        let mut tx = db.transaction_opt(&opts(pessimistic, Isolation::Serializable));
        let n = tx.prefix("emp:").unwrap().count();
        tx.put("count", n.to_string()).unwrap();
        db.put("emp:2", "b").unwrap(); // a new key in the scanned range
        assert_eq!(kind(&tx.commit().unwrap_err()), ConflictKind::Read);
        db.delete("emp:2").unwrap();
        // A write outside the range does not.
        let mut tx = db.transaction_opt(&opts(pessimistic, Isolation::Serializable));
        let _ = tx.prefix("emp:").unwrap().count();
        tx.put("count", "1").unwrap();
        db.put("emq:9", "x").unwrap();
        tx.commit().unwrap();
    }
}

#[test]
fn savepoints_undo_the_writes_since() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let mut tx = db.transaction();
    tx.put("a", "1").unwrap();
    tx.set_savepoint();
    tx.put("a", "2").unwrap();
    tx.put("b", "2").unwrap();
    tx.set_savepoint();
    tx.delete("a").unwrap();
    tx.rollback_to_savepoint().unwrap();
    assert_eq!(tx.get("a").unwrap().as_deref(), Some(&b"2"[..]));
    tx.rollback_to_savepoint().unwrap();
    assert_eq!(tx.get("a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(tx.get("b").unwrap(), None);
    assert!(matches!(
        tx.rollback_to_savepoint(),
        Err(Error::InvalidArgument(_))
    ));
    tx.commit().unwrap();
    assert_eq!(db.get("a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get("b").unwrap(), None);
}

#[test]
fn a_commit_is_atomic_across_keyspaces_and_survives_a_reopen() {
    let dir = tempfile::tempdir().unwrap();
    {
        let db = open(dir.path());
        let users = db.keyspace("users").unwrap();
        let counters = db
            .keyspace_with(
                "counters",
                KeyspaceOptions::default().merge_operator(Arc::new(sievedb::merge::U64Add)),
            )
            .unwrap();
        let mut tx = db.transaction();
        tx.put_cf(&users, "u1", "alice").unwrap();
        tx.merge_cf(&counters, "signups", 1u64.to_le_bytes())
            .unwrap();
        tx.merge_cf(&counters, "signups", 2u64.to_le_bytes())
            .unwrap();
        assert_eq!(
            tx.get_cf(&counters, "signups").unwrap(),
            Some(3u64.to_le_bytes().to_vec()),
            "its own operands, merged"
        );
        tx.put("default-key", "x").unwrap();
        assert_eq!(users.get("u1").unwrap(), None);
        tx.commit().unwrap();
        assert_eq!(users.get("u1").unwrap().as_deref(), Some(&b"alice"[..]));
        // An operand over a committed value, and a conflict in one keyspace.
        let mut t1 = db.transaction();
        let mut t2 = db.transaction();
        t1.merge_cf(&counters, "signups", 4u64.to_le_bytes())
            .unwrap();
        assert_eq!(
            t1.get_cf(&counters, "signups").unwrap(),
            Some(7u64.to_le_bytes().to_vec())
        );
        t2.put_cf(&counters, "signups", 0u64.to_le_bytes()).unwrap();
        t2.put_cf(&users, "u2", "bob").unwrap();
        t1.commit().unwrap();
        assert!(t2.commit().unwrap_err().is_conflict());
        assert_eq!(users.get("u2").unwrap(), None);
    }
    let db = open(dir.path());
    let users = db.keyspace("users").unwrap();
    let counters = db
        .keyspace_with(
            "counters",
            KeyspaceOptions::default().merge_operator(Arc::new(sievedb::merge::U64Add)),
        )
        .unwrap();
    assert_eq!(users.get("u1").unwrap().as_deref(), Some(&b"alice"[..]));
    assert_eq!(
        counters.get("signups").unwrap(),
        Some(7u64.to_le_bytes().to_vec())
    );
    assert_eq!(db.get("default-key").unwrap().as_deref(), Some(&b"x"[..]));
}

#[test]
fn a_transaction_older_than_the_memtables_fails_as_too_old() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(
        dir.path(),
        common::small_options(sievedb::CompactionStyle::Leveling),
    )
    .unwrap();
    let mut tx = db.transaction();
    tx.put("k", "v").unwrap();
    for i in 0..2000 {
        db.put(format!("other{i:05}"), vec![b'x'; 100]).unwrap();
    }
    db.flush().unwrap();
    let e = tx.commit().unwrap_err();
    assert_eq!(kind(&e), ConflictKind::TooOld, "{e}");
    // A young one commits.
    let mut tx = db.transaction();
    tx.put("k", "v").unwrap();
    tx.commit().unwrap();
}

/// Many threads increment one counter through transactions, retrying each
/// conflict: no increment is lost, in both modes.
#[test]
fn concurrent_increments_lose_no_update() {
    for pessimistic in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = Arc::new(open(dir.path()));
        let threads = 4;
        let per = 200;
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                let db = db.clone();
                std::thread::spawn(move || {
                    let mut retries = 0;
                    for _ in 0..per {
                        loop {
                            let mut tx = db.transaction_opt(
                                &opts(pessimistic, Isolation::Snapshot)
                                    .lock_timeout(Duration::from_secs(5)),
                            );
                            let r = (|| {
                                let n: u64 = tx
                                    .get_for_update("n")?
                                    .map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
                                tx.put("n", (n + 1).to_le_bytes())?;
                                tx.commit()
                            })();
                            match r {
                                Ok(()) => break,
                                Err(e) if e.is_conflict() => retries += 1,
                                Err(e) => panic!("{e}"),
                            }
                        }
                    }
                    retries
                })
            })
            .collect();
        let retries: u64 = workers.into_iter().map(|w| w.join().unwrap()).sum();
        let n = u64::from_le_bytes(db.get("n").unwrap().unwrap().try_into().unwrap());
        assert_eq!(
            n,
            threads * per,
            "pessimistic {pessimistic}: {retries} retries"
        );
    }
}

/// A clock the test moves.
struct Clock(std::sync::atomic::AtomicU64);

impl sievedb::Clock for Clock {
    fn now_secs(&self) -> u64 {
        self.0.load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// A TTL keyspace inside a transaction behaves as outside: what it commits
/// expires as a plain write does, a read sees expiry as of now, and a merge
/// is refused at once (the transaction goes on).
#[test]
fn ttl_keyspaces_behave_inside_a_transaction_as_outside() {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(Clock(1_000.into()));
    let db = Db::open(
        dir.path(),
        Options::builder()
            .merge_operator(Arc::new(sievedb::merge::Append::new(",")))
            .clock(clock.clone())
            .build(),
    )
    .unwrap();
    let short = db
        .keyspace_with(
            "short",
            KeyspaceOptions::default()
                .no_merge_operator()
                .ttl(Duration::from_secs(10)),
        )
        .unwrap();
    let mut tx = db.transaction();
    tx.put_cf(&short, "a", "1").unwrap();
    tx.put("b", "1").unwrap();
    let e = tx.merge_cf(&short, "a", "x").unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    let outside = short.merge("a", "x").unwrap_err();
    assert_eq!(e.to_string(), outside.to_string());
    assert!(!e.is_conflict());
    tx.merge("b", "2").unwrap(); // the default keyspace has no TTL
    tx.commit().unwrap();
    assert_eq!(short.get("a").unwrap().as_deref(), Some(&b"1"[..]));
    assert_eq!(db.get("b").unwrap().as_deref(), Some(&b"1,2"[..]));
    let mut reader = db.transaction();
    clock.0.store(1_011, std::sync::atomic::Ordering::SeqCst);
    assert_eq!(short.get("a").unwrap(), None, "expired outside");
    assert_eq!(reader.get_cf(&short, "a").unwrap(), None, "and inside");
    assert_eq!(reader.iter_cf(&short).unwrap().count(), 0);
    assert_eq!(reader.get("b").unwrap().as_deref(), Some(&b"1,2"[..]));
}

/// A commit that fails for another reason than a conflict (here: a keyspace
/// it wrote was dropped) ends the transaction too: nothing of it is written,
/// later calls return that error, and its locks are free.
#[test]
fn a_failed_commit_ends_the_transaction_and_frees_its_locks() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    let ks = db.keyspace("gone").unwrap();
    let mut tx = db.transaction_opt(&opts(true, Isolation::Snapshot));
    tx.put("a", "1").unwrap();
    tx.put_cf(&ks, "b", "1").unwrap();
    drop(ks);
    db.drop_keyspace("gone").unwrap();
    let e = tx.commit().unwrap_err();
    assert!(!e.is_conflict(), "{e}");
    assert_eq!(tx.put("c", "1").unwrap_err().to_string(), e.to_string());
    assert_eq!(db.get("a").unwrap(), None);
    let mut other = db
        .transaction_opt(&opts(true, Isolation::Snapshot).lock_timeout(Duration::from_millis(10)));
    other.put("a", "2").unwrap(); // the lock is free at once
    other.commit().unwrap();
    tx.rollback().unwrap();
    assert!(tx.rollback().is_err(), "rolled back already");
}
