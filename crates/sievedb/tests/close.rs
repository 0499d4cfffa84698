//! `Db::close` and dropping a `Db`: keyspace handles do not keep the
//! database open (every call through one is then `Error::Closed`), while
//! snapshots, iterators and transactions do, and `close` says how many of
//! each are still open.

use sievedb::{Db, Error, Options, ReadOptions, WriteBatch};

/// Asserts that every call through `ks` returns `Error::Closed`.
fn assert_closed(ks: &sievedb::Keyspace, ctx: &str) {
    let closed = |r: sievedb::Result<()>, what: &str| match r {
        Err(Error::Closed) => {}
        other => panic!("{ctx}: {what}: expected Closed, got {other:?}"),
    };
    closed(ks.put("k", "v"), "put");
    closed(ks.delete("k"), "delete");
    closed(ks.merge("k", "v"), "merge");
    closed(ks.delete_range::<&str, _>("a".."b"), "delete_range");
    closed(ks.get("k").map(drop), "get");
    closed(
        ks.get_opt("k", &ReadOptions::default()).map(drop),
        "get_opt",
    );
    closed(ks.multi_get(["k"]).map(drop), "multi_get");
    closed(ks.key_may_exist("k").map(drop), "key_may_exist");
    closed(ks.iter().map(drop), "iter");
    closed(ks.range::<&str, _>(..).map(drop), "range");
    closed(ks.prefix("k").map(drop), "prefix");
    closed(ks.iter_opt(&ReadOptions::default()).map(drop), "iter_opt");
    closed(ks.compact_range::<&str, _>(..), "compact_range");
    closed(ks.clone().get("k").map(drop), "a clone's get");
    assert_eq!(
        ks.stats().levels.len(),
        0,
        "{ctx}: stats of a closed handle"
    );
    assert_eq!(ks.property("sievedb.levels"), None, "{ctx}: property");
    assert_eq!(ks.property_int("sievedb.num-snapshots"), None, "{ctx}");
    assert!(!ks.name().is_empty(), "{ctx}: the name stays");
}

#[test]
fn close_succeeds_with_keyspace_handles_alive_and_closes_them() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let users = db.keyspace("users").unwrap();
    let default = db.default_keyspace();
    let copy = users.clone();
    users.put("u1", "alice").unwrap();
    default.put("d", "1").unwrap();
    db.close().unwrap();
    for (ks, ctx) in [(&users, "users"), (&default, "default"), (&copy, "clone")] {
        assert_closed(ks, ctx);
    }
    // The directory is unlocked: it reopens while the old handles live, and
    // they stay closed (a reopened database needs new handles).
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_closed(&users, "after a reopen");
    let users = db.keyspace("users").unwrap();
    assert_eq!(users.get("u1").unwrap().as_deref(), Some(&b"alice"[..]));
    assert_eq!(db.get("d").unwrap().as_deref(), Some(&b"1"[..]));
    db.close().unwrap();
}

#[test]
fn dropping_the_db_closes_its_keyspace_handles() {
    for read_only in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let db = Db::open(dir.path(), Options::default()).unwrap();
        db.keyspace("a").unwrap().put("k", "v").unwrap();
        drop(db);
        let db = match read_only {
            true => Db::open_read_only(dir.path(), Options::default()).unwrap(),
            false => Db::open(dir.path(), Options::default()).unwrap(),
        };
        let a = db.keyspace("a").unwrap();
        assert_eq!(a.get("k").unwrap().as_deref(), Some(&b"v"[..]));
        let mut b = WriteBatch::new();
        b.put_cf(&a, "k2", "v"); // a batch can still be built from a closed handle
        drop(db);
        assert_closed(&a, if read_only { "read-only" } else { "read-write" });
        let db = Db::open(dir.path(), Options::default()).unwrap();
        db.close().unwrap();
    }
}

#[test]
fn close_is_busy_while_snapshots_iterators_and_transactions_live_and_says_which() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let ks = db.keyspace("ks").unwrap();
    db.put("k", "v1").unwrap();
    ks.put("k", "v1").unwrap();
    let (s1, s2) = (db.snapshot(), db.snapshot());
    let it = db.iter().unwrap();
    let ks_it = ks.iter().unwrap();
    let snap_it = s1.iter().unwrap();
    let mut tx = db.transaction();
    tx.put("t", "1").unwrap();
    let mut done = db.transaction();
    done.put("d", "1").unwrap();
    done.commit().unwrap(); // ended, but not dropped: still counted
    db.put("k", "v2").unwrap();
    match db.close() {
        Err(Error::Busy(m)) => assert!(
            m.starts_with("2 snapshots, 3 iterators, 2 transactions of "),
            "{m}"
        ),
        other => panic!("close with open handles: {other:?}"),
    }
    // The keyspace handle is closed although the database lives on.
    assert_closed(&ks, "after a busy close");
    // What keeps it open goes on reading what it saw.
    assert_eq!(s1.get("k").unwrap().as_deref(), Some(&b"v1"[..]));
    assert_eq!(it.count(), 1, "\"k\" alone when it was made");
    assert_eq!(ks_it.count(), 1);
    assert_eq!(snap_it.count(), 1);
    assert_eq!(tx.get("t").unwrap().as_deref(), Some(&b"1"[..]));
    assert!(matches!(tx.commit(), Err(Error::Closed)));
    assert!(matches!(
        Db::open(dir.path(), Options::default()),
        Err(Error::Locked(_))
    ));
    drop((s1, s2, tx, done));
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get("t").unwrap(), None, "the transaction did not commit");
    assert_eq!(db.get("d").unwrap().as_deref(), Some(&b"1"[..]));

    // One of a kind is singular.
    let snap = db.snapshot();
    match db.close() {
        Err(Error::Busy(m)) => assert!(m.starts_with("1 snapshot of "), "{m}"),
        other => panic!("close with a snapshot: {other:?}"),
    }
    drop(snap);
    Db::open(dir.path(), Options::default())
        .unwrap()
        .close()
        .unwrap();
}

#[test]
fn calls_racing_close_succeed_or_see_closed() {
    let dir = tempfile::tempdir().unwrap();
    for round in 0..20 {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let ks = db.keyspace("ks").unwrap();
        let r = std::thread::scope(|s| {
            let workers: Vec<_> = (0..2)
                .map(|t| {
                    let ks = ks.clone();
                    s.spawn(move || {
                        for i in 0u64.. {
                            let k = format!("{t}-{i}");
                            match ks.put(&k, "v").and_then(|()| ks.get(&k)) {
                                Ok(v) => assert_eq!(v.as_deref(), Some(&b"v"[..])),
                                Err(Error::Closed) => return i,
                                Err(e) => panic!("round {round}: {e}"),
                            }
                        }
                        unreachable!()
                    })
                })
                .collect();
            std::thread::sleep(std::time::Duration::from_millis(2));
            let r = db.close();
            for w in workers {
                w.join().unwrap();
            }
            r
        });
        match r {
            Ok(()) => {}
            // A call that upgraded its reference before the close.
            Err(Error::Busy(m)) => assert!(m.contains("other reference"), "{m}"),
            Err(e) => panic!("round {round}: close: {e}"),
        }
        assert_closed(&ks, "after the race");
    }
    // Every call that upgraded has ended: the directory reopens.
    Db::open(dir.path(), Options::default())
        .unwrap()
        .close()
        .unwrap();
}

#[test]
fn a_closed_handle_never_passes_for_one_of_a_later_database() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let old = db.keyspace("ks").unwrap();
    db.close().unwrap();
    // The same directory, the same keyspace id, maybe the same addresses:
    // a batch or a transaction naming the old handle is still refused.
    for round in 0..10 {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        let new = db.keyspace("ks").unwrap();
        let mut b = WriteBatch::new();
        b.put_cf(&old, "k", "v");
        match db.write(b) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("another database"), "{m}"),
            other => panic!("round {round}: a batch of a closed handle: {other:?}"),
        }
        let mut tx = db.transaction();
        assert!(matches!(
            tx.put_cf(&old, "k", "v"),
            Err(Error::InvalidArgument(_))
        ));
        tx.put_cf(&new, "k", "v").unwrap();
        tx.commit().unwrap();
        assert_eq!(new.get("k").unwrap().as_deref(), Some(&b"v"[..]));
        new.delete("k").unwrap();
        drop(tx);
        db.close().unwrap();
    }
}
