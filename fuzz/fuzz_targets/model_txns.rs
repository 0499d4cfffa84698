//! Transactions of the `model` target: an [`Item::Txn`] opens two
//! transactions on the default keyspace (the first optimistic or
//! pessimistic, the second optimistic; each snapshot-isolated or
//! serializable), interleaves their reads, scans, writes, savepoints, ends
//! and plain writes by others, and checks every read against the model (a
//! transaction's pending writes over its snapshot, expired as of now in a
//! TTL run) and every commit's outcome: a conflict exactly when a key it
//! wrote or read for update (serializable and writing: also a key it read or
//! a range it scanned) was written since its snapshot. A transaction that
//! fails as too old (memtables flushed under it: the small write buffer of
//! this target does that often) counts as rolled back. A merge in a TTL run
//! is refused at once, and the transaction goes on.

use super::*;
use sievedb::{ConflictKind, Error, Isolation, Transaction, TransactionOptions};

/// Two transactions and what happens to them.
#[derive(Arbitrary, Debug)]
pub struct TxnScript {
    /// Bit 0: the first is pessimistic; bits 1 and 2: the first and the
    /// second are serializable.
    modes: u8,
    steps: Vec<TxnStep>,
}

/// One step; the flag picks the transaction (false: the first).
#[derive(Arbitrary, Debug)]
pub enum TxnStep {
    Get(bool, u8),
    GetForUpdate(bool, u8),
    Put(bool, u8, Vec<u8>),
    Delete(bool, u8),
    Merge(bool, u8, Vec<u8>),
    /// From key `a` to key `b`, backward if the last flag is set.
    Scan(bool, u8, u8, bool),
    Prefix(bool, Vec<u8>),
    Savepoint(bool),
    RollbackToSavepoint(bool),
    /// Commits the transaction, or rolls it back if the second flag is set.
    End(bool, bool),
    /// A plain put by someone else.
    PlainPut(u8, Vec<u8>),
    /// A plain `delete_range` by someone else (bounds as [`Op::DeleteRange`]).
    PlainDeleteRange(u8, u8, u8),
    Flush,
}

/// A pending write.
#[derive(Debug)]
enum Write {
    Put(Vec<u8>, Vec<u8>),
    Delete(Vec<u8>),
    Merge(Vec<u8>, Vec<u8>),
}

impl Write {
    fn key(&self) -> &[u8] {
        match self {
            Write::Put(k, _) | Write::Delete(k) | Write::Merge(k, _) => k,
        }
    }

    fn apply(&self, m: &mut Stamped, now: u64) {
        match self {
            Write::Put(k, v) => {
                m.insert(k.clone(), (v.clone(), now));
            }
            Write::Delete(k) => {
                m.remove(k);
            }
            Write::Merge(k, o) => merge(m, k.clone(), o),
        }
    }
}

/// What committed since the script began: keys and deleted ranges, each at
/// the version (count of commits) that wrote it.
#[derive(Default)]
struct Written {
    keys: Vec<(u64, Vec<u8>)>,
    ranges: Vec<(u64, Range)>,
    version: u64,
}

impl Written {
    fn since(&self, began: u64, key: &[u8]) -> bool {
        self.keys.iter().any(|(v, k)| *v > began && k == key)
            || self
                .ranges
                .iter()
                .any(|(v, r)| *v > began && in_range(key, r))
    }

    /// Whether anything written since `began` falls in `[lo, hi)`, as the
    /// engine compares a deleted range's bounds with a scanned one's.
    fn since_in(&self, began: u64, lo: &[u8], hi: Option<&[u8]>) -> bool {
        let inside = |k: &[u8]| k >= lo && hi.is_none_or(|h| k < h);
        self.keys.iter().any(|(v, k)| *v > began && inside(k))
            || self.ranges.iter().any(|(v, (dlo, dhi))| {
                let below_hi = match (dlo, hi) {
                    (_, None) | (Bound::Unbounded, _) => true,
                    (Bound::Included(l), Some(h)) | (Bound::Excluded(l), Some(h)) => {
                        l.as_slice() < h
                    }
                };
                let above_lo = match dhi {
                    Bound::Unbounded => true,
                    Bound::Included(h) => h.as_slice() >= lo,
                    Bound::Excluded(h) => h.as_slice() > lo,
                };
                *v > began && below_hi && above_lo
            })
    }
}

/// A transaction and what the model knows of it.
struct Modelled {
    tx: Transaction,
    pessimistic: bool,
    serializable: bool,
    snapshot: Stamped,
    began: u64,
    writes: Vec<Write>,
    savepoints: Vec<usize>,
    for_update: Vec<Vec<u8>>,
    reads: Vec<Vec<u8>>,
    /// Scanned: `[lo, hi)`, `None` = unbounded.
    ranges: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

impl Modelled {
    /// What it reads at `now`: its snapshot, expired as of now, under its
    /// pending writes (which carry no stamp yet).
    fn view(&self, ttl: bool, now: u64) -> Model {
        let mut m: Stamped = visible(&self.snapshot, ttl, now)
            .into_iter()
            .map(|(k, v)| (k, (v, now)))
            .collect();
        for w in &self.writes {
            w.apply(&mut m, now);
        }
        m.into_iter().map(|(k, (v, _))| (k, v)).collect()
    }

    /// Whether committing now must fail (see the module docs).
    fn conflicts(&self, written: &Written) -> bool {
        let mut keys = self
            .writes
            .iter()
            .map(Write::key)
            .chain(self.for_update.iter().map(Vec::as_slice));
        if keys.any(|k| written.since(self.began, k)) {
            return true;
        }
        let writes = !self.writes.is_empty() || !self.for_update.is_empty();
        self.serializable
            && writes
            && (self.reads.iter().any(|k| written.since(self.began, k))
                || self
                    .ranges
                    .iter()
                    .any(|(lo, hi)| written.since_in(self.began, lo, hi.as_deref())))
    }
}

/// Whether `e` is the failure of a transaction that its memtables flushed
/// under.
fn too_old(e: &Error) -> bool {
    matches!(
        e,
        Error::Conflict {
            kind: ConflictKind::TooOld,
            ..
        }
    )
}

/// Runs `script` on `db`, whose default keyspace `stamped` models; `now`
/// is the clock of a TTL run (0 otherwise).
pub fn run(script: &TxnScript, db: &Db, stamped: &mut Stamped, ttl: bool, now: u64) {
    let mut written = Written::default();
    let begin = |pessimistic: bool, serializable: bool, stamped: &Stamped| Modelled {
        tx: db.transaction_opt(
            &TransactionOptions::default()
                .pessimistic(pessimistic)
                .isolation(if serializable {
                    Isolation::Serializable
                } else {
                    Isolation::Snapshot
                })
                .lock_timeout(Duration::from_millis(1)),
        ),
        pessimistic,
        serializable,
        snapshot: stamped.clone(),
        began: 0,
        writes: Vec::new(),
        savepoints: Vec::new(),
        for_update: Vec::new(),
        reads: Vec::new(),
        ranges: Vec::new(),
    };
    let mut txs = [
        Some(begin(script.modes & 1 != 0, script.modes & 2 != 0, stamped)),
        Some(begin(false, script.modes & 4 != 0, stamped)),
    ];
    for step in script.steps.iter().take(40) {
        let which = |second: &bool| usize::from(*second);
        match step {
            TxnStep::PlainPut(k, v) => {
                db.put(key(*k), v).unwrap();
                stamped.insert(key(*k), (v.clone(), now));
                written.version += 1;
                written.keys.push((written.version, key(*k)));
            }
            TxnStep::PlainDeleteRange(a, b, shape) => {
                let r = range(*a, *b, *shape);
                db.delete_range(r.clone()).unwrap();
                stamped.retain(|k, _| !in_range(k, &r));
                written.version += 1;
                written.ranges.push((written.version, r));
            }
            TxnStep::Flush => db.flush().unwrap(),
            TxnStep::End(t, rollback) => {
                let Some(mut m) = txs[which(t)].take() else {
                    continue;
                };
                if *rollback {
                    m.tx.rollback().unwrap();
                    continue;
                }
                let conflict = m.conflicts(&written);
                match m.tx.commit() {
                    Ok(()) => {
                        assert!(!conflict, "committed; the model expected a conflict");
                        if !m.writes.is_empty() {
                            written.version += 1;
                        }
                        for w in &m.writes {
                            w.apply(stamped, now);
                            written.keys.push((written.version, w.key().to_vec()));
                        }
                    }
                    Err(e) if too_old(&e) => {}
                    Err(e) => assert!(conflict && e.is_conflict(), "commit: {e}"),
                }
                // A finished transaction refuses more work.
                assert!(m.tx.put(b"k", b"v").is_err());
            }
            TxnStep::Get(t, k) | TxnStep::GetForUpdate(t, k) => {
                let Some(m) = txs[which(t)].as_mut() else {
                    continue;
                };
                let for_update = matches!(step, TxnStep::GetForUpdate(..));
                let k = key(*k);
                let got = if for_update {
                    m.tx.get_for_update(&k)
                } else {
                    m.tx.get(&k)
                };
                match got {
                    Ok(v) => {
                        assert_eq!(v, m.view(ttl, now).get(&k).cloned(), "get {k:?}");
                        if for_update {
                            m.for_update.push(k);
                        } else {
                            m.reads.push(k);
                        }
                    }
                    // A pessimistic lock of a key written since the snapshot
                    // fails at once.
                    Err(e) if m.pessimistic && for_update && e.is_conflict() => {
                        assert!(
                            too_old(&e) || written.since(m.began, &k),
                            "get_for_update {k:?}: {e}"
                        );
                        txs[which(t)] = None;
                    }
                    Err(e) => panic!("get {k:?}: {e}"),
                }
            }
            TxnStep::Put(t, k, _) | TxnStep::Delete(t, k) | TxnStep::Merge(t, k, _) => {
                let Some(m) = txs[which(t)].as_mut() else {
                    continue;
                };
                let w = match step {
                    TxnStep::Put(_, _, v) => Write::Put(key(*k), v.clone()),
                    TxnStep::Merge(_, _, o) => Write::Merge(key(*k), o.clone()),
                    _ => Write::Delete(key(*k)),
                };
                let r = match &w {
                    Write::Put(k, v) => m.tx.put(k, v),
                    Write::Delete(k) => m.tx.delete(k),
                    Write::Merge(k, o) => m.tx.merge(k, o),
                };
                match r {
                    Ok(()) => {
                        assert!(
                            !(ttl && matches!(w, Write::Merge(..))),
                            "a merge with a TTL"
                        );
                        m.writes.push(w);
                    }
                    Err(Error::InvalidArgument(_)) if ttl && matches!(w, Write::Merge(..)) => {}
                    Err(e) if m.pessimistic && e.is_conflict() => {
                        assert!(too_old(&e) || written.since(m.began, w.key()), "{w:?}: {e}");
                        txs[which(t)] = None;
                    }
                    Err(e) => panic!("{w:?}: {e}"),
                }
            }
            TxnStep::Scan(t, a, b, reverse) => {
                let Some(m) = txs[which(t)].as_mut() else {
                    continue;
                };
                let (lo, hi) = bounds(*a, *b);
                let got = m.tx.range(lo.clone()..hi.clone()).unwrap();
                let got: Vec<_> = if *reverse {
                    got.rev().map(|r| r.unwrap()).collect()
                } else {
                    got.map(|r| r.unwrap()).collect()
                };
                let mut want = items(&m.view(ttl, now), &lo, &hi);
                if *reverse {
                    want.reverse();
                }
                assert_eq!(got, want, "scan");
                m.ranges.push((lo, Some(hi)));
            }
            TxnStep::Prefix(t, p) => {
                let Some(m) = txs[which(t)].as_mut() else {
                    continue;
                };
                let p = &p[..p.len().min(5)];
                let got: Vec<_> = m.tx.prefix(p).unwrap().map(|r| r.unwrap()).collect();
                let want: Vec<_> = m
                    .view(ttl, now)
                    .into_iter()
                    .filter(|(k, _)| k.starts_with(p))
                    .collect();
                assert_eq!(got, want, "prefix {p:?}");
                // The prefix as a range: [p, the next prefix).
                let mut hi = p.to_vec();
                while hi.last() == Some(&0xFF) {
                    hi.pop();
                }
                let hi = hi.last_mut().map(|b| *b += 1).map(|()| hi.clone());
                m.ranges.push((p.to_vec(), hi));
            }
            TxnStep::Savepoint(t) => {
                if let Some(m) = txs[which(t)].as_mut() {
                    m.tx.set_savepoint();
                    m.savepoints.push(m.writes.len());
                }
            }
            TxnStep::RollbackToSavepoint(t) => {
                if let Some(m) = txs[which(t)].as_mut() {
                    let r = m.tx.rollback_to_savepoint();
                    match m.savepoints.pop() {
                        Some(len) => {
                            r.unwrap();
                            m.writes.truncate(len);
                        }
                        None => assert!(r.is_err(), "a rollback to no savepoint"),
                    }
                }
            }
        }
    }
    // Whatever is still open is dropped: rolled back.
    drop(txs);
    let model = visible(stamped, ttl, now);
    let got: BTreeMap<_, _> = db.iter().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(got, model, "after the transactions");
}
