//! `ReadOptions`: a snapshot to read at (of the same database only),
//! iterator bounds, and the block cache policy of iterators.

mod common;

use common::{assert_same_items, collect_all, Model};
use sievedb::{Db, Error, Options, ReadOptions};

fn open(dir: &std::path::Path) -> Db {
    Db::open(dir, Options::default()).expect("open")
}

#[test]
fn a_snapshot_of_another_database_is_refused() {
    let (t1, t2) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (a, b) = (open(t1.path()), open(t2.path()));
    a.put("k", "a").unwrap();
    b.put("k", "b").unwrap();
    let snap = a.snapshot();
    let ro = ReadOptions::default().snapshot(&snap);
    let refused = |r: sievedb::Result<()>, what: &str| match r {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("snapshot"), "{what}: {m}"),
        other => panic!("{what}: expected InvalidArgument, got {other:?}"),
    };
    refused(b.get_opt("k", &ro).map(drop), "get_opt");
    refused(b.multi_get_opt(["k"], &ro).map(drop), "multi_get_opt");
    refused(b.iter_opt(&ro).map(drop), "iter_opt");
    // Its own database accepts it.
    assert_eq!(a.get_opt("k", &ro).unwrap(), Some(b"a".to_vec()));
}

#[test]
fn snapshot_and_bounds_shape_every_read() {
    let tmp = tempfile::tempdir().unwrap();
    let db = open(tmp.path());
    let mut model = Model::new();
    for i in 0..50u32 {
        let (k, v) = (format!("k{i:02}"), format!("v{i}"));
        db.put(&k, &v).unwrap();
        model.insert(k.into_bytes(), v.into_bytes());
        if i == 20 {
            db.flush().unwrap();
        }
    }
    let snap = db.snapshot();
    let old = model.clone();
    for i in (0..50u32).step_by(3) {
        db.delete(format!("k{i:02}")).unwrap();
        model.remove(format!("k{i:02}").as_bytes());
    }
    db.put("k07", "new").unwrap();
    model.insert(b"k07".to_vec(), b"new".to_vec());

    let ro = ReadOptions::default()
        .lower_bound("k05")
        .upper_bound("k30")
        .fill_cache(false);
    let got = collect_all(db.iter_opt(&ro), "latest, bounded");
    assert_same_items(
        &got,
        model.range(b"k05".to_vec()..b"k30".to_vec()),
        "latest, bounded",
    );
    let ro = ro.snapshot(&snap);
    let got = collect_all(db.iter_opt(&ro), "snapshot, bounded");
    assert_same_items(
        &got,
        old.range(b"k05".to_vec()..b"k30".to_vec()),
        "snapshot, bounded",
    );
    let rev: Vec<_> = db
        .iter_opt(&ro)
        .unwrap()
        .rev()
        .map(Result::unwrap)
        .collect();
    assert_same_items(
        &rev,
        old.range(b"k05".to_vec()..b"k30".to_vec()).rev(),
        "snapshot rev",
    );
    // Point lookups read at the snapshot and ignore the bounds.
    assert_eq!(db.get_opt("k07", &ro).unwrap(), Some(b"v7".to_vec()));
    assert_eq!(db.get_opt("k45", &ro).unwrap(), Some(b"v45".to_vec()));
    assert_eq!(
        db.multi_get_opt(["k00", "k01", "k07"], &ro).unwrap(),
        [
            Some(b"v0".to_vec()),
            Some(b"v1".to_vec()),
            Some(b"v7".to_vec())
        ]
    );
    assert_eq!(db.get_opt("k00", &ReadOptions::default()).unwrap(), None);
    // Bounds are user keys: an oversized one is refused.
    let big = vec![b'x'; 64 * 1024 + 1];
    assert!(matches!(
        db.iter_opt(&ReadOptions::default().upper_bound(&big)),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn iterators_honour_fill_cache() {
    let tmp = tempfile::tempdir().unwrap();
    {
        let db = open(tmp.path());
        for i in 0..2000u32 {
            db.put(format!("key{i:05}"), [b'v'; 100]).unwrap();
        }
        db.flush().unwrap();
        db.close().unwrap();
    }
    let db = open(tmp.path());
    let no_fill = ReadOptions::default().fill_cache(false);
    let scan = |ro: &ReadOptions| assert_eq!(db.iter_opt(ro).unwrap().count(), 2000);
    let s0 = db.stats();
    scan(&no_fill);
    scan(&no_fill);
    let s1 = db.stats();
    assert_eq!(
        s1.block_cache_hits, s0.block_cache_hits,
        "fill_cache(false) cached blocks"
    );
    assert!(s1.block_cache_misses > s0.block_cache_misses);
    scan(&ReadOptions::default());
    let s2 = db.stats();
    scan(&ReadOptions::default());
    let s3 = db.stats();
    assert_eq!(
        s2.block_cache_hits, s1.block_cache_hits,
        "first filling scan hit"
    );
    assert!(
        s3.block_cache_hits - s2.block_cache_hits >= s2.block_cache_misses - s1.block_cache_misses,
        "a second scan after a filling one missed the cache: {s2:?} -> {s3:?}"
    );
}
