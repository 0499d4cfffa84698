//! Crash-state enumeration (CrashMonkey's idea): a workload's file operations
//! are recorded by the test file system (`support/faulty_fs.rs`), and at its
//! sync points the power losses its durability model allows
//! (`support/durability.rs`: unsynced bytes and size changes lost, kept or
//! torn out of order, unsynced directory entries gone) are built as
//! directories, each opened under every WAL recovery mode and checked
//! against the writes: every acknowledged durable write is there, the
//! database holds the writes of a prefix of what was sent (the WAL is
//! sequential, a batch is atomic), and nothing but a torn tail was dropped.
//!
//! The workload writes sync and unsynced puts, deletes and cross-keyspace
//! batches into small memtables (a WAL switch every few dozen writes),
//! flushes, syncs the WAL (`sync_wal`), compacts and reopens (each reopen
//! rolls the MANIFEST), for both WAL kinds (preallocated and `write(2)`).
//! The crash points are every sync
//! point near a WAL switch, an SST or MANIFEST creation, a rename or a
//! removal, plus a sample of the rest.
//!
//! Scale: `SIEVEDB_POWER_SEEDS` workloads per WAL kind (default 2),
//! `SIEVEDB_POWER_TORN` torn states per crash point (default 2),
//! `SIEVEDB_POWER_ALL=1` crashes at every sync point instead of the
//! neighbourhoods. The long run is
//! `SIEVEDB_POWER_SEEDS=20 SIEVEDB_POWER_TORN=4 SIEVEDB_POWER_ALL=1 cargo test --release -p sievedb --test power_loss`.

mod common;
mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sievedb::{Db, Options, WalRecovery, WriteBatch, WriteOptions};
use support::durability::{Choice, Op as FsOp, Replay};
use support::faulty_fs::{FaultyFs, WalKind};

/// Keyspace name and key, to value.
type State = BTreeMap<(String, Vec<u8>), Vec<u8>>;

/// One write the workload sent: what it does, and where in the journal it
/// started and was acknowledged.
#[derive(Clone, Debug)]
struct Write {
    /// (keyspace, key, value or None for a delete)
    ops: Vec<(String, Vec<u8>, Option<Vec<u8>>)>,
    sync: bool,
    sent: usize,
    acked: usize,
}

impl Write {
    fn apply(&self, s: &mut State) {
        for (ks, k, v) in &self.ops {
            match v {
                Some(v) => {
                    s.insert((ks.clone(), k.clone()), v.clone());
                }
                None => {
                    s.remove(&(ks.clone(), k.clone()));
                }
            }
        }
    }
}

/// What a workload did: its writes, the journal points where everything
/// sent before was made durable by a flush or a close, and the journal.
struct Run {
    writes: Vec<Write>,
    /// (journal point at which a flush or close returned, writes sent before it)
    flushed: Vec<(usize, usize)>,
    journal: Vec<FsOp>,
    root: PathBuf,
}

const KEYSPACE: &str = "ks1";

/// Small memtables and files: WALs switch, memtables flush and files
/// compact every few dozen writes.
fn options(mode: WalRecovery) -> Options {
    Options::builder()
        .write_buffer_size(4 << 10)
        .target_file_size(4 << 10)
        .level1_size(16 << 10)
        .level0_compaction_trigger(2)
        .block_size(512)
        .background_threads(2)
        .wal_recovery(mode)
        .build()
}

/// Runs the workload of `seed` on a fresh directory through `fs`.
fn run(seed: u64, wal: WalKind, root: &Path) -> Run {
    // Syncs take as long as on a disk, so that writes reach a new WAL while
    // the old memtable's flush is being synced (the window of issue 50).
    let fs = FaultyFs::with_wal(wal).sync_latency(std::time::Duration::from_micros(300));
    let dir = root.join("db");
    let mut rng = SmallRng::seed_from_u64(seed);
    let open = || {
        Db::open_with_fs(
            &dir,
            options(WalRecovery::PointInTime),
            Arc::new(fs.clone()),
        )
        .expect("open")
    };
    let mut db = open();
    let mut ks = db.keyspace(KEYSPACE).expect("keyspace");
    let mut writes = Vec::new();
    let mut flushed = Vec::new();
    let ops = 300;
    for i in 0..ops {
        let r = rng.gen_range(0..200);
        if r < 3 {
            db.flush().expect("flush");
            flushed.push((fs.position(), writes.len()));
            continue;
        }
        if r < 5 {
            db.compact_range::<&[u8], _>(..).expect("compact");
            continue;
        }
        if r < 8 {
            drop(ks);
            if rng.gen_bool(0.5) {
                // A close syncs the WAL: everything sent before is durable.
                db.close().expect("close");
                flushed.push((fs.position(), writes.len()));
            } else {
                drop(db);
            }
            db = open();
            ks = db.keyspace(KEYSPACE).expect("keyspace");
            continue;
        }
        if r < 11 {
            // `sync_wal` makes every write sent before it durable.
            db.sync_wal().expect("sync_wal");
            flushed.push((fs.position(), writes.len()));
            continue;
        }
        let key = |rng: &mut SmallRng| format!("key{:03}", rng.gen_range(0..60)).into_bytes();
        let value = |rng: &mut SmallRng| {
            let mut v = format!("v{i}-").into_bytes();
            let len = rng.gen_range(v.len()..200);
            #[expect(
                clippy::cast_sign_loss,
                reason = "a remainder of a non-negative index is not negative"
            )]
            v.resize(len, b'a' + (i % 26) as u8);
            v
        };
        let sync = rng.gen_bool(0.5);
        let sent = fs.position();
        let w = if r < 140 {
            let (k, v) = (key(&mut rng), value(&mut rng));
            let in_ks = rng.gen_bool(0.3);
            let wo = WriteOptions { sync };
            if in_ks {
                ks.put_with(&k, &v, &wo).expect("put");
            } else {
                db.put_with(&k, &v, &wo).expect("put");
            }
            let name = if in_ks { KEYSPACE } else { "default" };
            vec![(name.to_string(), k, Some(v))]
        } else if r < 160 {
            let k = key(&mut rng);
            db.delete_with(&k, &WriteOptions { sync }).expect("delete");
            vec![("default".to_string(), k, None)]
        } else {
            let mut batch = WriteBatch::new();
            let mut ops = Vec::new();
            for _ in 0..rng.gen_range(2..6) {
                let (in_ks, del) = (rng.gen_bool(0.5), rng.gen_bool(0.2));
                let (k, v) = (key(&mut rng), value(&mut rng));
                match (in_ks, del) {
                    (true, false) => batch.put_cf(&ks, &k, &v),
                    (true, true) => batch.delete_cf(&ks, &k),
                    (false, false) => batch.put(&k, &v),
                    (false, true) => batch.delete(&k),
                }
                let name = if in_ks { KEYSPACE } else { "default" };
                ops.push((name.to_string(), k, (!del).then_some(v)));
            }
            db.write_with(batch, &WriteOptions { sync }).expect("batch");
            ops
        };
        writes.push(Write {
            ops: w,
            sync,
            sent,
            acked: fs.position(),
        });
    }
    drop(ks);
    drop(db);
    Run {
        writes,
        flushed,
        journal: fs.journal().ops,
        root: root.to_path_buf(),
    }
}

/// Journal points to crash at: just before each sync (the most a crash
/// there can leave unsynced), near every event of interest, or all of them.
fn crash_points(run: &Run, all: bool, rng: &mut SmallRng) -> Vec<usize> {
    let is_sync = |op: &FsOp| matches!(op, FsOp::Sync { .. } | FsOp::SyncDir { .. });
    let syncs: Vec<usize> = (0..run.journal.len())
        .filter(|&i| is_sync(&run.journal[i]))
        .collect();
    let mut points: std::collections::BTreeSet<usize> = std::collections::BTreeSet::new();
    points.insert(run.journal.len());
    if all {
        points.extend(syncs);
        return points.into_iter().collect();
    }
    let name = |p: &Path| p.file_name().map(|n| n.to_string_lossy().into_owned());
    for (i, op) in run.journal.iter().enumerate() {
        let event = match op {
            FsOp::Create { path, .. } => name(path).is_some_and(|n| {
                n.ends_with(".log") || n.ends_with(".sst") || n.starts_with("MANIFEST-")
            }),
            FsOp::Rename { .. } | FsOp::Remove { .. } | FsOp::Mkdir { .. } => true,
            FsOp::SetLen { .. } => true,
            _ => false,
        };
        if event {
            let after = syncs.partition_point(|&s| s < i);
            points.extend(syncs[after.saturating_sub(1)..].iter().take(8));
        }
    }
    points.extend(syncs.iter().filter(|_| rng.gen_bool(0.1)));
    points.into_iter().collect()
}

/// How many of the writes must and may be in a database recovered from a
/// crash at journal point `p`.
fn bounds(run: &Run, p: usize) -> (usize, usize) {
    let synced = run
        .writes
        .iter()
        .rposition(|w| w.sync && w.acked <= p)
        .map_or(0, |i| i + 1);
    let flushed = run
        .flushed
        .iter()
        .filter(|(at, _)| *at <= p)
        .map(|(_, n)| *n)
        .max()
        .unwrap_or(0);
    let sent = run.writes.partition_point(|w| w.sent < p);
    (synced.max(flushed), sent)
}

fn read_state(db: &Db) -> sievedb::Result<State> {
    let mut s = State::new();
    for r in db.iter()? {
        let (k, v) = r?;
        s.insert(("default".to_string(), k), v);
    }
    let ks = db.keyspace(KEYSPACE)?;
    for r in ks.iter()? {
        let (k, v) = r?;
        s.insert((KEYSPACE.to_string(), k), v);
    }
    Ok(s)
}

/// Checks a recovered state: it must be the result of the first `k` writes
/// for some `k` in `lo..=hi`. Returns the `k`, or what is wrong.
fn check(run: &Run, got: &State, lo: usize, hi: usize) -> Result<usize, String> {
    let mut s = State::new();
    for w in &run.writes[..lo] {
        w.apply(&mut s);
    }
    for k in lo..=hi {
        if &s == got {
            return Ok(k);
        }
        if k < hi {
            run.writes[k].apply(&mut s);
        }
    }
    // Which acknowledged writes are missing, for the message.
    let mut must = State::new();
    for w in &run.writes[..lo] {
        w.apply(&mut must);
    }
    let missing = must.iter().filter(|(k, v)| got.get(*k) != Some(*v)).count();
    Err(format!(
        "not the state of any prefix of {lo}..={hi} writes: {missing} keys of the {lo} durable \
         writes differ ({} keys recovered)",
        got.len()
    ))
}

const MODES: [WalRecovery; 3] = [
    WalRecovery::TolerateCorruptedTail,
    WalRecovery::PointInTime,
    WalRecovery::AbsoluteConsistency,
];

/// Counts of what the enumeration did.
#[derive(Default, Debug)]
struct Tally {
    points: usize,
    states: usize,
    opens: usize,
    refused: usize,
    /// (what kind of failure, the whole message)
    failures: Vec<(&'static str, String)>,
}

impl Tally {
    fn fail(&mut self, kind: &'static str, msg: String) {
        self.failures.push((kind, msg));
    }

    /// Failures by kind, for the summary line.
    fn kinds(&self) -> BTreeMap<&'static str, usize> {
        let mut m = BTreeMap::new();
        for (k, _) in &self.failures {
            *m.entry(*k).or_default() += 1;
        }
        m
    }
}

/// A directory for one crash state: in memory where `/dev/shm` is (the
/// opens fsync, and thousands of states would wait on the disk), else in
/// the temp directory.
fn scratch_dir() -> tempfile::TempDir {
    tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .unwrap()
}

/// Opens `state`'s database under `mode` and checks it; a failure is noted
/// in `tally`.
fn check_state(
    run: &Run,
    state: &support::durability::CrashState,
    p: usize,
    what: &str,
    mode: WalRecovery,
    tally: &mut Tally,
) {
    let copy = scratch_dir();
    state.materialize(&run.root, copy.path());
    let dir = copy.path().join("db");
    let (lo, hi) = bounds(run, p);
    let fail = |msg: String| format!("point {p} ({what}, {mode:?}): {msg}");
    if !dir.join("CURRENT").exists() {
        // Only before the database's creation was durable.
        if lo > 0 {
            tally.fail(
                "database gone",
                fail(format!("no CURRENT, but {lo} writes were durable")),
            );
        }
        return;
    }
    tally.opens += 1;
    let db = match Db::open(&dir, options(mode)) {
        Ok(db) => db,
        Err(e) if mode == WalRecovery::AbsoluteConsistency && e.is_corruption() => {
            tally.refused += 1;
            return;
        }
        Err(e) => {
            tally.fail("open refused", fail(format!("open failed: {e}")));
            return;
        }
    };
    if let Some(d) = db
        .recovery_report()
        .dropped
        .as_ref()
        .filter(|d| !d.torn_tail)
    {
        let kind = if d.skipped_wals.is_empty() {
            "more than a torn tail dropped"
        } else {
            "newer WALs skipped"
        };
        tally.fail(
            kind,
            fail(format!(
                "recovery dropped more than a torn tail: WAL {} at offset {}: {} (skipped WALs \
                 {:?})",
                d.wal_number, d.offset, d.detail, d.skipped_wals
            )),
        );
    }
    match read_state(&db)
        .map_err(|e| e.to_string())
        .and_then(|got| check(run, &got, lo, hi))
    {
        Ok(_) => {}
        Err(e) => tally.fail("acknowledged writes lost or a batch torn", fail(e)),
    }
}

/// Builds and checks the crash states of `seed`'s workload for `wal`.
fn enumerate(seed: u64, wal: WalKind, torn: usize, all: bool, tally: &mut Tally) {
    let root = tempfile::tempdir().unwrap();
    let run = run(seed, wal, root.path());
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x5eed);
    let points = crash_points(&run, all, &mut rng);
    let mut replay = Replay::default();
    for &p in &points {
        while replay.applied < p {
            replay.apply(&run.journal[replay.applied]);
        }
        tally.points += 1;
        let mut states = vec![("all lost".to_string(), replay.crash_state(Choice::AllLost))];
        if !replay.all_durable() {
            states.push(("all kept".into(), replay.crash_state(Choice::AllKept)));
            for t in 0..torn {
                states.push((
                    format!("torn {t}"),
                    replay.crash_state(Choice::Torn(&mut rng)),
                ));
            }
        }
        states.dedup_by(|a, b| a.1 == b.1);
        for (what, state) in &states {
            tally.states += 1;
            for mode in MODES {
                check_state(&run, state, p, what, mode, tally);
            }
        }
    }
    assert!(
        run.journal.iter().any(
            |op| matches!(op, FsOp::Remove { path } if path.extension().is_some_and(|e| e == "log"))
        ),
        "seed {seed}: the workload never retired a WAL"
    );
}

fn enumerate_kind(wal: WalKind) {
    let seeds = common::env_usize("SIEVEDB_POWER_SEEDS", 2) as u64;
    let torn = common::env_usize("SIEVEDB_POWER_TORN", 2);
    let all = common::env_usize("SIEVEDB_POWER_ALL", 0) != 0;
    let mut tally = Tally::default();
    for seed in 0..seeds {
        enumerate(seed, wal, torn, all, &mut tally);
    }
    eprintln!(
        "{wal:?} WAL: {seeds} workloads, {} crash points, {} crash states, {} opens, {} refused \
         (AbsoluteConsistency), {} failures {:?}",
        tally.points,
        tally.states,
        tally.opens,
        tally.refused,
        tally.failures.len(),
        tally.kinds()
    );
    let first: Vec<&str> = tally
        .failures
        .iter()
        .take(12)
        .map(|(_, m)| m.as_str())
        .collect();
    assert!(
        tally.failures.is_empty(),
        "{} failures in {} crash states ({:?}); the first ones:\n{}",
        tally.failures.len(),
        tally.states,
        tally.kinds(),
        first.join("\n")
    );
}

#[test]
fn every_crash_state_of_the_preallocated_wal_keeps_every_acknowledged_write() {
    enumerate_kind(WalKind::Mapped);
}

#[test]
fn every_crash_state_of_the_write_wal_keeps_every_acknowledged_write() {
    enumerate_kind(WalKind::Write);
}

// The durability model itself.

/// A path.
fn p(s: &str) -> PathBuf {
    PathBuf::from(s)
}

fn model_journal() -> Vec<FsOp> {
    vec![
        FsOp::AdoptDir { path: p("/r") },
        FsOp::Mkdir { path: p("/r/db") },
        FsOp::SyncDir { path: p("/r") },
        FsOp::Create {
            path: p("/r/db/a"),
            ino: 1,
        },
        FsOp::Write {
            ino: 1,
            offset: 0,
            data: b"hello".to_vec(),
        },
        FsOp::Sync { ino: 1 },
        FsOp::Write {
            ino: 1,
            offset: 5,
            data: b" world".to_vec(),
        },
    ]
}

#[test]
fn model_unsynced_entries_and_bytes_are_lost_and_kept() {
    let mut r = Replay::default();
    for op in model_journal() {
        r.apply(&op);
    }
    let lost = r.crash_state(Choice::AllLost);
    assert!(lost.dirs.contains(&p("/r/db")));
    assert!(lost.files.is_empty(), "the entry of a was never synced");
    let kept = r.crash_state(Choice::AllKept);
    assert_eq!(kept.files[&p("/r/db/a")], b"hello world");
    r.apply(&FsOp::SyncDir { path: p("/r/db") });
    assert_eq!(
        r.crash_state(Choice::AllLost).files[&p("/r/db/a")],
        b"hello"
    );
    let mut rng = SmallRng::seed_from_u64(1);
    for _ in 0..200 {
        let f = &r.crash_state(Choice::Torn(&mut rng)).files[&p("/r/db/a")];
        assert!(f.starts_with(b"hello"));
        assert!(f.len() <= 11);
    }
}

#[test]
fn model_an_unsynced_cut_may_be_lost() {
    let mut r = Replay::default();
    for op in model_journal() {
        r.apply(&op);
    }
    for op in [
        FsOp::SyncDir { path: p("/r/db") },
        FsOp::Reserve { ino: 1, len: 64 },
        FsOp::Sync { ino: 1 },
        FsOp::SetLen { ino: 1, len: 11 },
    ] {
        r.apply(&op);
    }
    let lost = &r.crash_state(Choice::AllLost).files[&p("/r/db/a")];
    assert_eq!(
        lost.len(),
        64,
        "the reservation was synced, the cut was not"
    );
    let kept = &r.crash_state(Choice::AllKept).files[&p("/r/db/a")];
    assert_eq!(kept.len(), 11);
}

#[test]
fn model_a_rename_is_atomic() {
    let mut r = Replay::default();
    for op in model_journal() {
        r.apply(&op);
    }
    for op in [
        FsOp::SyncDir { path: p("/r/db") },
        FsOp::Rename {
            from: p("/r/db"),
            to: p("/r/db2"),
        },
    ] {
        r.apply(&op);
    }
    assert!(r
        .crash_state(Choice::AllLost)
        .files
        .contains_key(&p("/r/db/a")));
    let kept = r.crash_state(Choice::AllKept);
    assert!(kept.files.contains_key(&p("/r/db2/a")));
    assert!(!kept.dirs.contains(&p("/r/db")));
}
