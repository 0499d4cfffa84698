//! Malformed internal keys in an SST whose checksums are valid (issue 10,
//! item 2): scans, lookups and compactions fail with `Error::Corruption`
//! naming the file instead of skipping the entry, and a failed compaction
//! keeps its inputs and leaves no output files behind.

mod common;

use std::path::{Path, PathBuf};

use common::sst_files;
use sievedb::io::{FileSystem, StdFs};
use sievedb::key;
use sievedb::sst::TableWriter;
use sievedb::{Compression, Db, Error, FilterOptions, Options};

fn opts(verify_checksums: bool) -> Options {
    Options::builder()
        .level0_compaction_trigger(8)
        .level0_slowdown_trigger(16)
        .level0_stop_trigger(20)
        .verify_checksums(verify_checksums)
        .build()
}

fn good_key(i: usize) -> String {
    format!("a{i:04}")
}

fn bad_file_key(i: usize) -> String {
    format!("z{i:04}")
}

/// Writes 500 good keys into one SST and 20 keys `z…` into a second, then
/// rewrites the second with the same user keys, the entry of `z0010` carrying
/// kind byte 7 (valid checksums). Returns (good file, bad file).
fn make_db(dir: &Path, verify: bool) -> (PathBuf, PathBuf) {
    let db = Db::open(dir, opts(verify)).unwrap();
    for i in 0..500 {
        db.put(good_key(i), format!("value{i}")).unwrap();
    }
    db.flush().unwrap();
    for i in 0..20 {
        db.put(bad_file_key(i), format!("z{i}")).unwrap();
    }
    db.flush().unwrap();
    db.close().unwrap();
    let ssts = sst_files(dir);
    assert_eq!(ssts.len(), 2, "{ssts:?}");
    let (good, bad) = (ssts[0].clone(), ssts[1].clone());
    let size = std::fs::metadata(&bad).unwrap().len();
    // Laid out as the flush laid it out (block size, restart interval), so
    // that the file keeps the size the MANIFEST records: a changed kind
    // byte is all that differs, and the open's size check passes.
    let mut w = TableWriter::new(
        StdFs.create(&bad).unwrap(),
        0,
        4096,
        16,
        Compression::None,
        &FilterOptions::default(),
    );
    for i in 0..20 {
        let mut ik = Vec::new();
        let kind = if i == 10 { 7 } else { key::Kind::Put as u8 };
        key::append_internal_key(&mut ik, bad_file_key(i).as_bytes(), 501 + i as u64, kind);
        w.add(&ik, format!("z{i}").as_bytes()).unwrap();
    }
    w.finish().unwrap();
    assert_eq!(std::fs::metadata(&bad).unwrap().len(), size);
    (good, bad)
}

fn assert_names(e: &Error, file: &Path, ctx: &str) {
    match e {
        Error::Corruption { file: f, detail } => {
            assert_eq!(f, file, "{ctx}: wrong file ({detail})");
            assert!(detail.contains("kind"), "{ctx}: detail {detail:?}");
        }
        e => panic!(
            "{ctx}: expected Corruption naming {}, got {e}",
            file.display()
        ),
    }
}

fn assert_good_data(db: &Db, ctx: &str) {
    for i in (0..500).step_by(17) {
        assert_eq!(
            db.get(good_key(i)).unwrap().as_deref(),
            Some(format!("value{i}").as_bytes()),
            "{ctx}: key {i}"
        );
    }
    let mut n = 0;
    for r in db.range(b"a".as_slice()..b"b".as_slice()).unwrap() {
        r.unwrap_or_else(|e| panic!("{ctx}: scan of the good file: {e}"));
        n += 1;
    }
    assert_eq!(n, 500, "{ctx}: scan of the good file");
}

#[test]
fn unknown_kind_byte_is_corruption_in_scans_gets_and_compaction() {
    for verify in [true, false] {
        let ctx = format!("verify_checksums = {verify}");
        let dir = tempfile::tempdir().unwrap();
        let (good, bad) = make_db(dir.path(), verify);
        let db = Db::open(dir.path(), opts(verify)).unwrap();

        let err = db
            .iter()
            .unwrap()
            .find_map(|r| r.err())
            .unwrap_or_else(|| panic!("{ctx}: a full scan must fail"));
        assert_names(&err, &bad, &format!("{ctx}: scan"));
        let err = db.get(bad_file_key(10)).unwrap_err();
        assert_names(&err, &bad, &format!("{ctx}: get"));
        assert_good_data(&db, &ctx);

        let before = sst_files(dir.path());
        let err = db.compact_range::<Vec<u8>, _>(..).unwrap_err();
        assert_names(&err, &bad, &format!("{ctx}: compaction"));
        assert_eq!(
            sst_files(dir.path()),
            before,
            "{ctx}: a failed compaction keeps its inputs and removes its outputs"
        );
        assert!(good.exists() && bad.exists());
        assert_good_data(&db, &format!("{ctx}: after the failed compaction"));
        db.close().unwrap();

        let db = Db::open(dir.path(), opts(verify)).unwrap();
        assert_eq!(sst_files(dir.path()), before, "{ctx}: reopen");
        assert_good_data(&db, &format!("{ctx}: reopened"));
        let err = db.get(bad_file_key(10)).unwrap_err();
        assert_names(&err, &bad, &format!("{ctx}: get after reopen"));
    }
}
