//! A tree of many more files than `max_open_files`: the table cache closes
//! and reopens files, and what a reopen reads again is the metadata the
//! metadata cache does not hold (`Options::table_meta_cache_capacity`).

use sievedb::{Db, Options};

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

/// 100-byte values: `N` of them fill about 150 files of 16 KiB.
fn value(i: u32) -> Vec<u8> {
    format!("value{i:095}").into_bytes()
}

const N: u32 = 20_000;

/// `N` keys in files of 16 KiB, at most 16 of them open at once, reopened
/// so that nothing is cached.
fn many_files(dir: &std::path::Path, meta_capacity: u64) -> Db {
    let opts = || {
        Options::builder()
            .write_buffer_size(64 << 10)
            .target_file_size(16 << 10)
            .level1_size(64 << 10)
            .max_open_files(16)
            .table_meta_cache_capacity(meta_capacity)
            .build()
    };
    let db = Db::open(dir, opts()).unwrap();
    for i in 0..N {
        db.put(key(i), value(i)).unwrap();
    }
    db.flush().unwrap();
    db.wait_for_compactions().unwrap();
    drop(db);
    Db::open(dir, opts()).unwrap()
}

/// Reads every key; returns (table opens, their reads) it caused.
fn read_all(db: &Db) -> (u64, u64) {
    let before = db.stats();
    for i in 0..N {
        assert_eq!(db.get(key(i)).unwrap(), Some(value(i)));
    }
    let after = db.stats();
    (
        after.table_opens - before.table_opens,
        after.table_open_reads - before.table_open_reads,
    )
}

#[test]
fn reopening_a_file_whose_metadata_is_held_reads_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let db = many_files(dir.path(), 64 << 20);
    let files: usize = db.stats().levels.iter().map(|l| l.files).sum();
    assert!(files > 64, "{files} files: the test needs files >> 16 open");
    let (opens, reads) = read_all(&db);
    // A first open reads the file's tail once: footer, index, properties
    // and filter index lie in it.
    assert!(
        opens >= files as u64 && reads == opens,
        "{opens} opens, {reads} reads"
    );
    let held = db.stats().table_meta_bytes;
    assert!(held > 0);
    // Every file is closed and reopened again, and reads nothing.
    let (opens, reads) = read_all(&db);
    assert!(opens >= files as u64, "{opens} opens");
    assert_eq!(reads, 0);
    assert_eq!(db.stats().table_meta_bytes, held);
}

#[test]
fn without_the_metadata_cache_every_reopen_reads_again() {
    let dir = tempfile::tempdir().unwrap();
    let db = many_files(dir.path(), 0);
    read_all(&db);
    let (opens, reads) = read_all(&db);
    assert!(opens > 64, "{opens} opens");
    assert_eq!(reads, opens, "one read of each reopened file's tail");
    assert_eq!(db.stats().table_meta_bytes, 0);
}

#[test]
fn a_small_metadata_cache_holds_what_it_can_and_stays_correct() {
    let dir = tempfile::tempdir().unwrap();
    let db = many_files(dir.path(), 8 << 10);
    read_all(&db);
    let (_, reads) = read_all(&db);
    assert!(reads > 0, "8 KiB cannot hold every file's metadata");
    assert!(db.stats().table_meta_bytes <= 8 << 10);
}

#[test]
fn deleted_files_leave_the_metadata_cache() {
    let dir = tempfile::tempdir().unwrap();
    let db = many_files(dir.path(), 64 << 20);
    read_all(&db);
    let held = db.stats().table_meta_bytes;
    // Every key overwritten and the whole tree compacted: every file read
    // above is deleted, and its metadata leaves with it.
    for i in 0..N {
        db.put(key(i), value(i)).unwrap();
    }
    db.flush().unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    db.wait_for_compactions().unwrap();
    let after = db.stats().table_meta_bytes;
    assert!(after < held / 2, "{after} bytes held after, {held} before");
    read_all(&db);
}
