//! Checks of the model test: each read path (ranges both ways, prefixes,
//! double-ended iteration, cursor walks, `ReadOptions`, checkpoints)
//! compared with the model.

use std::collections::VecDeque;
use std::ops::Bound;
use std::path::Path;

use rand::rngs::SmallRng;
use rand::Rng;
use sievedb::{Db, DbIterator, Options, ReadOptions, Snapshot};

use crate::common::{assert_db_equals, assert_same_items, collect_all, show, Model};
use crate::model_parts::gen::gen_key;

pub fn in_bounds(k: &[u8], (lo, hi): &(Bound<Vec<u8>>, Bound<Vec<u8>>)) -> bool {
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

pub fn show_bound(b: &Bound<Vec<u8>>) -> String {
    match b {
        Bound::Unbounded => "..".into(),
        Bound::Included(k) => format!("Included({})", show(k)),
        Bound::Excluded(k) => format!("Excluded({})", show(k)),
    }
}

/// Checks a range read (engine iterator `got`) against the model.
pub fn check_range(
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
pub fn expected_in<'a>(
    model: &'a Model,
    range: &(Bound<Vec<u8>>, Bound<Vec<u8>>),
) -> Vec<(&'a Vec<u8>, &'a Vec<u8>)> {
    model.iter().filter(|(k, _)| in_bounds(k, range)).collect()
}

/// Checks a range read walked backward (`.rev()`) against the model.
pub fn check_range_rev(
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

/// Checks `prefix` iteration, forward and backward, against the model.
pub fn check_prefix(
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
pub fn check_double_ended(
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
pub enum CursorModel {
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
pub fn check_cursor_walk(
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
pub fn check_read_options(
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
/// model (and with `more`: the named keyspaces), writes to it and checks
/// that the write stays in the checkpoint.
pub fn check_checkpoint(
    d: &Db,
    model: &Model,
    dir: &Path,
    opts: &Options,
    ctx: &str,
    more: &dyn Fn(&Db, &str),
) {
    let cp = dir.with_extension("checkpoint");
    d.checkpoint(&cp)
        .unwrap_or_else(|e| panic!("{ctx} checkpoint: {e}"));
    let c = Db::open(&cp, opts.clone()).unwrap_or_else(|e| panic!("{ctx} open checkpoint: {e}"));
    assert_db_equals(&c, model, &format!("{ctx} checkpoint"));
    more(&c, &format!("{ctx} checkpoint"));
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

/// Seeks with `prefix_same_as_start` (when the database has a prefix
/// extractor), forward and backward, optionally from a snapshot: they yield
/// the model's keys of the target's prefix from the target on (every key
/// from it on when the target is out of the extractor's domain).
pub fn check_prefix_seek(
    rng: &mut SmallRng,
    d: &Db,
    model: &Model,
    snapshots: &[(Snapshot, Model, usize)],
    ctx: &str,
    record: &dyn Fn(String),
) {
    let Some(x) = d.options().prefix_extractor.clone() else {
        return;
    };
    let t = if !model.is_empty() && rng.gen_bool(0.5) {
        let n = rng.gen_range(0..model.len());
        let k = model.keys().nth(n).expect("nth key");
        k[..rng.gen_range(0..=k.len().min(7))].to_vec()
    } else {
        gen_key(rng)
    };
    let mut ro = ReadOptions::default().prefix_same_as_start(true);
    let mut seen = model;
    let mut desc = String::new();
    if !snapshots.is_empty() && rng.gen_bool(0.3) {
        let (snap, smodel, at) = &snapshots[rng.gen_range(0..snapshots.len())];
        ro = ro.snapshot(snap);
        seen = smodel;
        desc.push_str(&format!("snapshot@{at} "));
    }
    record(format!("  prefix seek {desc}{}", show(&t)));
    let ctx = format!("{ctx} prefix seek {desc}{}", show(&t));
    let p = sievedb::filter::prefix::prefix_of(x.as_ref(), &t).map(<[u8]>::to_vec);
    let keeps = |k: &[u8]| {
        p.as_deref()
            .is_none_or(|p| sievedb::filter::prefix::prefix_of(x.as_ref(), k) == Some(p))
    };
    let mut it = d
        .iter_opt(&ro)
        .unwrap_or_else(|e| panic!("{ctx}: creating iterator failed: {e}"));
    it.seek(&t).unwrap_or_else(|e| panic!("{ctx} seek: {e}"));
    let mut got = Vec::new();
    while let Some((k, v)) = it.next_ref().unwrap_or_else(|e| panic!("{ctx} next: {e}")) {
        got.push((k.to_vec(), v.to_vec()));
    }
    assert_same_items(
        &got,
        seen.range(t.clone()..).filter(|(k, _)| keeps(k)),
        &ctx,
    );
    it.seek_for_prev(&t)
        .unwrap_or_else(|e| panic!("{ctx} seek_for_prev: {e}"));
    let mut got = Vec::new();
    while let Some((k, v)) = it.prev_ref().unwrap_or_else(|e| panic!("{ctx} prev: {e}")) {
        got.push((k.to_vec(), v.to_vec()));
    }
    assert_same_items(
        &got,
        seen.range(..=t.clone()).rev().filter(|(k, _)| keeps(k)),
        &format!("{ctx} backward"),
    );
}
