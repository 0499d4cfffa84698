//! The public API: limits, options validation, opening, bounds, seek,
//! multi_get, durability across reopen, and statistics.

mod common;

use std::collections::BTreeMap;
use std::ops::{Bound, RangeBounds};

use common::{assert_db_equals, assert_same_items, collect_all, sst_files, wal_files, Model};
use sievedb::{CompactionStyle, Compression, Db, Error, Options, WriteBatch, WriteOptions};

const MAX_KEY: usize = 64 * 1024;
const MAX_VALUE: usize = 256 * 1024 * 1024;

fn open(dir: &std::path::Path) -> Db {
    Db::open(dir, Options::default()).expect("open")
}

fn assert_invalid<T>(r: sievedb::Result<T>, what: &str) {
    match r {
        Err(Error::InvalidArgument(_)) => {}
        Err(e) => panic!("{what}: expected InvalidArgument, got {e:?}"),
        Ok(_) => panic!("{what}: expected InvalidArgument, got Ok"),
    }
}

fn content(db: &Db) -> Vec<(Vec<u8>, Vec<u8>)> {
    collect_all(db.iter(), "content")
}

#[test]
fn oversized_key_and_value_are_rejected_and_nothing_is_written() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = open(tmp.path());
    db.put(b"existing", b"old").expect("put");
    let before = db.stats();

    let big_key = vec![b'k'; MAX_KEY + 1];
    assert_invalid(db.put(&big_key, b"v"), "put of a 64 KiB + 1 key");
    assert_invalid(db.delete(&big_key), "delete of a 64 KiB + 1 key");
    assert_invalid(
        db.put_with(&big_key, b"v", &WriteOptions { sync: true }),
        "synced put of a 64 KiB + 1 key",
    );
    {
        // Zeroed allocation: the pages are only touched if the engine copies them.
        let big_value = vec![0u8; MAX_VALUE + 1];
        assert_invalid(db.put(b"k", &big_value), "put of a 256 MiB + 1 value");
        let mut b = WriteBatch::new();
        b.put(b"a", b"1");
        b.delete(b"existing");
        b.put(b"b", &big_value);
        b.put(b"c", b"3");
        assert_invalid(db.write(b), "batch holding a 256 MiB + 1 value");
    }
    let mut b = WriteBatch::new();
    b.put(b"a", b"1");
    b.put(&big_key, b"2");
    b.delete(b"existing");
    assert_invalid(db.write(b), "batch holding a 64 KiB + 1 key");

    // Reads, bounds and manual compaction refuse the same keys instead of
    // answering "not found" for a key that can never exist.
    assert_invalid(db.get(&big_key), "get of a 64 KiB + 1 key");
    assert_invalid(
        db.multi_get([b"existing".as_slice(), big_key.as_slice()]),
        "multi_get holding a 64 KiB + 1 key",
    );
    assert_invalid(
        db.range(big_key.as_slice()..).map(|_| ()),
        "range from a 64 KiB + 1 key",
    );
    assert_invalid(
        db.range(..big_key.as_slice()).map(|_| ()),
        "range to a 64 KiB + 1 key",
    );
    assert_invalid(
        db.compact_range(..=big_key.as_slice()),
        "compact_range to a 64 KiB + 1 key",
    );
    let snap = db.snapshot();
    assert_invalid(snap.get(&big_key), "snapshot get of a 64 KiB + 1 key");
    assert_invalid(
        snap.range(big_key.as_slice()..).map(|_| ()),
        "snapshot range from a 64 KiB + 1 key",
    );
    drop(snap);

    // Nothing of the rejected writes is visible, now or after reopen.
    let expect = vec![(b"existing".to_vec(), b"old".to_vec())];
    assert_eq!(content(&db), expect);
    assert_eq!(db.get(b"a").expect("get"), None);
    assert_eq!(db.get(b"k").expect("get"), None);
    let after = db.stats();
    assert_eq!(after.puts, before.puts, "rejected writes counted as puts");
    assert_eq!(
        after.last_sequence, before.last_sequence,
        "rejected writes used sequence numbers"
    );

    // The limits themselves are accepted.
    let max_key = vec![b'm'; MAX_KEY];
    db.put(&max_key, b"max").expect("a 64 KiB key is allowed");
    assert_eq!(db.get(&max_key).expect("get"), Some(b"max".to_vec()));
    db.flush().expect("flush");
    assert_eq!(db.get(&max_key).expect("get"), Some(b"max".to_vec()));
    db.close().expect("close");
    let db = open(tmp.path());
    assert_eq!(db.get(&max_key).expect("get"), Some(b"max".to_vec()));
    assert_eq!(db.get(b"a").expect("get"), None);
    assert_eq!(db.get(b"existing").expect("get"), Some(b"old".to_vec()));
    assert_eq!(content(&db).len(), 2);
}

#[test]
fn invalid_options_are_rejected() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let d = Options::default;
    let cases: Vec<(&str, Options)> = vec![
        (
            "size_ratio 1",
            Options {
                size_ratio: 1,
                ..d()
            },
        ),
        (
            "size_ratio 0",
            Options {
                size_ratio: 0,
                ..d()
            },
        ),
        (
            "block_size 0",
            Options {
                block_size: 0,
                ..d()
            },
        ),
        (
            "delayed_write_rate 0",
            Options {
                delayed_write_rate: 0,
                ..d()
            },
        ),
        (
            "write_buffer_size 0",
            Options {
                write_buffer_size: 0,
                ..d()
            },
        ),
        (
            "max_levels 0",
            Options {
                max_levels: 0,
                ..d()
            },
        ),
        (
            "max_levels 1",
            Options {
                max_levels: 1,
                ..d()
            },
        ),
        (
            "level0_compaction_trigger 0",
            Options {
                level0_compaction_trigger: 0,
                ..d()
            },
        ),
        (
            "stop trigger below slowdown trigger",
            Options {
                level0_slowdown_trigger: 8,
                level0_stop_trigger: 4,
                ..d()
            },
        ),
        (
            "target_file_size 0",
            Options {
                target_file_size: 0,
                ..d()
            },
        ),
        (
            "level1_size 0",
            Options {
                level1_size: 0,
                ..d()
            },
        ),
        (
            "block_restart_interval 0",
            Options {
                block_restart_interval: 0,
                ..d()
            },
        ),
        (
            "index_partition_bytes 32",
            Options {
                index_partition_bytes: Some(32),
                ..d()
            },
        ),
        (
            "index_partition_bytes 128 MiB",
            Options {
                index_partition_bytes: Some(128 << 20),
                ..d()
            },
        ),
        (
            "background_threads 0",
            Options {
                background_threads: 0,
                ..d()
            },
        ),
        (
            "max_immutable_memtables 0",
            Options {
                max_immutable_memtables: 0,
                ..d()
            },
        ),
        (
            "no compression entry",
            Options {
                compression_per_level: Vec::new(),
                ..d()
            },
        ),
        (
            "negative bits_per_key",
            Options::builder().bits_per_key(-1.0).build(),
        ),
        (
            "NaN bits_per_key",
            Options::builder().bits_per_key(f64::NAN).build(),
        ),
    ];
    for (i, (what, opts)) in cases.into_iter().enumerate() {
        let dir = tmp.path().join(format!("db{i}"));
        assert_invalid(Db::open(&dir, opts), what);
    }
    // The builder sets what it says.
    let o = Options::builder()
        .size_ratio(3)
        .block_size(1024)
        .compaction_style(CompactionStyle::Tiering)
        .compression_per_level(vec![Compression::None, Compression::Lz4])
        .bits_per_key(0.0)
        .build();
    assert_eq!(o.size_ratio, 3);
    assert_eq!(o.block_size, 1024);
    assert_eq!(o.compaction_style, CompactionStyle::Tiering);
    assert_eq!(o.filter.bits_per_key, 0.0);
    assert_eq!(
        "tiering".parse::<CompactionStyle>().expect("parse"),
        CompactionStyle::Tiering
    );
    assert_eq!(
        "leveling".parse::<CompactionStyle>().expect("parse"),
        CompactionStyle::Leveling
    );
    assert_invalid(
        "sideways".parse::<CompactionStyle>(),
        "unknown compaction style",
    );
    let db = Db::open(tmp.path().join("ok"), o).expect("valid options open");
    db.put(b"k", b"v").expect("put");
    db.flush().expect("flush");
    assert_eq!(db.get(b"k").expect("get"), Some(b"v".to_vec()));
}

#[test]
fn open_flags_and_bad_paths() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");

    // create_if_missing off: a missing db is an error and nothing is created.
    let no_create = Options {
        create_if_missing: false,
        ..Options::default()
    };
    assert!(
        Db::open(&dir, no_create.clone()).is_err(),
        "open of a missing db without create_if_missing"
    );

    // error_if_exists on a fresh directory is fine, on an existing db it fails.
    let exclusive = Options {
        error_if_exists: true,
        ..Options::default()
    };
    let db = Db::open(&dir, exclusive.clone()).expect("error_if_exists on a new db");
    db.put(b"k", b"v").expect("put");
    db.close().expect("close");
    match Db::open(&dir, exclusive) {
        Ok(_) => panic!("error_if_exists: opening an existing db succeeded"),
        Err(e) => assert!(
            !e.is_corruption(),
            "error_if_exists reported corruption: {e}"
        ),
    }
    // The failed open left the db intact.
    let db = Db::open(&dir, no_create).expect("open existing db without create_if_missing");
    assert_eq!(db.get(b"k").expect("get"), Some(b"v".to_vec()));
    assert_eq!(db.path(), dir.as_path());
    drop(db);

    // A regular file is not a database directory.
    let file = tmp.path().join("plain-file");
    std::fs::write(&file, b"not a database").expect("write file");
    assert!(
        Db::open(&file, Options::default()).is_err(),
        "open of a regular file"
    );
    assert_eq!(
        std::fs::read(&file).expect("read file"),
        b"not a database",
        "the file was modified"
    );
    // A path below a regular file cannot be created either.
    assert!(
        Db::open(file.join("sub"), Options::default()).is_err(),
        "open below a regular file"
    );
}

#[test]
fn empty_keys_and_values() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = open(tmp.path());
    db.put(b"", b"empty-key").expect("put empty key");
    db.put(b"k", b"").expect("put empty value");
    assert_eq!(db.get(b"").expect("get"), Some(b"empty-key".to_vec()));
    assert_eq!(
        db.get(b"k").expect("get"),
        Some(Vec::new()),
        "empty value must differ from missing"
    );
    assert_eq!(db.get(b"missing").expect("get"), None);
    let expect = vec![
        (Vec::new(), b"empty-key".to_vec()),
        (b"k".to_vec(), Vec::new()),
    ];
    assert_eq!(content(&db), expect);
    db.flush().expect("flush");
    assert_eq!(content(&db), expect, "after flush");
    assert_eq!(
        db.get(b"k").expect("get"),
        Some(Vec::new()),
        "empty value after flush"
    );
    db.put(b"", b"").expect("put empty key and value");
    db.close().expect("close");
    let db = open(tmp.path());
    assert_eq!(db.get(b"").expect("get"), Some(Vec::new()));
    assert_eq!(
        db.multi_get([b"".as_slice(), b"k", b"x"])
            .expect("multi_get"),
        vec![Some(vec![]), Some(vec![]), None]
    );
    db.delete(b"").expect("delete empty key");
    assert_eq!(db.get(b"").expect("get"), None);
    assert_eq!(content(&db), vec![(b"k".to_vec(), Vec::new())]);
}

/// Fills keys a..t, half flushed to SSTs, half in the memtable, with some
/// deletes, and returns the model.
fn letters_db(db: &Db) -> Model {
    let mut model = Model::new();
    for (i, c) in (b'a'..=b't').enumerate() {
        let k = vec![c];
        let v = format!("value-{i}").into_bytes();
        db.put(&k, &v).expect("put");
        model.insert(k, v);
        if c == b'j' {
            db.flush().expect("flush");
        }
    }
    for k in [b"c", b"m"] {
        db.delete(k).expect("delete");
        model.remove(k.as_slice());
    }
    model
}

#[test]
fn range_with_every_bound_kind() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = open(tmp.path());
    let model = letters_db(&db);
    let a = b"c".to_vec(); // deleted key as a bound
    let b = b"p".to_vec();
    let check = |got: sievedb::Result<sievedb::DbIterator>,
                 range: (Bound<&Vec<u8>>, Bound<&Vec<u8>>),
                 what: &str| {
        let got = collect_all(got, what);
        assert_same_items(&got, model.range::<Vec<u8>, _>(range), what);
    };
    use Bound::{Excluded, Included, Unbounded};
    check(db.range::<Vec<u8>, _>(..), (Unbounded, Unbounded), "..");
    check(db.range(a.clone()..), (Included(&a), Unbounded), "a..");
    check(db.range(..b.clone()), (Unbounded, Excluded(&b)), "..b");
    check(db.range(..=b.clone()), (Unbounded, Included(&b)), "..=b");
    check(
        db.range(a.clone()..b.clone()),
        (Included(&a), Excluded(&b)),
        "a..b",
    );
    check(
        db.range(a.clone()..=b.clone()),
        (Included(&a), Included(&b)),
        "a..=b",
    );
    check(
        db.range((Excluded(a.clone()), Included(b.clone()))),
        (Excluded(&a), Included(&b)),
        "(Excluded(a), Included(b))",
    );
    check(
        db.range((Excluded(a.clone()), Excluded(b.clone()))),
        (Excluded(&a), Excluded(&b)),
        "(Excluded(a), Excluded(b))",
    );
    check(
        db.range((Excluded(b"d".to_vec()), Unbounded)),
        (Excluded(&b"d".to_vec()), Unbounded),
        "(Excluded(d), ..)",
    );
    // Slices work as bounds too.
    let got = collect_all(db.range(b"e".as_slice()..b"h".as_slice()), "slices");
    let keys: Vec<Vec<u8>> = got.into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, vec![b"e".to_vec(), b"f".to_vec(), b"g".to_vec()]);
    // Degenerate ranges are empty.
    assert!(collect_all(db.range(b"e".as_slice()..b"e".as_slice()), "e..e").is_empty());
    assert_eq!(
        collect_all(db.range(b"e".as_slice()..=b"e".as_slice()), "e..=e").len(),
        1
    );
    assert!(collect_all(db.range(b"x".as_slice()..), "x..").is_empty());
    match db.range(b"p".as_slice()..b"c".as_slice()) {
        Ok(it) => assert_eq!(it.count(), 0, "inverted range p..c yielded items"),
        Err(e) => assert!(
            matches!(e, Error::InvalidArgument(_)),
            "inverted range: {e:?}"
        ),
    }
    // The same through a snapshot, after more writes.
    let snap = db.snapshot();
    db.put(b"f2", b"later").expect("put");
    db.delete(b"e").expect("delete");
    let got = collect_all(snap.range(a.clone()..=b.clone()), "snapshot a..=b");
    assert_same_items(&got, model.range(a.clone()..=b.clone()), "snapshot a..=b");
}

#[test]
fn iterator_seek() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = open(tmp.path());
    let model = letters_db(&db);
    let keys_from =
        |it: sievedb::DbIterator| -> Vec<Vec<u8>> { it.map(|r| r.expect("next").0).collect() };
    let model_keys = |from: &[u8], lo: Bound<&[u8]>, hi: Bound<&[u8]>| -> Vec<Vec<u8>> {
        model
            .keys()
            .filter(|k| k.as_slice() >= from && (lo, hi).contains(&k.as_slice()))
            .cloned()
            .collect()
    };
    // Seek on a full iterator: exact key, deleted key, between keys, past the end, before start.
    for target in [&b"g"[..], b"c", b"m", b"g0", b"zz", b"", b"0"] {
        let mut it = db.iter().expect("iter");
        it.seek(target).expect("seek");
        assert_eq!(
            keys_from(it),
            model_keys(target, Bound::Unbounded, Bound::Unbounded),
            "seek {target:?}"
        );
    }
    // Seek backwards and forwards after consuming items.
    let mut it = db.iter().expect("iter");
    for _ in 0..10 {
        it.next().expect("item").expect("ok");
    }
    it.seek(b"b").expect("seek back");
    assert_eq!(it.next().expect("item").expect("ok").0, b"b".to_vec());
    it.seek(b"s").expect("seek forward");
    assert_eq!(keys_from(it), vec![b"s".to_vec(), b"t".to_vec()]);
    // Seek within a bounded range stays inside the range.
    let lo = Bound::Excluded(&b"e"[..]);
    let hi = Bound::Included(&b"p"[..]);
    for target in [&b"a"[..], b"e", b"f", b"o", b"p", b"q"] {
        let mut it = db.range::<&[u8], _>((lo, hi)).expect("range");
        it.seek(target).expect("seek");
        assert_eq!(
            keys_from(it),
            model_keys(target, lo, hi),
            "range (e, p] seek {target:?}"
        );
    }
    // Seek on a snapshot iterator ignores later writes.
    let snap = db.snapshot();
    db.put(b"h1", b"new").expect("put");
    db.delete(b"i").expect("delete");
    let mut it = snap.iter().expect("snapshot iter");
    it.seek(b"h").expect("seek");
    assert_eq!(
        keys_from(it),
        model_keys(b"h", Bound::Unbounded, Bound::Unbounded),
        "snapshot seek"
    );
}

#[test]
fn multi_get_and_missing_deletes() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = open(tmp.path());
    db.delete(b"never-written")
        .expect("delete of a missing key is fine");
    db.put(b"a", b"1").expect("put");
    db.put(b"b", b"2").expect("put");
    db.flush().expect("flush");
    db.put(b"c", b"3").expect("put");
    db.delete(b"b").expect("delete");
    db.delete(b"b").expect("delete twice");
    let got = db
        .multi_get([&b"a"[..], b"b", b"c", b"d", b"a", b""])
        .expect("multi_get");
    assert_eq!(
        got,
        vec![
            Some(b"1".to_vec()),
            None,
            Some(b"3".to_vec()),
            None,
            Some(b"1".to_vec()),
            None
        ]
    );
    assert!(db
        .multi_get(Vec::<Vec<u8>>::new())
        .expect("empty multi_get")
        .is_empty());
    let owned: Vec<String> = vec!["c".into(), "a".into()];
    assert_eq!(
        db.multi_get(&owned).expect("multi_get of Strings"),
        vec![Some(b"3".to_vec()), Some(b"1".to_vec())]
    );
    assert_eq!(
        content(&db),
        vec![
            (b"a".to_vec(), b"1".to_vec()),
            (b"c".to_vec(), b"3".to_vec())
        ]
    );
}

#[test]
fn write_batch_behaviour() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = open(tmp.path());
    let mut b = WriteBatch::new();
    assert!(b.is_empty());
    assert_eq!(b.len(), 0);
    db.write(b.clone()).expect("empty batch is fine");
    b.put(b"x", b"1");
    b.put(b"y", b"2");
    b.delete(b"x");
    b.put(b"z", b"3");
    b.put(b"z", b"4");
    assert_eq!(b.len(), 5);
    assert!(!b.is_empty());
    let copy = b.clone();
    b.clear();
    assert!(b.is_empty());
    db.write(b).expect("cleared batch");
    assert_eq!(content(&db), Vec::new(), "a cleared batch wrote something");
    db.write_with(copy, &WriteOptions { sync: true })
        .expect("write batch");
    // Within a batch, later updates of a key win.
    assert_eq!(
        content(&db),
        vec![
            (b"y".to_vec(), b"2".to_vec()),
            (b"z".to_vec(), b"4".to_vec())
        ]
    );
    assert_eq!(WriteBatch::default().len(), 0);
}

#[test]
fn sync_writes_and_durability_across_reopen() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path();
    let sync = WriteOptions { sync: true };
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
    {
        let db = open(dir);
        db.put_with(b"s1", b"synced", &sync).expect("synced put");
        db.put(b"u1", b"unsynced").expect("put");
        db.put(b"gone", b"x").expect("put");
        db.delete_with(b"gone", &sync).expect("synced delete");
        model.insert(b"s1".to_vec(), b"synced".to_vec());
        model.insert(b"u1".to_vec(), b"unsynced".to_vec());
        assert_db_equals(&db, &model, "before close");
        // Close without flush: the WAL alone carries the data.
        assert!(sst_files(dir).is_empty(), "no SST expected before a flush");
        assert!(
            wal_files(dir)
                .iter()
                .any(|p| std::fs::metadata(p).map(|m| m.len() > 0).unwrap_or(false)),
            "the WAL should hold the writes"
        );
        db.close().expect("close");
    }
    {
        let db = open(dir);
        assert_db_equals(&db, &model, "after close without flush");
        // Overwrite and delete, then flush, then more unflushed writes.
        db.put(b"s1", b"v2").expect("put");
        db.delete(b"u1").expect("delete");
        db.flush().expect("flush");
        assert!(!sst_files(dir).is_empty(), "flush should write an SST");
        db.put(b"after-flush", b"wal-only").expect("put");
        db.delete(b"s1")
            .expect("delete of a flushed key, only in the WAL");
        model.remove(b"u1".as_slice());
        model.remove(b"s1".as_slice());
        model.insert(b"after-flush".to_vec(), b"wal-only".to_vec());
        assert_db_equals(&db, &model, "before drop");
        drop(db); // dropping closes too
    }
    {
        let db = open(dir);
        assert_db_equals(&db, &model, "after drop with SST + WAL");
        db.put(b"k3", vec![7u8; 10_000]).expect("put");
        model.insert(b"k3".to_vec(), vec![7u8; 10_000]);
        db.flush().expect("flush");
        db.close().expect("close");
    }
    // Several reopen cycles without writes change nothing.
    for i in 0..3 {
        let db = open(dir);
        assert_db_equals(&db, &model, &format!("reopen cycle {i}"));
    }
}

#[test]
fn snapshot_sees_the_past() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = open(tmp.path());
    db.put(b"a", b"1").expect("put");
    db.put(b"b", b"1").expect("put");
    let snap = db.snapshot();
    db.put(b"a", b"2").expect("put");
    db.delete(b"b").expect("delete");
    db.put(b"c", b"2").expect("put");
    db.flush().expect("flush");
    db.compact_range::<&[u8], _>(..).expect("compact");
    assert_eq!(snap.get(b"a").expect("get"), Some(b"1".to_vec()));
    assert_eq!(snap.get(b"b").expect("get"), Some(b"1".to_vec()));
    assert_eq!(snap.get(b"c").expect("get"), None);
    assert_eq!(
        collect_all(snap.iter(), "snapshot"),
        vec![
            (b"a".to_vec(), b"1".to_vec()),
            (b"b".to_vec(), b"1".to_vec())
        ]
    );
    assert_eq!(
        content(&db),
        vec![
            (b"a".to_vec(), b"2".to_vec()),
            (b"c".to_vec(), b"2".to_vec())
        ]
    );
    drop(snap);
    db.compact_range::<&[u8], _>(..)
        .expect("compact after release");
    assert_eq!(db.get(b"b").expect("get"), None);
}

/// The levels holding files: `(level, files)`.
fn shape(db: &Db) -> Vec<(usize, usize)> {
    let s = db.stats();
    s.levels
        .iter()
        .filter(|l| l.files > 0)
        .map(|l| (l.level, l.files))
        .collect()
}

#[test]
fn compact_range_stops_at_the_deepest_level_holding_data() {
    for style in [CompactionStyle::Leveling, CompactionStyle::Tiering] {
        let tmp = tempfile::tempdir().expect("tempdir");
        let opts = Options::builder().compaction_style(style).build();
        let db = Db::open(tmp.path(), opts).expect("open");
        for round in 0..3u8 {
            for i in 0..50u8 {
                db.put([i], [round]).expect("put");
            }
            db.flush().expect("flush");
        }
        db.compact_range::<&[u8], _>(..).expect("compact");
        let once = shape(&db);
        assert_eq!(
            once.len(),
            1,
            "{style:?}: one level holds the data: {once:?}"
        );
        let compactions = db.stats().compactions;
        // Again, whole and in part: the data is at the deepest level holding
        // any already, as one run; nothing is rewritten or moved down.
        db.compact_range::<&[u8], _>(..).expect("compact again");
        db.compact_range(&[10u8][..]..&[20u8][..])
            .expect("compact a part");
        assert_eq!(shape(&db), once, "{style:?}: compacted again");
        assert_eq!(
            db.stats().compactions,
            compactions,
            "{style:?}: compacting again rewrote the deepest level"
        );
        for i in 0..50u8 {
            assert_eq!(db.get([i]).expect("get"), Some(vec![2]), "{style:?}");
        }
    }
}

#[test]
fn stats_counters_move() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let db = open(tmp.path());
    let s0 = db.stats();
    db.put(b"a", b"1").expect("put");
    db.put(b"b", b"2").expect("put");
    let mut batch = WriteBatch::new();
    batch.put(b"c", b"3");
    batch.put(b"d", b"4");
    batch.delete(b"a");
    db.write(batch).expect("write");
    db.delete(b"zzz").expect("delete");
    let s1 = db.stats();
    let d = s1.delta_since(&s0);
    assert_eq!(d.puts, 4, "puts: {d:?}");
    assert_eq!(d.deletes, 2, "deletes: {d:?}");
    assert!(d.user_bytes_written >= 8, "user bytes: {d:?}");
    assert!(
        s1.last_sequence >= s0.last_sequence + 6,
        "sequence: {s0:?} -> {s1:?}"
    );
    assert!(s1.memtable_bytes > 0, "memtable bytes: {s1:?}");

    assert_eq!(db.get(b"b").expect("get"), Some(b"2".to_vec()));
    assert_eq!(db.get(b"nope").expect("get"), None);
    let _ = db.multi_get([b"c", b"d"]).expect("multi_get");
    let s2 = db.stats();
    assert!(
        s2.delta_since(&s1).gets >= 2,
        "gets did not move: {s1:?} -> {s2:?}"
    );
    assert_eq!(s2.flushes, s1.flushes);

    db.flush().expect("flush");
    let s3 = db.stats();
    assert_eq!(s3.delta_since(&s2).flushes, 1, "flushes: {s2:?} -> {s3:?}");
    assert!(
        s3.bytes_written > s2.bytes_written,
        "bytes_written did not grow with the flush"
    );
    assert!(
        s3.levels.iter().map(|l| l.files).sum::<usize>() >= 1,
        "no file after flush: {s3:?}"
    );
    let entries = s3.levels.iter().map(|l| l.entries).sum::<u64>();
    assert!(
        (3..=6).contains(&entries),
        "entries in files: at least the 3 live puts, at most the 6 updates: {s3:?}"
    );
    // Reading from the SST moves the table-side counters.
    assert_eq!(db.get(b"c").expect("get"), Some(b"3".to_vec()));
    let s4 = db.stats();
    assert!(s4.gets > s3.gets);
    assert!(
        s4.data_block_reads + s4.block_cache_hits > s3.data_block_reads + s3.block_cache_hits,
        "a read from an SST touched no block: {s3:?} -> {s4:?}"
    );
    // delta_since of identical stats has zero counters.
    let z = s4.delta_since(&s4);
    assert_eq!(
        (z.gets, z.puts, z.deletes, z.flushes, z.compactions),
        (0, 0, 0, 0, 0)
    );
}
