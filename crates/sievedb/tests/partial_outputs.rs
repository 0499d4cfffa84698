//! A flush or compaction whose output write, sync or creation fails removes
//! the files it created and keeps its inputs (issue 10, item 6): no stray SST
//! is left behind, and every acknowledged write still reads, before and after
//! a reopen.

mod common;
mod support;

use std::sync::Arc;

use common::{assert_db_equals, sst_files, Model};
use sievedb::{Db, Options};
use support::faulty_fs::{Choice, Fault, FaultyFs, Op};

fn opts() -> Options {
    Options::builder()
        .write_buffer_size(64 << 10)
        .target_file_size(4 << 10)
        .block_size(512)
        .level0_compaction_trigger(8)
        .level0_slowdown_trigger(16)
        .level0_stop_trigger(20)
        .build()
}

fn fault(op: Op, nth: u64, tear: bool) -> Fault {
    Fault {
        op,
        nth,
        errno: libc::EIO,
        tear,
        sticky: false,
    }
}

/// Four overlapping L0 files (about 10 compaction outputs of 4 KiB).
fn fill(db: &Db, model: &mut Model) {
    for round in 0..4 {
        for i in (round..400).step_by(2) {
            let (k, v) = (
                format!("key{i:04}"),
                format!("value-{round}-{i}-{}", "x".repeat(60)),
            );
            db.put(&k, &v).unwrap();
            model.insert(k.into_bytes(), v.into_bytes());
        }
        db.flush().unwrap();
    }
}

#[test]
fn failed_compaction_removes_partial_outputs() {
    for f in [
        fault(Op::Write, 9, true),
        fault(Op::Sync, 2, false),
        fault(Op::Create, 3, false),
    ] {
        let ctx = format!("{f:?}");
        let dir = tempfile::tempdir().unwrap();
        let fs = FaultyFs::new();
        let db = Db::open_with_fs(dir.path(), opts(), Arc::new(fs.clone())).unwrap();
        let mut model = Model::new();
        fill(&db, &mut model);
        let before = sst_files(dir.path());
        assert_eq!(before.len(), 4, "{ctx}");
        fs.arm(f);
        let r = db.compact_range::<Vec<u8>, _>(..);
        fs.disarm();
        assert!(fs.injected() > 0, "{ctx}: the fault never fired");
        assert!(r.is_err(), "{ctx}: the compaction must fail");
        assert_eq!(
            sst_files(dir.path()),
            before,
            "{ctx}: partial outputs must be removed, inputs kept"
        );
        assert_db_equals(&db, &model, &format!("{ctx}: after the failure"));
        drop(db);
        let db = Db::open(dir.path(), opts()).unwrap();
        assert_db_equals(&db, &model, &format!("{ctx}: reopened"));
        db.compact_range::<Vec<u8>, _>(..).unwrap();
        assert_db_equals(&db, &model, &format!("{ctx}: compacted"));
    }
}

#[test]
fn failed_flush_removes_its_output() {
    for f in [fault(Op::Write, 3, true), fault(Op::Sync, 0, false)] {
        let ctx = format!("{f:?}");
        let dir = tempfile::tempdir().unwrap();
        let fs = FaultyFs::new();
        let db = Db::open_with_fs(dir.path(), opts(), Arc::new(fs.clone())).unwrap();
        let mut model = Model::new();
        fill(&db, &mut model);
        for i in 0..200 {
            let (k, v) = (format!("late{i:04}"), format!("v{i}"));
            db.put(&k, &v).unwrap();
            model.insert(k.into_bytes(), v.into_bytes());
        }
        let before = sst_files(dir.path());
        fs.arm(f);
        let r = db.flush();
        fs.disarm();
        assert!(fs.injected() > 0, "{ctx}: the fault never fired");
        assert!(r.is_err(), "{ctx}: the flush must fail");
        assert_eq!(sst_files(dir.path()), before, "{ctx}: no partial SST");
        drop(db);
        let db = Db::open(dir.path(), opts()).unwrap();
        assert_db_equals(&db, &model, &format!("{ctx}: reopened"));
    }
}

/// A compaction of more outputs than a merge syncs at once (it syncs its
/// finished outputs 16 at a time, after starting their writeback): a sync
/// failing in the second batch fails it cleanly, and a compaction that
/// succeeds leaves every output durable across a power loss.
#[test]
fn a_compaction_of_many_outputs_syncs_them_all() {
    // One L0 file per flush, and no compaction but the test's own.
    let many = || {
        Options::builder()
            .write_buffer_size(4 << 20)
            .target_file_size(4 << 10)
            .block_size(512)
            .level0_compaction_trigger(50)
            .level0_slowdown_trigger(60)
            .level0_stop_trigger(70)
            .build()
    };
    // Three L0 files over the same 2,400 keys (about 200 KB when merged).
    let start = |fs: &FaultyFs, dir: &std::path::Path| {
        let db = Db::open_with_fs(dir, many(), Arc::new(fs.clone())).unwrap();
        let mut model = Model::new();
        for round in 0..3 {
            for i in 0..2400 {
                let k = format!("key{i:05}");
                let v = format!("value-{round}-{i}-{}", "x".repeat(60));
                db.put(&k, &v).unwrap();
                model.insert(k.into_bytes(), v.into_bytes());
            }
            db.flush().unwrap();
        }
        assert_eq!(sst_files(dir).len(), 3);
        (db, model)
    };

    let dir = tempfile::tempdir().unwrap();
    let fs = FaultyFs::new();
    let (db, model) = start(&fs, dir.path());
    let before = sst_files(dir.path());
    fs.arm(fault(Op::Sync, 20, false));
    let r = db.compact_range::<Vec<u8>, _>(..);
    fs.disarm();
    assert_eq!(fs.injected(), 1, "the 21st sync never came");
    assert!(r.is_err(), "the compaction must fail");
    assert_eq!(
        sst_files(dir.path()),
        before,
        "outputs removed, inputs kept"
    );
    assert_db_equals(&db, &model, "after the failed sync");
    drop(db);

    let dir = tempfile::tempdir().unwrap();
    let fs = FaultyFs::new();
    let (db, model) = start(&fs, dir.path());
    db.compact_range::<Vec<u8>, _>(..).unwrap();
    let outputs = sst_files(dir.path()).len();
    assert!(outputs > 32, "{outputs} outputs: fewer than two batches");
    fs.crash();
    drop(db);
    fs.apply_power_loss(Choice::AllLost);
    let db = Db::open(dir.path(), many()).unwrap();
    assert_eq!(sst_files(dir.path()).len(), outputs);
    assert_db_equals(&db, &model, "after a power loss");
}
