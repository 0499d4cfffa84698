//! Model-based test: random operation sequences run against the engine and
//! against a `BTreeMap`, compared after every read.
//!
//! Scale with `SIEVEDB_MODEL_OPS` (operations per seed, default 3000) and pin
//! one seed with `SIEVEDB_SEED`. A failure names the configuration, the seed
//! and the operation index, and prints the last operations.

mod common;

use std::cell::RefCell;
use std::collections::VecDeque;
use std::ops::Bound;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::path::Path;

use common::{
    assert_db_equals, assert_same_items, collect_all, env_usize, seeds, show, small_options_with,
    Model,
};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use sievedb::{
    CompactionStyle, Compression, Db, DbIterator, FilterLayout, FilterOptions, HashFn, HashSharing,
    IndexScheme, Options, ReadOptions, Snapshot, UnitHashing, WriteBatch,
};

/// Number of distinct short keys: small so that writes collide.
const KEY_SPACE: u32 = 400;
/// Live snapshots kept at once.
const MAX_SNAPSHOTS: usize = 4;
/// Operations remembered for the failure report.
const TRACE_LEN: usize = 40;

struct Config {
    name: &'static str,
    style: CompactionStyle,
    bits_per_key: f64,
    compression: Compression,
    /// Non-default filter hash function and digest sharing, if any.
    filter_hash: Option<(HashFn, HashSharing)>,
    /// Further changes to the filter options (layout, scheme, memtable filter).
    tune_filter: Option<fn(&mut FilterOptions)>,
    seeds: &'static [u64],
}

/// Counters summed over every incarnation of the database.
#[derive(Default)]
struct Totals {
    puts: u64,
    flushes: u64,
    compactions: u64,
    deepest_level_with_files: usize,
}

fn gen_key(rng: &mut SmallRng) -> Vec<u8> {
    match rng.gen_range(0..100) {
        0..=87 => format!("k{:04}", rng.gen_range(0..KEY_SPACE)).into_bytes(),
        88..=95 => {
            // Long keys that sort between the short ones.
            let i = rng.gen_range(0..24u32);
            let mut k = format!("k{:04}-", i * 17 % KEY_SPACE).into_bytes();
            k.extend(std::iter::repeat_n(
                b'a' + (i % 26) as u8,
                200 + i as usize * 83,
            ));
            k
        }
        96 => Vec::new(),
        _ => {
            let odd: [&[u8]; 5] = [&[0], &[0, 0], &[0xff], &[0xff, 0xff, 0], &[b'k', 0xff]];
            odd[rng.gen_range(0..odd.len())].to_vec()
        }
    }
}

fn gen_value(rng: &mut SmallRng, seed: u64, op: usize) -> Vec<u8> {
    let len = match rng.gen_range(0..100) {
        0..=9 => return Vec::new(),
        10..=94 => rng.gen_range(1..300),
        _ => rng.gen_range(1000..4000),
    };
    let mut v = format!("v{seed}-{op}-").into_bytes();
    let start = rng.gen::<u8>();
    v.extend((0..len).map(|j| start.wrapping_add(j as u8)));
    v.truncate(len.max(1));
    v
}

fn gen_bound(rng: &mut SmallRng) -> Bound<Vec<u8>> {
    match rng.gen_range(0..5) {
        0 => Bound::Unbounded,
        1 | 2 => Bound::Included(gen_key(rng)),
        _ => Bound::Excluded(gen_key(rng)),
    }
}

/// Random bounds, usually ordered low to high (sometimes inverted or empty).
fn gen_range(rng: &mut SmallRng) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let a = gen_bound(rng);
    let b = gen_bound(rng);
    let key = |b: &Bound<Vec<u8>>| match b {
        Bound::Included(k) | Bound::Excluded(k) => Some(k.clone()),
        Bound::Unbounded => None,
    };
    match (key(&a), key(&b)) {
        (Some(x), Some(y)) if x > y && rng.gen_range(0..10) != 0 => (b, a),
        _ => (a, b),
    }
}

/// Bounds of a range delete: usually a few keys wide, sometimes open on one
/// side, sometimes inverted or empty (a no-op).
fn gen_delete_range(rng: &mut SmallRng) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
    let a = rng.gen_range(0..KEY_SPACE);
    let b = if rng.gen_range(0..10) == 0 {
        a.saturating_sub(rng.gen_range(0..3))
    } else {
        a + rng.gen_range(1..25)
    };
    let key = |i: u32| format!("k{i:04}").into_bytes();
    let side = |rng: &mut SmallRng, k: Vec<u8>| match rng.gen_range(0..40) {
        0 => Bound::Unbounded,
        1..=20 => Bound::Included(k),
        _ => Bound::Excluded(k),
    };
    (side(rng, key(a)), side(rng, key(b)))
}

fn in_bounds(k: &[u8], (lo, hi): &(Bound<Vec<u8>>, Bound<Vec<u8>>)) -> bool {
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

fn show_bound(b: &Bound<Vec<u8>>) -> String {
    match b {
        Bound::Unbounded => "..".into(),
        Bound::Included(k) => format!("Included({})", show(k)),
        Bound::Excluded(k) => format!("Excluded({})", show(k)),
    }
}

/// Checks a range read (engine iterator `got`) against the model.
fn check_range(
    got: sievedb::Result<sievedb::DbIterator>,
    model: &Model,
    range: &(Bound<Vec<u8>>, Bound<Vec<u8>>),
    ctx: &str,
) {
    let ctx = format!(
        "{ctx} range({}, {})",
        show_bound(&range.0),
        show_bound(&range.1)
    );
    let got = collect_all(got, &ctx);
    assert_same_items(
        &got,
        model.iter().filter(|(k, _)| in_bounds(k, range)),
        &ctx,
    );
}

/// The model's items within `range`, ascending.
fn expected_in<'a>(
    model: &'a Model,
    range: &(Bound<Vec<u8>>, Bound<Vec<u8>>),
) -> Vec<(&'a Vec<u8>, &'a Vec<u8>)> {
    model.iter().filter(|(k, _)| in_bounds(k, range)).collect()
}

/// Checks a range read walked backward (`.rev()`) against the model.
fn check_range_rev(
    got: sievedb::Result<DbIterator>,
    model: &Model,
    range: &(Bound<Vec<u8>>, Bound<Vec<u8>>),
    ctx: &str,
) {
    let ctx = format!(
        "{ctx} rev range({}, {})",
        show_bound(&range.0),
        show_bound(&range.1)
    );
    let it = got.unwrap_or_else(|e| panic!("{ctx}: creating iterator failed: {e}"));
    let got: Vec<_> = it
        .rev()
        .map(|r| r.unwrap_or_else(|e| panic!("{ctx}: iteration failed: {e}")))
        .collect();
    assert_same_items(&got, expected_in(model, range).into_iter().rev(), &ctx);
}

/// A prefix to iterate: a piece of a present key, or one of the awkward
/// ones (empty, 0xFF bytes, a prefix of many keys).
fn gen_prefix(rng: &mut SmallRng, model: &Model) -> Vec<u8> {
    match rng.gen_range(0..10) {
        0..=4 if !model.is_empty() => {
            let n = rng.gen_range(0..model.len());
            let k = model.keys().nth(n).expect("nth key");
            k[..rng.gen_range(0..=k.len().min(6))].to_vec()
        }
        5 => Vec::new(),
        6 => vec![0xff],
        7 => vec![b'k', 0xff],
        8 => vec![0xff, 0xff],
        _ => format!("k{:02}", rng.gen_range(0..40)).into_bytes(),
    }
}

/// Checks `prefix` iteration, forward and backward, against the model.
fn check_prefix(
    make: impl Fn() -> sievedb::Result<DbIterator>,
    model: &Model,
    p: &[u8],
    ctx: &str,
) {
    let ctx = format!("{ctx} prefix {}", show(p));
    let expected: Vec<_> = model.iter().filter(|(k, _)| k.starts_with(p)).collect();
    let got = collect_all(make(), &ctx);
    assert_same_items(&got, expected.iter().copied(), &ctx);
    let it = make().unwrap_or_else(|e| panic!("{ctx}: creating iterator failed: {e}"));
    let got: Vec<_> = it
        .rev()
        .map(|r| r.unwrap_or_else(|e| panic!("{ctx} rev: {e}")))
        .collect();
    assert_same_items(&got, expected.into_iter().rev(), &format!("{ctx} rev"));
}

/// Takes items from both ends of a range iterator in a random order: they
/// must be the model's items, the front ones ascending, the back ones
/// descending, never one twice, ending where the two ends meet.
fn check_double_ended(
    rng: &mut SmallRng,
    mut it: DbIterator,
    model: &Model,
    range: &(Bound<Vec<u8>>, Bound<Vec<u8>>),
    ctx: &str,
) {
    let mut expected: VecDeque<_> = expected_in(model, range).into();
    loop {
        let front = rng.gen_bool(0.5);
        let (got, want) = if front {
            (it.next(), expected.pop_front())
        } else {
            (it.next_back(), expected.pop_back())
        };
        let got = got.map(|r| r.unwrap_or_else(|e| panic!("{ctx} double-ended: {e}")));
        assert_eq!(
            got.as_ref().map(|(k, v)| (k, v)),
            want,
            "{ctx} double-ended step from the {}",
            if front { "front" } else { "back" }
        );
        if want.is_none() {
            assert!(
                it.next().is_none() && it.next_back().is_none(),
                "{ctx} fused"
            );
            return;
        }
    }
}

/// Where the model of a [`DbIterator`] cursor stands (see its docs).
#[derive(Clone, Copy, Debug)]
enum CursorModel {
    Unpositioned,
    /// On item `Some(i)` (or nowhere), not yielded yet.
    Fresh(Option<usize>),
    /// On item `Some(i)` (or nowhere), yielded.
    Yielded(Option<usize>),
    /// Ran out: nothing until a seek.
    Done,
}

/// A random walk of seeks and borrowed steps in both directions, checked
/// step by step against the model items of `range`.
fn check_cursor_walk(
    rng: &mut SmallRng,
    mut it: DbIterator,
    model: &Model,
    range: &(Bound<Vec<u8>>, Bound<Vec<u8>>),
    ctx: &str,
    record: &dyn Fn(String),
) {
    let items = expected_in(model, range);
    let mut state = CursorModel::Unpositioned;
    let mut steps = Vec::new();
    for _ in 0..rng.gen_range(1..24) {
        let op = rng.gen_range(0..10);
        let target = gen_key(rng);
        let first_ge = items
            .iter()
            .position(|(k, _)| k.as_slice() >= target.as_slice());
        let last_le = items
            .iter()
            .rposition(|(k, _)| k.as_slice() <= target.as_slice());
        let what = match op {
            0 => {
                it.seek(&target).unwrap();
                state = CursorModel::Fresh(first_ge);
                format!("seek {}", show(&target))
            }
            1 => {
                it.seek_for_prev(&target).unwrap();
                state = CursorModel::Fresh(last_le);
                format!("seek_for_prev {}", show(&target))
            }
            2 => {
                it.seek_to_first().unwrap();
                state = CursorModel::Fresh((!items.is_empty()).then_some(0));
                "seek_to_first".to_string()
            }
            3 => {
                it.seek_to_last().unwrap();
                state = CursorModel::Fresh(items.len().checked_sub(1));
                "seek_to_last".to_string()
            }
            _ => {
                let forward = op < 7;
                let next = match state {
                    CursorModel::Done => None,
                    CursorModel::Unpositioned if forward => (!items.is_empty()).then_some(0),
                    CursorModel::Unpositioned => items.len().checked_sub(1),
                    CursorModel::Fresh(p) => p,
                    CursorModel::Yielded(p) if forward => {
                        p.map(|i| i + 1).filter(|&i| i < items.len())
                    }
                    CursorModel::Yielded(p) => p.and_then(|i| i.checked_sub(1)),
                };
                state = match next {
                    Some(_) => CursorModel::Yielded(next),
                    None => CursorModel::Done,
                };
                let got = if forward {
                    it.next_ref()
                } else {
                    it.prev_ref()
                }
                .unwrap_or_else(|e| panic!("{ctx} step: {e}"));
                assert_eq!(
                    got,
                    next.map(|i| (items[i].0.as_slice(), items[i].1.as_slice())),
                    "{ctx} cursor walk [{}] then {}",
                    steps.join(", "),
                    if forward { "next_ref" } else { "prev_ref" }
                );
                if forward { "next_ref" } else { "prev_ref" }.to_string()
            }
        };
        steps.push(what);
        let on = match state {
            CursorModel::Fresh(p) | CursorModel::Yielded(p) => p,
            CursorModel::Unpositioned => None,
            CursorModel::Done => continue, // where the cursor stands is unspecified
        };
        assert_eq!(
            it.valid(),
            on.is_some(),
            "{ctx} valid after [{}]",
            steps.join(", ")
        );
        if let Some(i) = on {
            assert_eq!(
                (it.key(), it.value()),
                (items[i].0.as_slice(), items[i].1.as_slice()),
                "{ctx} key/value after [{}]",
                steps.join(", ")
            );
        }
    }
    record(format!("  cursor walk: {}", steps.join(", ")));
}

/// A random `ReadOptions`: a live snapshot or none, bounds, cache and
/// checksum settings; with the model it reads and its range.
fn check_read_options(
    rng: &mut SmallRng,
    d: &Db,
    model: &Model,
    snapshots: &[(Snapshot, Model, usize)],
    ctx: &str,
    record: &dyn Fn(String),
) {
    let mut ro = ReadOptions::default()
        .fill_cache(rng.gen_bool(0.5))
        .verify_checksums(rng.gen_bool(0.5));
    let mut seen = model;
    let mut desc = String::new();
    if !snapshots.is_empty() && rng.gen_bool(0.7) {
        let (snap, smodel, at) = &snapshots[rng.gen_range(0..snapshots.len())];
        ro = ro.snapshot(snap);
        seen = smodel;
        desc.push_str(&format!("snapshot@{at} "));
    }
    let mut range = (Bound::Unbounded, Bound::Unbounded);
    if rng.gen_bool(0.6) {
        let l = gen_key(rng);
        range.0 = Bound::Included(l.clone());
        ro = ro.lower_bound(l);
    }
    if rng.gen_bool(0.6) {
        let u = gen_key(rng);
        range.1 = Bound::Excluded(u.clone());
        ro = ro.upper_bound(u);
    }
    desc.push_str(&format!(
        "[{}, {})",
        show_bound(&range.0),
        show_bound(&range.1)
    ));
    record(format!("  read options {desc}"));
    let ctx = format!("{ctx} read options {desc}");
    check_range(d.iter_opt(&ro), seen, &range, &ctx);
    check_range_rev(d.iter_opt(&ro), seen, &range, &ctx);
    let keys: Vec<Vec<u8>> = (0..4).map(|_| gen_key(rng)).collect();
    let got = d
        .multi_get_opt(&keys, &ro)
        .unwrap_or_else(|e| panic!("{ctx} multi_get_opt: {e}"));
    for (k, g) in keys.iter().zip(&got) {
        assert_eq!(g.as_ref(), seen.get(k), "{ctx} multi_get_opt {}", show(k));
        let one = d
            .get_opt(k, &ro)
            .unwrap_or_else(|e| panic!("{ctx} get_opt: {e}"));
        assert_eq!(one.as_ref(), seen.get(k), "{ctx} get_opt {}", show(k));
    }
}

/// Takes a checkpoint of `d` beside `dir`, opens it, compares it with the
/// model, writes to it and checks that the write stays in the checkpoint.
fn check_checkpoint(d: &Db, model: &Model, dir: &Path, opts: &Options, ctx: &str) {
    let cp = dir.with_extension("checkpoint");
    d.checkpoint(&cp)
        .unwrap_or_else(|e| panic!("{ctx} checkpoint: {e}"));
    let c = Db::open(&cp, opts.clone()).unwrap_or_else(|e| panic!("{ctx} open checkpoint: {e}"));
    assert_db_equals(&c, model, &format!("{ctx} checkpoint"));
    let probe = b"\xffcheckpoint-only";
    c.put(probe, b"x").unwrap();
    c.close()
        .unwrap_or_else(|e| panic!("{ctx} close checkpoint: {e}"));
    assert_eq!(
        d.get(probe).unwrap(),
        model.get(probe.as_slice()).cloned(),
        "{ctx} a write to the checkpoint showed in the database"
    );
    std::fs::remove_dir_all(&cp).unwrap();
}

fn note_levels(db: &Db, totals: &mut Totals) {
    let s = db.stats();
    for l in &s.levels {
        if l.files > 0 {
            totals.deepest_level_with_files = totals.deepest_level_with_files.max(l.level);
        }
    }
}

fn run_seed(cfg: &Config, seed: u64, ops: usize, dir: &Path, totals: &mut Totals) {
    let trace: RefCell<VecDeque<String>> = RefCell::new(VecDeque::new());
    let result = catch_unwind(AssertUnwindSafe(|| {
        run_ops(cfg, seed, ops, dir, totals, &trace)
    }));
    if let Err(panic) = result {
        eprintln!(
            "model test {} failed with seed {seed}; last operations (oldest first):",
            cfg.name
        );
        for line in trace.borrow().iter() {
            eprintln!("  {line}");
        }
        eprintln!("reproduce with SIEVEDB_SEED={seed} SIEVEDB_MODEL_OPS={ops}");
        resume_unwind(panic);
    }
}

fn options(cfg: &Config) -> Options {
    let mut o = small_options_with(cfg.style, cfg.bits_per_key, cfg.compression);
    if let Some((hash, sharing)) = cfg.filter_hash {
        o.filter.hash = hash;
        o.filter.sharing = sharing;
    }
    if let Some(tune) = cfg.tune_filter {
        tune(&mut o.filter);
    }
    o.merge_operator = Some(std::sync::Arc::new(sievedb::merge::Append::new(MERGE_SEP)));
    o
}

/// The separator of the model's merge operator (`Append`).
const MERGE_SEP: &[u8] = b",";

/// A short merge operand.
fn gen_operand(rng: &mut SmallRng, op: usize) -> Vec<u8> {
    let mut v = format!("m{op}").into_bytes();
    v.extend(std::iter::repeat_n(b'+', rng.gen_range(0..4)));
    v
}

/// What `Append` does to the model: the operand after the value and a
/// separator, or alone on a missing key.
fn model_merge(model: &mut Model, k: Vec<u8>, operand: &[u8]) {
    match model.get_mut(&k) {
        Some(v) => {
            v.extend_from_slice(MERGE_SEP);
            v.extend_from_slice(operand);
        }
        None => {
            model.insert(k, operand.to_vec());
        }
    }
}

fn run_ops(
    cfg: &Config,
    seed: u64,
    ops: usize,
    dir: &Path,
    totals: &mut Totals,
    trace: &RefCell<VecDeque<String>>,
) {
    let mut rng = SmallRng::seed_from_u64(seed);
    let opts = options(cfg);
    let mut db = Some(Db::open(dir, opts.clone()).expect("open fresh db"));
    let mut model = Model::new();
    let mut snapshots: Vec<(Snapshot, Model, usize)> = Vec::new();
    let record = |s: String| {
        let mut t = trace.borrow_mut();
        if t.len() == TRACE_LEN {
            t.pop_front();
        }
        t.push_back(s);
    };

    for i in 0..ops {
        let d = db.as_ref().expect("db open");
        let ctx = format!("[{} seed={seed} op={i}]", cfg.name);
        let roll = rng.gen_range(0..1180);
        match roll {
            // put
            0..=299 => {
                let k = gen_key(&mut rng);
                let v = gen_value(&mut rng, seed, i);
                record(format!("{i}: put {} = {}", show(&k), show(&v)));
                d.put(&k, &v).unwrap_or_else(|e| panic!("{ctx} put: {e}"));
                model.insert(k, v);
            }
            // delete a range (one tombstone)
            350..=379 => {
                let r = gen_delete_range(&mut rng);
                record(format!(
                    "{i}: delete_range({}, {})",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                d.delete_range(r.clone())
                    .unwrap_or_else(|e| panic!("{ctx} delete_range: {e}"));
                model.retain(|k, _| !in_bounds(k, &r));
            }
            // delete (often of a present key)
            300..=349 => {
                let k = if !model.is_empty() && rng.gen_bool(0.6) {
                    let n = rng.gen_range(0..model.len());
                    model.keys().nth(n).expect("nth key").clone()
                } else {
                    gen_key(&mut rng)
                };
                record(format!("{i}: delete {}", show(&k)));
                d.delete(&k).unwrap_or_else(|e| panic!("{ctx} delete: {e}"));
                model.remove(&k);
            }
            // atomic batch of puts and deletes (may touch one key several times)
            380..=449 => {
                let mut b = WriteBatch::new();
                let mut staged = model.clone();
                let n = rng.gen_range(1..20);
                let mut desc = Vec::new();
                for _ in 0..n {
                    let k = gen_key(&mut rng);
                    if rng.gen_range(0..10) == 0 {
                        let r = gen_delete_range(&mut rng);
                        desc.push(format!(
                            "delete_range({}, {})",
                            show_bound(&r.0),
                            show_bound(&r.1)
                        ));
                        b.delete_range(r.clone());
                        staged.retain(|k, _| !in_bounds(k, &r));
                    } else if rng.gen_range(0..6) == 0 {
                        let m = gen_operand(&mut rng, i);
                        desc.push(format!("merge {} {}", show(&k), show(&m)));
                        b.merge(&k, &m);
                        model_merge(&mut staged, k, &m);
                    } else if rng.gen_bool(0.7) {
                        let v = gen_value(&mut rng, seed, i);
                        desc.push(format!("put {}", show(&k)));
                        b.put(&k, &v);
                        staged.insert(k, v);
                    } else {
                        desc.push(format!("del {}", show(&k)));
                        b.delete(&k);
                        staged.remove(&k);
                    }
                }
                assert!(b.len() <= n, "{ctx} batch len");
                record(format!("{i}: batch [{}]", desc.join(", ")));
                d.write(b)
                    .unwrap_or_else(|e| panic!("{ctx} write batch: {e}"));
                model = staged;
            }
            // get
            450..=629 => {
                let k = if !model.is_empty() && rng.gen_bool(0.5) {
                    let n = rng.gen_range(0..model.len());
                    model.keys().nth(n).expect("nth key").clone()
                } else {
                    gen_key(&mut rng)
                };
                record(format!("{i}: get {}", show(&k)));
                let got = d
                    .get(&k)
                    .unwrap_or_else(|e| panic!("{ctx} get {}: {e}", show(&k)));
                assert_eq!(
                    got.as_ref(),
                    model.get(&k),
                    "{ctx} get {}: engine vs model",
                    show(&k)
                );
            }
            // multi_get
            630..=679 => {
                let keys: Vec<Vec<u8>> = (0..rng.gen_range(0..12))
                    .map(|_| gen_key(&mut rng))
                    .collect();
                record(format!("{i}: multi_get of {} keys", keys.len()));
                let got = d
                    .multi_get(&keys)
                    .unwrap_or_else(|e| panic!("{ctx} multi_get: {e}"));
                assert_eq!(got.len(), keys.len(), "{ctx} multi_get result count");
                for (k, g) in keys.iter().zip(&got) {
                    assert_eq!(g.as_ref(), model.get(k), "{ctx} multi_get {}", show(k));
                }
            }
            // range scan with random bounds
            680..=759 => {
                let r = gen_range(&mut rng);
                record(format!(
                    "{i}: range({}, {})",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                check_range(d.range(r.clone()), &model, &r, &ctx);
            }
            // range iterator with a seek in the middle
            760..=789 => {
                let r = gen_range(&mut rng);
                let first = rng.gen_range(0..4);
                let target = gen_key(&mut rng);
                record(format!(
                    "{i}: range({}, {}) next x{first} then seek {}",
                    show_bound(&r.0),
                    show_bound(&r.1),
                    show(&target)
                ));
                let mut it = d
                    .range(r.clone())
                    .unwrap_or_else(|e| panic!("{ctx} range: {e}"));
                let expected: Vec<_> = model.iter().filter(|(k, _)| in_bounds(k, &r)).collect();
                for (j, exp) in expected.iter().take(first).enumerate() {
                    let got = it
                        .next()
                        .unwrap_or_else(|| panic!("{ctx} item {j} missing before seek"))
                        .unwrap_or_else(|e| panic!("{ctx} next: {e}"));
                    assert_eq!((&got.0, &got.1), *exp, "{ctx} item {j} before seek");
                }
                it.seek(&target)
                    .unwrap_or_else(|e| panic!("{ctx} seek: {e}"));
                let rest: Vec<_> = it
                    .map(|r| r.unwrap_or_else(|e| panic!("{ctx} next after seek: {e}")))
                    .collect();
                assert_same_items(
                    &rest,
                    expected
                        .into_iter()
                        .filter(|(k, _)| k.as_slice() >= target.as_slice()),
                    &format!("{ctx} after seek {}", show(&target)),
                );
            }
            // full iteration
            790..=804 => {
                record(format!("{i}: full iteration"));
                let got = collect_all(d.iter(), &ctx);
                assert_same_items(&got, model.iter(), &format!("{ctx} full iteration"));
            }
            // take a snapshot
            805..=829 => {
                if snapshots.len() == MAX_SNAPSHOTS {
                    let n = rng.gen_range(0..snapshots.len());
                    let (_, _, at) = snapshots.swap_remove(n);
                    record(format!("{i}: release snapshot taken at op {at}"));
                }
                record(format!("{i}: take snapshot"));
                snapshots.push((d.snapshot(), model.clone(), i));
            }
            // verify a snapshot against the model copy of its time
            830..=889 => {
                if snapshots.is_empty() {
                    continue;
                }
                let n = rng.gen_range(0..snapshots.len());
                let (snap, smodel, at) = &snapshots[n];
                let sctx = format!("{ctx} snapshot taken at op {at}");
                for _ in 0..4 {
                    let k = if !smodel.is_empty() && rng.gen_bool(0.6) {
                        let n = rng.gen_range(0..smodel.len());
                        smodel.keys().nth(n).expect("nth key").clone()
                    } else {
                        gen_key(&mut rng)
                    };
                    record(format!("{i}: snapshot@{at} get {}", show(&k)));
                    let got = snap.get(&k).unwrap_or_else(|e| panic!("{sctx} get: {e}"));
                    assert_eq!(got.as_ref(), smodel.get(&k), "{sctx} get {}", show(&k));
                }
                let r = gen_range(&mut rng);
                record(format!(
                    "{i}: snapshot@{at} range({}, {})",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                check_range(snap.range(r.clone()), smodel, &r, &sctx);
                if rng.gen_range(0..4) == 0 {
                    record(format!("{i}: snapshot@{at} full iteration"));
                    let got = collect_all(snap.iter(), &sctx);
                    assert_same_items(&got, smodel.iter(), &format!("{sctx} full iteration"));
                }
            }
            // flush
            890..=914 => {
                record(format!("{i}: flush"));
                d.flush().unwrap_or_else(|e| panic!("{ctx} flush: {e}"));
                note_levels(d, totals);
            }
            // compact a random range or everything
            915..=934 => {
                let r = gen_range(&mut rng);
                record(format!(
                    "{i}: compact_range({}, {})",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                d.compact_range(r)
                    .unwrap_or_else(|e| panic!("{ctx} compact_range: {e}"));
                note_levels(d, totals);
            }
            935..=944 => {
                record(format!("{i}: compact_range(..)"));
                d.compact_range::<&[u8], _>(..)
                    .unwrap_or_else(|e| panic!("{ctx} compact_range(..): {e}"));
                note_levels(d, totals);
            }
            // release a snapshot
            945..=979 => {
                if !snapshots.is_empty() {
                    let n = rng.gen_range(0..snapshots.len());
                    let (_, _, at) = snapshots.swap_remove(n);
                    record(format!("{i}: release snapshot taken at op {at}"));
                }
            }
            // reopen (close or drop), then verify everything
            980..=999 => {
                if rng.gen_range(0..3) != 0 {
                    continue; // keep reopens rarer than the other ops
                }
                // Snapshots keep the database alive: release them first.
                snapshots.clear();
                let d = db.take().expect("db open");
                let s = d.stats();
                totals.puts += s.puts;
                totals.flushes += s.flushes;
                totals.compactions += s.compactions;
                note_levels(&d, totals);
                if rng.gen_bool(0.5) {
                    record(format!("{i}: close + reopen"));
                    d.close().unwrap_or_else(|e| panic!("{ctx} close: {e}"));
                } else {
                    record(format!("{i}: drop + reopen"));
                    drop(d);
                }
                let d = Db::open(dir, opts.clone()).unwrap_or_else(|e| panic!("{ctx} reopen: {e}"));
                assert_db_equals(&d, &model, &format!("{ctx} after reopen"));
                db = Some(d);
            }
            // reverse range scan, of the database or of a snapshot
            1000..=1029 => {
                let r = gen_range(&mut rng);
                let which = rng.gen_range(0..snapshots.len() + 1);
                record(format!(
                    "{i}: rev range({}, {}) of {}",
                    show_bound(&r.0),
                    show_bound(&r.1),
                    if which == 0 {
                        "db".into()
                    } else {
                        format!("snapshot@{}", snapshots[which - 1].2)
                    }
                ));
                match which {
                    0 => check_range_rev(d.range(r.clone()), &model, &r, &ctx),
                    n => {
                        let (snap, smodel, _) = &snapshots[n - 1];
                        check_range_rev(snap.range(r.clone()), smodel, &r, &ctx);
                    }
                }
            }
            // next and next_back mixed on one iterator
            1030..=1049 => {
                let r = gen_range(&mut rng);
                record(format!(
                    "{i}: double-ended range({}, {})",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                let it = d
                    .range(r.clone())
                    .unwrap_or_else(|e| panic!("{ctx} range: {e}"));
                check_double_ended(&mut rng, it, &model, &r, &ctx);
            }
            // cursor walk: seeks, seek_for_prev, next_ref / prev_ref
            1050..=1079 => {
                let r = gen_range(&mut rng);
                let which = rng.gen_range(0..snapshots.len() + 1);
                record(format!(
                    "{i}: cursor walk in range({}, {}) of {which}",
                    show_bound(&r.0),
                    show_bound(&r.1)
                ));
                let (it, m) = match which {
                    0 => (d.range(r.clone()), &model),
                    n => (snapshots[n - 1].0.range(r.clone()), &snapshots[n - 1].1),
                };
                let it = it.unwrap_or_else(|e| panic!("{ctx} range: {e}"));
                check_cursor_walk(&mut rng, it, m, &r, &ctx, &record);
            }
            // prefix iteration, of the database or of a snapshot
            1080..=1099 => {
                let p = gen_prefix(&mut rng, &model);
                record(format!("{i}: prefix {}", show(&p)));
                check_prefix(|| d.prefix(&p), &model, &p, &ctx);
                if let Some((snap, smodel, at)) = snapshots.first() {
                    check_prefix(
                        || snap.prefix(&p),
                        smodel,
                        &p,
                        &format!("{ctx} snapshot@{at}"),
                    );
                }
            }
            // reads with ReadOptions: snapshot, bounds, cache, checksums
            1100..=1119 => {
                record(format!("{i}: read options"));
                check_read_options(&mut rng, d, &model, &snapshots, &ctx, &record);
            }
            // a checkpoint: it opens as the model of now, and stays apart
            1120..=1129 => {
                if rng.gen_range(0..4) != 0 {
                    continue; // each one flushes: keep them rare
                }
                record(format!("{i}: checkpoint"));
                check_checkpoint(d, &model, dir, &opts, &ctx);
            }
            // merge an operand (often into a present key)
            1130..=1179 => {
                let k = if !model.is_empty() && rng.gen_bool(0.5) {
                    let n = rng.gen_range(0..model.len());
                    model.keys().nth(n).expect("nth key").clone()
                } else {
                    gen_key(&mut rng)
                };
                let m = gen_operand(&mut rng, i);
                record(format!("{i}: merge {} {}", show(&k), show(&m)));
                d.merge(&k, &m)
                    .unwrap_or_else(|e| panic!("{ctx} merge: {e}"));
                model_merge(&mut model, k, &m);
            }
            _ => unreachable!("roll {roll}"),
        }
    }

    // Final checks: everything on disk, a last reopen, content intact.
    let ctx = format!("[{} seed={seed} end]", cfg.name);
    let d = db.take().expect("db open");
    record("end: verify, flush, verify, reopen, verify".into());
    assert_db_equals(&d, &model, &ctx);
    for (snap, smodel, at) in &snapshots {
        let got = collect_all(snap.iter(), &ctx);
        assert_same_items(
            &got,
            smodel.iter(),
            &format!("{ctx} snapshot taken at op {at}"),
        );
    }
    snapshots.clear();
    d.flush().unwrap_or_else(|e| panic!("{ctx} flush: {e}"));
    assert_db_equals(&d, &model, &format!("{ctx} after final flush"));
    let s = d.stats();
    // Counters are per incarnation: the last one may have written nothing.
    assert!(s.gets > 0, "{ctx} stats.gets is 0: {s:?}");
    totals.puts += s.puts;
    totals.flushes += s.flushes;
    totals.compactions += s.compactions;
    note_levels(&d, totals);
    assert!(
        s.levels
            .iter()
            .filter(|l| l.level >= 1)
            .map(|l| l.files)
            .sum::<usize>()
            > 0,
        "{ctx} no SST below level 0 at the end: {s:?}"
    );
    d.close().unwrap_or_else(|e| panic!("{ctx} close: {e}"));
    let d = Db::open(dir, opts).unwrap_or_else(|e| panic!("{ctx} final reopen: {e}"));
    assert_db_equals(&d, &model, &format!("{ctx} after final reopen"));
}

fn run_config(cfg: &Config) {
    let ops = env_usize("SIEVEDB_MODEL_OPS", 3000);
    let mut totals = Totals::default();
    for seed in seeds(cfg.seeds) {
        let tmp = tempfile::tempdir().expect("tempdir");
        run_seed(cfg, seed, ops, &tmp.path().join("db"), &mut totals);
    }
    eprintln!(
        "{}: {} flushes, {} compactions, deepest level with files {}",
        cfg.name, totals.flushes, totals.compactions, totals.deepest_level_with_files
    );
    assert!(totals.puts > 0, "{}: no put was counted", cfg.name);
    assert!(totals.flushes > 0, "{}: no flush happened", cfg.name);
    assert!(
        totals.compactions > 0,
        "{}: no compaction happened",
        cfg.name
    );
    assert!(
        totals.deepest_level_with_files >= 2,
        "{}: data never reached level 2 (deepest level with files: {}); the test does not cover deep levels",
        cfg.name,
        totals.deepest_level_with_files
    );
}

#[test]
fn model_leveling() {
    run_config(&Config {
        name: "leveling",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::None,
        filter_hash: None,
        tune_filter: None,
        seeds: &[1, 2],
    });
}

#[test]
fn model_tiering() {
    run_config(&Config {
        name: "tiering",
        style: CompactionStyle::Tiering,
        bits_per_key: 10.0,
        compression: Compression::None,
        filter_hash: None,
        tune_filter: None,
        seeds: &[11, 12],
    });
}

#[test]
fn model_leveling_no_filters() {
    run_config(&Config {
        name: "leveling-no-filters",
        style: CompactionStyle::Leveling,
        bits_per_key: 0.0,
        compression: Compression::None,
        filter_hash: None,
        tune_filter: None,
        seeds: &[21],
    });
}

#[test]
fn model_lz4() {
    run_config(&Config {
        name: "lz4",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::Lz4,
        filter_hash: None,
        tune_filter: None,
        seeds: &[31],
    });
}

#[test]
fn model_zstd() {
    run_config(&Config {
        name: "zstd",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::zstd(),
        filter_hash: None,
        tune_filter: None,
        seeds: &[33],
    });
}

#[test]
fn model_tiering_lz4_no_filters() {
    run_config(&Config {
        name: "tiering-lz4-no-filters",
        style: CompactionStyle::Tiering,
        bits_per_key: 0.0,
        compression: Compression::Lz4,
        filter_hash: None,
        tune_filter: None,
        seeds: &[41],
    });
}

#[test]
fn model_tiering_xxh3_per_filter_hashing() {
    run_config(&Config {
        name: "tiering-xxh3-sharing-filter",
        style: CompactionStyle::Tiering,
        bits_per_key: 6.0,
        compression: Compression::None,
        filter_hash: Some((HashFn::Xxh3, HashSharing::Filter)),
        tune_filter: None,
        seeds: &[51],
    });
}

#[test]
fn model_leveling_no_hash_sharing() {
    run_config(&Config {
        name: "leveling-murmur3-sharing-none",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::None,
        filter_hash: Some((HashFn::Murmur3, HashSharing::None)),
        tune_filter: None,
        seeds: &[61],
    });
}

#[test]
fn model_leveling_blocked_double_memtable_filter() {
    run_config(&Config {
        name: "leveling-blocked-double-memtable-filter",
        style: CompactionStyle::Leveling,
        bits_per_key: 10.0,
        compression: Compression::None,
        filter_hash: None,
        tune_filter: Some(|f| {
            f.layout = FilterLayout::Blocked;
            f.scheme = IndexScheme::Double;
            f.memtable_filter = true;
        }),
        seeds: &[71],
    });
}

#[test]
fn model_tiering_units_memtable_filter() {
    run_config(&Config {
        name: "tiering-units-separate-memtable-filter",
        style: CompactionStyle::Tiering,
        bits_per_key: 8.0,
        compression: Compression::None,
        filter_hash: Some((HashFn::City64, HashSharing::Levels)),
        tune_filter: Some(|f| {
            f.layout = FilterLayout::Units;
            f.units = 4;
            f.unit_hashing = UnitHashing::Separate;
            f.scheme = IndexScheme::EnhancedDouble;
            f.memtable_filter = true;
        }),
        seeds: &[81],
    });
}
