//! A process killed with SIGKILL in the middle of unsynced writes loses none
//! it had acknowledged: whether the WAL is written through a shared map
//! (the default) or with `write(2)` (`AbsoluteConsistency`), an acknowledged
//! write is in the page cache, which outlives the process (the reopen is
//! under the default `PointInTime`, which drops a torn tail). The test runs
//! its own binary as the writer (`child_writer`, which does nothing unless
//! `CHILD_DIR` is set), kills it after a number of acknowledged puts, reopens
//! the database and reads every acknowledged key back; six rounds on one
//! database, so each round also recovers from the previous crash. A small
//! write buffer makes the writer switch WALs and flush memtables while it is
//! killed. It complements the CLI's crash test (`sievedb-cli/tests/crash.rs`,
//! one write at a time through `sievedb shell`, checked against a model):
//! here the writer runs flat out, so the kill usually lands inside a put,
//! often while its record is being copied into the WAL. Each put travels in
//! a batch with a merge (+1) into one of a few counters: after every crash
//! the counters add up to exactly the puts recovered, through flushes,
//! compactions and WAL replay.
//!
//! Keyspaces (`child_keyspace_writer`): batches that put the same index
//! into three keyspaces (and merge a counter in one) are found in all three
//! or in none after each crash; and a keyspace dropped while writes go on,
//! the kill landing before, during or after the drop, is after the crash
//! either gone or there whole (every batch written to it before the drop
//! that the other keyspaces kept), the other keyspaces intact.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use sievedb::{merge::U64Add, Db, Keyspace, Options, WalRecovery, WriteBatch};

const CHILD_DIR: &str = "SIEVEDB_CRASH_CHILD_DIR";
const CHILD_START: &str = "SIEVEDB_CRASH_CHILD_START";
const CHILD_MODE: &str = "SIEVEDB_CRASH_CHILD_MODE";
const CHILD_FSIZE: &str = "SIEVEDB_CRASH_CHILD_FSIZE";
/// The keyspace writer's work: `batches`, or `drop:ROUND:AT` (drop keyspace
/// `victimROUND` after the batch numbered `start + AT`).
const CHILD_KS: &str = "SIEVEDB_CRASH_CHILD_KS";

/// Held by each test that spawns writers, so they run one at a time: the
/// directory lock is an `flock`, which a child forked by another test while
/// this one's database is open shares until it execs, so the next writer here
/// could find the directory locked.
static SPAWNING: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn spawning() -> std::sync::MutexGuard<'static, ()> {
    SPAWNING
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn key(i: u64) -> Vec<u8> {
    format!("key{:08}", i.wrapping_mul(0x9e37_79b9) % 100_000_000).into_bytes()
}

fn value(i: u64) -> Vec<u8> {
    format!("value-{i}-").repeat(8).into_bytes()
}

fn options(mode: WalRecovery) -> Options {
    Options::builder()
        .write_buffer_size(256 << 10)
        .wal_recovery(mode)
        .merge_operator(std::sync::Arc::new(U64Add))
        .build()
}

/// Counters merged into, one per residue of the write index.
const COUNTERS: u64 = 16;

fn counter(i: u64) -> Vec<u8> {
    format!("counter{:02}", i % COUNTERS).into_bytes()
}

fn mode_named(name: &str) -> WalRecovery {
    name.parse().expect("a recovery mode")
}

/// The writer: puts keys `start..` without sync, printing `ack I` once put
/// `I` returned, until killed.
#[test]
fn child_writer() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let start: u64 = std::env::var(CHILD_START).unwrap().parse().unwrap();
    let mode = mode_named(&std::env::var(CHILD_MODE).unwrap());
    let fsize: Option<u64> = std::env::var(CHILD_FSIZE).ok().map(|s| s.parse().unwrap());
    let mut opts = options(mode);
    if fsize.is_some() {
        opts.write_buffer_size = 64 << 20; // no flush: only the WAL grows
    }
    let db = Db::open(Path::new(&dir), opts).unwrap();
    if let Some(limit) = fsize {
        limit_file_size(limit);
    }
    let mut out = std::io::stdout().lock();
    for i in start.. {
        let mut b = WriteBatch::new();
        b.put(key(i), value(i));
        b.merge(counter(i), 1u64.to_le_bytes());
        if let Err(e) = db.write(b) {
            writeln!(out, "error {e}").unwrap();
            return;
        }
        writeln!(out, "ack {i}").unwrap();
        out.flush().unwrap();
    }
}

/// Files of this process may not grow past `bytes` (`RLIMIT_FSIZE`): growing
/// one fails with `EFBIG`, as a full disk fails with `ENOSPC`. The signal
/// that comes with it (`SIGXFSZ`) is ignored, so the call returns the error.
fn limit_file_size(bytes: u64) {
    let lim = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: plain system calls on this process, with a valid struct and a
    // valid signal number; no memory is shared with them beyond the call.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        assert_eq!(libc::setrlimit(libc::RLIMIT_FSIZE, &lim), 0);
    }
}

/// Runs the writer from `start` until it acknowledged `acks` puts, kills it,
/// and returns the last put it acknowledged.
fn write_and_kill(dir: &Path, mode: &str, start: u64, acks: u64) -> u64 {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["child_writer", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR, dir)
        .env(CHILD_START, start.to_string())
        .env(CHILD_MODE, mode)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut last = None;
    while last.is_none_or(|l| l + 1 - start < acks) {
        let line = lines
            .next()
            .expect("the writer stopped before it was killed")
            .unwrap();
        if let Some(i) = line.strip_prefix("ack ") {
            last = Some(i.parse().unwrap());
        }
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // What it printed before it died was acknowledged too.
    for line in lines {
        if let Some(i) = line.unwrap().strip_prefix("ack ") {
            last = Some(i.parse().unwrap());
        }
    }
    last.unwrap()
}

fn killed_writers_lose_no_acknowledged_write(mode: &str) {
    let _serial = spawning();
    let dir = tempfile::tempdir().unwrap();
    let mut next = 0;
    for (round, acks) in [7_000, 23_000, 12_000, 3_000, 17_000, 9_000]
        .into_iter()
        .enumerate()
    {
        let last = write_and_kill(dir.path(), mode, next, acks);
        // Reopened under the default mode whatever the writer's: a kill can
        // tear a write(2) of a record that straddles a page (the kernel checks
        // for a fatal signal between pages), a torn tail that
        // `AbsoluteConsistency` refuses by design (it is for synced writes).
        let db = Db::open(dir.path(), options(WalRecovery::PointInTime)).unwrap();
        if let Some(d) = &db.recovery_report().dropped {
            assert!(
                d.torn_tail,
                "round {round}: recovery dropped more than a torn tail: {d:?}"
            );
        }
        for i in 0..=last {
            assert_eq!(
                db.get(key(i)).unwrap(),
                Some(value(i)),
                "round {round}: acknowledged put {i} of 0..={last} is lost"
            );
        }
        // Writes recovered past the last acknowledged one (written, killed
        // before the acknowledgement was printed) are a prefix too.
        let mut recovered = last + 1;
        while db.get(key(recovered)).unwrap().is_some() {
            recovered += 1;
        }
        check_counters(&db, recovered, round);
        next = recovered;
    }
}

/// The counters add up to the `n` puts recovered, each exactly once.
fn check_counters(db: &Db, n: u64, round: usize) {
    for c in 0..COUNTERS {
        let want = n / COUNTERS + u64::from(c < n % COUNTERS);
        let got = db
            .get(counter(c))
            .unwrap()
            .map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
        assert_eq!(
            got, want,
            "round {round}: counter {c} after {n} recovered puts"
        );
    }
}

#[test]
fn killed_writers_lose_no_acknowledged_write_mapped_wal() {
    killed_writers_lose_no_acknowledged_write("point-in-time");
}

#[test]
fn killed_writers_lose_no_acknowledged_write_written_wal() {
    killed_writers_lose_no_acknowledged_write("absolute-consistency");
}

/// The WAL cannot grow (files limited to 1.5 MiB, as a full disk would stop
/// it): the put that needs a new window gets an I/O error naming the WAL, the
/// writer is not killed by a fault in the map (its windows are reserved
/// before they are mapped), and every put acknowledged before is there after
/// a reopen.
#[test]
fn a_wal_that_cannot_grow_fails_the_write_and_keeps_what_was_acknowledged() {
    let _serial = spawning();
    let dir = tempfile::tempdir().unwrap();
    let child = Command::new(std::env::current_exe().unwrap())
        .args(["child_writer", "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD_DIR, dir.path())
        .env(CHILD_START, "0")
        .env(CHILD_MODE, "point-in-time")
        .env(CHILD_FSIZE, (3 << 19).to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "the writer died: {:?}", out.status);
    let text = String::from_utf8(out.stdout).unwrap();
    let error = text
        .lines()
        .find_map(|l| l.strip_prefix("error "))
        .expect("a put failed once the WAL could not grow");
    assert!(error.contains(".log"), "{error}");
    let last: u64 = text
        .lines()
        .filter_map(|l| l.strip_prefix("ack "))
        .map(|i| i.parse().unwrap())
        .max()
        .expect("puts were acknowledged before");
    let db = Db::open(dir.path(), options(WalRecovery::PointInTime)).unwrap();
    for i in 0..=last {
        assert_eq!(
            db.get(key(i)).unwrap(),
            Some(value(i)),
            "acknowledged put {i} of 0..={last}"
        );
    }
}

/// The keyspaces every batch of the keyspace writer puts its index into.
const KEYSPACES: [&str; 3] = ["ks0", "ks1", "ks2"];

fn ks_options() -> Options {
    Options::builder()
        .write_buffer_size(128 << 10)
        .merge_operator(std::sync::Arc::new(U64Add))
        .build()
}

/// The keyspace writer: with `batches`, each batch puts index `I` into the
/// three keyspaces of [`KEYSPACES`] and merges +1 into a counter of `ks2`;
/// with `drop:R:AT`, each batch puts `I` into `ks0` and, until the drop,
/// into `victimR`, which it drops after batch `start + AT` (printing
/// `dropping` before and `dropped` after). Prints `ack I` after each batch.
#[test]
fn child_keyspace_writer() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let start: u64 = std::env::var(CHILD_START).unwrap().parse().unwrap();
    let work = std::env::var(CHILD_KS).unwrap();
    let db = Db::open(Path::new(&dir), ks_options()).unwrap();
    let mut out = std::io::stdout().lock();
    let ack = |out: &mut std::io::StdoutLock, line: String| {
        writeln!(out, "{line}").unwrap();
        out.flush().unwrap();
    };
    if work == "batches" {
        let ks: Vec<Keyspace> = KEYSPACES.iter().map(|n| db.keyspace(n).unwrap()).collect();
        for i in start.. {
            let mut b = WriteBatch::new();
            for k in &ks {
                b.put_cf(k, key(i), value(i));
            }
            b.merge_cf(&ks[2], counter(i), 1u64.to_le_bytes());
            db.write(b).unwrap();
            ack(&mut out, format!("ack {i}"));
        }
    }
    let mut parts = work.strip_prefix("drop:").unwrap().split(':');
    let round: u64 = parts.next().unwrap().parse().unwrap();
    let at: u64 = parts.next().unwrap().parse().unwrap();
    let keep = db.keyspace("ks0").unwrap();
    let mut victim = Some(db.keyspace(&format!("victim{round}")).unwrap());
    for i in start.. {
        let mut b = WriteBatch::new();
        b.put_cf(&keep, key(i), value(i));
        if let Some(v) = &victim {
            b.put_cf(v, key(i), value(i));
        }
        db.write(b).unwrap();
        ack(&mut out, format!("ack {i}"));
        if i == start + at {
            ack(&mut out, "dropping".into());
            victim = None;
            db.drop_keyspace(&format!("victim{round}")).unwrap();
            ack(&mut out, "dropped".into());
        }
    }
}

/// What the parent saw of a killed keyspace writer.
#[derive(Default)]
struct Seen {
    last_ack: Option<u64>,
    dropping: bool,
    dropped: bool,
}

/// Runs the keyspace writer on `work` from `start` until `stop` says so
/// (it is asked after each line), kills it, and returns what it printed.
fn run_keyspace_writer(dir: &Path, work: &str, start: u64, stop: impl Fn(&Seen) -> bool) -> Seen {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_keyspace_writer",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir)
        .env(CHILD_START, start.to_string())
        .env(CHILD_KS, work)
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut seen = Seen::default();
    let note = |seen: &mut Seen, line: &str| match line {
        "dropping" => seen.dropping = true,
        "dropped" => seen.dropped = true,
        l => {
            if let Some(i) = l.strip_prefix("ack ") {
                seen.last_ack = Some(i.parse().unwrap());
            }
        }
    };
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while !stop(&seen) {
        let line = lines
            .next()
            .expect("the writer stopped before it was killed")
            .unwrap();
        note(&mut seen, &line);
    }
    child.kill().unwrap();
    child.wait().unwrap();
    for line in lines {
        note(&mut seen, &line.unwrap());
    }
    seen
}

/// The indexes `ks` holds, which must be `from..to` for some `to` (a
/// prefix of the writes, each whole): returns `to`.
fn prefix_of(ks: &Keyspace, from: u64, what: &str) -> u64 {
    let mut to = from;
    while ks.get(key(to)).unwrap().is_some() {
        assert_eq!(
            ks.get(key(to)).unwrap(),
            Some(value(to)),
            "{what}: put {to}"
        );
        to += 1;
    }
    to
}

/// Checks that `ks` holds `n` puts (after [`prefix_of`] found the ones it
/// must hold: nothing else).
fn holds_exactly(ks: &Keyspace, n: u64, what: &str) {
    let count = ks
        .iter()
        .unwrap()
        .filter(|kv| kv.as_ref().unwrap().0.starts_with(b"key"))
        .count() as u64;
    assert_eq!(count, n, "{what}: puts held");
}

/// After each kill, every keyspace holds the same batches: every
/// acknowledged one, and the same prefix of the ones in flight.
#[test]
fn killed_writers_of_cross_keyspace_batches_leave_every_keyspace_agreeing() {
    let _serial = spawning();
    let dir = tempfile::tempdir().unwrap();
    let mut next = 0;
    for (round, acks) in [5_000u64, 14_000, 2_000, 9_000].into_iter().enumerate() {
        let seen = run_keyspace_writer(dir.path(), "batches", next, |s| {
            s.last_ack.is_some_and(|l| l + 1 - next >= acks)
        });
        let last = seen.last_ack.unwrap();
        let db = Db::open(dir.path(), ks_options()).unwrap();
        assert_eq!(db.list_keyspaces(), ["default", "ks0", "ks1", "ks2"]);
        let ks: Vec<Keyspace> = KEYSPACES.iter().map(|n| db.keyspace(n).unwrap()).collect();
        let what = |k: usize| format!("round {round} keyspace {}", KEYSPACES[k]);
        let recovered = prefix_of(&ks[0], 0, &what(0));
        assert!(
            recovered > last,
            "round {round}: acknowledged batch {} of 0..={last} is lost",
            recovered
        );
        for (k, h) in ks.iter().enumerate() {
            assert_eq!(prefix_of(h, 0, &what(k)), recovered, "{}", what(k));
            holds_exactly(h, recovered, &what(k));
        }
        for c in 0..COUNTERS {
            let want = recovered / COUNTERS + u64::from(c < recovered % COUNTERS);
            let got = ks[2]
                .get(counter(c))
                .unwrap()
                .map_or(0, |v| u64::from_le_bytes(v.try_into().unwrap()));
            assert_eq!(
                got, want,
                "round {round}: counter {c} after {recovered} batches"
            );
        }
        next = recovered;
    }
}

/// A keyspace dropped while batches go on, the kill landing before the
/// drop, while it runs, or after it returned.
#[test]
fn a_keyspace_dropped_by_a_killed_writer_is_gone_or_whole() {
    let _serial = spawning();
    let dir = tempfile::tempdir().unwrap();
    let mut next = 0;
    // (batches before the drop, when to kill): before the drop, as the
    // drop starts, after it.
    enum Kill {
        Before,
        AtDrop,
        After(u64),
    }
    let rounds = [
        (3_000u64, Kill::AtDrop),
        (4_000, Kill::After(2_000)),
        (6_000, Kill::Before),
        (2_500, Kill::AtDrop),
        (1_000, Kill::After(0)),
        (5_000, Kill::AtDrop),
    ];
    for (round, (at, kill)) in rounds.into_iter().enumerate() {
        let start = next;
        let work = format!("drop:{round}:{at}");
        let seen = run_keyspace_writer(dir.path(), &work, start, |s| match kill {
            Kill::Before => s.last_ack.is_some_and(|l| l >= start + at / 2),
            Kill::AtDrop => s.dropping,
            Kill::After(n) => s.dropped && s.last_ack.is_some_and(|l| l >= start + at + n),
        });
        let last = seen.last_ack.unwrap();
        let name = format!("victim{round}");
        let db = Db::open(dir.path(), ks_options()).unwrap();
        let keep = db.keyspace("ks0").unwrap();
        let what = format!("round {round} ({work})");
        let recovered = prefix_of(&keep, start, &format!("{what} ks0"));
        assert!(
            recovered > last,
            "{what}: acknowledged batch {recovered} of ..={last} is lost"
        );
        holds_exactly(&keep, recovered, &format!("{what} ks0"));
        let listed = db.list_keyspaces().contains(&name);
        eprintln!(
            "{what}: acknowledged up to {last}, recovered to {recovered}, drop {}, {name} {}",
            match (seen.dropping, seen.dropped) {
                (false, _) => "not started",
                (true, false) => "started",
                (true, true) => "acknowledged",
            },
            if listed { "whole" } else { "gone" }
        );
        if seen.dropped {
            assert!(!listed, "{what}: the acknowledged drop of {name} was lost");
        }
        if !seen.dropping {
            assert!(listed, "{what}: {name} was dropped before the drop started");
        }
        if listed {
            // Whole: every batch before the drop that ks0 kept.
            let v = db.keyspace(&name).unwrap();
            let want = recovered.min(start + at + 1);
            assert_eq!(
                prefix_of(&v, start, &format!("{what} {name}")),
                want,
                "{what} {name}"
            );
            holds_exactly(&v, want - start, &format!("{what} {name}"));
            drop(v);
            db.drop_keyspace(&name).unwrap();
        } else {
            // Created again, it is a new, empty keyspace.
            let v = db.keyspace(&name).unwrap();
            assert_eq!(v.iter().unwrap().count(), 0, "{what}: {name} created again");
            drop(v);
            db.drop_keyspace(&name).unwrap();
        }
        next = recovered;
    }
}
