//! `Db::repair`: rebuilding a lost or damaged MANIFEST from the SSTs and WALs.

mod common;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{assert_db_equals, copy_dir, file_name, flip_byte, manifest_files, sst_files, Model};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sievedb::cache::TableCache;
use sievedb::io::StdFs;
use sievedb::stats::Counters;
use sievedb::version::VersionSet;
use sievedb::{Db, Error, Options, RepairReport};
use support::faulty_fs::{Choice, Fault, FaultyFs, Op};

fn leveled_options() -> Options {
    Options::builder()
        .write_buffer_size(8 << 10)
        .target_file_size(4 << 10)
        .level1_size(16 << 10)
        .size_ratio(3)
        .block_size(512)
        .level0_compaction_trigger(2)
        .max_levels(5)
        .build()
}

/// The live files of the database in `dir` as (level, number, smallest user
/// key, largest user key), read from its MANIFEST.
fn live_files(dir: &Path, opts: &Options) -> Vec<(usize, u64, Vec<u8>, Vec<u8>)> {
    let fs = Arc::new(StdFs);
    let counters = Arc::new(Counters::new(opts.max_levels));
    let tables = Arc::new(TableCache::new(
        fs.clone(),
        dir.to_path_buf(),
        opts,
        None,
        counters,
    ));
    let mut vs = VersionSet::new(dir, fs, tables, opts.max_levels);
    vs.recover().expect("recover the MANIFEST");
    let v = vs.current();
    v.files()
        .map(|(l, f)| {
            (
                l,
                f.number,
                f.smallest_user().to_vec(),
                f.largest_user().to_vec(),
            )
        })
        .collect()
}

/// Builds a multi-level database with overwrites and deletes spread over the
/// levels, some of them left in the WAL; returns the model of its contents.
/// Asserts that file-number order is not data age: some file has a higher
/// number than a file with an overlapping key range in a shallower level.
fn build_multilevel(dir: &Path) -> Model {
    let opts = leveled_options();
    let mut model = Model::new();
    let mut rng = SmallRng::seed_from_u64(7);
    let db = Db::open(dir, opts.clone()).unwrap();
    // Rounds of random writes until the tree shows the inversion repair must
    // cope with (an L1->L2 compaction after the latest L0->L1 one).
    let mut inverted = false;
    for round in 0..80 {
        for _ in 0..150 {
            let k = format!("key{:04}", rng.gen_range(0..600)).into_bytes();
            if rng.gen_bool(0.12) {
                db.delete(&k).unwrap();
                model.remove(&k);
            } else {
                let v = format!("r{round}-{}", "v".repeat(rng.gen_range(0..40))).into_bytes();
                db.put(&k, &v).unwrap();
                model.insert(k, v);
            }
        }
        db.wait_for_compactions().unwrap();
        if round >= 5 && has_inversion(&live_files(dir, &opts)) {
            inverted = true;
            break;
        }
    }
    assert!(inverted, "no file-number inversion after 80 rounds");
    // Some writes only in the WAL (not flushed when the handle closes).
    for i in 0..40 {
        let k = format!("key{:04}", i * 13).into_bytes();
        if i % 4 == 0 {
            db.delete(&k).unwrap();
            model.remove(&k);
        } else {
            let v = format!("wal-{i}").into_bytes();
            db.put(&k, &v).unwrap();
            model.insert(k, v);
        }
    }
    db.close().unwrap();
    assert!(
        !common::wal_files(dir).is_empty()
            && std::fs::metadata(&common::wal_files(dir)[0]).unwrap().len() > 0,
        "some writes are only in the WAL"
    );

    let files = live_files(dir, &opts);
    let levels: std::collections::BTreeSet<usize> = files.iter().map(|f| f.0).collect();
    assert!(levels.len() >= 2, "several levels: {levels:?}");
    assert!(has_inversion(&files), "{files:?}");
    model
}

/// Whether a deeper file has a higher number than a shallower file whose key
/// range it overlaps (so file-number order is not data age).
fn has_inversion(files: &[(usize, u64, Vec<u8>, Vec<u8>)]) -> bool {
    files.iter().any(|a| {
        files
            .iter()
            .any(|b| b.0 > a.0 && b.1 > a.1 && b.2 <= a.3 && a.2 <= b.3)
    })
}

fn assert_report_sane(r: &RepairReport, ctx: &str) {
    assert_eq!(r.level, leveled_options().max_levels - 1, "{ctx}");
    assert!(r.tables_read > 0, "{ctx}: {r:?}");
    assert!(r.wal_entries > 0, "{ctx}: {r:?}");
    assert!(r.entries_kept <= r.entries_read, "{ctx}: {r:?}");
    assert!(!r.output_files.is_empty(), "{ctx}: {r:?}");
}

/// Reopens after repair and checks the contents, then that the database
/// takes writes and survives another reopen.
fn check_reopen(dir: &Path, model: &Model, ctx: &str) {
    let opts = leveled_options();
    let db = Db::open(dir, opts.clone()).unwrap_or_else(|e| panic!("{ctx}: open: {e}"));
    assert_db_equals(&db, model, ctx);
    for (k, v) in model.iter().take(50) {
        assert_eq!(db.get(k).unwrap().as_deref(), Some(v.as_slice()), "{ctx}");
    }
    db.put("zz-after-repair", "1").unwrap();
    db.delete(model.keys().next().unwrap()).unwrap();
    db.flush().unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    drop(db);
    let mut model = model.clone();
    let first = model.keys().next().unwrap().clone();
    model.remove(&first);
    model.insert(b"zz-after-repair".to_vec(), b"1".to_vec());
    let db = Db::open(dir, opts).unwrap();
    assert_db_equals(&db, &model, &format!("{ctx}, after more writes"));
}

/// A named way of damaging a database directory.
type Damage = (&'static str, fn(&Path));

#[test]
fn repair_rebuilds_a_multilevel_database_whatever_happened_to_the_manifest() {
    let base = tempfile::tempdir().unwrap();
    let model = build_multilevel(base.path());
    let cases: [Damage; 5] = [
        ("healthy", |_| {}),
        ("CURRENT missing", |d| {
            std::fs::remove_file(d.join("CURRENT")).unwrap();
        }),
        ("CURRENT garbage", |d| {
            std::fs::write(d.join("CURRENT"), b"\x00garbage").unwrap();
        }),
        ("MANIFEST missing", |d| {
            for m in manifest_files(d) {
                std::fs::remove_file(m).unwrap();
            }
        }),
        ("MANIFEST damaged", |d| {
            let m = &manifest_files(d)[0];
            let len = std::fs::metadata(m).unwrap().len() as usize;
            flip_byte(m, len / 2, 0x5a);
        }),
    ];
    for (ctx, damage) in cases {
        let dir = tempfile::tempdir().unwrap();
        copy_dir(base.path(), dir.path());
        damage(dir.path());
        if ctx != "healthy" {
            assert!(Db::open(dir.path(), leveled_options()).is_err(), "{ctx}");
        }
        let r = Db::repair(dir.path(), leveled_options())
            .unwrap_or_else(|e| panic!("{ctx}: repair: {e}"));
        assert_report_sane(&r, ctx);
        assert_eq!(r.tables_damaged, 0, "{ctx}");
        assert_eq!(r.wals_damaged, 0, "{ctx}");
        // Nothing was lost, and no table is called missing (a damaged
        // MANIFEST's older state lists tables compacted away since).
        assert_eq!(r.entries_lost, 0, "{ctx}: {r:?}");
        assert!(r.tables_missing.is_empty(), "{ctx}: {r:?}");
        // One entry per key: the live ones plus tombstones of deleted ones.
        assert!(r.entries_kept >= model.len() as u64, "{ctx}");
        assert!(r.entries_kept <= 600, "{ctx}: one entry per key");
        // Only the new files remain: one MANIFEST, the outputs, no WAL.
        let names: Vec<String> = sst_files(dir.path()).iter().map(|p| file_name(p)).collect();
        let want: Vec<String> = r
            .output_files
            .iter()
            .map(|n| format!("{n:06}.sst"))
            .collect();
        assert_eq!(names, want, "{ctx}");
        assert_eq!(
            manifest_files(dir.path()),
            vec![dir
                .path()
                .join(format!("MANIFEST-{:06}", r.manifest_number))],
            "{ctx}"
        );
        assert!(common::wal_files(dir.path()).is_empty(), "{ctx}");
        let files = live_files(dir.path(), &leveled_options());
        assert!(files.iter().all(|f| f.0 == r.level), "{ctx}: one level");
        check_reopen(dir.path(), &model, ctx);
    }
}

/// A WAL left behind by a flush that completed (a crash before its deletion)
/// holds values older than the tables: repair skips it when a MANIFEST
/// record shows it was flushed (replaying it on top would bring back "old").
#[test]
fn repair_does_not_let_a_leftover_wal_override_newer_tables() {
    let dir = tempfile::tempdir().unwrap();
    let opts = leveled_options();
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    db.put("k", "old").unwrap();
    db.put("gone", "old").unwrap();
    let stale: Vec<(PathBuf, Vec<u8>)> = common::wal_files(dir.path())
        .into_iter()
        .map(|p| {
            let d = std::fs::read(&p).unwrap();
            (p, d)
        })
        .collect();
    db.flush().unwrap();
    db.put("k", "new").unwrap();
    db.delete("gone").unwrap();
    db.flush().unwrap();
    db.compact_range::<&[u8], _>(..).unwrap();
    db.close().unwrap();
    for (p, d) in &stale {
        assert!(!p.exists(), "the flushed WAL was deleted");
        std::fs::write(p, d).unwrap();
    }
    std::fs::remove_file(dir.path().join("CURRENT")).unwrap();
    // Recognised by the log_number of the MANIFEST (CURRENT is gone).
    let r = Db::repair(dir.path(), opts.clone()).unwrap();
    assert_eq!((r.wals_stale, r.wal_entries), (1, 0), "{r:?}");
    let db = Db::open(dir.path(), opts).unwrap();
    assert_eq!(db.get("k").unwrap().as_deref(), Some(&b"new"[..]));
    assert_eq!(db.get("gone").unwrap(), None);
}

fn key(set: char, i: usize) -> Vec<u8> {
    format!("{set}{i:05}").into_bytes()
}

fn val(set: char, i: usize) -> Vec<u8> {
    format!("{set}-value-{i}-{}", "x".repeat(i % 50)).into_bytes()
}

#[test]
fn repair_moves_damaged_tables_to_lost_and_salvages_what_it_can() {
    let dir = tempfile::tempdir().unwrap();
    // One table per key set, no compaction.
    let opts = Options::builder()
        .write_buffer_size(1 << 20)
        .block_size(512)
        .level0_compaction_trigger(20)
        .level0_slowdown_trigger(20)
        .level0_stop_trigger(20)
        .build();
    let n = 400;
    let db = Db::open(dir.path(), opts.clone()).unwrap();
    for set in ['a', 'b', 'c'] {
        for i in 0..n {
            db.put(key(set, i), val(set, i)).unwrap();
        }
        db.flush().unwrap();
    }
    db.close().unwrap();
    let tables = sst_files(dir.path());
    assert_eq!(tables.len(), 3);
    // b: a data block in the middle fails its checksum; c: the footer is damaged.
    let b = &tables[1];
    let b_len = std::fs::metadata(b).unwrap().len() as usize;
    flip_byte(b, b_len / 3, 0x10);
    let c = &tables[2];
    let c_len = std::fs::metadata(c).unwrap().len() as usize;
    flip_byte(c, c_len - 20, 0x01);

    let r = Db::repair(dir.path(), opts.clone()).unwrap();
    assert_eq!(r.tables_read, 1, "{r:?}");
    assert_eq!(r.tables_damaged, 2, "{r:?}");
    // b loses one block; c (its data blocks intact) nothing.
    assert!(
        r.entries_salvaged > n as u64 && r.entries_salvaged < 2 * n as u64,
        "{r:?}"
    );
    assert_eq!(r.entries_salvaged + r.entries_lost, 2 * n as u64, "{r:?}");
    let lost = dir.path().join("lost");
    for t in [b, c] {
        assert!(lost.join(file_name(t)).exists(), "{} in lost/", t.display());
        assert!(!t.exists());
    }
    assert!(r.lost_files.contains(&lost.join(file_name(b))), "{r:?}");
    assert_eq!(r.manifests_replaced, 1);

    let db = Db::open(dir.path(), opts).unwrap();
    let got: BTreeMap<Vec<u8>, Vec<u8>> = db.iter().unwrap().map(|x| x.unwrap()).collect();
    for i in 0..n {
        assert_eq!(got.get(&key('a', i)), Some(&val('a', i)), "a{i}");
        // c's blocks are found by a scan of the file.
        assert_eq!(got.get(&key('c', i)), Some(&val('c', i)), "c{i}");
    }
    // The salvaged entries of b are all but one run of keys (the damaged
    // block): those after it come back too, with their values.
    let b_present: Vec<usize> = (0..n).filter(|&i| got.contains_key(&key('b', i))).collect();
    assert_eq!(b_present.len() as u64 + n as u64, r.entries_salvaged);
    let first_gone = (0..n).find(|&i| !got.contains_key(&key('b', i))).unwrap();
    let gone = n - b_present.len();
    assert!(gone > 0 && gone < n / 10, "{gone} of b lost");
    assert!(
        (first_gone..first_gone + gone).all(|i| !got.contains_key(&key('b', i))),
        "one run lost"
    );
    assert_eq!(b_present.last(), Some(&(n - 1)));
    for &i in &b_present {
        assert_eq!(got[&key('b', i)], val('b', i));
    }
    assert_eq!(got.len(), 2 * n + b_present.len());
}

#[test]
fn repair_refuses_an_open_database_and_a_missing_directory() {
    let dir = tempfile::tempdir().unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    db.put("a", "1").unwrap();
    let e = Db::repair(dir.path(), Options::default()).unwrap_err();
    assert!(matches!(e, Error::Locked(_)), "{e}");
    drop(db);
    let e = Db::repair(dir.path().join("nope"), Options::default()).unwrap_err();
    assert!(matches!(e, Error::InvalidArgument(_)), "{e}");
    // An empty database repairs to an empty database.
    let r = Db::repair(dir.path(), Options::default()).unwrap();
    assert_eq!(r.entries_kept, 1);
    let db = Db::open(dir.path(), Options::default()).unwrap();
    assert_eq!(db.get("a").unwrap().as_deref(), Some(&b"1"[..]));
}

/// A failure at any sync, rename or create of a repair leaves a directory
/// that a second repair (or an open, if CURRENT was switched) turns into the
/// full database; so does a power loss at that point.
#[test]
fn interrupted_repair_can_be_rerun() {
    let base = tempfile::tempdir().unwrap();
    let model = build_multilevel(base.path());
    std::fs::remove_file(base.path().join("CURRENT")).unwrap();
    for op in [Op::Sync, Op::Rename, Op::Create] {
        for nth in 0.. {
            for power_loss in [false, true] {
                let ctx = format!("{op:?} #{nth}, power loss {power_loss}");
                let dir = tempfile::tempdir().unwrap();
                copy_dir(base.path(), dir.path());
                let fs = FaultyFs::new();
                fs.arm(Fault {
                    op,
                    nth,
                    errno: libc::EIO,
                    tear: false,
                    sticky: power_loss,
                });
                let r = Db::repair_with_fs(dir.path(), leveled_options(), Arc::new(fs.clone()));
                if fs.injected() == 0 {
                    r.unwrap_or_else(|e| panic!("{ctx}: {e}"));
                    continue;
                }
                if power_loss {
                    fs.crash();
                    fs.apply_power_loss(Choice::AllLost);
                }
                // Either CURRENT was switched (open works) or repair again.
                if Db::open(dir.path(), leveled_options()).is_err() {
                    Db::repair(dir.path(), leveled_options())
                        .unwrap_or_else(|e| panic!("{ctx}: second repair: {e}"));
                }
                let db = Db::open(dir.path(), leveled_options())
                    .unwrap_or_else(|e| panic!("{ctx}: open: {e}"));
                assert_db_equals(&db, &model, &ctx);
            }
            let probe = FaultyFs::new();
            probe.arm(Fault {
                op,
                nth,
                errno: libc::EIO,
                tear: false,
                sticky: false,
            });
            let dir = tempfile::tempdir().unwrap();
            copy_dir(base.path(), dir.path());
            let _ = Db::repair_with_fs(dir.path(), leveled_options(), Arc::new(probe.clone()));
            if probe.injected() == 0 {
                break;
            }
        }
    }
}
