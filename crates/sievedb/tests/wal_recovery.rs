//! WAL recovery modes: damage in the first, middle and last of three WALs,
//! under `TolerateCorruptedTail`, `PointInTime` and `AbsoluteConsistency`,
//! through both `Db::open` and `Db::open_read_only`.
//!
//! The WALs are written directly with `LogWriter` (an open database flushes
//! its WALs at every open, so it never leaves three behind), as sync writes
//! (each record synced, a sync mark before the next): each record is a
//! batch `put(wWrR, value) + put(latest, wWrR)`, so `latest` names the last
//! record applied and the sequence numbers are checkable.
//!
//! Also: each flush removes the WALs it made obsolete.

mod common;
mod support;

use std::fs;
use std::path::Path;
use std::sync::Arc;

use common::{copy_dir, dir_state, file_name, flip_byte, truncate, wal_files};
use sievedb::io::{FileSystem, StdFs};
use sievedb::wal::{DamageKind, LogWriter};
use sievedb::{Db, Error, Options, WalRecovery};

const WALS: usize = 3;
/// Every recovery mode.
const MODES: [WalRecovery; 3] = [
    WalRecovery::TolerateCorruptedTail,
    WalRecovery::PointInTime,
    WalRecovery::AbsoluteConsistency,
];
const RECORDS: usize = 4;

fn name(w: usize, r: usize) -> Vec<u8> {
    format!("w{w}r{r}").into_bytes()
}

fn value(w: usize, r: usize) -> Vec<u8> {
    format!("value-of-w{w}r{r}-").repeat(3).into_bytes()
}

/// The encoded write batch (see docs/format.md) of record `r` of WAL `w`.
fn batch(seq: u64, w: usize, r: usize) -> Vec<u8> {
    let mut b = Vec::new();
    b.extend_from_slice(&seq.to_le_bytes());
    b.extend_from_slice(&2u32.to_le_bytes());
    for (k, v) in [(name(w, r), value(w, r)), (b"latest".to_vec(), name(w, r))] {
        b.push(1); // put
        b.push(k.len() as u8);
        b.extend_from_slice(&k);
        b.push(v.len() as u8);
        b.extend_from_slice(&v);
    }
    b
}

/// A database whose three WALs hold records 0..RECORDS each.
struct Fixture {
    /// The WAL paths, oldest first (file names relative to the db dir).
    wals: Vec<String>,
    /// Offsets of the records of each WAL.
    offsets: Vec<Vec<u64>>,
    /// Sizes of the WALs.
    sizes: Vec<u64>,
}

fn make_fixture(dir: &Path) -> Fixture {
    Db::open(dir, Options::default())
        .expect("create")
        .close()
        .expect("close");
    let first = wal_files(dir)
        .iter()
        .map(|p| {
            file_name(p)
                .trim_end_matches(".log")
                .parse::<u64>()
                .unwrap()
        })
        .max()
        .expect("a fresh database has a WAL")
        + 1;
    let mut fx = Fixture {
        wals: Vec::new(),
        offsets: Vec::new(),
        sizes: Vec::new(),
    };
    let mut seq = 1;
    for w in 0..WALS {
        let path = dir.join(format!("{:06}.log", first + w as u64));
        let mut log = LogWriter::new(StdFs.create(&path).unwrap(), path.clone());
        let mut offsets = Vec::new();
        // As sync writes: each record synced, a sync mark before the next.
        for r in 0..RECORDS {
            log.mark_sync().unwrap();
            offsets.push(log.size());
            log.add_record(&batch(seq, w, r)).unwrap();
            log.sync().unwrap();
            seq += 2;
        }
        fx.sizes.push(log.size());
        fx.offsets.push(offsets);
        fx.wals.push(file_name(&path));
    }
    fx
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Damage {
    /// A flipped payload byte in record 1 (not the last record).
    Flip,
    /// The WAL cut in the middle of its last record.
    Cut,
}

impl Damage {
    /// The record it damages.
    fn record(self) -> usize {
        match self {
            Damage::Flip => 1,
            Damage::Cut => RECORDS - 1,
        }
    }

    fn apply(self, dir: &Path, fx: &Fixture, w: usize) {
        let path = dir.join(&fx.wals[w]);
        let at = fx.offsets[w][self.record()];
        match self {
            Damage::Flip => {
                flip_byte(&path, at as usize + 12 + 3, 0x20);
            }
            Damage::Cut => truncate(&path, at + (fx.sizes[w] - at) / 2),
        }
    }
}

/// The records (w, r) the database shows, checking values and `latest`.
fn visible(db: &Db) -> Vec<(usize, usize)> {
    let mut got = Vec::new();
    for w in 0..WALS {
        for r in 0..RECORDS {
            if let Some(v) = db.get(name(w, r)).unwrap() {
                assert_eq!(v, value(w, r), "value of w{w}r{r}");
                got.push((w, r));
            }
        }
    }
    let latest = db.get(b"latest").unwrap();
    assert_eq!(
        latest,
        got.last().map(|&(w, r)| name(w, r)),
        "`latest` must name the last record applied"
    );
    got
}

/// The records before record `r` of WAL `w`.
fn before(w: usize, r: usize) -> Vec<(usize, usize)> {
    (0..WALS)
        .flat_map(|a| (0..RECORDS).map(move |b| (a, b)))
        .filter(|&(a, b)| (a, b) < (w, r))
        .collect()
}

fn with(mode: WalRecovery) -> Options {
    Options::builder().wal_recovery(mode).build()
}

fn assert_corruption(e: &Error, wal: &str, offset: u64, ctx: &str) {
    assert!(e.is_corruption(), "{ctx}: expected corruption, got {e:?}");
    let msg = e.to_string();
    assert!(msg.contains(wal), "{ctx}: {msg} does not name {wal}");
    assert!(
        msg.contains(&format!("offset {offset}")),
        "{ctx}: {msg} does not give offset {offset}"
    );
}

/// What opening a damaged database must give.
enum Expect {
    Corruption { wal: usize, offset: u64 },
    Opens { visible: Vec<(usize, usize)> },
}

/// Checks one mode on a copy of `pristine` damaged by `damage`: read-only
/// first (nothing may change on disk), then read-write, then a second
/// read-write open (nothing dropped may come back).
fn check(
    tmp: &Path,
    pristine: &Path,
    fx: &Fixture,
    damage: &dyn Fn(&Path),
    mode: WalRecovery,
    expect: &Expect,
    ctx: &str,
) -> Option<Db> {
    let dir = tmp.join(format!("case-{}", ctx.replace([' ', ':', ','], "_")));
    copy_dir(pristine, &dir);
    damage(&dir);
    let before_open = dir_state(&dir);
    match expect {
        Expect::Corruption { wal, offset } => {
            let e = Db::open_read_only(&dir, with(mode)).err().expect(ctx);
            assert_corruption(&e, &fx.wals[*wal], *offset, &format!("{ctx} (read-only)"));
            assert_eq!(
                dir_state(&dir),
                before_open,
                "{ctx}: read-only open changed files"
            );
            let e = Db::open(&dir, with(mode)).err().expect(ctx);
            assert_corruption(&e, &fx.wals[*wal], *offset, ctx);
            None
        }
        Expect::Opens { visible: want } => {
            let ro = Db::open_read_only(&dir, with(mode))
                .unwrap_or_else(|e| panic!("{ctx}: read-only open failed: {e}"));
            assert_eq!(&visible(&ro), want, "{ctx}: read-only");
            assert_eq!(ro.stats().last_sequence, 2 * want.len() as u64, "{ctx}");
            drop(ro);
            assert_eq!(
                dir_state(&dir),
                before_open,
                "{ctx}: read-only open changed files"
            );
            let db =
                Db::open(&dir, with(mode)).unwrap_or_else(|e| panic!("{ctx}: open failed: {e}"));
            assert_eq!(&visible(&db), want, "{ctx}");
            assert_eq!(db.stats().last_sequence, 2 * want.len() as u64, "{ctx}");
            assert_eq!(db.recovery_report().last_sequence, 2 * want.len() as u64);
            assert_eq!(db.recovery_report().records_applied, want.len() as u64);
            // New writes after recovery survive, and nothing dropped comes back.
            db.put(b"latest", b"after").unwrap();
            db.put(b"new", b"write").unwrap();
            drop(db);
            let db = Db::open(&dir, with(mode)).unwrap();
            assert_eq!(db.get(b"latest").unwrap().as_deref(), Some(&b"after"[..]));
            assert_eq!(db.get(b"new").unwrap().as_deref(), Some(&b"write"[..]));
            db.delete(b"latest").unwrap();
            let mut again: Vec<(usize, usize)> = Vec::new();
            for w in 0..WALS {
                for r in 0..RECORDS {
                    if db.get(name(w, r)).unwrap().is_some() {
                        again.push((w, r));
                    }
                }
            }
            assert_eq!(&again, want, "{ctx}: second open");
            assert!(db.recovery_report().dropped.is_none(), "{ctx}: second open");
            Some(db)
        }
    }
}

#[test]
fn every_mode_with_damage_in_the_first_middle_and_last_wal() {
    let tmp = tempfile::tempdir().unwrap();
    let pristine = tmp.path().join("pristine");
    let fx = make_fixture(&pristine);
    let all = before(WALS, 0);
    // Undamaged: every mode replays everything.
    for mode in MODES {
        let ctx = format!("{mode:?} undamaged");
        let expect = Expect::Opens {
            visible: all.clone(),
        };
        check(tmp.path(), &pristine, &fx, &|_| {}, mode, &expect, &ctx);
    }
    for w in 0..WALS {
        for damage in [Damage::Flip, Damage::Cut] {
            let r = damage.record();
            let offset = fx.offsets[w][r];
            let apply = |dir: &Path| damage.apply(dir, &fx, w);
            let newest_tail = w == WALS - 1 && damage == Damage::Cut;

            let ctx = format!("AbsoluteConsistency {damage:?} WAL {w}");
            let expect = Expect::Corruption { wal: w, offset };
            check(
                tmp.path(),
                &pristine,
                &fx,
                &apply,
                WalRecovery::AbsoluteConsistency,
                &expect,
                &ctx,
            );

            let ctx = format!("TolerateCorruptedTail {damage:?} WAL {w}");
            let expect = if newest_tail {
                Expect::Opens {
                    visible: before(w, r),
                }
            } else {
                Expect::Corruption { wal: w, offset }
            };
            let db = check(
                tmp.path(),
                &pristine,
                &fx,
                &apply,
                WalRecovery::TolerateCorruptedTail,
                &expect,
                &ctx,
            );
            assert!(db.is_some() == newest_tail, "{ctx}");

            let ctx = format!("PointInTime {damage:?} WAL {w}");
            let expect = Expect::Opens {
                visible: before(w, r),
            };
            let dir = tmp.path().join(format!("case-{}", ctx.replace(' ', "_")));
            check(
                tmp.path(),
                &pristine,
                &fx,
                &apply,
                WalRecovery::PointInTime,
                &expect,
                &ctx,
            )
            .expect("point in time opens");
            // The first open reported the drop and kept the evidence.
            let lost = dir.join("lost");
            if newest_tail {
                assert!(!lost.exists(), "{ctx}: a torn tail is not kept");
            } else {
                let mut kept: Vec<String> = fs::read_dir(&lost)
                    .unwrap_or_else(|e| panic!("{ctx}: no lost/ directory: {e}"))
                    .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                    .collect();
                kept.sort();
                assert_eq!(kept, fx.wals[w..].to_vec(), "{ctx}: lost/ holds");
                // The damaged WAL is kept as it was, the skipped ones byte for byte.
                let damaged = tmp.path().join(format!("damaged-{w}-{damage:?}"));
                copy_dir(&pristine, &damaged);
                apply(&damaged);
                for name in &kept {
                    assert_eq!(
                        fs::read(lost.join(name)).unwrap(),
                        fs::read(damaged.join(name)).unwrap(),
                        "{ctx}: lost/{name}"
                    );
                }
                for name in &fx.wals[w..] {
                    assert!(
                        !dir.join(name).exists(),
                        "{ctx}: {name} still in the db dir"
                    );
                }
            }
        }
    }
}

#[test]
fn point_in_time_report_names_what_was_dropped() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("db");
    let fx = make_fixture(&dir);
    Damage::Flip.apply(&dir, &fx, 0);
    let at = fx.offsets[0][1];
    let ro = Db::open_read_only(&dir, Options::default()).unwrap();
    let d = ro.recovery_report().dropped.clone().expect("reported");
    assert_eq!(ro.recovery_report().mode, WalRecovery::PointInTime);
    assert_eq!(ro.recovery_report().records_applied, 1);
    assert_eq!(file_name(&d.path), fx.wals[0]);
    assert_eq!((d.offset, d.bytes), (at, fx.sizes[0] - at));
    assert_eq!(d.kind, DamageKind::Corrupt);
    assert!(!d.torn_tail);
    let numbers: Vec<u64> = fx.wals[1..]
        .iter()
        .map(|n| n.trim_end_matches(".log").parse().unwrap())
        .collect();
    assert_eq!(d.skipped_wals, numbers);
    assert_eq!(d.skipped_bytes, fx.sizes[1] + fx.sizes[2]);
    assert_eq!(d.kept_in, None, "a read-only open keeps nothing");
    drop(ro);
    let db = Db::open(&dir, Options::default()).unwrap();
    let d = db.recovery_report().dropped.clone().expect("reported");
    assert_eq!(d.kept_in, Some(dir.join("lost")));
}

/// A crash between creating a new WAL and syncing the previous one leaves an
/// older WAL with a torn tail and empty newer WALs: that is still the tail of
/// the newest WAL that holds data, so it is tolerated.
#[test]
fn torn_tail_followed_only_by_empty_wals_is_a_tail() {
    let tmp = tempfile::tempdir().unwrap();
    let pristine = tmp.path().join("pristine");
    let fx = make_fixture(&pristine);
    let dir = tmp.path().join("db");
    copy_dir(&pristine, &dir);
    truncate(&dir.join(&fx.wals[2]), 0);
    Damage::Cut.apply(&dir, &fx, 1);
    let db = Db::open(&dir, with(WalRecovery::TolerateCorruptedTail)).expect("tolerated");
    assert_eq!(visible(&db), before(1, RECORDS - 1));
    let d = db.recovery_report().dropped.clone().unwrap();
    assert!(d.torn_tail && d.skipped_wals.is_empty());
    drop(db);
    // With data in the newest WAL, the same tail is corruption.
    let dir = tmp.path().join("db2");
    copy_dir(&pristine, &dir);
    Damage::Cut.apply(&dir, &fx, 1);
    let e = Db::open(&dir, with(WalRecovery::TolerateCorruptedTail))
        .err()
        .unwrap();
    assert_corruption(
        &e,
        &fx.wals[1],
        fx.offsets[1][RECORDS - 1],
        "older torn tail",
    );
}

/// A whole WAL missing from the middle is a hole in the sequence numbers.
#[test]
fn missing_middle_wal_is_a_hole() {
    let tmp = tempfile::tempdir().unwrap();
    let pristine = tmp.path().join("pristine");
    let fx = make_fixture(&pristine);
    for mode in [
        WalRecovery::TolerateCorruptedTail,
        WalRecovery::AbsoluteConsistency,
    ] {
        let dir = tmp.path().join(format!("{mode:?}"));
        copy_dir(&pristine, &dir);
        fs::remove_file(dir.join(&fx.wals[1])).unwrap();
        let e = Db::open(&dir, with(mode)).err().expect("a hole fails");
        assert_corruption(&e, &fx.wals[2], 0, &format!("{mode:?}"));
        assert!(e.to_string().contains("sequence gap"), "{e}");
    }
    let dir = tmp.path().join("pit");
    copy_dir(&pristine, &dir);
    fs::remove_file(dir.join(&fx.wals[1])).unwrap();
    let db = Db::open(&dir, Options::default()).unwrap();
    assert_eq!(visible(&db), before(1, 0));
    assert!(dir.join("lost").join(&fx.wals[2]).exists());
}

/// A zero-filled tail (a file extended before its data reached the disk) is
/// a torn tail: dropped except under `AbsoluteConsistency`.
#[test]
fn zero_filled_tail_of_the_newest_wal() {
    let tmp = tempfile::tempdir().unwrap();
    let pristine = tmp.path().join("pristine");
    let fx = make_fixture(&pristine);
    for mode in MODES {
        let dir = tmp.path().join(format!("{mode:?}"));
        copy_dir(&pristine, &dir);
        let path = dir.join(&fx.wals[2]);
        let mut data = fs::read(&path).unwrap();
        data.extend(std::iter::repeat_n(0u8, 4096));
        fs::write(&path, data).unwrap();
        match Db::open(&dir, with(mode)) {
            Ok(db) => {
                assert_ne!(mode, WalRecovery::AbsoluteConsistency);
                assert_eq!(visible(&db), before(WALS, 0));
                let d = db.recovery_report().dropped.clone().unwrap();
                assert_eq!(
                    (d.kind, d.bytes, d.torn_tail),
                    (DamageKind::Zeroed, 4096, true)
                );
            }
            Err(e) => {
                assert_eq!(mode, WalRecovery::AbsoluteConsistency, "{e}");
                assert_corruption(&e, &fx.wals[2], fx.sizes[2], "zero tail");
            }
        }
    }
}

/// Each flush removes the WALs it made obsolete, found in the list of WALs
/// the database started: no flush lists the directory, which holds every
/// SST of the tree.
#[test]
fn flushes_remove_obsolete_wals_without_listing_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let fs = support::faulty_fs::FaultyFs::new();
    let opts = Options::builder().write_buffer_size(4 << 10).build();
    let db = Db::open_with_fs(dir.path(), opts.clone(), Arc::new(fs.clone())).unwrap();
    let at_open = fs.listings();
    for i in 0..3_000u32 {
        db.put(format!("k{i:05}"), "v".repeat(40)).unwrap();
    }
    db.flush().unwrap();
    assert!(db.stats().flushes >= 20, "flushes: {}", db.stats().flushes);
    assert_eq!(fs.listings(), at_open, "a flush listed the directory");
    assert_eq!(wal_files(dir.path()).len(), 1);
    db.close().unwrap();
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.get("k02999").unwrap(), Some("v".repeat(40).into_bytes()));
    assert_eq!(wal_files(dir.path()).len(), 1);
}

/// Issue 50's data loss: a preallocated WAL is cut to its data when it is
/// closed, and that cut is never synced; a power loss may leave an older
/// WAL ending in its reserved zeros while the next WAL holds acknowledged
/// sync writes. The zeros are the older WAL's end, since the next WAL
/// continues its sequence numbers: every mode opens with every write and
/// drops nothing.
#[test]
fn an_older_wals_preallocated_zeros_are_its_end_when_the_next_continues() {
    let tmp = tempfile::tempdir().unwrap();
    let pristine = tmp.path().join("pristine");
    let fx = make_fixture(&pristine);
    // Every WAL but the newest back at its preallocated length, as the
    // reservations left it (64 KiB windows, doubling).
    let unshrunk = |dir: &Path| {
        for w in 0..WALS - 1 {
            let f = fs::OpenOptions::new()
                .write(true)
                .open(dir.join(&fx.wals[w]))
                .unwrap();
            f.set_len(sievedb::io::FIRST_WINDOW as u64).unwrap();
        }
    };
    for mode in MODES {
        let ctx = format!("{mode:?} unsynced shrink lost");
        let expect = Expect::Opens {
            visible: before(WALS, 0),
        };
        let db = check(tmp.path(), &pristine, &fx, &unshrunk, mode, &expect, &ctx).unwrap();
        drop(db);
        let dir = tmp.path().join(format!("case-{}", ctx.replace(' ', "_")));
        assert!(!dir.join("lost").exists(), "{ctx}: nothing was lost");
    }
}

/// The zeros of an older WAL hide writes when the next WAL does not
/// continue its sequence numbers: that is damage at the first zero, not its
/// end (acknowledged writes are missing), in every mode.
#[test]
fn an_older_wals_zeros_followed_by_a_gap_are_damage() {
    let tmp = tempfile::tempdir().unwrap();
    let pristine = tmp.path().join("pristine");
    let fx = make_fixture(&pristine);
    let last = fx.offsets[0][RECORDS - 1];
    // WAL 0's last record zeroed in place: the file keeps its length.
    let zeroed = |dir: &Path| {
        let path = dir.join(&fx.wals[0]);
        let mut data = fs::read(&path).unwrap();
        data[last as usize..].fill(0);
        data.resize(sievedb::io::FIRST_WINDOW, 0);
        fs::write(&path, data).unwrap();
    };
    for mode in [
        WalRecovery::TolerateCorruptedTail,
        WalRecovery::AbsoluteConsistency,
    ] {
        let ctx = format!("{mode:?} zeros then a gap");
        let expect = Expect::Corruption {
            wal: 0,
            offset: last,
        };
        check(tmp.path(), &pristine, &fx, &zeroed, mode, &expect, &ctx);
    }
    let ctx = "PointInTime zeros then a gap";
    let expect = Expect::Opens {
        visible: before(0, RECORDS - 1),
    };
    check(
        tmp.path(),
        &pristine,
        &fx,
        &zeroed,
        WalRecovery::PointInTime,
        &expect,
        ctx,
    )
    .unwrap();
    let dir = tmp.path().join("gap-report");
    copy_dir(&pristine, &dir);
    zeroed(&dir);
    let db = Db::open_read_only(&dir, Options::default()).unwrap();
    let r = db.recovery_report();
    let d = r.dropped.as_ref().unwrap();
    assert_eq!((file_name(&d.path), d.offset), (fx.wals[0].clone(), last));
    assert!(!d.torn_tail);
    assert_eq!(d.skipped_wals.len(), WALS - 1);
    assert_eq!(r.entries_dropped, 2 * (RECORDS * (WALS - 1)) as u64);
}

/// The newest WAL torn out of order by a power loss: zeros where a page
/// never reached the disk, then a fragment of later records that did. No
/// sync mark after the damage proves it synced, so it is a torn tail that
/// every mode but `AbsoluteConsistency` drops (reporting the intact records
/// it held); a mark after it claiming more makes it corruption.
#[test]
fn the_newest_wal_torn_out_of_order_is_a_tail_unless_a_mark_covers_it() {
    let tmp = tempfile::tempdir().unwrap();
    let pristine = tmp.path().join("pristine");
    let fx = make_fixture(&pristine);
    let w = WALS - 1;
    // A hole over record 1's header; without the marks before records 2
    // and 3 (which claim record 1 synced), nothing proves record 1 synced.
    let hole = |dir: &Path, keep_marks: bool| {
        let path = dir.join(&fx.wals[w]);
        let mut data = fs::read(&path).unwrap();
        let r1 = fx.offsets[w][1] as usize;
        data[r1..r1 + 20].fill(0);
        if !keep_marks {
            for r in [2, 3] {
                let at = fx.offsets[w][r] as usize;
                data[at - (12 + sievedb::wal::sync_mark::LEN)..at].fill(0);
            }
        }
        fs::write(&path, data).unwrap();
    };
    let r1 = fx.offsets[w][1];
    // The fragment (records 2 and 3) is dropped.
    for mode in [WalRecovery::TolerateCorruptedTail, WalRecovery::PointInTime] {
        let ctx = format!("{mode:?} hole then fragment");
        let expect = Expect::Opens {
            visible: before(w, 1),
        };
        let apply = |d: &Path| hole(d, false);
        check(tmp.path(), &pristine, &fx, &apply, mode, &expect, &ctx).unwrap();
        let dir = tmp.path().join(format!("hole-report-{mode:?}"));
        copy_dir(&pristine, &dir);
        apply(&dir);
        let db = Db::open(&dir, with(mode)).unwrap();
        let r = db.recovery_report();
        let d = r.dropped.as_ref().unwrap();
        assert!(d.torn_tail, "{ctx}: {d:?}");
        assert_eq!(d.offset, r1);
        assert_eq!(r.records_dropped, 2, "{ctx}: records 2 and 3 were intact");
        assert!(
            d.kept_in.is_some(),
            "{ctx}: intact records dropped are kept"
        );
        drop(db);
    }
    let apply = |d: &Path| hole(d, false);
    let expect = Expect::Corruption { wal: w, offset: r1 };
    let ctx = "AbsoluteConsistency hole then fragment";
    check(
        tmp.path(),
        &pristine,
        &fx,
        &apply,
        WalRecovery::AbsoluteConsistency,
        &expect,
        ctx,
    );
    // With the mark after it, the hole lies in synced bytes.
    let apply = |d: &Path| hole(d, true);
    let ctx = "TolerateCorruptedTail hole a mark covers";
    let mode = WalRecovery::TolerateCorruptedTail;
    check(tmp.path(), &pristine, &fx, &apply, mode, &expect, ctx);
}
