//! Looking into a running database: named properties, approximate sizes of
//! key ranges, the `Stats` table, write-stall counters and the pending
//! compaction estimate.

mod common;

use rand::{Rng, SeedableRng};
use sievedb::{Db, Options};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// `n` keys with 1000-byte random (incompressible) values, flushed and
/// compacted.
fn loaded(dir: &std::path::Path, n: u32) -> Db {
    let opts = Options::builder()
        .write_buffer_size(256 << 10)
        .target_file_size(256 << 10)
        .level1_size(1 << 20)
        .build();
    let db = Db::open(dir, opts).unwrap();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(7);
    for i in 0..n {
        let v: Vec<u8> = (0..1000).map(|_| rng.gen()).collect();
        db.put(key(i), v).unwrap();
    }
    db.wait_for_compactions().unwrap();
    db
}

const NAMES: [&str; 11] = [
    "sievedb.stats",
    "sievedb.levels",
    "sievedb.num-files-at-level0",
    "sievedb.total-sst-files-size",
    "sievedb.estimate-num-keys",
    "sievedb.estimate-pending-compaction-bytes",
    "sievedb.stall-micros",
    "sievedb.filter-memory-bytes",
    "sievedb.num-snapshots",
    "sievedb.num-immutable-mem-table",
    "sievedb.cur-size-all-mem-tables",
];

#[test]
fn every_property_answers_and_unknown_names_do_not() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path(), 5000);
    db.put(b"unflushed", b"x").unwrap();
    for name in NAMES {
        let text = db
            .property(name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert!(!text.is_empty(), "{name}");
        let numeric = !matches!(name, "sievedb.stats" | "sievedb.levels");
        assert_eq!(db.property_int(name).is_some(), numeric, "{name}");
        if numeric {
            assert_eq!(text, db.property_int(name).unwrap().to_string(), "{name}");
        }
    }
    let stats = db.stats();
    let total: u64 = stats.levels.iter().map(|l| l.bytes).sum();
    let p = |n: &str| db.property_int(n).unwrap();
    assert_eq!(p("sievedb.total-sst-files-size"), total);
    assert_eq!(p("sievedb.estimate-num-keys"), 5001);
    assert_eq!(p("sievedb.filter-memory-bytes"), stats.filter_memory_bytes);
    // A filter is read at its file's first lookup.
    assert!(db.get(key(17)).unwrap().is_some());
    assert!(p("sievedb.filter-memory-bytes") > 0);
    assert!(p("sievedb.cur-size-all-mem-tables") > 0);
    for (l, ls) in stats.levels.iter().enumerate() {
        assert_eq!(
            p(&format!("sievedb.num-files-at-level{l}")),
            ls.files as u64
        );
    }
    assert_eq!(db.property_int("sievedb.num-files-at-level7"), None);
    assert_eq!(p("sievedb.num-snapshots"), 0);
    let s1 = db.snapshot();
    let s2 = db.snapshot();
    assert_eq!(p("sievedb.num-snapshots"), 2);
    drop((s1, s2));
    assert_eq!(p("sievedb.num-snapshots"), 0);
    let levels = db.property("sievedb.levels").unwrap();
    assert_eq!(levels.lines().count(), 2 + 7, "{levels}");
    assert!(db
        .property("sievedb.stats")
        .unwrap()
        .contains("** Compaction Stats **"));
    for unknown in [
        "sievedb.nope",
        "rocksdb.stats",
        "stats",
        "sievedb.num-files-at-levelx",
        "",
    ] {
        assert_eq!(db.property(unknown), None, "{unknown}");
        assert_eq!(db.property_int(unknown), None, "{unknown}");
    }
}

#[test]
fn approximate_size_is_proportional_to_the_data_in_the_range() {
    let dir = tempfile::tempdir().unwrap();
    let n = 8000;
    let db = loaded(dir.path(), n);
    let total = db.property_int("sievedb.total-sst-files-size").unwrap();
    let all = db.approximate_size::<&[u8], _>(..).unwrap();
    assert_eq!(all, total);
    let data = n as f64 * 1000.0;
    let close = |got: u64, want: f64, what: &str| {
        assert!(
            (got as f64 - want).abs() <= want * 0.1 + 16384.0,
            "{what}: {got} vs {want}"
        );
    };
    close(all, data * 1.02, "everything");
    let half = db.approximate_size(key(0)..key(n / 2)).unwrap();
    close(half, data / 2.0, "first half");
    let quarter = db.approximate_size(key(n / 4)..key(n / 2)).unwrap();
    close(quarter, data / 4.0, "second quarter");
    let tail = db.approximate_size(key(n - 1000)..).unwrap();
    close(tail, data / 8.0, "last 1000");
    let a = key(100);
    assert_eq!(db.approximate_size(a.as_slice()..a.as_slice()).unwrap(), 0);
    assert_eq!(db.approximate_size(key(10)..key(5)).unwrap(), 0);
    assert_eq!(db.approximate_size(b"zzz".as_slice()..).unwrap(), 0);
    assert_eq!(db.approximate_size(..b"a".as_slice()).unwrap(), 0);
}

#[test]
fn stats_display_is_a_table_with_level_rows() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path(), 3000);
    for i in 0..100 {
        db.get(key(i)).unwrap();
    }
    let stats = db.stats();
    let text = stats.to_string();
    assert!(text.starts_with("** Compaction Stats **\n"), "{text}");
    for l in stats.levels.iter().filter(|l| l.files > 0) {
        let row = text
            .lines()
            .find(|r| r.starts_with(&format!("L{} ", l.level)))
            .unwrap_or_else(|| panic!("no row for L{}:\n{text}", l.level));
        assert!(row.contains(&l.entries.to_string()), "{row}");
    }
    assert!(text.lines().any(|r| r.starts_with("Sum ")), "{text}");
    for part in [
        "Puts: 3000",
        "Gets: 100",
        "Stalls:",
        "Block cache:",
        "Filters:",
        "Pending compaction",
    ] {
        assert!(text.contains(part), "{part} missing:\n{text}");
    }
    assert!(format!("{stats:?}").starts_with("Stats {"));
}

#[test]
fn stalls_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::builder()
        .write_buffer_size(4096)
        .target_file_size(4096)
        .level1_size(16 << 10)
        // Two frozen memtables may wait: the writer keeps writing while the
        // background thread flushes and compacts, so some writes land while
        // L0 holds a run (with one, the writer waited for every flush, and on
        // a loaded machine it woke only after the compaction had emptied L0:
        // no write was ever slowed). The stops come from the flush's fsyncs.
        .max_immutable_memtables(2)
        .level0_compaction_trigger(1)
        .level0_slowdown_trigger(1)
        .level0_stop_trigger(2)
        // Slower than the writes (a debug build's too): the slowdown sleeps.
        .delayed_write_rate(1 << 20)
        .background_threads(1)
        .build();
    let db = Db::open(dir.path(), opts).unwrap();
    let before = db.stats();
    assert_eq!((before.write_slowdowns, before.write_stops), (0, 0));
    for i in 0..3000 {
        db.put(key(i), [b'v'; 200]).unwrap();
    }
    let s = db.stats();
    assert!(s.write_slowdowns > 0, "{s}");
    assert!(s.write_slowdown_micros >= 1000 * s.write_slowdowns, "{s}");
    assert!(s.write_stops > 0, "{s}");
    assert!(s.write_stop_micros > 0, "{s}");
    assert_eq!(
        db.property_int("sievedb.stall-micros").unwrap(),
        db.stats().write_slowdown_micros + db.stats().write_stop_micros
    );
    let d = db.stats().delta_since(&s);
    assert_eq!(d.write_slowdowns, 0);
}

#[test]
fn pending_compaction_bytes_follow_the_shape_of_the_tree() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path(), 4000);
    assert_eq!(db.stats().pending_compaction_bytes, 0, "compacted tree");
    let l1 = db.stats().levels[1].bytes;
    drop(db);
    // A smaller level 1 leaves it over its target; a read-only handle runs no
    // compaction, so the estimate stays put: the excess over 64 KiB, plus
    // its share of level 2.
    let small = Options::builder().level1_size(64 << 10).build();
    let ro = Db::open_read_only(dir.path(), small).unwrap();
    let s = ro.stats();
    assert!(l1 > 64 << 10, "level 1 holds {l1}");
    assert!(s.pending_compaction_bytes >= l1 - (64 << 10), "{s}");
    assert_eq!(
        ro.property_int("sievedb.estimate-pending-compaction-bytes"),
        Some(s.pending_compaction_bytes)
    );
}
