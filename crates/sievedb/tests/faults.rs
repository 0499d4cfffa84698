//! Fault injection: simulated power loss and failing writes, syncs, renames and
//! creates. After any fault the database either refuses further writes or
//! recovers to a state holding every write acknowledged as durable.

mod support;

use std::collections::BTreeMap;
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sievedb::{Db, Options, WriteBatch, WriteOptions};
use support::faulty_fs::{Choice, Fault, FaultyFs, Op};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// One acknowledged write: (key, Some(value) | None for delete) pairs.
type Write = Vec<(Vec<u8>, Option<Vec<u8>>)>;

fn small_options() -> Options {
    Options::builder()
        .write_buffer_size(8 << 10)
        .target_file_size(8 << 10)
        .level1_size(32 << 10)
        .block_size(512)
        .level0_compaction_trigger(2)
        .build()
}

fn random_write(rng: &mut SmallRng, tag: usize) -> Write {
    let n = if rng.gen_bool(0.2) {
        rng.gen_range(2..6)
    } else {
        1
    };
    (0..n)
        .map(|_| {
            let k = format!("key{:03}", rng.gen_range(0..150)).into_bytes();
            if rng.gen_bool(0.15) {
                (k, None)
            } else {
                (
                    k,
                    Some(format!("v{tag}-{}", "x".repeat(rng.gen_range(0..60))).into_bytes()),
                )
            }
        })
        .collect()
}

fn apply(w: &Write, db: &Db, sync: bool) -> sievedb::Result<()> {
    let mut b = WriteBatch::new();
    for (k, v) in w {
        match v {
            Some(v) => b.put(k, v),
            None => b.delete(k),
        }
    }
    db.write_with(b, &WriteOptions { sync })
}

fn apply_model(m: &mut Model, w: &Write) {
    for (k, v) in w {
        match v {
            Some(v) => {
                m.insert(k.clone(), v.clone());
            }
            None => {
                m.remove(k);
            }
        }
    }
}

fn contents(db: &Db) -> Model {
    db.iter()
        .unwrap()
        .map(|r| r.expect("iteration after recovery"))
        .collect()
}

#[test]
fn power_loss_keeps_every_synced_write_and_a_prefix_of_the_rest() {
    let cycles: u64 = std::env::var("SIEVEDB_POWER_CYCLES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(24);
    let (mut lost_some, mut flushed) = (0, 0);
    for seed in 0..cycles {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = SmallRng::seed_from_u64(seed);
        let fs = FaultyFs::new();
        let db = Db::open_with_fs(dir.path(), small_options(), Arc::new(fs.clone())).unwrap();
        let mut history: Vec<Write> = Vec::new();
        let mut last_synced = 0usize; // history[..last_synced] must survive
        let ops = rng.gen_range(50..600);
        for i in 0..ops {
            let w = random_write(&mut rng, i);
            let sync = rng.gen_bool(0.1);
            apply(&w, &db, sync).unwrap();
            history.push(w);
            if sync {
                last_synced = history.len();
            }
            if rng.gen_bool(0.01) {
                db.flush().unwrap();
            }
        }
        fs.crash();
        drop(db);
        let torn = seed % 2 == 1;
        fs.apply_power_loss(if torn {
            Choice::Torn(&mut rng)
        } else {
            Choice::AllLost
        });

        let db = Db::open(dir.path(), small_options())
            .unwrap_or_else(|e| panic!("seed {seed}: reopen after power loss failed: {e}"));
        let got = contents(&db);
        let mut model = Model::new();
        for w in &history[..last_synced] {
            apply_model(&mut model, w);
        }
        let mut matched = model == got;
        let mut p = last_synced;
        while !matched && p < history.len() {
            apply_model(&mut model, &history[p]);
            p += 1;
            matched = model == got;
        }
        lost_some += usize::from(p < history.len());
        flushed += usize::from(db.stats().levels.iter().any(|l| l.files > 0));
        assert!(
            matched,
            "seed {seed}: recovered state is not the result of any prefix of at least {last_synced} of {} acknowledged writes",
            history.len()
        );
        // The database accepts writes again after recovery.
        db.put(b"after", b"crash").unwrap();
    }
    // The test must exercise both lost unsynced writes and SST files.
    assert!(lost_some > 0, "no cycle lost an unsynced write");
    assert!(flushed > 0, "no cycle had SST files");
    eprintln!("{cycles} power-loss cycles: {lost_some} lost unsynced writes, {flushed} had SSTs");
}

#[test]
fn injected_io_errors_never_lose_acknowledged_writes() {
    let mut cases = Vec::new();
    for op in [Op::Write, Op::Sync, Op::Rename, Op::Create] {
        for errno in [libc::EIO, libc::ENOSPC] {
            for (nth, tear, sticky) in [(3, false, false), (40, true, false), (15, false, true)] {
                // Files are created a few times per flush: how many depends on
                // background timing, so a Create fault must come early to fire.
                let nth = if op == Op::Create { nth.min(6) } else { nth };
                cases.push(Fault {
                    op,
                    nth,
                    errno,
                    tear,
                    sticky,
                });
            }
        }
    }
    for (case, fault) in cases.into_iter().enumerate() {
        let dir = tempfile::tempdir().unwrap();
        let mut rng = SmallRng::seed_from_u64(case as u64);
        let fs = FaultyFs::new();
        if fault.op == Op::Rename {
            // The only rename is the CURRENT switch when a database opens.
            fs.arm(Fault { nth: 0, ..fault });
            let err = Db::open_with_fs(dir.path(), small_options(), Arc::new(fs.clone()));
            assert!(
                err.is_err(),
                "case {case}: open must report the failed rename"
            );
            fs.disarm();
            let db = Db::open(dir.path(), small_options()).unwrap();
            assert!(contents(&db).is_empty());
            continue;
        }
        let db = Db::open_with_fs(dir.path(), small_options(), Arc::new(fs.clone())).unwrap();
        fs.arm(fault);
        let mut acked = Model::new();
        // Keys whose last write failed: either value may be present.
        let mut uncertain: BTreeMap<Vec<u8>, Vec<Option<Vec<u8>>>> = BTreeMap::new();
        let mut failures = 0;
        for i in 0..800 {
            let w = random_write(&mut rng, i);
            match apply(&w, &db, rng.gen_bool(0.2)) {
                Ok(()) => {
                    for (k, v) in &w {
                        uncertain.remove(k);
                        match v {
                            Some(v) => acked.insert(k.clone(), v.clone()),
                            None => acked.remove(k),
                        };
                    }
                }
                Err(_) => {
                    failures += 1;
                    for (k, v) in &w {
                        uncertain.entry(k.clone()).or_default().push(v.clone());
                    }
                }
            }
            if i % 97 == 0 {
                let _ = db.flush();
            }
        }
        assert!(
            fs.injected() > 0,
            "case {case} {fault:?}: the fault never fired"
        );
        assert!(
            failures > 0 || fault.op != Op::Write,
            "case {case}: a failed WAL write must surface"
        );
        fs.disarm();
        drop(db);
        let db = Db::open(dir.path(), small_options())
            .unwrap_or_else(|e| panic!("case {case} {fault:?}: reopen failed: {e}"));
        let got = contents(&db);
        let keys: std::collections::BTreeSet<_> = got.keys().chain(acked.keys()).cloned().collect();
        for k in keys {
            let have = got.get(&k);
            let want = acked.get(&k);
            if have == want {
                continue;
            }
            let alternatives = uncertain.get(&k).cloned().unwrap_or_default();
            assert!(
                alternatives.iter().any(|a| a.as_ref() == have),
                "case {case} {fault:?} ({failures} failed writes): key {:?} is {:?}, acknowledged {:?}",
                String::from_utf8_lossy(&k),
                have.map(|v| String::from_utf8_lossy(v).into_owned()),
                want.map(|v| String::from_utf8_lossy(v).into_owned()),
            );
        }
    }
}

#[test]
fn direct_reads_work_or_fail_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let opts = Options::builder()
        .use_direct_reads(true)
        .write_buffer_size(16 << 10)
        .build();
    match Db::open(dir.path(), opts.clone()) {
        Ok(db) => {
            for i in 0..2000u32 {
                db.put(format!("k{i:05}"), format!("v{i}")).unwrap();
            }
            db.flush().unwrap();
            for i in (0..2000u32).step_by(37) {
                assert_eq!(
                    db.get(format!("k{i:05}")).unwrap(),
                    Some(format!("v{i}").into_bytes())
                );
            }
        }
        Err(sievedb::Error::Unsupported(m)) => assert!(m.contains("O_DIRECT"), "{m}"),
        Err(e) => panic!("unexpected error with O_DIRECT: {e}"),
    }
    // tmpfs refuses O_DIRECT: the error must come at open, and be Unsupported.
    if std::path::Path::new("/dev/shm").is_dir() {
        if let Ok(shm) = tempfile::tempdir_in("/dev/shm") {
            match Db::open(shm.path(), opts) {
                Ok(_) | Err(sievedb::Error::Unsupported(_)) => {}
                Err(e) => panic!("unexpected error with O_DIRECT on tmpfs: {e}"),
            }
        }
    }
}

#[test]
fn sst_from_a_newer_format_version_is_refused_clearly() {
    use sievedb::sst::{Footer, FOOTER_LEN};
    let dir = tempfile::tempdir().unwrap();
    {
        let db = Db::open(dir.path(), Options::default()).unwrap();
        db.put(b"k", b"v").unwrap();
        db.flush().unwrap();
    }
    let sst = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "sst"))
        .unwrap();
    let mut data = std::fs::read(&sst).unwrap();
    let at = data.len() - FOOTER_LEN;
    let footer = Footer::decode(&data[at..]).unwrap();
    let newer = Footer {
        format_version: sievedb::sst::FORMAT_VERSION_TWO_LEVEL + 1,
        ..footer
    };
    data[at..].copy_from_slice(&newer.encode());
    std::fs::write(&sst, data).unwrap();
    let db = Db::open(dir.path(), Options::default()).unwrap();
    let err = db.get(b"k").unwrap_err();
    assert!(err.is_corruption(), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains("format version 3") && msg.contains(".sst"),
        "{msg}"
    );
}
