//! A bank under fire: accounts in two keyspaces, eight threads moving money
//! between them inside transactions, readers summing every account in
//! read-only transactions, memtables flushed and compacted all the while.
//!
//! Every transfer also writes a journal entry (in a third keyspace) in the
//! same transaction, so after the run, after a close and reopen, and after a
//! SIGKILL of the writing process, the state can be checked exactly: the
//! total never changes, and every account holds its opening balance plus
//! what the journal says flowed in and out, so no update is lost and none is
//! applied twice or half. After a kill, every transfer the writer
//! acknowledged is in the journal.
//!
//! Modes: each of optimistic and pessimistic under snapshot isolation and
//! serializable (a transfer writes both accounts it reads, so write skew
//! cannot break the invariant under snapshot isolation either), and all four
//! at once on one database. Optimistic transfers read with `get` or
//! `get_for_update` at random; pessimistic ones with `get_for_update` (the
//! lock), in random account order, so deadlocks happen and are broken.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sievedb::{Db, Isolation, Keyspace, Options, Transaction, TransactionOptions, WriteOptions};

/// Accounts per keyspace (`checking` and `savings`).
const PER_KEYSPACE: u64 = 12;
const OPENING: u64 = 1_000;
const TOTAL: u64 = 2 * PER_KEYSPACE * OPENING;
const WRITERS: u64 = 8;

const CHILD_DIR: &str = "SIEVEDB_BANK_CHILD_DIR";
const CHILD_ROUND: &str = "SIEVEDB_BANK_CHILD_ROUND";

/// How long an open waits for the directory lock a spawned child may hold.
///
/// The lock is an `flock`, which a child shares with this process from its
/// fork until its exec closes the descriptor. The kernel lets the spawning
/// thread go on before the new program closes its close-on-exec descriptors,
/// so for a moment after `spawn` returns, a child started by the SIGKILL test
/// while another test's database was open still holds that database's lock,
/// and a reopen there finds it `Locked`. A database really left locked stays
/// locked past this bound, and the open fails.
const LOCK_WAIT: Duration = Duration::from_secs(10);

/// Opens `dir`, retrying while a spawned child still holds its lock.
fn open_db(dir: &Path) -> Db {
    let start = std::time::Instant::now();
    loop {
        match Db::open(dir, options()) {
            Err(sievedb::Error::Locked(_)) if start.elapsed() < LOCK_WAIT => {
                std::thread::sleep(Duration::from_millis(2));
            }
            r => return r.unwrap(),
        }
    }
}

/// The four modes, by index.
fn mode(i: u64) -> TransactionOptions {
    let isolation = if i / 2 == 0 {
        Isolation::Snapshot
    } else {
        Isolation::Serializable
    };
    TransactionOptions::default()
        .pessimistic(i % 2 == 1)
        .isolation(isolation)
        .lock_timeout(Duration::from_secs(5))
}

fn options() -> Options {
    // Small memtables: flushes and compactions run under the transfers.
    Options::builder().write_buffer_size(32 << 10).build()
}

struct Bank {
    db: Db,
    accounts: [Keyspace; 2],
    journal: Keyspace,
}

/// Account `i` of `0..2 * PER_KEYSPACE`: its keyspace and key.
fn account(i: u64) -> (usize, Vec<u8>) {
    (
        usize::from(i >= PER_KEYSPACE),
        format!("acct{:03}", i % PER_KEYSPACE).into_bytes(),
    )
}

fn parse(v: &[u8]) -> u64 {
    std::str::from_utf8(v).unwrap().parse().unwrap()
}

impl Bank {
    /// Opens the bank at `dir`, funding the accounts when new.
    fn open(dir: &Path) -> Bank {
        let db = open_db(dir);
        let accounts = [
            db.keyspace("checking").unwrap(),
            db.keyspace("savings").unwrap(),
        ];
        let journal = db.keyspace("journal").unwrap();
        let bank = Bank {
            db,
            accounts,
            journal,
        };
        let (ks, key) = account(0);
        if bank.accounts[ks].get(&key).unwrap().is_none() {
            let mut tx = bank.db.transaction();
            for i in 0..2 * PER_KEYSPACE {
                let (ks, key) = account(i);
                tx.put_cf(&bank.accounts[ks], key, OPENING.to_string())
                    .unwrap();
            }
            tx.commit_opt(&WriteOptions { sync: true }).unwrap();
        }
        bank
    }

    /// Moves up to 50 from one random account to another, journaled under
    /// `tag`; retries each conflict with new accounts. Returns the aborts.
    fn transfer(&self, rng: &mut SmallRng, mode_ix: u64, tag: &str, wo: &WriteOptions) -> u64 {
        let mut aborts = 0;
        loop {
            let from = rng.gen_range(0..2 * PER_KEYSPACE);
            let to = (from + rng.gen_range(1..2 * PER_KEYSPACE)) % (2 * PER_KEYSPACE);
            let amount = rng.gen_range(1..=50);
            let mut tx = self.db.transaction_opt(&mode(mode_ix));
            let for_update = tx.is_pessimistic() || rng.gen_bool(0.5);
            match self.try_transfer(&mut tx, [from, to], amount, for_update, tag, wo) {
                Ok(()) => return aborts,
                Err(e) if e.is_conflict() => aborts += 1,
                Err(e) => panic!("transfer {tag}: {e}"),
            }
        }
    }

    fn try_transfer(
        &self,
        tx: &mut Transaction,
        [from, to]: [u64; 2],
        amount: u64,
        for_update: bool,
        tag: &str,
        wo: &WriteOptions,
    ) -> sievedb::Result<()> {
        let balance = |tx: &mut Transaction, i: u64| -> sievedb::Result<u64> {
            let (ks, key) = account(i);
            let v = if for_update {
                tx.get_for_update_cf(&self.accounts[ks], key)?
            } else {
                tx.get_cf(&self.accounts[ks], key)?
            };
            Ok(parse(&v.expect("every account exists")))
        };
        let a = balance(tx, from)?;
        let b = balance(tx, to)?;
        // An overdraft moves what is there.
        let amount = amount.min(a);
        let (ks, key) = account(from);
        tx.put_cf(&self.accounts[ks], key, (a - amount).to_string())?;
        let (ks, key) = account(to);
        tx.put_cf(&self.accounts[ks], key, (b + amount).to_string())?;
        tx.put_cf(&self.journal, tag, format!("{from} {to} {amount}"))?;
        tx.commit_opt(wo)
    }

    /// Every balance, read in one read-only transaction of mode `mode_ix`:
    /// by point reads, or by scanning both keyspaces.
    fn balances(&self, mode_ix: u64, scan: bool) -> Vec<u64> {
        let mut tx = self.db.transaction_opt(&mode(mode_ix));
        let out = if scan {
            let mut all = Vec::new();
            for ks in &self.accounts {
                for kv in tx.iter_cf(ks).unwrap() {
                    all.push(parse(&kv.unwrap().1));
                }
            }
            all
        } else {
            (0..2 * PER_KEYSPACE)
                .map(|i| {
                    let (ks, key) = account(i);
                    parse(&tx.get_cf(&self.accounts[ks], key).unwrap().unwrap())
                })
                .collect()
        };
        tx.commit().unwrap(); // read-only: nothing to check or write
        out
    }

    /// Checks the balances against the journal: each account holds its
    /// opening balance plus what flowed in minus what flowed out. Returns the
    /// journal.
    fn audit(&self) -> BTreeMap<Vec<u8>, Vec<u8>> {
        let journal: BTreeMap<_, _> = self.journal.iter().unwrap().map(|kv| kv.unwrap()).collect();
        // Signed: the journal is in tag order, not in commit order.
        let mut flow = vec![0i64; usize::try_from(2 * PER_KEYSPACE).unwrap()];
        for entry in journal.values() {
            let f: Vec<usize> = std::str::from_utf8(entry)
                .unwrap()
                .split(' ')
                .map(|s| s.parse().unwrap())
                .collect();
            let amount = i64::try_from(f[2]).unwrap();
            flow[f[0]] -= amount;
            flow[f[1]] += amount;
        }
        let want: Vec<u64> = flow
            .iter()
            .map(|f| u64::try_from(i64::try_from(OPENING).unwrap() + f).unwrap())
            .collect();
        let got = self.balances(0, false);
        assert_eq!(
            got,
            want,
            "balances disagree with the {} journal entries",
            journal.len()
        );
        assert_eq!(got.iter().sum::<u64>(), TOTAL);
        assert_eq!(
            self.balances(3, true),
            got,
            "a scan disagrees with point reads"
        );
        journal
    }
}

/// Runs 8 writers (each in mode `modes(thread)`) for `per` transfers each
/// and 2 readers until they are done; returns the aborts.
fn fire(bank: &Arc<Bank>, modes: fn(u64) -> u64, per: u64, seed: u64) -> u64 {
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..2)
        .map(|r| {
            let (bank, done, reads) = (bank.clone(), done.clone(), reads.clone());
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(seed ^ (100 + r));
                while !done.load(Ordering::Relaxed) {
                    let b = bank.balances(rng.gen_range(0..4), rng.gen_bool(0.3));
                    assert_eq!(b.iter().sum::<u64>(), TOTAL, "a read saw {b:?}");
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let writers: Vec<_> = (0..WRITERS)
        .map(|t| {
            let bank = bank.clone();
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(seed ^ t);
                let wo = WriteOptions::default();
                (0..per)
                    .map(|n| {
                        bank.transfer(&mut rng, modes(t), &format!("s{seed}/t{t}/{n:05}"), &wo)
                    })
                    .sum::<u64>()
            })
        })
        .collect();
    let aborts = writers.into_iter().map(|w| w.join().unwrap()).sum();
    done.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    assert!(reads.load(Ordering::Relaxed) > 0);
    aborts
}

fn under_fire(modes: fn(u64) -> u64, seed: u64) {
    let dir = tempfile::tempdir().unwrap();
    let per = 60;
    let bank = Arc::new(Bank::open(dir.path()));
    let aborts = fire(&bank, modes, per, seed);
    let journal = bank.audit();
    assert_eq!(
        journal.len() as u64,
        WRITERS * per,
        "one journal entry per committed transfer ({aborts} aborts)"
    );
    drop(Arc::into_inner(bank).expect("the workers are done"));
    // Closed and reopened: the same.
    let bank = Bank::open(dir.path());
    assert_eq!(bank.audit(), journal);
}

#[test]
fn a_bank_under_optimistic_snapshot_transactions() {
    under_fire(|_| 0, 1);
}

#[test]
fn a_bank_under_pessimistic_snapshot_transactions() {
    under_fire(|_| 1, 2);
}

#[test]
fn a_bank_under_optimistic_serializable_transactions() {
    under_fire(|_| 2, 3);
}

#[test]
fn a_bank_under_pessimistic_serializable_transactions() {
    under_fire(|_| 3, 4);
}

#[test]
fn a_bank_under_every_kind_of_transaction_at_once() {
    under_fire(|t| t % 4, 5);
}

/// The writer of the SIGKILL test: 8 threads of transfers in all four modes
/// (every other one synced), printing `ack TAG` once a commit returned, and
/// 2 readers printing `violation` if a sum is off, until killed.
#[test]
fn child_bank_writer() {
    let Some(dir) = std::env::var_os(CHILD_DIR) else {
        return;
    };
    let round: u64 = std::env::var(CHILD_ROUND).unwrap().parse().unwrap();
    let bank = Arc::new(Bank::open(Path::new(&dir)));
    let out = Arc::new(Mutex::new(std::io::stdout()));
    for r in 0..2 {
        let (bank, out) = (bank.clone(), out.clone());
        std::thread::spawn(move || loop {
            let b = bank.balances(r * 3, r == 1);
            if b.iter().sum::<u64>() != TOTAL {
                let mut out = out.lock().unwrap();
                writeln!(out, "violation {b:?}").unwrap();
                out.flush().unwrap();
            }
        });
    }
    let writers: Vec<_> = (0..WRITERS)
        .map(|t| {
            let (bank, out) = (bank.clone(), out.clone());
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(round * 1_000 + t);
                let wo = WriteOptions { sync: t % 2 == 0 };
                for n in 0.. {
                    let tag = format!("r{round}/t{t}/{n:06}");
                    bank.transfer(&mut rng, t % 4, &tag, &wo);
                    let mut out = out.lock().unwrap();
                    writeln!(out, "ack {tag}").unwrap();
                    out.flush().unwrap();
                }
            })
        })
        .collect();
    for w in writers {
        w.join().unwrap();
    }
}

/// Runs the writer until it acknowledged `acks` transfers, kills it, and
/// returns the tags it acknowledged.
fn write_and_kill(dir: &Path, round: u64, acks: usize) -> Vec<String> {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "child_bank_writer",
            "--exact",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_DIR, dir)
        .env(CHILD_ROUND, round.to_string())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut acked = Vec::new();
    let seen = |line: String, acked: &mut Vec<String>| {
        assert!(!line.starts_with("violation"), "round {round}: {line}");
        if let Some(tag) = line.strip_prefix("ack ") {
            acked.push(tag.to_string());
        }
    };
    while acked.len() < acks {
        let line = lines
            .next()
            .expect("the writer stopped before it was killed")
            .unwrap();
        seen(line, &mut acked);
    }
    child.kill().unwrap();
    child.wait().unwrap();
    // What it printed before it died was acknowledged too.
    for line in lines {
        seen(line.unwrap(), &mut acked);
    }
    acked
}

/// SIGKILL of the writing process in the middle of transfers: after each
/// reopen the total holds, the balances agree with the journal, and every
/// acknowledged transfer is in it; five rounds on one database, so each also
/// recovers from the previous crash.
#[test]
fn a_killed_bank_loses_no_acknowledged_transfer_and_no_money() {
    let dir = tempfile::tempdir().unwrap();
    for (round, acks) in [300, 1_500, 50, 800, 2_000].into_iter().enumerate() {
        let acked = write_and_kill(dir.path(), round as u64, acks);
        let bank = Bank::open(dir.path());
        let journal = bank.audit();
        for tag in &acked {
            assert!(
                journal.contains_key(tag.as_bytes()),
                "round {round}: acknowledged transfer {tag} is lost"
            );
        }
    }
}
