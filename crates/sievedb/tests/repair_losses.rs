//! What `Db::repair` counts as lost, and what it salvages: every intact
//! data block of a damaged table (those after a bad block too, and through
//! a scan of the file when its index or footer is gone), the entries a
//! damaged or deleted table held (its properties, else the MANIFEST), and a
//! `LostTable` for each.

mod common;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{flip_byte, manifest_files, sst_files, truncate};
use sievedb::key::{self, Kind, MAX_SEQ};
use sievedb::sst::reader::TableReader;
use sievedb::sst::{Footer, FOOTER_LEN};
use sievedb::stats::Counters;
use sievedb::{Compression, Db, Options, RepairReport, SalvageMethod};

/// Keys written into the table a test damages.
const N: usize = 5000;

/// Small blocks (hundreds per table), no compaction: every flush stays one
/// table.
fn opts(c: Compression) -> Options {
    Options::builder()
        .write_buffer_size(4 << 20)
        .block_size(512)
        .compression_per_level(vec![c])
        .level0_compaction_trigger(20)
        .level0_slowdown_trigger(20)
        .level0_stop_trigger(20)
        .build()
}

fn key(set: char, i: usize) -> Vec<u8> {
    format!("{set}{i:06}").into_bytes()
}

/// Repetitive, so that LZ4 keeps its blocks compressed.
fn val(set: char, i: usize) -> Vec<u8> {
    format!("{set}-value-{i:06}-").repeat(3).into_bytes()
}

/// A closed database of one table per set (file-number order), `n` keys
/// each; returns their paths.
fn build(dir: &Path, sets: &[char], n: usize, c: Compression) -> Vec<PathBuf> {
    let db = Db::open(dir, opts(c)).unwrap();
    for &set in sets {
        for i in 0..n {
            db.put(key(set, i), val(set, i)).unwrap();
        }
        db.flush().unwrap();
    }
    db.close().unwrap();
    let tables = sst_files(dir);
    assert_eq!(tables.len(), sets.len());
    tables
}

/// The offset of the data block of `path` that holds `user_key`.
fn block_of(path: &Path, user_key: &[u8]) -> usize {
    let t = Arc::new(
        TableReader::open(
            &sievedb::io::StdFs,
            path,
            0,
            false,
            true,
            None,
            Arc::new(Counters::new(8)),
        )
        .unwrap(),
    );
    let mut ik = Vec::new();
    key::append_internal_key(&mut ik, user_key, MAX_SEQ, Kind::Merge as u8);
    t.approximate_offset(&ik).unwrap() as usize
}

/// The footer of `path`.
fn footer(path: &Path) -> Footer {
    let data = fs::read(path).unwrap();
    Footer::decode(&data[data.len() - FOOTER_LEN..]).unwrap()
}

/// The keys of set `set` the repaired database holds, each checked against
/// its value.
fn present(dir: &Path, c: Compression, set: char, n: usize) -> Vec<usize> {
    let db = Db::open(dir, opts(c)).unwrap();
    let got: BTreeMap<Vec<u8>, Vec<u8>> = db.iter().unwrap().map(|x| x.unwrap()).collect();
    let found: Vec<usize> = (0..n).filter(|&i| got.contains_key(&key(set, i))).collect();
    for &i in &found {
        assert_eq!(got[&key(set, i)], val(set, i), "{set}{i}");
    }
    found
}

/// A named way of damaging table `t` (whose keys are set 'b').
type Damage = (&'static str, fn(&Path));

fn damages() -> Vec<Damage> {
    vec![
        ("footer damaged", |t| {
            let len = fs::metadata(t).unwrap().len() as usize;
            flip_byte(t, len - 20, 0x01);
        }),
        ("cut to 60%", |t| {
            let len = fs::metadata(t).unwrap().len();
            truncate(t, len * 6 / 10);
        }),
        ("a byte flipped in the middle", |t| {
            let at = block_of(t, &key('b', N / 2));
            flip_byte(t, at + 7, 0x10);
        }),
        ("two blocks damaged", |t| {
            let a = block_of(t, &key('b', N / 3));
            let b = block_of(t, &key('b', 2 * N / 3));
            flip_byte(t, a + 3, 0x04);
            flip_byte(t, b + 11, 0x80);
        }),
        ("index damaged", |t| {
            let at = footer(t).index.offset as usize;
            flip_byte(t, at + 5, 0x20);
        }),
        ("footer and a middle block damaged", |t| {
            let at = block_of(t, &key('b', N / 2));
            flip_byte(t, at + 7, 0x10);
            let len = fs::metadata(t).unwrap().len() as usize;
            flip_byte(t, len - 20, 0x01);
        }),
    ]
}

/// The bar of the issue: what repair says was lost is within 1% of what
/// really was (the keys written that the repaired database lacks), and the
/// keys of every intact block come back, those after a damaged block too.
#[test]
fn entries_lost_is_within_one_percent_of_the_keys_really_lost() {
    for c in [Compression::None, Compression::Lz4] {
        for (name, damage) in damages() {
            let ctx = format!("{name}, {c:?}");
            let dir = tempfile::tempdir().unwrap();
            let tables = build(dir.path(), &['a', 'b'], N, c);
            damage(&tables[1]);
            let r = Db::repair(dir.path(), opts(c)).unwrap();
            assert_eq!((r.tables_read, r.tables_damaged), (1, 1), "{ctx}: {r:?}");
            let found = present(dir.path(), c, 'b', N);
            let truth = (N - found.len()) as u64;
            let off = r.entries_lost.abs_diff(truth);
            assert!(
                off * 100 <= truth,
                "{ctx}: entries_lost {} but {truth} keys are gone",
                r.entries_lost
            );
            assert_eq!(r.entries_salvaged, found.len() as u64, "{ctx}");
            assert_eq!(present(dir.path(), c, 'a', N).len(), N, "{ctx}");
            // What follows a damaged block comes back: the last block is
            // intact in every case but the cut.
            match name {
                "cut to 60%" => {
                    assert!(found.len() > N / 3, "{ctx}: {} found", found.len());
                    assert_eq!(found, (0..found.len()).collect::<Vec<_>>(), "{ctx}");
                }
                "footer damaged" | "index damaged" => {
                    assert_eq!(truth, 0, "{ctx}: every data block is intact")
                }
                _ => {
                    assert!(truth > 0 && truth < N as u64 / 20, "{ctx}: {truth} lost");
                    assert_eq!(found.last(), Some(&(N - 1)), "{ctx}");
                }
            }
        }
    }
}

/// Each damaged table is described: what it held, what was salvaged, how
/// its blocks were found, and why it was damaged.
#[test]
fn a_damaged_table_is_described() {
    let c = Compression::None;
    for (name, damage) in damages() {
        let dir = tempfile::tempdir().unwrap();
        let tables = build(dir.path(), &['a', 'b'], N, c);
        let number: u64 = tables[1]
            .file_stem()
            .unwrap()
            .to_str()
            .unwrap()
            .parse()
            .unwrap();
        damage(&tables[1]);
        let r = Db::repair(dir.path(), opts(c)).unwrap();
        assert_eq!(r.damaged_tables.len(), 1, "{name}: {r:?}");
        let t = &r.damaged_tables[0];
        assert_eq!(t.number, number, "{name}");
        assert_eq!(t.keyspace, "default", "{name}");
        assert_eq!(t.level, Some(0), "{name}");
        assert_eq!(t.entries, Some(N as u64), "{name}");
        assert_eq!(t.salvaged + t.lost, N as u64, "{name}");
        assert_eq!(t.salvaged, r.entries_salvaged, "{name}");
        assert_eq!(
            (t.smallest.clone(), t.largest.clone()),
            (key('b', 0), key('b', N - 1))
        );
        assert!(!t.detail.is_empty(), "{name}");
        let method = match name {
            "a byte flipped in the middle" | "two blocks damaged" => SalvageMethod::Index,
            _ => SalvageMethod::Scan,
        };
        assert_eq!(t.method, method, "{name}");
        let bad_blocks = match name {
            "a byte flipped in the middle" | "footer and a middle block damaged" => Some(1),
            "two blocks damaged" => Some(2),
            "footer damaged" | "index damaged" => Some(0),
            _ => t.blocks_lost,
        };
        assert_eq!(t.blocks_lost, bad_blocks, "{name}: {t:?}");
        assert!(t.blocks_salvaged > 100, "{name}: {t:?}");
        assert!(r.tables_missing.is_empty(), "{name}");
    }
}

/// Without any MANIFEST, a damaged table's properties give what it held:
/// from the footer, or (the footer damaged) from the block the scan finds
/// just before the index. A cut table has neither: its loss is not known
/// (`entries: None`), and counts 0.
#[test]
fn without_a_manifest_the_properties_count_and_a_cut_table_is_unknown() {
    let c = Compression::None;
    for (name, damage) in damages() {
        let dir = tempfile::tempdir().unwrap();
        let tables = build(dir.path(), &['a', 'b'], N, c);
        damage(&tables[1]);
        for m in manifest_files(dir.path()) {
            fs::remove_file(m).unwrap();
        }
        let r = Db::repair(dir.path(), opts(c)).unwrap();
        let t = &r.damaged_tables[0];
        let found = present(dir.path(), c, 'b', N);
        assert_eq!(t.salvaged, found.len() as u64, "{name}");
        assert_eq!(t.level, None, "{name}");
        if name == "cut to 60%" {
            assert_eq!(
                (t.entries, t.lost, r.entries_lost),
                (None, 0, 0),
                "{name}: {t:?}"
            );
            assert_eq!(t.keyspace, "", "{name}");
        } else {
            assert_eq!(t.entries, Some(N as u64), "{name}: {t:?}");
            assert_eq!(r.entries_lost, (N - found.len()) as u64, "{name}");
            assert_eq!(t.keyspace, "default", "{name}");
        }
    }
}

#[test]
fn a_deleted_table_is_listed_missing_with_what_it_held() {
    let c = Compression::None;
    let dir = tempfile::tempdir().unwrap();
    let tables = build(dir.path(), &['a', 'b', 'c'], 300, c);
    fs::remove_file(&tables[1]).unwrap();
    let r: RepairReport = Db::repair(dir.path(), opts(c)).unwrap();
    assert_eq!(r.entries_lost, 300, "{r:?}");
    assert_eq!((r.tables_read, r.tables_damaged), (2, 0));
    assert_eq!(r.tables_missing.len(), 1, "{r:?}");
    let t = &r.tables_missing[0];
    let number: u64 = tables[1]
        .file_stem()
        .unwrap()
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(t.number, number);
    assert_eq!((t.keyspace.as_str(), t.level), ("default", Some(0)));
    assert_eq!((t.entries, t.salvaged, t.lost), (Some(300), 0, 300));
    assert_eq!(
        (t.smallest.clone(), t.largest.clone()),
        (key('b', 0), key('b', 299))
    );
    assert_eq!(t.method, SalvageMethod::Nothing);
    assert!(t.detail.contains("missing"), "{t:?}");
    assert_eq!(present(dir.path(), c, 'a', 300).len(), 300);
    assert!(present(dir.path(), c, 'b', 300).is_empty());
    assert_eq!(present(dir.path(), c, 'c', 300).len(), 300);
}

#[test]
fn a_deleted_keyspace_table_is_listed_under_its_keyspace() {
    let c = Compression::None;
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), opts(c)).unwrap();
        let users = db.keyspace("users").unwrap();
        for i in 0..100 {
            db.put(key('d', i), val('d', i)).unwrap();
            users.put(key('u', i), val('u', i)).unwrap();
        }
        db.flush().unwrap();
        drop(users);
        db.close().unwrap();
    }
    // The users table holds 'u' keys: the larger smallest key.
    let mut tables = sst_files(dir.path());
    tables.sort_by_key(|t| fs::read(t).unwrap().windows(7).any(|w| w == b"u000000"));
    fs::remove_file(&tables[1]).unwrap();
    let r = Db::repair(dir.path(), opts(c)).unwrap();
    assert_eq!(r.tables_missing.len(), 1, "{r:?}");
    let t = &r.tables_missing[0];
    assert_eq!(
        (t.keyspace.as_str(), t.entries),
        ("users", Some(100)),
        "{t:?}"
    );
    assert_eq!(r.entries_lost, 100);
}

/// A MANIFEST damaged before its end tells an older state, whose tables may
/// have been compacted away since: no table is called missing then.
#[test]
fn a_damaged_manifest_calls_no_table_missing() {
    let c = Compression::None;
    let dir = tempfile::tempdir().unwrap();
    let tables = build(dir.path(), &['a', 'a'], 300, c);
    {
        // Merge both (overlapping) tables into a new one: the MANIFEST's
        // older records list tables that are gone.
        let db = Db::open(dir.path(), opts(c)).unwrap();
        db.compact_range::<&[u8], _>(..).unwrap();
        db.close().unwrap();
    }
    assert!(tables.iter().all(|t| !t.exists()));
    let m = &manifest_files(dir.path())[0];
    let len = fs::metadata(m).unwrap().len();
    // Damage the last record (not a torn tail: a complete record whose
    // checksum fails).
    flip_byte(m, len as usize - 3, 0x01);
    let r = Db::repair(dir.path(), opts(c)).unwrap();
    assert!(r.tables_missing.is_empty(), "{r:?}");
    assert_eq!(r.entries_lost, 0);
    assert_eq!(present(dir.path(), c, 'a', 300).len(), 300);
}

/// The newest table lost: the rebuilt MANIFEST's last sequence number is
/// still the old one, so the sequence numbers of later writes never go back.
#[test]
fn last_sequence_does_not_go_back_when_the_newest_table_is_lost() {
    let c = Compression::None;
    let dir = tempfile::tempdir().unwrap();
    let tables = build(dir.path(), &['a', 'b'], 300, c);
    // A reopen deletes the WALs flushed into the tables: no file but b's
    // table holds b's sequence numbers.
    Db::open(dir.path(), opts(c)).unwrap().close().unwrap();
    let wals: u64 = common::wal_files(dir.path())
        .iter()
        .map(|w| fs::metadata(w).unwrap().len())
        .sum();
    assert_eq!(wals, 0);
    fs::remove_file(&tables[1]).unwrap();
    let r = Db::repair(dir.path(), opts(c)).unwrap();
    assert_eq!(r.last_sequence, 600, "{r:?}");
    let db = Db::open(dir.path(), opts(c)).unwrap();
    db.put("x", "1").unwrap();
    assert_eq!(db.snapshot().sequence(), 601);
}
