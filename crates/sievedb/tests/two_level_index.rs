//! Two-level indexes end to end (`Options::index_partition_bytes`): every
//! read right through index partitions, in a tree mixing one-level and
//! two-level files, reopened and repaired; opening a file reads its top
//! level, not its whole index.

mod common;

use std::path::Path;

use common::{assert_db_equals, fill_even, small_options, sst_files};
use sievedb::sst::{Footer, FOOTER_LEN};
use sievedb::{CompactionStyle, Db, Options};

/// How many SSTs of `dir` have a two-level index, and how many do not
/// (callers wait for compactions first, so every file is finished).
fn shapes(dir: &Path) -> (usize, usize) {
    let mut two = 0;
    let mut one = 0;
    for path in sst_files(dir) {
        let Ok(bytes) = std::fs::read(&path) else {
            continue; // deleted since the listing
        };
        let footer = Footer::decode(&bytes[bytes.len() - FOOTER_LEN..]).unwrap();
        if footer.two_level() {
            two += 1;
        } else {
            one += 1;
        }
    }
    (two, one)
}

fn options(index_partition_bytes: Option<u64>) -> Options {
    let mut o = small_options(CompactionStyle::Leveling);
    o.index_partition_bytes = index_partition_bytes;
    o.filter.partition_bytes = Some(128);
    // No block cache: every lookup reads its index partition.
    o.block_cache_capacity = 0;
    o
}

/// Two-level files read right, alone and beside one-level files written
/// after reopening without partitions; a lookup without a block cache reads
/// its partition; repair rebuilds a tree of them.
#[test]
fn two_level_indexes_read_right_beside_one_level_ones() {
    let dir = tempfile::tempdir().unwrap();
    let mut model = std::collections::BTreeMap::new();
    {
        let db = Db::open(dir.path(), options(Some(128))).unwrap();
        fill_even(&db, &mut model, 6000, 0);
        db.wait_for_compactions().unwrap();
        // Files whose index fits one partition keep a one-level index.
        let (two, one) = shapes(dir.path());
        assert!(two > 2 * one, "{two} two-level files, {one} one-level");
        let before = db.stats();
        assert_db_equals(&db, &model, "two-level");
        for i in (1..6000u64).step_by(200) {
            let k = format!("key{i:08}");
            assert_eq!(db.get(k.as_bytes()).unwrap(), None, "{k}");
        }
        let d = db.stats().delta_since(&before);
        assert!(
            d.index_partition_reads >= 3000 && d.index_partition_reads <= d.block_cache_misses,
            "{d:?}"
        );
    }
    {
        // Reopened without partitions: new files are one-level, old ones
        // are read as written.
        let db = Db::open(dir.path(), options(None)).unwrap();
        db.wait_for_compactions().unwrap();
        let (_, one_before) = shapes(dir.path());
        for i in (0..6000u64).step_by(6) {
            let k = format!("key{i:08}").into_bytes();
            let v = format!("again-{i}").into_bytes();
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
        db.flush().unwrap();
        db.wait_for_compactions().unwrap();
        let (two, one) = shapes(dir.path());
        assert!(
            two > 0 && one > one_before,
            "{two} two-level files, {one} one-level"
        );
        assert_db_equals(&db, &model, "mixed");
        db.compact_range::<&[u8], _>(..).unwrap();
        db.wait_for_compactions().unwrap();
        assert_eq!(shapes(dir.path()).0, 0, "compaction rewrote every file");
        assert_db_equals(&db, &model, "compacted");
    }
    {
        let db = Db::open(dir.path(), options(Some(256))).unwrap();
        fill_even(&db, &mut model, 3000, 1);
        db.compact_range::<&[u8], _>(..).unwrap();
        db.wait_for_compactions().unwrap();
        assert!(shapes(dir.path()).0 > 0);
    }
    // Repair from the SSTs alone (the MANIFEST lost).
    for m in common::manifest_files(dir.path()) {
        std::fs::remove_file(m).unwrap();
    }
    std::fs::remove_file(dir.path().join("CURRENT")).unwrap();
    Db::repair(dir.path(), options(Some(256))).unwrap();
    let db = Db::open(dir.path(), options(Some(256))).unwrap();
    assert_db_equals(&db, &model, "repaired");
}

/// Opening files of a two-level index and partitioned filters reads their
/// tails (the top levels, the properties), not their indexes: counted in
/// `table_open_bytes` against files of one-level indexes and whole filters.
#[test]
fn opening_a_two_level_file_reads_its_top_level() {
    let open_bytes = |partitions: Option<u64>| {
        let dir = tempfile::tempdir().unwrap();
        let mut o = Options {
            write_buffer_size: 8 << 20,
            target_file_size: 8 << 20,
            block_size: 512,
            index_partition_bytes: partitions,
            ..Options::default()
        };
        o.filter.partition_bytes = partitions;
        let mut model = std::collections::BTreeMap::new();
        {
            let db = Db::open(dir.path(), o.clone()).unwrap();
            fill_even(&db, &mut model, 200_000, 0);
        }
        let files = sst_files(dir.path()).len() as u64;
        let size: u64 = sst_files(dir.path())
            .iter()
            .map(|p| std::fs::metadata(p).unwrap().len())
            .sum();
        let db = Db::open(dir.path(), o).unwrap();
        let before = db.stats();
        // One lookup per file opens it.
        for i in (0..200_000u64).step_by(2000) {
            db.get(format!("key{i:08}").as_bytes()).unwrap().unwrap();
        }
        let d = db.stats().delta_since(&before);
        assert_eq!(d.table_opens, files);
        (d.table_open_bytes, d.table_open_reads, files, size)
    };
    let (one_level, one_reads, files, size) = open_bytes(None);
    let (two_level, two_reads, two_files, _) = open_bytes(Some(4096));
    assert_eq!(files, two_files);
    // The one-level files' indexes and filters are ~2% of them, past the
    // tail: a second read each; the two-level files' tails hold it all.
    assert_eq!(one_reads, 2 * files, "{files} files of {size} bytes");
    assert_eq!(two_reads, files);
    assert!(
        two_level * 4 < one_level,
        "{two_level} bytes read opening two-level files, {one_level} one-level"
    );
}
