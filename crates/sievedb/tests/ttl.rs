//! TTL: values expire on every read path at once, expired entries hide
//! older versions, compactions (and periodic compactions) remove them from
//! disk, and the TTL-ness of a database is durable.

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::ManualClock;
use sievedb::{CompactionStyle, Db, Error, Options, ReadOptions};

const T0: u64 = 1_700_000_000;
const TTL: u64 = 100;

fn ttl_options(clock: &Arc<ManualClock>) -> Options {
    Options::builder()
        .ttl(Duration::from_secs(TTL))
        .clock(clock.clone())
        .max_levels(3)
        .level0_compaction_trigger(1)
        .build()
}

fn keys(it: impl Iterator<Item = sievedb::Result<(Vec<u8>, Vec<u8>)>>) -> Vec<(Vec<u8>, Vec<u8>)> {
    it.map(|kv| kv.unwrap()).collect()
}

fn kv(k: &str, v: &str) -> (Vec<u8>, Vec<u8>) {
    (k.as_bytes().to_vec(), v.as_bytes().to_vec())
}

fn total_entries(db: &Db) -> u64 {
    db.stats().levels.iter().map(|l| l.entries).sum()
}

/// Every read path sees exactly `expected` (ascending).
fn check_reads(db: &Db, expected: &[(Vec<u8>, Vec<u8>)], ctx: &str) {
    assert_eq!(keys(db.iter().unwrap()), expected, "{ctx}: iter");
    let mut rev = expected.to_vec();
    rev.reverse();
    assert_eq!(keys(db.iter().unwrap().rev()), rev, "{ctx}: rev");
    assert_eq!(keys(db.prefix("k").unwrap()), expected, "{ctx}: prefix");
    assert_eq!(keys(db.range("a".."z").unwrap()), expected, "{ctx}: range");
    for k in ["k1", "k2", "k3"] {
        let want = expected
            .iter()
            .find(|(x, _)| x == k.as_bytes())
            .map(|(_, v)| v.clone());
        assert_eq!(db.get(k).unwrap(), want, "{ctx}: get {k}");
    }
    let got = db.multi_get(["k1", "k2", "k3"]).unwrap();
    assert_eq!(
        got.iter().flatten().count(),
        expected.len(),
        "{ctx}: multi_get"
    );
    let mut it = db.iter().unwrap();
    it.seek_for_prev("k9").unwrap();
    assert_eq!(
        it.valid().then(|| (it.key().to_vec(), it.value().to_vec())),
        expected.last().cloned(),
        "{ctx}: cursor"
    );
}

#[test]
fn values_expire_at_once_on_every_read_path() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let db = Db::open(dir.path(), ttl_options(&clock)).unwrap();
    db.put("k1", "one").unwrap();
    clock.advance(10);
    db.put("k2", "two").unwrap();
    db.put("k3", "three").unwrap();
    db.delete("k3").unwrap();
    let snap = db.snapshot();
    check_reads(&db, &[kv("k1", "one"), kv("k2", "two")], "fresh");
    for flushed in [false, true] {
        if flushed {
            db.flush().unwrap();
            check_reads(&db, &[kv("k1", "one"), kv("k2", "two")], "flushed");
        }
        clock.set(T0 + TTL - 1);
        check_reads(&db, &[kv("k1", "one"), kv("k2", "two")], "just before");
        clock.set(T0 + TTL);
        check_reads(&db, &[kv("k2", "two")], "k1 expired");
        assert_eq!(snap.get("k1").unwrap(), None, "snapshot reads expire too");
        assert_eq!(keys(snap.iter().unwrap()), [kv("k2", "two")]);
        let ro = ReadOptions::default().snapshot(&snap);
        assert_eq!(keys(db.iter_opt(&ro).unwrap().rev()), [kv("k2", "two")]);
        clock.set(T0 + TTL + 10);
        check_reads(&db, &[], "all expired");
        clock.set(T0 + 10);
    }
}

#[test]
fn an_expired_value_hides_older_versions() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0 + 1_000);
    let db = Db::open(dir.path(), ttl_options(&clock)).unwrap();
    // The older version is written later by the clock (a clock set back),
    // so that the newer one expires first.
    db.put("k1", "old").unwrap();
    db.put("k2", "old").unwrap();
    db.flush().unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    clock.set(T0);
    db.put("k1", "new").unwrap();
    db.put("k2", "new").unwrap();
    db.flush().unwrap();
    db.put("k2", "newest").unwrap(); // memtable over SST
    clock.set(T0 + TTL);
    check_reads(&db, &[], "newest versions expired");
    // Compactions turn them into tombstones: still hidden.
    db.compact_range::<&[u8], _>(..).unwrap();
    check_reads(&db, &[], "after compaction");
    clock.set(T0 + 1_000 + TTL);
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(total_entries(&db), 0);
}

#[test]
fn compactions_remove_expired_data_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let opts = Options {
        periodic_compaction: Some(Duration::ZERO), // only compact_range here
        ..ttl_options(&clock)
    };
    let db = Db::open(dir.path(), opts).unwrap();
    for i in 0..200 {
        db.put(format!("k{i:03}"), format!("v{i}")).unwrap();
    }
    clock.advance(50);
    for i in 0..50 {
        db.put(format!("k{i:03}"), format!("w{i}")).unwrap();
    }
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(total_entries(&db), 200);
    clock.advance(TTL - 50);
    // The first 150 keys' only versions expired; the 50 rewritten live on.
    db.compact_range::<&[u8], _>(..).unwrap();
    let s = db.stats();
    assert_eq!(s.compaction_filter_removed, 150, "{s}");
    assert_eq!(total_entries(&db), 50, "{s}");
    assert_eq!(db.iter().unwrap().count(), 50);
    assert_eq!(db.get("k000").unwrap().as_deref(), Some(&b"w0"[..]));
    assert_eq!(db.get("k199").unwrap(), None);
}

#[test]
fn periodic_compaction_reaches_a_file_no_write_touches() {
    for style in [CompactionStyle::Leveling, CompactionStyle::Tiering] {
        let dir = tempfile::tempdir().unwrap();
        let clock = ManualClock::new(T0);
        let opts = Options {
            compaction_style: style,
            ..ttl_options(&clock)
        };
        let db = Db::open(dir.path(), opts).unwrap();
        for i in 0..100 {
            db.put(format!("k{i:03}"), "v").unwrap();
        }
        db.compact_range::<&[u8], _>(..).unwrap();
        db.wait_for_compactions().unwrap();
        assert_eq!(total_entries(&db), 100);
        let before = db.stats().compactions;
        clock.advance(TTL - 1);
        db.wait_for_compactions().unwrap();
        assert_eq!(
            db.stats().compactions,
            before,
            "{style:?}: nothing is due yet"
        );
        clock.advance(1);
        // No write: only periodic compaction can reach the file.
        db.wait_for_compactions().unwrap();
        let s = db.stats();
        assert!(s.compactions > before, "{style:?}: {s}");
        assert_eq!(total_entries(&db), 0, "{style:?}: {s}");
        let files: usize = s.levels.iter().map(|l| l.files).sum();
        assert_eq!(files, 0, "{style:?}: {s}");
    }
}

#[test]
fn periodic_compaction_runs_the_filter_without_ttl() {
    struct DropAll;
    impl sievedb::CompactionFilter for DropAll {
        fn filter(&self, _: usize, _: &[u8], _: &[u8]) -> sievedb::Decision {
            sievedb::Decision::Remove
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let opts = Options::builder()
        .clock(clock.clone())
        .periodic_compaction(Duration::from_secs(60))
        .max_levels(3)
        .build();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    db.put("a", "1").unwrap();
    db.flush().unwrap();
    db.close().unwrap();
    // Reopened with the filter; the file's creation time is in the MANIFEST.
    let opts = Options {
        compaction_filter: Some(Arc::new(DropAll)),
        ..opts
    };
    let db = Db::open(dir.path(), opts).unwrap();
    db.wait_for_compactions().unwrap();
    assert_eq!(db.get("a").unwrap().as_deref(), Some(&b"1"[..]));
    clock.advance(60);
    db.wait_for_compactions().unwrap();
    assert_eq!(db.get("a").unwrap(), None);
    assert_eq!(total_entries(&db), 0);
}

#[test]
fn the_ttl_marker_is_durable() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let db = Db::open(dir.path(), ttl_options(&clock)).unwrap();
    db.put("k1", "v").unwrap();
    db.close().unwrap();
    let invalid = |r: sievedb::Result<Db>, what: &str| match r {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("TTL"), "{what}: {m}"),
        Err(e) => panic!("{what}: {e}"),
        Ok(_) => panic!("{what}: opened"),
    };
    invalid(
        Db::open(dir.path(), Options::default()),
        "ttl db without ttl",
    );
    invalid(
        Db::open_read_only(dir.path(), Options::default()),
        "read-only without ttl",
    );
    // Another duration is fine: it applies to the stored write times.
    let longer = Options {
        ttl: Some(Duration::from_secs(10 * TTL)),
        ..ttl_options(&clock)
    };
    clock.advance(TTL);
    let db = Db::open(dir.path(), longer).unwrap();
    assert_eq!(db.get("k1").unwrap().as_deref(), Some(&b"v"[..]));
    db.close().unwrap();
    let db = Db::open(dir.path(), ttl_options(&clock)).unwrap();
    assert_eq!(db.get("k1").unwrap(), None);
    db.close().unwrap();

    let plain = tempfile::tempdir().unwrap();
    let db = Db::open(plain.path(), Options::default()).unwrap();
    db.put("k", "v").unwrap();
    db.close().unwrap();
    invalid(
        Db::open(plain.path(), ttl_options(&clock)),
        "plain db with ttl",
    );
}

/// Opens `dir` with a TTL and checks `k1` reads `want`.
fn reads(dir: &Path, clock: &Arc<ManualClock>, want: Option<&str>) {
    let db = Db::open(dir, ttl_options(clock)).unwrap();
    assert_eq!(db.get("k1").unwrap(), want.map(|w| w.as_bytes().to_vec()));
    assert_eq!(db.iter().unwrap().count(), usize::from(want.is_some()));
}

#[test]
fn stamps_survive_crash_recovery_checkpoints_and_repair() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let db = Db::open(dir.path(), ttl_options(&clock)).unwrap();
    db.put("k1", "v").unwrap();
    // Dropped without a flush: the stamped value is only in the WAL, which
    // the next open replays and flushes.
    drop(db);
    let crashed = dir;
    reads(crashed.path(), &clock, Some("v"));
    // A checkpoint keeps the marker.
    let out = tempfile::tempdir().unwrap();
    let cp = out.path().join("cp");
    {
        let db = Db::open(crashed.path(), ttl_options(&clock)).unwrap();
        db.checkpoint(&cp).unwrap();
    }
    assert!(Db::open(&cp, Options::default()).is_err());
    reads(&cp, &clock, Some("v"));
    // Repair given the TTL keeps it too.
    std::fs::remove_file(crashed.path().join("CURRENT")).unwrap();
    Db::repair(crashed.path(), ttl_options(&clock)).unwrap();
    reads(crashed.path(), &clock, Some("v"));
    clock.advance(TTL);
    reads(crashed.path(), &clock, None);
    reads(&cp, &clock, None);
}

#[test]
fn bulk_load_refuses_a_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let shape = sievedb::bulk::LevelShape::new(1, 10).unwrap();
    let r = sievedb::bulk::BulkLoad::new(dir.path().join("db"), ttl_options(&clock), shape)
        .load([(b"a".to_vec(), b"1".to_vec())]);
    assert!(matches!(r, Err(Error::InvalidArgument(m)) if m.contains("ttl")));
}

#[test]
fn bad_durations_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let r = Db::open(
        dir.path(),
        Options::builder().ttl(Duration::from_millis(500)).build(),
    );
    assert!(matches!(r, Err(Error::InvalidArgument(_))));
    let r = Db::open(
        dir.path(),
        Options::builder()
            .periodic_compaction(Duration::from_millis(500))
            .build(),
    );
    assert!(matches!(r, Err(Error::InvalidArgument(_))));
}

#[test]
fn the_filter_sees_unstamped_values_and_changes_keep_the_write_time() {
    struct Upper;
    impl sievedb::CompactionFilter for Upper {
        fn filter(&self, _: usize, key: &[u8], value: &[u8]) -> sievedb::Decision {
            match key {
                b"rm" => sievedb::Decision::Remove,
                _ => sievedb::Decision::ChangeValue(value.to_ascii_uppercase()),
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let opts = Options {
        compaction_filter: Some(Arc::new(Upper)),
        ..ttl_options(&clock)
    };
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    db.put("k1", "abc").unwrap();
    db.put("rm", "x").unwrap();
    clock.advance(TTL / 2);
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(db.get("k1").unwrap().as_deref(), Some(&b"ABC"[..]));
    assert_eq!(db.get("rm").unwrap(), None);
    assert_eq!(keys(db.iter().unwrap()), [kv("k1", "ABC")]);
    db.close().unwrap();
    // Read-only opens strip and expire as well; the change kept T0.
    let ro = Db::open_read_only(dir.path(), opts).unwrap();
    assert_eq!(keys(ro.iter().unwrap().rev()), [kv("k1", "ABC")]);
    clock.set(T0 + TTL);
    assert_eq!(ro.get("k1").unwrap(), None);
    assert_eq!(ro.iter().unwrap().count(), 0);
}

#[test]
fn an_idle_database_runs_periodic_compactions_by_itself() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(T0);
    let db = Db::open(dir.path(), ttl_options(&clock)).unwrap();
    for i in 0..10 {
        db.put(format!("k{i}"), "v").unwrap();
    }
    db.compact_range::<&[u8], _>(..).unwrap();
    assert_eq!(total_entries(&db), 10);
    clock.advance(TTL);
    // Nothing calls into the database: its compaction thread looks for due
    // files on its own (every few seconds).
    let start = std::time::Instant::now();
    while total_entries(&db) > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no periodic compaction: {}",
            db.stats()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
}

#[test]
fn merges_are_refused_under_a_ttl() {
    let dir = tempfile::tempdir().unwrap();
    let clock = ManualClock::new(1_000);
    let mut o = ttl_options(&clock);
    o.merge_operator = Some(Arc::new(sievedb::merge::U64Add));
    assert!(matches!(
        Db::open(dir.path(), o),
        Err(Error::InvalidArgument(_))
    ));
    let db = Db::open(dir.path(), ttl_options(&clock)).unwrap();
    match db.merge("k", 1u64.to_le_bytes()) {
        Err(Error::InvalidArgument(m)) => assert!(m.contains("TTL"), "{m}"),
        other => panic!("merge under a TTL: {other:?}"),
    }
    assert_eq!(db.get("k").unwrap(), None);
}
