//! `key_may_exist`: `false` only for keys certainly absent, answered from the
//! memtables and the resident filters alone, with no block read, no block
//! cache lookup, no table open and one key digest per probe.

mod common;

use common::small_options_with;
use sievedb::{
    CompactionStyle, Compression, Db, FilterLayout, FilterMemory, FilterPolicy, Options,
    ReadOptions, Stats,
};

const KEYS: u32 = 6000;

fn key(i: u32) -> Vec<u8> {
    format!("key{i:08}").into_bytes()
}

fn options() -> Options {
    small_options_with(CompactionStyle::Leveling, 10.0, Compression::None)
}

/// The even keys of `0..KEYS` (the odd ones are absent but inside the
/// tree's key range), compacted into levels, then some of them written
/// again and compacted: files in at least two levels, memtables empty.
fn loaded(dir: &std::path::Path, opts: Options) -> Db {
    let db = Db::open(dir, opts).unwrap();
    for i in (0..KEYS).step_by(2) {
        db.put(key(i), format!("value-{i}-{}", "x".repeat(40)))
            .unwrap();
    }
    db.wait_for_compactions().unwrap();
    for i in (0..KEYS).step_by(200) {
        db.put(key(i), "newer").unwrap();
    }
    // No compaction runs while the probes are counted.
    db.wait_for_compactions().unwrap();
    let s = db.stats();
    let levels = s.levels.iter().filter(|l| l.files > 0).count();
    assert!(levels >= 2, "files in {levels} level(s): {s:?}");
    db
}

/// Reads every absent key once with `get`: each file's filter is read at
/// the first lookup that reaches it.
fn read_filters(db: &Db) {
    for i in (1..KEYS).step_by(2) {
        assert_eq!(db.get(key(i)).unwrap(), None);
    }
}

/// Asserts that the probes counted in `d` read nothing and opened nothing.
fn assert_no_reads(d: &Stats, what: &str) {
    assert_eq!(d.data_block_reads, 0, "{what}: data block reads");
    assert_eq!(d.block_cache_hits, 0, "{what}: block cache hits");
    assert_eq!(d.block_cache_misses, 0, "{what}: block cache misses");
    assert_eq!(d.table_opens, 0, "{what}: table opens");
    assert_eq!(d.table_open_reads, 0, "{what}: table open reads");
    assert_eq!(d.filter_unit_reads, 0, "{what}: filter unit reads");
    assert_eq!(d.bytes_read, 0, "{what}: bytes read");
}

#[test]
fn probes_read_no_block_and_hash_each_key_once() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path(), options());
    read_filters(&db);

    let before = db.stats();
    let mut maybe_absent = 0u32;
    for i in (1..KEYS).step_by(2) {
        maybe_absent += u32::from(db.key_may_exist(key(i)).unwrap());
    }
    for i in (0..KEYS).step_by(2) {
        assert!(db.key_may_exist(key(i)).unwrap(), "present key {i}");
    }
    let d = db.stats().delta_since(&before);
    assert_no_reads(&d, "key_may_exist");
    assert_eq!(d.gets, u64::from(KEYS), "each probe counts as a lookup");
    // At most one digest per probe, shared by every level's filter (a key
    // past the last file of every run, `key(KEYS - 1)`, reaches none).
    assert!(d.digests_computed <= u64::from(KEYS), "{d:?}");
    assert!(d.digests_computed >= u64::from(KEYS) - 10, "{d:?}");
    assert!(
        d.filter_probes > d.digests_computed,
        "several filters per digest: {d:?}"
    );
    // 10 bits per key: about 1% false positives per filter, a few filters.
    assert!(
        maybe_absent < KEYS / 2 / 20,
        "{maybe_absent} of {} absent keys may exist",
        KEYS / 2
    );
    // Keys beyond every file's range: no filter to ask, certainly absent.
    assert!(!db.key_may_exist("zzz").unwrap());
    assert!(!db.key_may_exist("").unwrap());
}

#[test]
fn files_whose_filters_are_not_resident_say_maybe() {
    let dir = tempfile::tempdir().unwrap();
    loaded(dir.path(), options()).close().unwrap();

    // Reopened: no lookup has read a filter yet.
    let db = Db::open(dir.path(), options()).unwrap();
    let before = db.stats();
    let answers = probe_absent(&db);
    assert_no_reads(&db.stats().delta_since(&before), "unread filters");
    assert_maybe_where_a_file_covers(&db, &answers, "unread filter");
    drop(db);

    // Under a budget of no filter memory, every unit is dropped: maybe.
    let mut o = options();
    o.filter.layout = FilterLayout::Units;
    o.filter.units = 4;
    o.filter_memory = FilterMemory::Bytes(0);
    o.filter_policy = FilterPolicy::Uniform;
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path(), o);
    read_filters(&db);
    assert_eq!(db.stats().filter_memory_bytes, 0);
    let before = db.stats();
    let answers = probe_absent(&db);
    let d = db.stats().delta_since(&before);
    assert_no_reads(&d, "dropped units");
    assert_eq!(d.filter_probes, 0, "no unit, no probe");
    assert_maybe_where_a_file_covers(&db, &answers, "dropped units");
}

/// `key_may_exist` of every 10th absent key (odd keys), in key order.
fn probe_absent(db: &Db) -> Vec<(u32, bool)> {
    (1..KEYS)
        .step_by(20)
        .map(|i| (i, db.key_may_exist(key(i)).unwrap()))
        .collect()
}

/// Asserts that every probe answered "maybe", except for keys that fall
/// between the files of every level (where no file covers the key, `false`
/// is right whatever the filters hold: compaction decides where files end,
/// so which keys these are varies from run to run). A `get` of such a key
/// reaches no file: it reads no block and probes no filter.
fn assert_maybe_where_a_file_covers(db: &Db, answers: &[(u32, bool)], what: &str) {
    let mut maybe = 0;
    for &(i, may) in answers {
        if may {
            maybe += 1;
            continue;
        }
        let before = db.stats();
        assert_eq!(db.get(key(i)).unwrap(), None);
        let d = db.stats().delta_since(&before);
        assert_eq!(
            d.block_cache_hits + d.block_cache_misses + d.filter_probes,
            0,
            "{what}: key {i} answered `false` though a file covers it"
        );
    }
    assert!(
        maybe * 2 > answers.len(),
        "{what}: {maybe} of {} maybe",
        answers.len()
    );
}

#[test]
fn memtable_entries_answer_first() {
    let dir = tempfile::tempdir().unwrap();
    let db = loaded(dir.path(), options());
    read_filters(&db);

    // Present in an SST, deleted in the memtable: certainly absent.
    db.delete(key(10)).unwrap();
    assert!(!db.key_may_exist(key(10)).unwrap());
    // Deleted by a range tombstone of the memtable.
    db.delete_range(key(20)..key(30)).unwrap();
    for i in (20..30).step_by(2) {
        assert!(!db.key_may_exist(key(i)).unwrap(), "range-deleted key {i}");
    }
    assert!(db.key_may_exist(key(30)).unwrap(), "past the range");
    // Written again after the range tombstone.
    db.put(key(22), "again").unwrap();
    assert!(db.key_may_exist(key(22)).unwrap());
    // Only in the memtable.
    db.put("zzz", "v").unwrap();
    assert!(db.key_may_exist("zzz").unwrap());

    // A snapshot sees the memtable as of its sequence number.
    let snap = db.snapshot();
    db.delete("zzz").unwrap();
    assert!(!db.key_may_exist("zzz").unwrap());
    let at = ReadOptions::default().snapshot(&snap);
    assert!(db.key_may_exist_opt("zzz", &at).unwrap());
    drop(snap);

    // Still true for every key that has a value, wherever it is.
    for i in (0..KEYS).step_by(2) {
        let present = db.get(key(i)).unwrap().is_some();
        if present {
            assert!(db.key_may_exist(key(i)).unwrap(), "present key {i}");
        }
    }
    // A key over the length limit is refused, as by `get`.
    assert!(db.key_may_exist(vec![b'k'; 100_000]).is_err());
}

#[test]
fn keyspaces_answer_for_their_own_keys() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), options()).unwrap();
    let ks = db.keyspace("other").unwrap();
    for i in (0..2000).step_by(2) {
        ks.put(key(i), "v").unwrap();
    }
    db.wait_for_compactions().unwrap();
    for i in (1..2000).step_by(2) {
        assert_eq!(ks.get(key(i)).unwrap(), None);
    }
    let before = db.stats();
    let mut maybe_absent = 0;
    for i in 0..2000 {
        let may = ks.key_may_exist(key(i)).unwrap();
        if i % 2 == 0 {
            assert!(may, "present key {i}");
        } else {
            maybe_absent += u32::from(may);
        }
        assert!(
            !db.key_may_exist(key(i)).unwrap(),
            "not in the default keyspace"
        );
    }
    assert_no_reads(&db.stats().delta_since(&before), "keyspace");
    assert!(maybe_absent < 50, "{maybe_absent} of 1000 absent keys");
    ks.delete(key(0)).unwrap();
    assert!(!ks.key_may_exist(key(0)).unwrap());
    let snap = db.snapshot();
    ks.put("new", "v").unwrap();
    assert!(ks.key_may_exist("new").unwrap());
    let at = ReadOptions::default().snapshot(&snap);
    assert!(!ks.key_may_exist_opt("new", &at).unwrap());
}
