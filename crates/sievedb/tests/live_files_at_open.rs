//! An open checks every live SST (the files the MANIFEST lists, of every
//! keyspace): one missing from the directory, or of another size than the
//! MANIFEST recorded, fails the open (read-write and read-only) with
//! `Error::Corruption` naming it, unless
//! `Options::skip_checking_sst_file_sizes_on_db_open` waives the size half;
//! `Db::repair` still rebuilds such a directory.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{file_name, sst_files, truncate};
use sievedb::sst::reader::TableReader;
use sievedb::stats::Counters;
use sievedb::{Db, Error, Options};

/// No compaction: every flush stays one table of level 0.
fn opts() -> Options {
    Options::builder()
        .write_buffer_size(1 << 20)
        .block_size(512)
        .level0_compaction_trigger(20)
        .level0_slowdown_trigger(20)
        .level0_stop_trigger(20)
        .build()
}

fn key(set: char, i: usize) -> Vec<u8> {
    format!("{set}{i:04}").into_bytes()
}

fn val(set: char, i: usize) -> Vec<u8> {
    format!("{set}-value-{i}").into_bytes()
}

/// A closed database of `sets.len()` tables of 200 keys each, one per set
/// (in file-number order); returns their paths.
fn build(dir: &Path, sets: &[char]) -> Vec<PathBuf> {
    let db = Db::open(dir, opts()).unwrap();
    for &set in sets {
        for i in 0..200 {
            db.put(key(set, i), val(set, i)).unwrap();
        }
        db.flush().unwrap();
    }
    db.close().unwrap();
    let tables = sst_files(dir);
    assert_eq!(tables.len(), sets.len(), "{tables:?}");
    tables
}

/// The error of opening `dir` read-write and read-only with `o` (both must
/// fail, the same way).
fn open_errors(dir: &Path, o: &Options) -> (Error, Error) {
    let rw = Db::open(dir, o.clone())
        .err()
        .expect("read-write open fails");
    let ro = Db::open_read_only(dir, o.clone())
        .err()
        .expect("read-only open fails");
    (rw, ro)
}

/// Asserts that `e` is a corruption error naming `file` whose message holds
/// every one of `needles`.
fn assert_names(e: &Error, file: &Path, needles: &[&str]) {
    let Error::Corruption { file: f, .. } = e else {
        panic!(
            "expected Error::Corruption naming {}, got {e:?}",
            file.display()
        );
    };
    assert_eq!(f, file, "{e}");
    let msg = e.to_string();
    for n in needles {
        assert!(msg.contains(n), "{n:?} not in: {msg}");
    }
}

fn len(p: &Path) -> u64 {
    fs::metadata(p).unwrap().len()
}

#[test]
fn a_deleted_table_fails_the_open_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let tables = build(dir.path(), &['a', 'b', 'c']);
    fs::remove_file(&tables[1]).unwrap();
    let before: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let needles = [
        "is missing",
        "keyspace \"default\"",
        "level 0",
        "200 entries",
        "Db::repair",
        "sievedb repair",
    ];
    let (rw, ro) = open_errors(dir.path(), &opts());
    assert_names(&rw, &tables[1], &needles);
    assert_names(&ro, &tables[1], &needles);
    // Skipping the size check does not skip the existence check.
    let skip = Options {
        skip_checking_sst_file_sizes_on_db_open: true,
        ..opts()
    };
    let (rw, ro) = open_errors(dir.path(), &skip);
    assert_names(&rw, &tables[1], &needles);
    assert_names(&ro, &tables[1], &needles);
    // The failed opens deleted nothing and wrote nothing.
    let mut after: Vec<String> = fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    after.retain(|n| n != "LOCK");
    let mut before = before;
    before.retain(|n| n != "LOCK");
    after.sort();
    before.sort();
    assert_eq!(after, before);
}

#[test]
fn a_truncated_or_extended_table_fails_the_open_with_both_sizes() {
    for extend in [false, true] {
        let dir = tempfile::tempdir().unwrap();
        let tables = build(dir.path(), &['a', 'b']);
        let t = &tables[0];
        let was = len(t);
        let now = if extend {
            let mut data = fs::read(t).unwrap();
            data.extend_from_slice(b"appended garbage");
            fs::write(t, data).unwrap();
            was + 16
        } else {
            truncate(t, was - 100);
            was - 100
        };
        let sizes = format!("is {now} bytes but the MANIFEST records {was}");
        let how = if extend { "longer" } else { "cut short" };
        let needles = [
            sizes.as_str(),
            how,
            "level 0",
            "Db::repair",
            "skip_checking_sst_file_sizes_on_db_open",
        ];
        let (rw, ro) = open_errors(dir.path(), &opts());
        assert_names(&rw, t, &needles);
        assert_names(&ro, t, &needles);
    }
}

#[test]
fn every_failing_table_is_counted_and_the_first_named() {
    let dir = tempfile::tempdir().unwrap();
    let tables = build(dir.path(), &['a', 'b', 'c', 'd']);
    fs::remove_file(&tables[2]).unwrap();
    truncate(&tables[0], 10);
    fs::remove_file(&tables[3]).unwrap();
    let (rw, _) = open_errors(dir.path(), &opts());
    assert_names(
        &rw,
        &tables[0],
        &[
            "is 10 bytes",
            "2 more live SST(s)",
            "(2 missing, 0 of the wrong size)",
        ],
    );
}

#[test]
fn skipping_the_size_check_opens_a_cut_table_whose_reads_then_fail() {
    let dir = tempfile::tempdir().unwrap();
    let tables = build(dir.path(), &['a', 'b']);
    // A newer table over half of b's keys: a compaction must read b's table.
    {
        let db = Db::open(dir.path(), opts()).unwrap();
        for i in 0..100 {
            db.put(key('b', i), val('c', i)).unwrap();
        }
        db.flush().unwrap();
        db.close().unwrap();
    }
    let cut = &tables[1];
    truncate(cut, len(cut) / 2);
    assert!(Db::open(dir.path(), opts()).is_err());
    let skip = Options {
        skip_checking_sst_file_sizes_on_db_open: true,
        ..opts()
    };
    let ro = Db::open_read_only(dir.path(), skip.clone()).unwrap();
    assert_eq!(ro.get(key('a', 7)).unwrap(), Some(val('a', 7)));
    drop(ro);
    let db = Db::open(dir.path(), skip.clone()).unwrap();
    // The intact tables read; a read of the cut one fails naming it.
    for i in 0..200 {
        assert_eq!(db.get(key('a', i)).unwrap(), Some(val('a', i)));
    }
    assert_eq!(db.get(key('b', 7)).unwrap(), Some(val('c', 7)));
    let e = db.get(key('b', 150)).unwrap_err();
    assert!(
        e.is_corruption() && e.to_string().contains(&file_name(cut)),
        "{e}"
    );
    // A manual compaction reading it returns the error (writes go on)...
    let e = db.compact_range::<&[u8], _>(..).unwrap_err();
    assert!(e.to_string().contains(&file_name(cut)), "{e}");
    db.put("x", "1").unwrap();
    db.close().unwrap();
    // ... and a background one stops writes.
    let eager = Options {
        level0_compaction_trigger: 2,
        ..skip
    };
    let db = Db::open(dir.path(), eager).unwrap();
    let e = db.wait_for_compactions().unwrap_err();
    assert!(e.to_string().contains(&file_name(cut)), "{e}");
    let e = db.put("y", "1").unwrap_err();
    assert!(matches!(e, Error::ReadOnly(_)), "{e}");
}

/// The keyspace of the table `path` (its properties).
fn keyspace_of(path: &Path) -> String {
    let number: u64 = path.file_stem().unwrap().to_str().unwrap().parse().unwrap();
    let t = TableReader::open(
        &sievedb::io::StdFs,
        path,
        number,
        false,
        true,
        None,
        Arc::new(Counters::new(8)),
    )
    .unwrap();
    t.properties().keyspace_name.clone()
}

#[test]
fn a_keyspace_table_is_checked_too_and_repair_recovers_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = BTreeMap::new();
    {
        let db = Db::open(dir.path(), opts()).unwrap();
        let users = db.keyspace("users").unwrap();
        for i in 0..200 {
            db.put(key('d', i), val('d', i)).unwrap();
            users.put(key('u', i), val('u', i)).unwrap();
            model.insert(key('d', i), val('d', i));
        }
        db.flush().unwrap();
        drop(users);
        db.close().unwrap();
    }
    let tables = sst_files(dir.path());
    let users: Vec<&PathBuf> = tables
        .iter()
        .filter(|t| keyspace_of(t) == "users")
        .collect();
    assert_eq!(users.len(), 1, "{tables:?}");
    let users = users[0].clone();
    fs::remove_file(&users).unwrap();
    let (rw, ro) = open_errors(dir.path(), &opts());
    for e in [&rw, &ro] {
        assert_names(e, &users, &["is missing", "keyspace \"users\"", "level 0"]);
    }
    // Repair does not go through the check: it rebuilds from what is there.
    Db::repair(dir.path(), opts()).unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    let got: BTreeMap<Vec<u8>, Vec<u8>> = db.iter().unwrap().map(|x| x.unwrap()).collect();
    assert_eq!(got, model);
}

#[test]
fn repair_recovers_a_directory_with_a_cut_table() {
    let dir = tempfile::tempdir().unwrap();
    let tables = build(dir.path(), &['a', 'b']);
    truncate(&tables[0], len(&tables[0]) - 1);
    assert!(Db::open(dir.path(), opts()).is_err());
    Db::repair(dir.path(), opts()).unwrap();
    let db = Db::open(dir.path(), opts()).unwrap();
    for i in 0..200 {
        assert_eq!(db.get(key('b', i)).unwrap(), Some(val('b', i)));
    }
}

/// Thousands of live tables (the sizes are checked from several threads):
/// a cut table and a deleted one among them are both found, the lowest
/// numbered named, and the intact tree opens.
#[test]
fn many_tables_are_checked_from_several_threads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let o = Options::builder()
        .target_file_size(4096)
        .block_size(512)
        .build();
    let entries = (0..300_000u32).map(|i| (format!("k{i:08}").into_bytes(), vec![7u8; 16]));
    let report = sievedb::bulk::BulkLoad::new(
        &path,
        o.clone(),
        sievedb::bulk::LevelShape::new(1, 4).unwrap(),
    )
    .load(entries)
    .unwrap();
    let o = report.open_options(o);
    let tables = sst_files(&path);
    assert!(tables.len() > 2 * 1024, "{} tables", tables.len());
    Db::open(&path, o.clone()).unwrap().close().unwrap();
    let (cut, gone) = (&tables[tables.len() - 10], &tables[tables.len() / 2]);
    truncate(cut, len(cut) - 1);
    fs::remove_file(gone).unwrap();
    let (rw, ro) = open_errors(&path, &o);
    for e in [rw, ro] {
        assert_names(&e, gone, &["is missing", "1 more live SST"]);
    }
}
