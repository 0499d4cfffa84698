//! Transactions in the model test: one step opens up to three transactions
//! of random modes (optimistic or pessimistic, snapshot or serializable)
//! side by side, interleaves their reads, scans, writes, savepoints and
//! rollbacks with plain writes to the database, and commits or rolls each
//! back. The model predicts every read (a transaction's own writes over its
//! snapshot) and every commit's outcome: a conflict exactly when a key it
//! wrote or read for update (serializable and writing: also read or
//! scanned) was written since its snapshot by a commit the model applied.
//! A commit the engine refuses as too old (its memtables flushed meanwhile)
//! is accepted as a rollback, and counted.

use std::collections::BTreeSet;
use std::ops::Bound;
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::Rng;
use sievedb::{ConflictKind, Db, Error, Isolation, Transaction, TransactionOptions};

use super::checks::in_bounds;
use super::gen::{gen_key, gen_operand, gen_range, gen_value, model_merge};
use crate::common::{show, Model};

/// A range of keys.
type Range = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// One pending write of a modelled transaction.
#[derive(Clone, Debug)]
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

    fn apply(&self, m: &mut Model) {
        match self {
            Write::Put(k, v) => {
                m.insert(k.clone(), v.clone());
            }
            Write::Delete(k) => {
                m.remove(k);
            }
            Write::Merge(k, o) => model_merge(m, k.clone(), o),
        }
    }
}

/// A transaction and what the model knows of it.
struct Modelled {
    tx: Transaction,
    name: String,
    pessimistic: bool,
    serializable: bool,
    /// The model when it began.
    snapshot: Model,
    /// The step's write counter when it began.
    began: u64,
    writes: Vec<Write>,
    savepoints: Vec<usize>,
    for_update: BTreeSet<Vec<u8>>,
    reads: BTreeSet<Vec<u8>>,
    ranges: Vec<Range>,
}

impl Modelled {
    /// What it sees: its writes over its snapshot.
    fn view(&self) -> Model {
        let mut m = self.snapshot.clone();
        for w in &self.writes {
            w.apply(&mut m);
        }
        m
    }
}

/// What the step's transactions did, summed over a run.
#[derive(Default, Debug)]
pub struct TxTotals {
    pub commits: u64,
    pub conflicts: u64,
    pub rollbacks: u64,
    pub too_old: u64,
}

/// The keys a commit at `version` wrote: (version, key) for point writes,
/// and ranges deleted.
#[derive(Default)]
struct Written {
    keys: Vec<(u64, Vec<u8>)>,
    ranges: Vec<(u64, Range)>,
    version: u64,
}

impl Written {
    fn since(&self, began: u64, key: &[u8]) -> bool {
        self.keys
            .iter()
            .any(|(v, k)| *v > began && k.as_slice() == key)
            || self
                .ranges
                .iter()
                .any(|(v, r)| *v > began && in_bounds(key, r))
    }

    fn since_in(&self, began: u64, r: &Range) -> bool {
        self.keys.iter().any(|(v, k)| *v > began && in_bounds(k, r))
            || self
                .ranges
                .iter()
                .any(|(v, d)| *v > began && overlaps(d, r))
    }
}

/// Whether two ranges share a key (conservatively: as the engine's check,
/// which compares bounds).
fn overlaps(a: &Range, b: &Range) -> bool {
    let below = |hi: &Bound<Vec<u8>>, lo: &Bound<Vec<u8>>| match (hi, lo) {
        (Bound::Unbounded, _) | (_, Bound::Unbounded) => false,
        (Bound::Included(h), Bound::Included(l)) => h < l,
        (Bound::Included(h), Bound::Excluded(l))
        | (Bound::Excluded(h), Bound::Included(l))
        | (Bound::Excluded(h), Bound::Excluded(l)) => h <= l,
    };
    !below(&a.1, &b.0) && !below(&b.1, &a.0)
}

/// Runs one transaction step (see the module docs) on `db`, whose contents
/// `model` is; `merges` says whether merge operands may be written.
#[allow(clippy::too_many_arguments)]
pub fn step(
    db: &Db,
    model: &mut Model,
    rng: &mut SmallRng,
    seed: u64,
    op: usize,
    merges: bool,
    totals: &mut TxTotals,
    record: &dyn Fn(String),
    ctx: &str,
) {
    let mut written = Written::default();
    let mut txs: Vec<Modelled> = Vec::new();
    let n = rng.gen_range(1..=3);
    // Pessimistic transactions of one step would wait for each other's
    // locks on this one thread: at most one of them.
    let mut pessimistic_taken = false;
    for t in 0..n {
        let pessimistic = !pessimistic_taken && rng.gen_bool(0.4);
        pessimistic_taken |= pessimistic;
        let serializable = rng.gen_bool(0.5);
        let opts = TransactionOptions::default()
            .pessimistic(pessimistic)
            .isolation(if serializable {
                Isolation::Serializable
            } else {
                Isolation::Snapshot
            })
            .lock_timeout(Duration::from_millis(1));
        let name = format!(
            "tx{t}({}, {})",
            if pessimistic {
                "pessimistic"
            } else {
                "optimistic"
            },
            if serializable {
                "serializable"
            } else {
                "snapshot"
            }
        );
        record(format!("{op}: begin {name}"));
        txs.push(Modelled {
            tx: db.transaction_opt(&opts),
            name,
            pessimistic,
            serializable,
            snapshot: model.clone(),
            began: written.version,
            writes: Vec::new(),
            savepoints: Vec::new(),
            for_update: BTreeSet::new(),
            reads: BTreeSet::new(),
            ranges: Vec::new(),
        });
    }
    let steps = rng.gen_range(1..16);
    for _ in 0..steps {
        let which = rng.gen_range(0..txs.len() + 1);
        if which == txs.len() {
            // A plain write between the transactions' steps.
            let k = pick_key(rng, model);
            let v = gen_value(rng, seed, op);
            record(format!("{op}:   plain put {}", show(&k)));
            db.put(&k, &v)
                .unwrap_or_else(|e| panic!("{ctx} plain put: {e}"));
            model.insert(k.clone(), v);
            written.version += 1;
            written.keys.push((written.version, k));
            continue;
        }
        let m = &mut txs[which];
        let tctx = format!("{ctx} {}", m.name);
        match rng.gen_range(0..100) {
            0..=24 => {
                let k = pick_key(rng, &m.view());
                let for_update = rng.gen_bool(0.3);
                record(format!(
                    "{op}:   {} get{} {}",
                    m.name,
                    if for_update { "_for_update" } else { "" },
                    show(&k)
                ));
                let got = if for_update {
                    m.tx.get_for_update(&k)
                } else {
                    m.tx.get(&k)
                };
                match got {
                    Ok(v) => {
                        assert_eq!(v.as_ref(), m.view().get(&k), "{tctx} get {}", show(&k));
                        if for_update {
                            m.for_update.insert(k);
                        } else {
                            m.reads.insert(k);
                        }
                    }
                    // A pessimistic read for update of a key written since its
                    // snapshot fails at once (or its lock is another's).
                    Err(e) if m.pessimistic && for_update && e.is_conflict() => {
                        assert!(
                            written.since(m.began, &k)
                                || matches!(
                                    e,
                                    Error::Conflict {
                                        kind: ConflictKind::TooOld,
                                        ..
                                    }
                                ),
                            "{tctx} get_for_update {}: {e}",
                            show(&k)
                        );
                        totals.conflicts += 1;
                        txs.swap_remove(which);
                        if txs.is_empty() {
                            break;
                        }
                    }
                    Err(e) => panic!("{tctx} get {}: {e}", show(&k)),
                }
            }
            25..=59 => {
                let k = pick_key(rng, &m.view());
                let w = match rng.gen_range(0..10) {
                    0..=5 => Write::Put(k, gen_value(rng, seed, op)),
                    6..=7 => Write::Delete(k),
                    _ if merges => Write::Merge(k, gen_operand(rng, op)),
                    _ => Write::Delete(k),
                };
                record(
                    format!("{op}:   {} {w:?}", m.name)
                        .chars()
                        .take(200)
                        .collect(),
                );
                let r = match &w {
                    Write::Put(k, v) => m.tx.put(k, v),
                    Write::Delete(k) => m.tx.delete(k),
                    Write::Merge(k, o) => m.tx.merge(k, o),
                };
                match r {
                    Ok(()) => m.writes.push(w),
                    Err(e) if m.pessimistic && e.is_conflict() => {
                        assert!(
                            written.since(m.began, w.key())
                                || matches!(
                                    e,
                                    Error::Conflict {
                                        kind: ConflictKind::TooOld,
                                        ..
                                    }
                                ),
                            "{tctx} write: {e}"
                        );
                        totals.conflicts += 1;
                        txs.swap_remove(which);
                        if txs.is_empty() {
                            break;
                        }
                    }
                    Err(e) => panic!("{tctx} write: {e}"),
                }
            }
            60..=74 => {
                let r = gen_range(rng);
                let rev = rng.gen_bool(0.3);
                record(format!(
                    "{op}:   {} range{}",
                    m.name,
                    if rev { " rev" } else { "" }
                ));
                let it =
                    m.tx.range(r.clone())
                        .unwrap_or_else(|e| panic!("{tctx} range: {e}"));
                let got: Vec<(Vec<u8>, Vec<u8>)> = if rev {
                    it.rev()
                        .map(|x| x.unwrap_or_else(|e| panic!("{tctx} range: {e}")))
                        .collect()
                } else {
                    it.map(|x| x.unwrap_or_else(|e| panic!("{tctx} range: {e}")))
                        .collect()
                };
                let view = m.view();
                let mut want: Vec<(Vec<u8>, Vec<u8>)> = view
                    .iter()
                    .filter(|(k, _)| in_bounds(k, &r))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                if rev {
                    want.reverse();
                }
                assert_eq!(got, want, "{tctx} range");
                m.ranges.push(r);
            }
            75..=82 => {
                record(format!("{op}:   {} savepoint", m.name));
                m.tx.set_savepoint();
                m.savepoints.push(m.writes.len());
            }
            83..=89 => {
                record(format!("{op}:   {} rollback to savepoint", m.name));
                let r = m.tx.rollback_to_savepoint();
                match m.savepoints.pop() {
                    Some(len) => {
                        r.unwrap_or_else(|e| panic!("{tctx} rollback to savepoint: {e}"));
                        m.writes.truncate(len);
                    }
                    None => assert!(r.is_err(), "{tctx} rollback to no savepoint"),
                }
            }
            _ => {
                // Finish it: commit (mostly) or roll back.
                let mut m = txs.swap_remove(which);
                finish(
                    db,
                    model,
                    rng,
                    &mut m,
                    &mut written,
                    totals,
                    record,
                    op,
                    ctx,
                );
                if txs.is_empty() {
                    break;
                }
            }
        }
    }
    for mut m in txs {
        finish(
            db,
            model,
            rng,
            &mut m,
            &mut written,
            totals,
            record,
            op,
            ctx,
        );
    }
}

/// Commits (or rolls back) `m` and checks the outcome against the model.
#[allow(clippy::too_many_arguments)]
fn finish(
    db: &Db,
    model: &mut Model,
    rng: &mut SmallRng,
    m: &mut Modelled,
    written: &mut Written,
    totals: &mut TxTotals,
    record: &dyn Fn(String),
    op: usize,
    ctx: &str,
) {
    let tctx = format!("{ctx} {}", m.name);
    if rng.gen_bool(0.15) {
        record(format!("{op}:   {} rollback", m.name));
        m.tx.rollback()
            .unwrap_or_else(|e| panic!("{tctx} rollback: {e}"));
        totals.rollbacks += 1;
        return;
    }
    let writes = !m.writes.is_empty() || !m.for_update.is_empty();
    let mut conflict = m
        .writes
        .iter()
        .map(Write::key)
        .chain(m.for_update.iter().map(Vec::as_slice))
        .any(|k| written.since(m.began, k));
    if m.serializable && writes {
        conflict |= m.reads.iter().any(|k| written.since(m.began, k));
        conflict |= m.ranges.iter().any(|r| written.since_in(m.began, r));
    }
    record(format!(
        "{op}:   {} commit (model: {})",
        m.name,
        if conflict { "conflict" } else { "ok" }
    ));
    match m.tx.commit() {
        Ok(()) => {
            assert!(
                !conflict,
                "{tctx}: committed, the model expected a conflict"
            );
            for w in &m.writes {
                w.apply(model);
            }
            if !m.writes.is_empty() {
                written.version += 1;
                for w in &m.writes {
                    written.keys.push((written.version, w.key().to_vec()));
                }
            }
            totals.commits += 1;
        }
        Err(Error::Conflict {
            kind: ConflictKind::TooOld,
            ..
        }) => totals.too_old += 1,
        Err(e) if e.is_conflict() => {
            assert!(conflict, "{tctx}: {e}, the model expected it to commit");
            totals.conflicts += 1;
        }
        Err(e) => panic!("{tctx} commit: {e}"),
    }
    // The database holds what the model does for the keys it touched.
    for w in &m.writes {
        let k = w.key();
        let got = db
            .get(k)
            .unwrap_or_else(|e| panic!("{tctx} get after commit: {e}"));
        assert_eq!(
            got.as_ref(),
            model.get(k),
            "{tctx} {} after the commit",
            show(k)
        );
    }
}

/// A key, often one `m` holds.
fn pick_key(rng: &mut SmallRng, m: &Model) -> Vec<u8> {
    if !m.is_empty() && rng.gen_bool(0.5) {
        let n = rng.gen_range(0..m.len());
        m.keys().nth(n).expect("nth key").clone()
    } else {
        gen_key(rng)
    }
}
