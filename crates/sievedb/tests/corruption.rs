//! Damaged files must be reported as `Error::Corruption` naming the file:
//! never a panic, never wrong data.
//!
//! Scale the sweeps with `SIEVEDB_CORRUPTION_STRIDE` (test every Nth byte of
//! each SST, default 5) and `SIEVEDB_MANIFEST_STRIDE` (default 1).

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::{
    copy_dir, env_usize, file_name, flip_byte, manifest_files, set_byte, show, sst_files, truncate,
    wal_files,
};
use sievedb::{CompactionStyle, Compression, Db, Error, Options, ReadOptions, WalRecovery};

fn key(i: usize) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

fn value(i: usize) -> Vec<u8> {
    // Repetitive so that LZ4 keeps its compressed blocks.
    format!("value-{i:05}-").repeat(4).into_bytes()
}

/// Options for the corruption fixtures: one memtable holds everything, blocks
/// are small so that an SST has many of them.
fn fixture_options(compression: Compression) -> Options {
    Options::builder()
        .block_size(512)
        .compression_per_level(vec![compression])
        .compaction_style(CompactionStyle::Leveling)
        .build()
}

/// Creates a db in `dir` holding keys `0..n` in exactly one SST (flushed, then
/// closed). Returns the SST path.
fn make_sst_db(dir: &Path, n: usize, compression: Compression) -> PathBuf {
    let db = Db::open(dir, fixture_options(compression)).expect("open fixture");
    for i in 0..n {
        db.put(key(i), value(i)).expect("put");
    }
    db.flush().expect("flush");
    db.close().expect("close");
    let ssts = sst_files(dir);
    assert_eq!(
        ssts.len(),
        1,
        "fixture should hold exactly one SST: {ssts:?}"
    );
    ssts[0].clone()
}

/// Asserts that `e` is a corruption error whose message names `file`.
fn assert_corruption_naming(e: &Error, file: &Path, ctx: &str) {
    assert!(
        e.is_corruption(),
        "{ctx}: expected Error::Corruption naming {}, got {e:?} ({e})",
        file_name(file)
    );
    let msg = e.to_string();
    assert!(
        msg.contains(&file_name(file)),
        "{ctx}: corruption error does not name {}: {msg}",
        file_name(file)
    );
}

/// How reading a whole database went.
#[derive(Default, Debug)]
struct Outcome {
    /// Reads that returned a Corruption error.
    corruptions: usize,
    /// Reads that returned correct data.
    ok: usize,
}

/// Opens the db and reads every key (get, multi_get, full iteration, a range
/// scan). Every read must be either correct or a Corruption naming `file`.
fn read_everything(dir: &Path, opts: Options, n: usize, file: &Path, ctx: &str) -> Outcome {
    let mut out = Outcome::default();
    let db = match Db::open(dir, opts) {
        Ok(db) => db,
        Err(e) => {
            assert_corruption_naming(&e, file, &format!("{ctx}: open"));
            out.corruptions += 1;
            return out;
        }
    };
    let mut check = |r: sievedb::Result<Option<Vec<u8>>>, i: usize, what: &str| match r {
        Ok(v) => {
            assert_eq!(
                v,
                Some(value(i)),
                "{ctx}: {what} of {} returned wrong data",
                show(&key(i))
            );
            out.ok += 1;
        }
        Err(e) => {
            assert_corruption_naming(&e, file, &format!("{ctx}: {what} of {}", show(&key(i))));
            out.corruptions += 1;
        }
    };
    for i in 0..n {
        check(db.get(key(i)), i, "get");
    }
    // A key that was never written must not show up either.
    match db.get(b"key99999x") {
        Ok(v) => assert_eq!(v, None, "{ctx}: get of a missing key returned data"),
        Err(e) => assert_corruption_naming(&e, file, &format!("{ctx}: get of a missing key")),
    }
    match db.multi_get((0..n).step_by(7).map(key)) {
        Ok(vs) => {
            for (j, v) in vs.into_iter().enumerate() {
                check(Ok(v), j * 7, "multi_get");
            }
        }
        Err(e) => {
            assert_corruption_naming(&e, file, &format!("{ctx}: multi_get"));
            out.corruptions += 1;
        }
    }
    let mut scan =
        |it: sievedb::Result<sievedb::DbIterator>, first: usize, last: usize, what: &str| {
            let it = match it {
                Ok(it) => it,
                Err(e) => {
                    assert_corruption_naming(&e, file, &format!("{ctx}: {what}"));
                    out.corruptions += 1;
                    return;
                }
            };
            let mut expected = first;
            for item in it {
                match item {
                    Ok((k, v)) => {
                        assert!(
                            expected < last,
                            "{ctx}: {what} yields extra key {}",
                            show(&k)
                        );
                        assert_eq!(
                            (show(&k), show(&v)),
                            (show(&key(expected)), show(&value(expected))),
                            "{ctx}: {what} item {}",
                            expected - first
                        );
                        expected += 1;
                    }
                    Err(e) => {
                        assert_corruption_naming(&e, file, &format!("{ctx}: {what}"));
                        out.corruptions += 1;
                        return;
                    }
                }
            }
            assert_eq!(expected, last, "{ctx}: {what} ended early without an error");
            out.ok += 1;
        };
    scan(db.iter(), 0, n, "full iteration");
    let (a, b) = (n / 3, 2 * n / 3);
    scan(db.range(key(a)..key(b)), a, b, "range scan");
    drop(db);
    out
}

/// (a) A flipped byte in an SST data block.
#[test]
fn sst_data_block_flip_is_corruption() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let n = 300;
    let sst = make_sst_db(&dir, n, Compression::None);
    flip_byte(&sst, 100, 0x5a);
    let opts = fixture_options(Compression::None);
    let out = read_everything(&dir, opts.clone(), n, &sst, "flip at offset 100");
    assert!(
        out.corruptions > 0,
        "a flipped byte in the first data block went unnoticed: {out:?}"
    );
    // The damaged block holds the first keys: reading them must fail.
    let db = Db::open(&dir, opts)
        .expect("open with a damaged data block (tables open lazily or verify later)");
    let e = db
        .get(key(0))
        .expect_err("get of a key in the damaged block must fail");
    assert_corruption_naming(&e, &sst, "get key 0");
    let err = db
        .iter()
        .expect("iterator")
        .find_map(|r| r.err())
        .expect("full iteration over a damaged block must yield an error");
    assert_corruption_naming(&err, &sst, "iteration");
    // Keys far from the damaged block still read correctly.
    assert_eq!(
        db.get(key(n - 1)).expect("get last key"),
        Some(value(n - 1))
    );
}

/// `ReadOptions::verify_checksums(false)` skips the check of data blocks:
/// a flipped value byte is read back as it is, by lookups and iterators in
/// both directions, while checked reads still report the damage (the block
/// read unchecked did not enter the cache).
#[test]
fn unchecked_reads_skip_the_data_block_checksum() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let n = 300;
    let sst = make_sst_db(&dir, n, Compression::None);
    let bytes = fs::read(&sst).expect("read sst");
    let at = bytes
        .windows(value(0).len())
        .position(|w| w == value(0).as_slice())
        .expect("value 0 stored verbatim");
    flip_byte(&sst, at + 2, 0x20);
    let db = Db::open(&dir, fixture_options(Compression::None)).expect("open");
    let unchecked = ReadOptions::default().verify_checksums(false);
    let damaged = db.get_opt(key(0), &unchecked).expect("unchecked get");
    assert!(
        damaged.is_some() && damaged != Some(value(0)),
        "{damaged:?}"
    );
    let e = db
        .get(key(0))
        .expect_err("checked get after an unchecked one");
    assert_corruption_naming(&e, &sst, "checked get");
    let all: Vec<_> = db
        .iter_opt(&unchecked)
        .expect("iter")
        .map(|r| r.expect("unchecked iteration"))
        .collect();
    assert_eq!(all.len(), n);
    let back: Vec<_> = db
        .iter_opt(&unchecked)
        .expect("iter")
        .rev()
        .map(|r| r.expect("rev"))
        .collect();
    assert_eq!(back.len(), n);
    let err = db
        .iter()
        .expect("iterator")
        .rev()
        .find_map(|r| r.err())
        .expect("checked reverse iteration over the damaged block fails");
    assert_corruption_naming(&err, &sst, "checked reverse iteration");
}

/// Writes `n` puts of equal size without flushing and closes; returns the WAL
/// and the size of one record.
fn make_wal_db(dir: &Path, n: usize) -> (PathBuf, usize) {
    let db = Db::open(dir, Options::default()).expect("open");
    for i in 0..n {
        db.put(key(i), value(i)).expect("put");
    }
    drop(db); // no flush: the WAL must hold the data
    let wals: Vec<PathBuf> = wal_files(dir)
        .into_iter()
        .filter(|p| fs::metadata(p).map(|m| m.len() > 0).unwrap_or(false))
        .collect();
    assert_eq!(wals.len(), 1, "expected one non-empty WAL, found {wals:?}");
    assert!(
        sst_files(dir).is_empty(),
        "close must not have flushed: {:?}",
        sst_files(dir)
    );
    let len = fs::metadata(&wals[0]).expect("stat wal").len() as usize;
    assert!(len > 0, "WAL is empty");
    assert_eq!(
        len % n,
        0,
        "{n} equal puts should make {n} equal WAL records; WAL has {len} bytes"
    );
    (wals[0].clone(), len / n)
}

fn present_keys(db: &Db, n: usize) -> Vec<usize> {
    (0..n)
        .filter(|&i| match db.get(key(i)).expect("get") {
            Some(v) => {
                assert_eq!(v, value(i), "wrong value for {}", show(&key(i)));
                true
            }
            None => false,
        })
        .collect()
}

/// Writes `n` sync puts without flushing and closes; returns the WAL and
/// its records: (offset, end, the put's index, or `None` for a sync mark).
fn make_synced_wal_db(dir: &Path, n: usize) -> (PathBuf, Vec<(usize, usize, Option<usize>)>) {
    let db = Db::open(dir, Options::default()).expect("open");
    let sync = sievedb::WriteOptions { sync: true };
    for i in 0..n {
        db.put_with(key(i), value(i), &sync).expect("put");
    }
    drop(db);
    let wal = wal_files(dir)
        .into_iter()
        .find(|p| fs::metadata(p).map(|m| m.len() > 0).unwrap_or(false))
        .expect("a non-empty WAL");
    let data = fs::read(&wal).expect("read the WAL");
    let file = sievedb::wal::SliceFile(&data);
    let mut reader = sievedb::wal::LogReader::new(&file, &wal);
    let mut records = Vec::new();
    while let sievedb::wal::LogItem::Record { offset, payload } = reader.next_item().unwrap() {
        let end = offset as usize + sievedb::wal::HEADER_LEN + payload.len();
        let put = sievedb::wal::sync_mark::parse(payload).is_none();
        let index = put.then(|| {
            records
                .iter()
                .filter(|r: &&(_, _, Option<usize>)| r.2.is_some())
                .count()
        });
        records.push((offset as usize, end, index));
    }
    assert_eq!(records.iter().filter(|r| r.2.is_some()).count(), n);
    (wal, records)
}

/// (b) A flipped byte in a WAL record before the last sync mark: the mark
/// proves the record was synced, so it is corruption under
/// `TolerateCorruptedTail` and `AbsoluteConsistency`; under the default
/// `PointInTime` the database opens with exactly the writes before the
/// damaged record. A flip no mark covers (the last put, or a WAL of unsynced
/// writes: `wal_flip_in_unsynced_writes_is_a_torn_tail`) is a torn tail.
#[test]
fn wal_flip_before_last_record_is_corruption() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let n = 40;
    let (wal, records) = make_synced_wal_db(&dir, n);
    let with = |mode| Options::builder().wal_recovery(mode).build();
    let strict_modes = [
        WalRecovery::TolerateCorruptedTail,
        WalRecovery::AbsoluteConsistency,
    ];
    // The record holding byte `pos`, and how many puts come before it.
    let at = |pos: usize| {
        let r = records
            .iter()
            .position(|r| r.0 <= pos && pos < r.1)
            .unwrap();
        let before = records[..r].iter().filter(|x| x.2.is_some()).count();
        (records[r].0, before)
    };
    // The last mark: bytes from it on are covered by no later mark.
    let last_mark = records.iter().rev().find(|r| r.2.is_none()).unwrap().0;

    // One explicit flip in the middle of the log.
    let mid = records[records.len() / 2].0 + 14;
    let (start, before) = at(mid);
    let old = flip_byte(&wal, mid, 0x10);
    for mode in strict_modes {
        let e = Db::open(&dir, with(mode))
            .err()
            .expect("open with a damaged WAL record must fail");
        assert_corruption_naming(&e, &wal, &format!("{mode:?}: WAL flip at {mid}"));
        let offset = format!("offset {start}");
        assert!(
            e.to_string().contains(&offset),
            "{e} does not name {offset}"
        );
    }
    // Point in time, read-only (changes nothing) then read-write on a copy.
    let db = Db::open_read_only(&dir, Options::default()).expect("point-in-time open");
    assert_eq!(present_keys(&db, n), (0..before).collect::<Vec<_>>());
    drop(db);
    let copy = tmp.path().join("pit");
    copy_dir(&dir, &copy);
    let db = Db::open(&copy, Options::default()).expect("point-in-time open");
    assert_eq!(present_keys(&db, n), (0..before).collect::<Vec<_>>());
    let report = db.recovery_report().clone();
    let dropped = report.dropped.clone().expect("a drop is reported");
    assert_eq!(dropped.offset, start as u64);
    assert!(!dropped.torn_tail);
    let after = records
        .iter()
        .filter(|r| r.0 > start && r.2.is_some())
        .count();
    assert_eq!(
        report.entries_dropped, after as u64,
        "intact puts after the damage"
    );
    drop(db);
    set_byte(&wal, mid, old);

    // Every byte before the last mark.
    for pos in 0..last_mark {
        let mask = if pos % 2 == 0 { 0x01 } else { 0x80 };
        let old = flip_byte(&wal, pos, mask);
        for mode in strict_modes {
            match Db::open(&dir, with(mode)) {
                Ok(_) => panic!(
                    "{mode:?}: WAL byte {pos} (record at {}) flipped: open succeeded",
                    at(pos).0
                ),
                Err(e) => {
                    assert_corruption_naming(&e, &wal, &format!("{mode:?}: WAL flip at {pos}"))
                }
            }
        }
        if pos % 7 == 0 {
            let db = Db::open_read_only(&dir, Options::default()).expect("point in time");
            assert_eq!(
                present_keys(&db, n),
                (0..at(pos).1).collect::<Vec<_>>(),
                "point in time, WAL byte {pos} flipped"
            );
        }
        set_byte(&wal, pos, old);
    }

    // Untouched again, everything is there.
    let db = Db::open(&dir, Options::default()).expect("open restored WAL");
    assert_eq!(present_keys(&db, n), (0..n).collect::<Vec<_>>());
}

/// A flipped byte in a WAL of unsynced writes: no sync mark proves it lies
/// in synced bytes, so every mode but `AbsoluteConsistency` drops it and
/// what follows as a torn tail (those writes were never acknowledged as
/// durable), and the report counts the intact puts dropped and keeps the
/// WAL in `lost/`.
#[test]
fn wal_flip_in_unsynced_writes_is_a_torn_tail() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pristine = tmp.path().join("pristine");
    let n = 40;
    let (wal, rec) = make_wal_db(&pristine, n);
    let wal_name = file_name(&wal);
    for (c, pos) in [3, rec + 5, 17 * rec + 20, (n - 2) * rec + 1]
        .into_iter()
        .enumerate()
    {
        for mode in [WalRecovery::TolerateCorruptedTail, WalRecovery::PointInTime] {
            let dir = tmp.path().join(format!("flip{c}-{mode:?}"));
            copy_dir(&pristine, &dir);
            flip_byte(&dir.join(&wal_name), pos, 0x10);
            let db = Db::open(&dir, Options::builder().wal_recovery(mode).build())
                .unwrap_or_else(|e| panic!("{mode:?}, flip at {pos}: {e}"));
            assert_eq!(present_keys(&db, n), (0..pos / rec).collect::<Vec<_>>());
            let r = db.recovery_report();
            let d = r.dropped.as_ref().expect("a drop is reported");
            assert!(d.torn_tail, "{mode:?}, flip at {pos}: {d:?}");
            assert_eq!(
                r.entries_dropped,
                (n - pos / rec - 1) as u64,
                "flip at {pos}"
            );
            assert_eq!(
                r.records_dropped,
                r.entries_dropped + 1,
                "the damaged one too"
            );
            assert!(r.bytes_dropped > 0);
            assert!(
                d.kept_in.is_some(),
                "intact writes dropped: the WAL is kept"
            );
        }
    }
}

/// (c) A WAL cut inside its last record loses at most that record; any cut
/// keeps exactly the records that are complete.
#[test]
fn wal_truncation_keeps_complete_records() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pristine = tmp.path().join("pristine");
    let n = 20;
    let (wal, rec) = make_wal_db(&pristine, n);
    let len = rec * n;
    let wal_name = file_name(&wal);

    // The required case: a cut in the middle of the last record.
    let mut cuts = vec![len - rec / 2];
    // Plus cuts inside headers, inside payloads and on boundaries elsewhere.
    cuts.extend([
        0,
        1,
        5,
        rec - 1,
        rec,
        rec + 3,
        rec + rec / 2,
        5 * rec,
        7 * rec + 11,
        len - 1,
        len - rec,
    ]);
    for (c, &cut) in cuts.iter().enumerate() {
        let dir = tmp.path().join(format!("cut{c}"));
        copy_dir(&pristine, &dir);
        truncate(&dir.join(&wal_name), cut as u64);
        let db = Db::open(&dir, Options::default())
            .unwrap_or_else(|e| panic!("open after cutting the WAL at {cut} of {len}: {e}"));
        let present = present_keys(&db, n);
        let complete = cut / rec;
        assert_eq!(
            present,
            (0..complete).collect::<Vec<_>>(),
            "WAL cut at byte {cut} (record size {rec}): expected exactly the first {complete} writes"
        );
        // The database keeps working and the recovered state survives reopen.
        db.put(b"after", b"cut").expect("put after recovery");
        drop(db);
        let db = Db::open(&dir, Options::default()).expect("second reopen");
        assert_eq!(
            present_keys(&db, n),
            (0..complete).collect::<Vec<_>>(),
            "cut {cut}: second reopen"
        );
        assert_eq!(db.get(b"after").expect("get"), Some(b"cut".to_vec()));
    }

    // A zero-filled tail (file extended before a crash) is not corruption.
    let dir = tmp.path().join("zero-tail");
    copy_dir(&pristine, &dir);
    let path = dir.join(&wal_name);
    let mut data = fs::read(&path).expect("read wal");
    data.extend(std::iter::repeat_n(0u8, 100));
    fs::write(&path, data).expect("write wal");
    let db = Db::open(&dir, Options::default()).expect("open with zero-filled WAL tail");
    assert_eq!(present_keys(&db, n), (0..n).collect::<Vec<_>>());
}

/// (d) A flipped byte in the MANIFEST.
#[test]
fn manifest_flip_is_corruption() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let pristine = tmp.path().join("pristine");
    let n = 50;
    make_sst_db(&pristine, n, Compression::None);
    let manifests = manifest_files(&pristine);
    assert_eq!(manifests.len(), 1, "expected one MANIFEST: {manifests:?}");
    let manifest_name = file_name(&manifests[0]);
    let len = fs::metadata(&manifests[0]).expect("stat manifest").len() as usize;
    assert!(len > 0);

    // The required case: a byte early in the file (first record).
    let dir = tmp.path().join("explicit");
    copy_dir(&pristine, &dir);
    let m = dir.join(&manifest_name);
    flip_byte(&m, len.min(16) - 1, 0x04);
    let e = Db::open(&dir, Options::default())
        .err()
        .expect("open with a damaged MANIFEST must fail");
    assert_corruption_naming(&e, &m, "MANIFEST flip");

    // Every byte: either Corruption naming the MANIFEST, or the full data.
    let stride = env_usize("SIEVEDB_MANIFEST_STRIDE", 1).max(1);
    let mut silent = Vec::new();
    for pos in (0..len).step_by(stride) {
        let dir = tmp.path().join(format!("m{pos}"));
        copy_dir(&pristine, &dir);
        let m = dir.join(&manifest_name);
        flip_byte(&m, pos, 0x20);
        match Db::open(&dir, Options::default()) {
            Err(e) => assert_corruption_naming(&e, &m, &format!("MANIFEST flip at {pos}")),
            Ok(db) => {
                let present = present_keys(&db, n);
                if present.len() != n {
                    silent.push((pos, present.len()));
                }
            }
        }
        drop(fs::remove_dir_all(&dir));
    }
    assert!(
        silent.is_empty(),
        "MANIFEST of {len} bytes: flipping these bytes opened the db without error but lost data \
         (position, keys still present out of {n}): {silent:?}"
    );
}

/// A damaged last MANIFEST edit that had been relied on: a flush's edit (its
/// SST added, its WAL retired and deleted) while newer writes sit in the
/// next WAL. Dropped as a torn write, it would leave the WALs starting after
/// a sequence gap; the open fails naming the MANIFEST in every mode instead,
/// and nothing is deleted or moved.
#[test]
fn a_damaged_manifest_edit_that_was_relied_on_fails_the_open() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let db = Db::open(&dir, fixture_options(Compression::None)).expect("open");
    for i in 0..50 {
        db.put(key(i), value(i)).expect("put");
    }
    db.flush().expect("flush");
    for i in 50..60 {
        db.put(key(i), value(i)).expect("put");
    }
    db.close().expect("close");
    let manifest = manifest_files(&dir).pop().expect("a MANIFEST");
    let len = fs::metadata(&manifest).expect("stat").len() as usize;
    flip_byte(&manifest, len - 3, 0x08);
    let before = common::dir_state(&dir);
    for mode in [
        WalRecovery::TolerateCorruptedTail,
        WalRecovery::PointInTime,
        WalRecovery::AbsoluteConsistency,
    ] {
        let e = Db::open(&dir, Options::builder().wal_recovery(mode).build())
            .err()
            .unwrap_or_else(|| panic!("{mode:?}: opened without the flushed writes"));
        assert_corruption_naming(&e, &manifest, &format!("{mode:?}"));
        assert!(e.to_string().contains("relied on"), "{e}");
        assert_eq!(
            common::dir_state(&dir),
            before,
            "{mode:?}: the open changed files"
        );
    }
}

/// A CURRENT file that does not name a MANIFEST.
#[test]
fn garbage_current_is_corruption() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    make_sst_db(&dir, 10, Compression::None);
    let current = dir.join("CURRENT");
    fs::write(&current, b"garbage\n").expect("write CURRENT");
    let e = Db::open(&dir, Options::default())
        .err()
        .expect("open with garbage CURRENT must fail");
    assert!(e.is_corruption(), "expected corruption, got {e:?}");
}

/// (e) Truncated and zero-length SSTs.
#[test]
fn truncated_and_empty_sst_are_corruption() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let n = 200;
    for (name, cut) in [("half", Some(2)), ("footer-cut", None), ("empty", Some(0))] {
        let dir = tmp.path().join(name);
        let sst = make_sst_db(&dir, n, Compression::None);
        let len = fs::metadata(&sst).expect("stat sst").len();
        let new_len = match cut {
            Some(0) => 0,
            Some(d) => len / d,
            None => len - 10,
        };
        truncate(&sst, new_len);
        let ctx = format!("SST truncated to {new_len} of {len} bytes");
        let out = read_everything(&dir, fixture_options(Compression::None), n, &sst, &ctx);
        assert!(
            out.corruptions > 0,
            "{ctx}: no read reported corruption: {out:?}"
        );
        assert_eq!(
            out.ok, 0,
            "{ctx}: some reads succeeded from a table without its footer: {out:?}"
        );
    }
}

/// (f) Flip a sample of the bytes of an SST, one at a time, reading it
/// through a memory map (the default) or with `pread`.
fn sweep_sst(compression: Compression, mmap: bool) {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("db");
    let n = 60;
    let mut opts = fixture_options(compression);
    opts.use_mmap_reads = mmap;
    let sst = make_sst_db(&dir, n, compression);
    let len = fs::metadata(&sst).expect("stat sst").len() as usize;
    let stride = env_usize("SIEVEDB_CORRUPTION_STRIDE", 5).max(1);
    let (mut detected, mut undetected) = (0usize, Vec::new());
    for pos in (0..len).step_by(stride) {
        let mask = 1u8 << (pos % 8);
        let old = flip_byte(&sst, pos, mask);
        let ctx = format!("{compression:?} SST of {len} bytes, byte {pos} ^ {mask:#04x}");
        let out = read_everything(&dir, opts.clone(), n, &sst, &ctx);
        if out.corruptions > 0 {
            detected += 1;
        } else {
            undetected.push(pos);
        }
        set_byte(&sst, pos, old);
        // Tables must not have been rewritten behind our back.
        assert_eq!(sst_files(&dir), vec![sst.clone()], "{ctx}: SST set changed");
    }
    eprintln!(
        "{compression:?} sweep: {detected} flips detected, {} undetected (data still correct) at {undetected:?}",
        undetected.len()
    );
    assert!(detected > 0, "no flipped byte was ever detected");
    let out = read_everything(&dir, opts, n, &sst, "restored");
    assert_eq!(out.corruptions, 0, "restored file still reports corruption");
}

#[test]
fn sst_byte_flip_sweep() {
    sweep_sst(Compression::None, true);
}

#[test]
fn sst_byte_flip_sweep_pread() {
    sweep_sst(Compression::None, false);
}

#[test]
fn sst_byte_flip_sweep_lz4() {
    sweep_sst(Compression::Lz4, true);
}
