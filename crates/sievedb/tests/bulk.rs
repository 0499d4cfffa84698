//! Bulk load: shape, contents, restartability and crash safety of databases
//! built by `sievedb::bulk`.

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use rand::{rngs::SmallRng, Rng, SeedableRng};
use sievedb::bulk::{bulk_load, BulkLoad, BulkLoadReport, LevelShape, MARKER};
use sievedb::io::filename::{self, FileKind};
use sievedb::{Compression, Db, Error, Options};
use support::faulty_fs::{Choice, Fault, FaultyFs, Op};

/// Key of stream position `i`: even numbers, so odd ones are missing keys
/// that sort between loaded ones.
fn key(i: u64) -> Vec<u8> {
    format!("key{:09}", 2 * i).into_bytes()
}

fn missing_key(i: u64) -> Vec<u8> {
    format!("key{:09}", 2 * i + 1).into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    format!("value-{i}-{}", "x".repeat((i % 23) as usize)).into_bytes()
}

fn entries(n: u64) -> impl Iterator<Item = (Vec<u8>, Vec<u8>)> {
    (0..n).map(|i| (key(i), value(i)))
}

/// Small tables so that every level has several files.
fn small_options() -> Options {
    Options::builder()
        .write_buffer_size(16 << 10)
        .target_file_size(8 << 10)
        .block_size(512)
        .level0_compaction_trigger(2)
        .build()
}

fn load(dir: &Path, n: u64, shape: LevelShape) -> sievedb::Result<BulkLoadReport> {
    bulk_load(dir, &small_options(), shape, entries(n), |_| {})
}

/// Names of the engine's files in `dir` (SSTs, WALs, MANIFESTs, temp files;
/// none when a power loss took the directory itself away).
fn engine_files(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut v: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| filename::parse(n).is_some())
        .collect();
    v.sort();
    v
}

fn count_ssts(dir: &Path) -> usize {
    engine_files(dir)
        .iter()
        .filter(|n| matches!(filename::parse(n), Some(FileKind::Sst(_))))
        .count()
}

/// Every loaded key has its value and every key between them is absent.
#[track_caller]
fn check_contents(db: &Db, n: u64) {
    for i in 0..n {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i)), "key {i}");
        assert_eq!(db.get(missing_key(i)).unwrap(), None, "missing key {i}");
    }
    assert_eq!(db.get(b"").unwrap(), None);
    assert_eq!(db.get(b"zzz").unwrap(), None);
    let mut count = 0u64;
    for (i, item) in db.iter().unwrap().enumerate() {
        let (k, v) = item.unwrap();
        assert_eq!((k, v), (key(i as u64), value(i as u64)));
        count += 1;
    }
    assert_eq!(count, n);
}

#[test]
fn loaded_database_has_the_requested_shape_and_contents() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let shape = LevelShape::new(3, 4).unwrap(); // weights 1, 4, 16: W = 21
    let w = shape.total_weight().unwrap();
    let n = 1000 * w;
    let done = Arc::new(AtomicU64::new(0));
    let seen = done.clone();
    let report = BulkLoad::new(&dir, small_options(), shape)
        .on_progress(move |d| seen.store(d, Ordering::Relaxed))
        .load(entries(n))
        .unwrap();
    assert_eq!(done.load(Ordering::Relaxed), n);
    assert_eq!(report.entries, n);
    assert_eq!(report.last_sequence, n);
    assert_eq!(report.levels.len(), 3);
    // N is a multiple of W: every level gets exactly its share.
    for (lv, weight) in report.levels.iter().zip([1u64, 4, 16]) {
        assert_eq!(lv.entries, 1000 * weight, "level {}", lv.level);
        // Every level spans the key range: it starts within the first period
        // of the stream and ends within the last one.
        assert!(
            lv.smallest.as_slice() < key(w).as_slice(),
            "level {}",
            lv.level
        );
        assert!(
            lv.largest.as_slice() >= key(n - w).as_slice(),
            "level {}",
            lv.level
        );
    }
    assert!(report.levels[2].files > report.levels[0].files);
    assert!(report.levels[2].files >= 10);
    assert!(report.levels[0].bytes * 3 < report.levels[1].bytes);
    assert!(report.levels[1].bytes * 3 < report.levels[2].bytes);
    assert!(!dir.join(MARKER).exists());
    assert_eq!(count_ssts(&dir), report.total_files());

    let opts = report.open_options(small_options());
    assert_eq!(opts.size_ratio, 4);
    let db = Db::open(&dir, opts.clone()).unwrap();
    let s = db.stats();
    assert_eq!(s.levels[0].files, 0, "L0 stays empty");
    for lv in &report.levels {
        let got = &s.levels[lv.level];
        assert_eq!(
            (got.files, got.runs, got.entries, got.bytes),
            (lv.files, 1, lv.entries, lv.bytes),
            "level {}",
            lv.level
        );
        // Full but not over capacity.
        assert!(lv.bytes < opts.level_capacity(lv.level));
        assert!(lv.bytes * 2 > opts.level_capacity(lv.level));
    }
    assert!(s.levels[4..].iter().all(|l| l.files == 0));
    assert_eq!(s.last_sequence, n);
    check_contents(&db, n);
    assert_eq!(db.stats().compactions, 0, "the shape needs no compaction");
    db.close().unwrap();

    // Reopen: same shape, same contents.
    let db = Db::open(&dir, opts).unwrap();
    assert_eq!(db.stats().levels[3].entries, report.levels[2].entries);
    check_contents(&db, n);
    db.close().unwrap();
}

#[test]
fn writes_deletes_and_compactions_work_on_a_loaded_database() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let n = 8000;
    let report = load(&dir, n, LevelShape::new(3, 3).unwrap()).unwrap();
    let db = Db::open(&dir, report.open_options(small_options())).unwrap();
    let mut model: BTreeMap<Vec<u8>, Vec<u8>> = entries(n).collect();
    let mut rng = SmallRng::seed_from_u64(7);
    for op in 0..6000u64 {
        // Existing keys, missing keys between them, and keys past the end.
        let i = rng.gen_range(0..n + 500);
        let k = if rng.gen_bool(0.5) {
            key(i)
        } else {
            missing_key(i)
        };
        if rng.gen_bool(0.3) {
            db.delete(&k).unwrap();
            model.remove(&k);
        } else {
            let v = format!("new-{op}").into_bytes();
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        if op % 2000 == 1999 {
            db.flush().unwrap();
        }
    }
    let check = |db: &Db| {
        let got: BTreeMap<Vec<u8>, Vec<u8>> = db.iter().unwrap().map(|r| r.unwrap()).collect();
        assert!(got == model, "iteration differs from the model");
        for i in (0..n + 500).step_by(7) {
            assert_eq!(db.get(key(i)).unwrap().as_ref(), model.get(&key(i)));
            let m = missing_key(i);
            assert_eq!(db.get(&m).unwrap().as_ref(), model.get(&m));
        }
    };
    check(&db);
    let before = db.stats().compactions;
    db.compact_range::<&[u8], _>(..).unwrap();
    assert!(db.stats().compactions > before);
    check(&db);
    db.close().unwrap();
    let db = Db::open(&dir, report.open_options(small_options())).unwrap();
    check(&db);
    db.close().unwrap();
}

#[test]
fn deep_trees_at_size_ratio_two() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let shape = LevelShape::new(10, 2).unwrap();
    let w = shape.total_weight().unwrap(); // 1023
    let n = 4 * w;
    let opts = Options {
        max_levels: 11,
        target_file_size: 4096,
        compression_per_level: vec![Compression::None, Compression::Lz4],
        ..small_options()
    };
    let report = bulk_load(&dir, &opts, shape, entries(n), |_| {}).unwrap();
    let mut weight = 4;
    for lv in &report.levels {
        assert_eq!(lv.entries, weight, "level {}", lv.level);
        weight *= 2;
    }
    let db = Db::open(&dir, report.open_options(opts)).unwrap();
    let s = db.stats();
    assert_eq!(s.levels.len(), 11);
    assert_eq!(s.levels[0].files, 0);
    assert!(s.levels[1..].iter().all(|l| l.files >= 1 && l.runs == 1));
    check_contents(&db, n);
    assert_eq!(db.stats().compactions, 0);
    db.close().unwrap();
}

#[test]
fn filters_answer_missing_keys_without_data_reads() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let n = 4000;
    let report = load(&dir, n, LevelShape::new(2, 10).unwrap()).unwrap();
    let db = Db::open(&dir, report.open_options(small_options())).unwrap();
    let before = db.stats();
    for i in 0..n {
        assert_eq!(db.get(missing_key(i)).unwrap(), None);
    }
    let d = db.stats().delta_since(&before);
    // 10 bits per key: about 1% false positives per filter probed.
    assert!(d.filter_negatives > n, "{}", d.filter_negatives);
    assert!(d.data_block_reads < n / 10, "{}", d.data_block_reads);
    db.close().unwrap();
}

#[track_caller]
fn assert_invalid(r: sievedb::Result<BulkLoadReport>, needle: &str) -> String {
    match r {
        Err(Error::InvalidArgument(m)) => {
            assert!(m.contains(needle), "{m:?} lacks {needle:?}");
            m
        }
        Err(e) => panic!("expected InvalidArgument, got {e}"),
        Ok(_) => panic!("expected InvalidArgument, got success"),
    }
}

/// Nothing a database could be opened from: no CURRENT, no engine files, no
/// marker, and no LOCK file.
#[track_caller]
fn assert_nothing_left(dir: &Path) {
    assert!(!dir.join("CURRENT").exists());
    assert!(!dir.join("LOCK").exists(), "a failed load left its LOCK");
    assert!(!dir.join(MARKER).exists());
    assert_eq!(engine_files(dir), Vec::<String>::new());
}

#[test]
fn bad_input_is_refused_and_leaves_nothing_behind() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let shape = LevelShape::new(2, 4).unwrap();

    // Out of order, far enough in that files were written.
    let mut unsorted: Vec<(Vec<u8>, Vec<u8>)> = entries(5000).collect();
    unsorted.swap(3000, 3001);
    let m = assert_invalid(
        bulk_load(&dir, &small_options(), shape, unsorted, |_| {}),
        "position 3001",
    );
    assert!(m.contains("sorts before"), "{m}");
    assert_nothing_left(&dir);

    // A duplicate.
    let dup = entries(3000).chain(std::iter::once((key(2999), value(0))));
    let m = assert_invalid(
        bulk_load(&dir, &small_options(), shape, dup, |_| {}),
        "position 3000",
    );
    assert!(m.contains("duplicates"), "{m}");
    assert_nothing_left(&dir);

    // Keys beyond the engine's limit.
    let big = std::iter::once((vec![b'k'; 64 * 1024 + 1], b"v".to_vec()));
    assert_invalid(
        bulk_load(&dir, &small_options(), shape, big, |_| {}),
        "exceeds the limit",
    );
    assert_nothing_left(&dir);

    // Too few entries for every level to get one; no entries at all.
    assert_invalid(
        bulk_load(
            &dir,
            &small_options(),
            LevelShape::new(4, 10).unwrap(),
            entries(300),
            |_| {},
        ),
        "level 1 empty",
    );
    assert_nothing_left(&dir);
    assert_invalid(load(&dir, 0, shape), "empty");
    assert_nothing_left(&dir);

    // Bad shapes and options: refused before anything is written.
    assert!(matches!(
        LevelShape::new(0, 10),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        LevelShape::new(3, 1),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(
        LevelShape::new(64, 2),
        Err(Error::InvalidArgument(_))
    ));
    let unchecked = LevelShape {
        levels: 3,
        size_ratio: 0,
    };
    assert_invalid(load(&dir, 100, unchecked), "size ratio");
    assert_invalid(
        load(&dir, 100_000, LevelShape::new(7, 2).unwrap()),
        "max_levels",
    );
    assert_nothing_left(&dir);

    // The directory is still good for a bulk load.
    let report = load(&dir, 5000, shape).unwrap();
    let db = Db::open(&dir, report.open_options(small_options())).unwrap();
    check_contents(&db, 5000);
    db.close().unwrap();
}

#[test]
fn an_existing_database_is_refused_untouched() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let db = Db::open(&dir, small_options()).unwrap();
    db.put(b"precious", b"data").unwrap();
    db.flush().unwrap();
    // Held open: the LOCK refuses the load.
    assert!(matches!(
        load(&dir, 1000, LevelShape::new(1, 10).unwrap()),
        Err(Error::Locked(_))
    ));
    db.close().unwrap();
    let files = engine_files(&dir);
    assert_invalid(
        load(&dir, 1000, LevelShape::new(1, 10).unwrap()),
        "already holds a database",
    );
    assert_eq!(engine_files(&dir), files);
    let db = Db::open(&dir, small_options()).unwrap();
    assert_eq!(db.get(b"precious").unwrap(), Some(b"data".to_vec()));
    db.close().unwrap();

    // A loaded database is an existing database too.
    let dir2 = tmp.path().join("db2");
    load(&dir2, 1000, LevelShape::new(1, 10).unwrap()).unwrap();
    assert_invalid(
        load(&dir2, 1000, LevelShape::new(1, 10).unwrap()),
        "already holds a database",
    );
}

#[test]
fn leftovers_of_an_interrupted_load_are_cleaned_up() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir_all(&dir).unwrap();
    // What a crash mid-load leaves: the marker, partial tables, a MANIFEST and
    // a CURRENT switch in progress, but no CURRENT.
    std::fs::write(dir.join(MARKER), b"").unwrap();
    std::fs::write(dir.join("000002.sst"), vec![7u8; 10_000]).unwrap();
    std::fs::write(dir.join("000003.sst"), b"torn").unwrap();
    std::fs::write(dir.join("MANIFEST-000004"), b"junk").unwrap();
    std::fs::write(dir.join("000004.dbtmp.tmp"), b"MANIFEST-000004\n").unwrap();
    std::fs::write(dir.join("notes.txt"), b"not ours").unwrap();
    // Not a database.
    assert!(Db::open(&dir, small_options()).is_err());
    assert!(!dir.join("CURRENT").exists());

    let n = 3000;
    let report = load(&dir, n, LevelShape::new(2, 5).unwrap()).unwrap();
    assert!(!dir.join(MARKER).exists());
    assert_eq!(std::fs::read(dir.join("notes.txt")).unwrap(), b"not ours");
    assert!(!dir.join("000004.dbtmp.tmp").exists());
    let db = Db::open(&dir, report.open_options(small_options())).unwrap();
    check_contents(&db, n);
    db.close().unwrap();
}

#[test]
fn database_files_without_marker_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("000005.sst"), b"someone's table").unwrap();
    assert_invalid(
        load(&dir, 1000, LevelShape::new(1, 10).unwrap()),
        "not the leftovers of a bulk load",
    );
    assert_eq!(
        std::fs::read(dir.join("000005.sst")).unwrap(),
        b"someone's table"
    );
    assert!(!dir.join(MARKER).exists());
    // The refused load removed the LOCK file it created.
    assert!(!dir.join("LOCK").exists());
}

#[test]
fn an_unfinished_writer_deletes_its_files() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let opts = small_options();
    let mut w = BulkLoad::new(&dir, opts.clone(), LevelShape::new(2, 4).unwrap())
        .start()
        .unwrap();
    for (k, v) in entries(4000) {
        w.add(&k, &v).unwrap();
    }
    assert_eq!(w.entries(), 4000);
    assert!(dir.join(MARKER).exists());
    assert!(count_ssts(&dir) > 0);
    // A second load waits for the directory's lock.
    assert!(matches!(
        load(&dir, 100, LevelShape::new(1, 4).unwrap()),
        Err(Error::Locked(_))
    ));
    drop(w);
    assert_nothing_left(&dir);

    // After an error the writer repeats it, and finish cleans up.
    let mut w = BulkLoad::new(&dir, opts, LevelShape::new(1, 4).unwrap())
        .start()
        .unwrap();
    w.add(b"b", b"1").unwrap();
    assert!(w.add(b"a", b"2").is_err());
    assert!(matches!(w.add(b"c", b"3"), Err(Error::InvalidArgument(_))));
    assert!(matches!(w.finish(), Err(Error::InvalidArgument(_))));
    assert_nothing_left(&dir);
}

#[test]
fn an_io_error_cleans_up() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let fs = FaultyFs::new();
    fs.arm(Fault {
        op: Op::Create,
        nth: 6,
        errno: libc::EIO,
        tear: false,
        sticky: false,
    });
    let r = BulkLoad::new(&dir, small_options(), LevelShape::new(2, 4).unwrap())
        .file_system(Arc::new(fs.clone()))
        .load(entries(4000));
    assert!(matches!(r, Err(Error::Io(_))), "{:?}", r.err());
    assert_eq!(fs.injected(), 1);
    assert_nothing_left(&dir);
}

/// A power loss at every sync of a load: the directory afterwards either holds
/// the complete database or is refused by `Db::open` (or holds no tables),
/// and a new bulk load into it succeeds. The load writes more tables than
/// the 16 it syncs at once, so some syncs fail with tables of an earlier
/// batch synced and tables of a later one written but not.
#[test]
fn a_power_loss_at_any_sync_never_leaves_a_half_loaded_database() {
    let n = 7000;
    let shape = LevelShape::new(2, 4).unwrap();
    let mut complete = 0;
    let mut k = 0;
    loop {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("db");
        let fs = FaultyFs::new();
        fs.arm(Fault {
            op: Op::Sync,
            nth: k,
            errno: libc::EIO,
            tear: false,
            sticky: true,
        });
        let r = BulkLoad::new(&dir, small_options(), shape)
            .file_system(Arc::new(fs.clone()))
            .load(entries(n));
        let failed = r.is_err();
        fs.crash();
        fs.apply_power_loss(Choice::AllLost);
        if dir.join("CURRENT").exists() {
            complete += 1;
            let report = r.unwrap_or_else(|e| panic!("sync {k}: CURRENT exists after {e}"));
            let db = Db::open(&dir, report.open_options(small_options())).unwrap();
            check_contents(&db, n);
            db.close().unwrap();
        } else {
            assert!(failed, "sync {k}: success without a durable CURRENT");
            if count_ssts(&dir) > 0 {
                assert!(
                    Db::open(&dir, small_options()).is_err(),
                    "sync {k}: a half-loaded directory opened"
                );
            }
            let report = load(&dir, n, shape)
                .unwrap_or_else(|e| panic!("sync {k}: reload after the crash failed: {e}"));
            let db = Db::open(&dir, report.open_options(small_options())).unwrap();
            check_contents(&db, n);
            db.close().unwrap();
        }
        if !failed {
            break;
        }
        k += 1;
        assert!(k < 1000, "the load never got past the faults");
    }
    assert_eq!(complete, 1);
    assert!(k > 33, "only {k} syncs: fewer than two batches of tables");
}
