#![no_main]
//! Model-based: arbitrary operation sequences against a BTreeMap, with flushes,
//! compactions, reopens, checkpoints and range deletes (direct and in batches); reads in
//! both directions, cursor walks, prefixes and snapshot reads through
//! `ReadOptions`; merges (direct and in batches) through an `Append` operator.
//! Each input runs three times: as it is; with a TTL instead (a merge is
//! then refused: a manual clock the input moves, every read compared with
//! expiry applied); and with filter units under a filter memory budget
//! (the policy picked by the input's length), so that units are loaded,
//! dropped and moved between files while every read is checked.
//! Keyspaces (`model_keyspaces.rs`): operations on the default keyspace's
//! handle and on two named ones, batches across them, snapshot reads of
//! all, opens, drops and lazy reopens; they come as [`Item::Ks`], whose
//! encoding leaves the inputs of the committed corpus (made before them)
//! decoding as they did. Transactions (`model_txns.rs`): two at a time on
//! the default keyspace, beside plain writes, every read and every commit's
//! outcome predicted; they come as [`Item::Txn`] (see [`TXN_MARKS`]).
use std::collections::{BTreeMap, VecDeque};
use std::ops::Bound;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arbitrary::{Arbitrary, Unstructured};
use libfuzzer_sys::fuzz_target;
use sievedb::{
    Db, DbIterator, FilterLayout, FilterMemory, FilterOptions, FilterPolicy, Options, ReadOptions,
    WriteBatch,
};

type Model = BTreeMap<Vec<u8>, Vec<u8>>;

/// The model with each value's write time (TTL runs read it through
/// [`visible`]).
type Stamped = BTreeMap<Vec<u8>, (Vec<u8>, u64)>;

/// Seconds a value lives in a TTL run.
const TTL: u64 = 5;

/// The wall clock of a TTL run, moved by `Op::Tick`.
struct ManualClock(AtomicU64);

impl sievedb::Clock for ManualClock {
    fn now_secs(&self) -> u64 {
        self.0.load(Ordering::SeqCst)
    }
}

/// What a read at `now` sees of `m`: everything without a TTL; with one,
/// the values written less than `TTL` seconds ago.
fn visible(m: &Stamped, ttl: bool, now: u64) -> Model {
    m.iter()
        .filter(|(_, (_, t))| !ttl || t + TTL > now)
        .map(|(k, (v, _))| (k.clone(), v.clone()))
        .collect()
}

#[path = "model_keyspaces.rs"]
mod keyspaces;

use keyspaces::{KsOp, Spaces};

#[path = "model_txns.rs"]
mod txns;

/// One step of an input: an [`Op`] (of the database, as before keyspaces),
/// a [`KsOp`] or a [`txns::TxnScript`].
#[derive(Debug)]
enum Item {
    Db(Op),
    Ks(KsOp),
    Txn(txns::TxnScript),
}

/// The low bytes of the 4-byte tags that start an [`Item::Ks`]: the 39
/// values no top-level tag of the committed corpus (1,422 inputs, made
/// before keyspaces) ends in. Any other tag is an [`Op`]'s own variant
/// tag, read as it always was, so every input of that corpus decodes as
/// before. (Appending variants to `Op` would have moved every tag's
/// variant: the derive maps a tag to a variant by multiply-and-shift.)
/// One random tag in about 6.6 starts a keyspace operation.
///
/// A keyspace tag whose second byte is one of [`TXN_MARKS`] starts a
/// transaction script instead: the 40 values from 64 up that no keyspace tag
/// of the committed corpus (2,691 inputs, made before transactions) has
/// there, so those inputs decode as before. One keyspace tag in 6.4 starts a
/// script.
const KS_TAGS: [u8; 39] = [
    20, 24, 26, 29, 30, 66, 70, 71, 84, 88, 94, 100, 104, 114, 118, 124, 129, 138, 140, 142, 150,
    152, 160, 164, 166, 174, 177, 182, 186, 192, 196, 210, 220, 223, 224, 226, 234, 240, 246,
];

/// See [`KS_TAGS`].
const TXN_MARKS: [u8; 40] = [
    64, 65, 66, 69, 70, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 86, 87, 89, 90, 91, 92, 94,
    95, 96, 97, 98, 99, 100, 101, 102, 103, 105, 106, 108, 109, 110, 112, 113,
];

impl<'a> Arbitrary<'a> for Item {
    fn arbitrary(u: &mut Unstructured<'a>) -> arbitrary::Result<Self> {
        if u.peek_bytes(4).is_some_and(|b| KS_TAGS.contains(&b[0])) {
            let txn = u.peek_bytes(4).is_some_and(|b| TXN_MARKS.contains(&b[1]));
            u.bytes(4)?;
            if txn {
                return Ok(Item::Txn(txns::TxnScript::arbitrary(u)?));
            }
            return Ok(Item::Ks(KsOp::arbitrary(u)?));
        }
        Ok(Item::Db(Op::arbitrary(u)?))
    }
}

#[derive(Arbitrary, Debug)]
enum Op {
    Put(u8, Vec<u8>),
    Delete(u8),
    Batch(Vec<(u8, Option<Vec<u8>>)>),
    Get(u8),
    Scan(u8, u8),
    RevScan(u8, u8),
    /// Takes items from the front (true) or the back (false) of a scan.
    DoubleEnded(u8, u8, Vec<bool>),
    Walk(u8, u8, Vec<Step>),
    Prefix(Vec<u8>),
    TakeSnapshot,
    /// Reads snapshot `n` (modulo the live ones) through `ReadOptions`,
    /// bounded, in the given direction.
    SnapshotScan(u8, u8, u8, bool),
    Flush,
    Compact,
    Reopen,
    /// A checkpoint, opened and compared with the model, then written to.
    Checkpoint,
    /// `delete_range` from key `a` to key `b`; `shape` picks the bound kinds.
    DeleteRange(u8, u8, u8),
    /// A batch mixing puts, deletes, range deletes and merges, applied in order.
    MixedBatch(Vec<BatchOp>),
    /// `merge` of an operand into a key.
    Merge(u8, Vec<u8>),
    /// Moves the clock of a TTL run forward by `n % 8` seconds.
    Tick(u8),
}

#[derive(Arbitrary, Debug)]
enum BatchOp {
    Put(u8, Vec<u8>),
    Delete(u8),
    DeleteRange(u8, u8, u8),
    Merge(u8, Vec<u8>),
}

/// The model of the `Append(",")` merge operator: the operand after the
/// value and a comma, or alone on a missing key (runs without a TTL only).
fn merge(model: &mut Stamped, k: Vec<u8>, operand: &[u8]) {
    match model.get_mut(&k) {
        Some((v, _)) => {
            v.push(b',');
            v.extend_from_slice(operand);
        }
        None => {
            model.insert(k, (operand.to_vec(), 0));
        }
    }
}

type Range = (Bound<Vec<u8>>, Bound<Vec<u8>>);

/// The bounds of a range delete: `shape` chooses, for each side, included,
/// excluded or (rarely) unbounded.
fn range(a: u8, b: u8, shape: u8) -> Range {
    let side = |k: u8, s: u8| match s % 5 {
        0 => Bound::Unbounded,
        1 | 2 => Bound::Included(key(k)),
        _ => Bound::Excluded(key(k)),
    };
    (side(a, shape), side(b, shape / 5))
}

fn in_range(k: &[u8], (lo, hi): &Range) -> bool {
    let above = match lo {
        Bound::Unbounded => true,
        Bound::Included(l) => k >= l.as_slice(),
        Bound::Excluded(l) => k > l.as_slice(),
    };
    let below = match hi {
        Bound::Unbounded => true,
        Bound::Included(h) => k <= h.as_slice(),
        Bound::Excluded(h) => k < h.as_slice(),
    };
    above && below
}

#[derive(Arbitrary, Debug, Clone, Copy)]
enum Step {
    Seek(u8),
    SeekForPrev(u8),
    First,
    Last,
    Next,
    Prev,
}

/// Keys `key000..key239`, then runs of 0xFF bytes (awkward prefixes).
fn key(k: u8) -> Vec<u8> {
    if k >= 240 {
        vec![0xFF; usize::from(k - 239)]
    } else {
        format!("key{k:03}").into_bytes()
    }
}

/// The policies of the budget runs, one per input by its length.
const POLICIES: [FilterPolicy; 5] = [
    FilterPolicy::Uniform,
    FilterPolicy::Monkey,
    FilterPolicy::Elastic,
    FilterPolicy::ElasticUniform,
    FilterPolicy::SkewAtWrite,
];

/// How one run of an input is set up.
#[derive(Clone)]
enum Mode {
    /// The `Append(",")` merge operator.
    Plain,
    /// A TTL of [`TTL`] seconds on the clock.
    Ttl(Arc<ManualClock>),
    /// Six filter units of 2 bits/key per file under a 3 bits/key budget
    /// divided by the policy, and a short lifeTime (the elastic policies
    /// then call files cold, and move units, within one input); the
    /// `Append(",")` merge operator; and prefix filters of 5-byte prefixes
    /// (`key00` .. `key23`), which `Prefix` ops of 5 bytes or more use.
    Budget(FilterPolicy),
}

/// Small files and levels, set up for `mode`.
fn options(mode: &Mode) -> Options {
    let b = Options::builder()
        .write_buffer_size(4096)
        .target_file_size(4096)
        .level1_size(16384)
        .block_size(256)
        .level0_compaction_trigger(2);
    let append = Arc::new(sievedb::merge::Append::new(","));
    match mode {
        Mode::Plain => b.merge_operator(append).build(),
        Mode::Ttl(c) => b.ttl(Duration::from_secs(TTL)).clock(c.clone()).build(),
        Mode::Budget(policy) => b
            .merge_operator(append)
            .filter(FilterOptions {
                bits_per_key: 12.0,
                layout: FilterLayout::Units,
                units: 6,
                ..FilterOptions::default()
            })
            .filter_memory(FilterMemory::BitsPerKey(3.0))
            .filter_policy(*policy)
            .filter_lifetime(Some(16))
            .filter_access_sample(Some(1))
            .prefix_extractor(Arc::new(sievedb::FixedPrefix::new(5)))
            .build(),
    }
}

fn bounds(a: u8, b: u8) -> (Vec<u8>, Vec<u8>) {
    let (a, b) = (key(a), key(b));
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}

fn items(model: &Model, lo: &[u8], hi: &[u8]) -> Vec<(Vec<u8>, Vec<u8>)> {
    model
        .range::<[u8], _>((Bound::Included(lo), Bound::Excluded(hi)))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

fn collect(it: DbIterator, reverse: bool) -> Vec<(Vec<u8>, Vec<u8>)> {
    if reverse {
        it.rev().map(|r| r.unwrap()).collect()
    } else {
        it.map(|r| r.unwrap()).collect()
    }
}

fn double_ended(mut it: DbIterator, mut want: VecDeque<(Vec<u8>, Vec<u8>)>, sides: &[bool]) {
    for &front in sides
        .iter()
        .chain(std::iter::repeat(&true))
        .take(sides.len() + want.len() + 1)
    {
        let (got, exp) = if front {
            (it.next(), want.pop_front())
        } else {
            (it.next_back(), want.pop_back())
        };
        assert_eq!(got.map(|r| r.unwrap()), exp);
    }
    assert!(it.next().is_none() && it.next_back().is_none());
}

/// The cursor model of `DbIterator` (see its docs): `None` = ran out.
fn walk(mut it: DbIterator, items: &[(Vec<u8>, Vec<u8>)], steps: &[Step]) {
    // (position, yielded); position None = nowhere; `done` after running out.
    let mut pos: Option<Option<usize>> = None;
    let mut yielded = false;
    let mut done = false;
    for &s in steps.iter().take(64) {
        let fresh = |p: Option<usize>| (Some(p), false, false);
        (pos, yielded, done) = match s {
            Step::Seek(k) => {
                it.seek(key(k)).unwrap();
                fresh(items.iter().position(|(x, _)| *x >= key(k)))
            }
            Step::SeekForPrev(k) => {
                it.seek_for_prev(key(k)).unwrap();
                fresh(items.iter().rposition(|(x, _)| *x <= key(k)))
            }
            Step::First => {
                it.seek_to_first().unwrap();
                fresh((!items.is_empty()).then_some(0))
            }
            Step::Last => {
                it.seek_to_last().unwrap();
                fresh(items.len().checked_sub(1))
            }
            Step::Next | Step::Prev => {
                let fwd = matches!(s, Step::Next);
                let next = match (done, pos, yielded) {
                    (true, _, _) => None,
                    (_, None, _) if fwd => (!items.is_empty()).then_some(0),
                    (_, None, _) => items.len().checked_sub(1),
                    (_, Some(p), false) => p,
                    (_, Some(p), true) if fwd => p.map(|i| i + 1).filter(|&i| i < items.len()),
                    (_, Some(p), true) => p.and_then(|i| i.checked_sub(1)),
                };
                let got = if fwd { it.next_ref() } else { it.prev_ref() }.unwrap();
                let exp = next.map(|i| (items[i].0.as_slice(), items[i].1.as_slice()));
                assert_eq!(got, exp);
                (Some(next), true, next.is_none())
            }
        };
        if !done {
            let on = pos.flatten();
            assert_eq!(it.valid(), on.is_some());
            if let Some(i) = on {
                assert_eq!(
                    (it.key(), it.value()),
                    (items[i].0.as_slice(), items[i].1.as_slice())
                );
            }
        }
    }
}

fuzz_target!(|input: Vec<Item>| {
    let input = &input[..input.len().min(200)];
    run(input, Mode::Plain);
    run(
        input,
        Mode::Ttl(Arc::new(ManualClock(AtomicU64::new(1_000)))),
    );
    run(input, Mode::Budget(POLICIES[input.len() % POLICIES.len()]));
});

/// Runs `input` on a fresh database set up for `mode`.
fn run(input: &[Item], mode: Mode) {
    let clock = match &mode {
        Mode::Ttl(c) => Some(c.clone()),
        _ => None,
    };
    let ttl = clock.is_some();
    let now = || clock.as_ref().map_or(0, |c| c.0.load(Ordering::SeqCst));
    let dir = tempfile::tempdir().unwrap();
    let mut db = Db::open(dir.path(), options(&mode)).unwrap();
    let mut stamped = Stamped::new();
    let mut snapshots: Vec<(sievedb::Snapshot, keyspaces::SnapModels)> = Vec::new();
    let mut spaces = Spaces::new(ttl);
    for item in input {
        let op = match item {
            Item::Db(op) => op,
            Item::Ks(op) => {
                spaces.run(op, &db, &mut stamped, &snapshots, now());
                continue;
            }
            Item::Txn(script) => {
                txns::run(script, &db, &mut stamped, ttl, now());
                continue;
            }
        };
        // What a read now sees.
        let model = visible(&stamped, ttl, now());
        match op {
            Op::Put(k, v) => {
                db.put(key(*k), v).unwrap();
                stamped.insert(key(*k), (v.clone(), now()));
            }
            Op::Delete(k) => {
                db.delete(key(*k)).unwrap();
                stamped.remove(&key(*k));
            }
            Op::Batch(entries) => {
                let mut b = WriteBatch::new();
                for (k, v) in entries.iter().take(20) {
                    match v {
                        Some(v) => b.put(key(*k), v),
                        None => b.delete(key(*k)),
                    }
                }
                db.write(b).unwrap();
                for (k, v) in entries.iter().take(20) {
                    match v {
                        Some(v) => stamped.insert(key(*k), (v.clone(), now())),
                        None => stamped.remove(&key(*k)),
                    };
                }
            }
            Op::Get(k) => assert_eq!(db.get(key(*k)).unwrap(), model.get(&key(*k)).cloned()),
            Op::Scan(a, b) | Op::RevScan(a, b) => {
                let reverse = matches!(op, Op::RevScan(..));
                let (lo, hi) = bounds(*a, *b);
                let got = collect(db.range(lo.clone()..hi.clone()).unwrap(), reverse);
                let mut want = items(&model, &lo, &hi);
                if reverse {
                    want.reverse();
                }
                assert_eq!(got, want);
            }
            Op::DoubleEnded(a, b, sides) => {
                let (lo, hi) = bounds(*a, *b);
                let it = db.range(lo.clone()..hi.clone()).unwrap();
                double_ended(it, items(&model, &lo, &hi).into(), sides);
            }
            Op::Walk(a, b, steps) => {
                let (lo, hi) = bounds(*a, *b);
                let it = db.range(lo.clone()..hi.clone()).unwrap();
                walk(it, &items(&model, &lo, &hi), steps);
            }
            Op::Prefix(p) => {
                let p = &p[..p.len().min(5)];
                let want: Vec<_> = model
                    .iter()
                    .filter(|(k, _)| k.starts_with(p))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                assert_eq!(collect(db.prefix(p).unwrap(), false), want);
                let mut back = collect(db.prefix(p).unwrap(), true);
                back.reverse();
                assert_eq!(back, want);
            }
            Op::TakeSnapshot => {
                if snapshots.len() == 4 {
                    snapshots.remove(0);
                }
                snapshots.push((db.snapshot(), spaces.copies(&stamped)));
            }
            Op::SnapshotScan(n, a, b, reverse) => {
                if snapshots.is_empty() {
                    continue;
                }
                let (snap, (sstamped, _)) = &snapshots[usize::from(*n) % snapshots.len()];
                // A snapshot read expires values as of now, like any read.
                let smodel = visible(sstamped, ttl, now());
                let (lo, hi) = bounds(*a, *b);
                let ro = ReadOptions::default()
                    .snapshot(snap)
                    .lower_bound(&lo)
                    .upper_bound(&hi)
                    .fill_cache(*reverse);
                let mut want = items(&smodel, &lo, &hi);
                if *reverse {
                    want.reverse();
                }
                assert_eq!(collect(db.iter_opt(&ro).unwrap(), *reverse), want);
                assert_eq!(db.get_opt(&lo, &ro).unwrap(), smodel.get(&lo).cloned());
            }
            Op::Flush => db.flush().unwrap(),
            Op::Compact => db.compact_range::<&[u8], _>(..).unwrap(),
            Op::DeleteRange(a, b, shape) => {
                let r = range(*a, *b, *shape);
                db.delete_range(r.clone()).unwrap();
                stamped.retain(|k, _| !in_range(k, &r));
            }
            Op::MixedBatch(ops) => {
                let mut b = WriteBatch::new();
                let mut staged = stamped.clone();
                let mut merges = false;
                for op in ops.iter().take(20) {
                    match op {
                        BatchOp::Put(k, v) => {
                            b.put(key(*k), v);
                            staged.insert(key(*k), (v.clone(), now()));
                        }
                        BatchOp::Delete(k) => {
                            b.delete(key(*k));
                            staged.remove(&key(*k));
                        }
                        BatchOp::DeleteRange(x, y, shape) => {
                            let r = range(*x, *y, *shape);
                            b.delete_range(r.clone());
                            staged.retain(|k, _| !in_range(k, &r));
                        }
                        BatchOp::Merge(k, v) => {
                            b.merge(key(*k), v);
                            merge(&mut staged, key(*k), v);
                            merges = true;
                        }
                    }
                }
                if ttl && merges {
                    // A TTL refuses merges: the whole batch is refused.
                    assert!(matches!(
                        db.write(b),
                        Err(sievedb::Error::InvalidArgument(_))
                    ));
                } else {
                    db.write(b).unwrap();
                    stamped = staged;
                }
            }
            Op::Merge(k, v) if ttl => {
                let r = db.merge(key(*k), v);
                assert!(matches!(r, Err(sievedb::Error::InvalidArgument(_))));
            }
            Op::Merge(k, v) => {
                db.merge(key(*k), v).unwrap();
                merge(&mut stamped, key(*k), v);
            }
            Op::Tick(n) => {
                if let Some(c) = &clock {
                    c.0.fetch_add(u64::from(n % 8), Ordering::SeqCst);
                }
            }
            Op::Reopen => {
                snapshots.clear();
                spaces.release();
                drop(db);
                db = Db::open(dir.path(), options(&mode)).unwrap();
            }
            Op::Checkpoint => {
                let root = tempfile::tempdir().unwrap();
                let cp = root.path().join("checkpoint");
                db.checkpoint(&cp).unwrap();
                let c = Db::open(&cp, options(&mode)).unwrap();
                let got: BTreeMap<_, _> = c.iter().unwrap().map(|r| r.unwrap()).collect();
                assert_eq!(got, model);
                spaces.check(&c, false, now());
                c.put(b"\xffcheckpoint-only", b"x").unwrap();
                c.close().unwrap();
            }
        }
    }
    spaces.check(&db, true, now());
    let model = visible(&stamped, ttl, now());
    let got: BTreeMap<_, _> = db.iter().unwrap().map(|r| r.unwrap()).collect();
    assert_eq!(got, model);
    let mut back: Vec<_> = db.iter().unwrap().rev().map(|r| r.unwrap()).collect();
    back.reverse();
    assert_eq!(back, model.into_iter().collect::<Vec<_>>());
}
