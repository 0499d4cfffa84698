//! Randomized concurrent histories of list-append transactions, checked for
//! isolation anomalies by `adya` (Jepsen Elle's approach: from what clients
//! saw alone, infer the write-write, write-read and read-write dependencies
//! between transactions and look for the cycles each isolation level
//! forbids). Four threads run transactions of one to four micro-operations
//! over six keys: reads of a key's list and appends of a unique element (a
//! read and a write of the list inside the transaction), each commit synced.
//! Halfway through, the file system loses power while the threads run (the
//! transactions caught in it end indeterminate), the database is reopened
//! from what was durable, and the threads go on. Each mode and isolation
//! level has its history: snapshot isolation must show no G0, G1 or
//! G-single, serializable no G2 either.

mod support;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use serde_json::{json, Value};
use sievedb::{Db, Isolation, Options, TransactionOptions, WriteOptions};
use support::durability::Choice;
use support::faulty_fs::FaultyFs;

const KEYS: u64 = 6;
const THREADS: u64 = 4;
/// Transactions per thread before and after the power loss.
const TXNS: u64 = 120;

/// One micro-operation: a read of a key (its list, once known) or an append.
#[derive(Clone)]
enum Mop {
    Read(u64, Option<Vec<u64>>),
    Append(u64, u64),
}

fn mops_json(mops: &[Mop]) -> Value {
    Value::Array(
        mops.iter()
            .map(|m| match m {
                Mop::Read(k, None) => json!(["r", k, null]),
                Mop::Read(k, Some(l)) => json!(["r", k, l]),
                Mop::Append(k, v) => json!(["append", k, v]),
            })
            .collect(),
    )
}

fn list(v: Option<Vec<u8>>) -> Vec<u64> {
    match v {
        None => Vec::new(),
        Some(b) => b
            .chunks(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect(),
    }
}

/// The shared history, in real-time order.
struct History {
    lines: Mutex<Vec<String>>,
    next_element: AtomicU64,
}

impl History {
    fn push(&self, kind: &str, process: u64, mops: &[Mop]) {
        let line = json!({"type": kind, "process": process, "value": mops_json(mops)});
        self.lines.lock().push(line.to_string());
    }
}

/// Thread `p`'s transactions (`n` of them, or until `stop`).
fn client(db: &Db, opts: &TransactionOptions, h: &History, p: u64, n: u64, stop: &AtomicBool) {
    let mut rng = SmallRng::seed_from_u64(p * 7919 + n);
    for _ in 0..n {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        let mut mops: Vec<Mop> = (0..rng.gen_range(1..=4))
            .map(|_| {
                let k = rng.gen_range(0..KEYS);
                if rng.gen_bool(0.5) {
                    Mop::Read(k, None)
                } else {
                    Mop::Append(k, h.next_element.fetch_add(1, Ordering::Relaxed))
                }
            })
            .collect();
        h.push("invoke", p, &mops);
        let mut tx = db.transaction_opt(opts);
        let run = (|| -> sievedb::Result<()> {
            for m in mops.iter_mut() {
                match m {
                    Mop::Read(k, got) => *got = Some(list(tx.get(k.to_be_bytes())?)),
                    Mop::Append(k, v) => {
                        let mut l = list(tx.get(k.to_be_bytes())?);
                        l.push(*v);
                        let bytes: Vec<u8> = l.iter().flat_map(|x| x.to_le_bytes()).collect();
                        tx.put(k.to_be_bytes(), bytes)?;
                    }
                }
            }
            tx.commit_opt(&WriteOptions { sync: true })
        })();
        match run {
            Ok(()) => h.push("ok", p, &mops),
            // Nothing of a conflicting transaction is written.
            Err(e) if e.is_conflict() => h.push("fail", p, &mops),
            // An I/O error (the power loss): it may or may not have happened,
            // and the process ends (Jepsen's rule: a process whose operation
            // is indeterminate invokes nothing more).
            Err(_) => {
                // What it read is not an observation of a transaction known
                // to have happened: the invocation's value, as Jepsen records.
                for m in mops.iter_mut() {
                    if let Mop::Read(_, got) = m {
                        *got = None;
                    }
                }
                h.push("info", p, &mops);
                return;
            }
        }
    }
}

/// Runs the workload in one mode and isolation and checks its history
/// against `model` (adya's name of a consistency model).
fn run(pessimistic: bool, isolation: Isolation, model: &str) -> adya::Report {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let opts = TransactionOptions::default()
        .pessimistic(pessimistic)
        .isolation(isolation)
        .lock_timeout(Duration::from_secs(5));
    let h = Arc::new(History {
        lines: Mutex::new(Vec::new()),
        next_element: AtomicU64::new(1),
    });
    let fs = FaultyFs::new();
    let db = Arc::new(Db::open_with_fs(&path, Options::default(), Arc::new(fs.clone())).unwrap());
    let stop = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..THREADS)
        .map(|p| {
            let (db, opts, h, stop) = (db.clone(), opts.clone(), h.clone(), stop.clone());
            std::thread::spawn(move || client(&db, &opts, &h, p, TXNS, &stop))
        })
        .collect();
    // The power goes while they run.
    while h.lines.lock().len() < (THREADS * TXNS) as usize {
        std::thread::sleep(Duration::from_millis(1));
    }
    fs.crash();
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().unwrap();
    }
    drop(db);
    let mut rng = SmallRng::seed_from_u64(u64::from(pessimistic) * 2 + isolation as u64);
    fs.apply_power_loss(Choice::Torn(&mut rng));
    // The threads go on as new processes (Jepsen's convention after a
    // crash): `p + THREADS`.
    let db = Arc::new(Db::open(&path, Options::default()).unwrap());
    assert_durable(&h.lines.lock(), &db);
    let never = Arc::new(AtomicBool::new(false));
    let threads: Vec<_> = (0..THREADS)
        .map(|p| {
            let (db, opts, h, never) = (db.clone(), opts.clone(), h.clone(), never.clone());
            std::thread::spawn(move || client(&db, &opts, &h, p + THREADS, TXNS, &never))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    let lines = h.lines.lock().join("\n");
    let history = adya::History::from_json(&lines).unwrap();
    let report = adya::check(
        &history,
        adya::Workload::ListAppend,
        &adya::Opts {
            models: vec![model.into()],
            ..adya::Opts::default()
        },
    );
    let oks = lines.matches("\"ok\"").count();
    let fails = lines.matches("\"fail\"").count();
    eprintln!(
        "pessimistic {pessimistic}, {isolation:?}: {oks} committed, {fails} conflicts, {} \
         indeterminate: {:?} {:?}",
        lines.matches("\"info\"").count(),
        report.valid,
        report.anomaly_types
    );
    assert!(
        oks > 100 && fails > 0,
        "the history must hold commits and conflicts"
    );
    report
}

fn check(pessimistic: bool, isolation: Isolation) {
    let model = match isolation {
        Isolation::Snapshot => "snapshot-isolation",
        Isolation::Serializable => "serializable",
    };
    let r = run(pessimistic, isolation, model);
    assert_eq!(
        r.valid,
        adya::Valid::True,
        "pessimistic {pessimistic}, {isolation:?}: anomalies {:?} (not {:?})",
        r.anomaly_types,
        r.not
    );
}

#[test]
fn optimistic_snapshot_histories_show_no_anomaly_snapshot_isolation_forbids() {
    check(false, Isolation::Snapshot);
}

#[test]
fn optimistic_serializable_histories_are_serializable() {
    check(false, Isolation::Serializable);
}

#[test]
fn pessimistic_snapshot_histories_show_no_anomaly_snapshot_isolation_forbids() {
    check(true, Isolation::Snapshot);
}

#[test]
fn pessimistic_serializable_histories_are_serializable() {
    check(true, Isolation::Serializable);
}

/// The checker has teeth on these histories: snapshot isolation lets write
/// skew through, and checked as serializable its histories fail.
#[test]
fn snapshot_histories_are_not_all_serializable() {
    let r = run(false, Isolation::Snapshot, "serializable");
    assert_eq!(r.valid, adya::Valid::False);
    assert!(
        r.anomaly_types.iter().any(|a| a.starts_with("G2")),
        "{:?}",
        r.anomaly_types
    );
}

/// The checker finds what it should: a history with a lost update is not
/// snapshot isolation (so the tests above could fail).
#[test]
fn the_checker_catches_a_lost_update() {
    let h = adya::History::from_json(
        r#"{"type":"invoke","process":0,"value":[["r",1,null],["append",1,1]]}
{"type":"invoke","process":1,"value":[["r",1,null],["append",1,2]]}
{"type":"ok","process":0,"value":[["r",1,[]],["append",1,1]]}
{"type":"ok","process":1,"value":[["r",1,[]],["append",1,2]]}
{"type":"invoke","process":2,"value":[["r",1,null]]}
{"type":"ok","process":2,"value":[["r",1,[1,2]]]}"#,
    )
    .unwrap();
    let r = adya::check(
        &h,
        adya::Workload::ListAppend,
        &adya::Opts {
            models: vec!["snapshot-isolation".into()],
            ..adya::Opts::default()
        },
    );
    assert_eq!(r.valid, adya::Valid::False, "{:?}", r.anomaly_types);
}

/// After the power loss: every append of a committed transaction is in its
/// key's list, and every list a committed transaction read is a prefix of
/// what the key holds now.
fn assert_durable(lines: &[String], db: &Db) {
    let mut appends: Vec<(u64, u64)> = Vec::new();
    let mut reads: Vec<(u64, Vec<u64>)> = Vec::new();
    for l in lines {
        let v: Value = serde_json::from_str(l).unwrap();
        if v["type"] != "ok" {
            continue;
        }
        for m in v["value"].as_array().unwrap() {
            let key = m[1].as_u64().unwrap();
            if m[0] == "append" {
                appends.push((key, m[2].as_u64().unwrap()));
            } else {
                let l = m[2].as_array().unwrap().iter().map(|x| x.as_u64().unwrap());
                reads.push((key, l.collect()));
            }
        }
    }
    for k in 0..KEYS {
        let now = list(db.get(k.to_be_bytes()).unwrap());
        for (_, e) in appends.iter().filter(|(key, _)| *key == k) {
            assert!(
                now.contains(e),
                "key {k}: a committed append of {e} is lost: {now:?}"
            );
        }
        for (_, seen) in reads.iter().filter(|(key, _)| *key == k) {
            assert!(
                now.starts_with(seen),
                "key {k}: a commit read {seen:?}, it holds {now:?}"
            );
        }
    }
}
