//! Test helpers shared by the internal iterators' unit tests: random sorted
//! entries and a checker that drives an iterator in both directions against
//! the expected order.

use std::cmp::Ordering;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

pub(crate) use super::vec::VecIter;
use super::InternalIterator;
use crate::key::{self, Kind};

/// `n` distinct internal keys (user keys sharing prefixes, several versions
/// of some keys, both kinds) with values, sorted by [`key::compare`].
pub(crate) fn random_entries(seed: u64, n: usize) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut rng = SmallRng::seed_from_u64(seed);
    let mut out: Vec<(Vec<u8>, Vec<u8>)> = (0..n)
        .map(|i| {
            let len = rng.gen_range(0..6);
            let mut user: Vec<u8> = b"key".to_vec();
            user.extend((0..len).map(|_| rng.gen_range(b'a'..b'e')));
            if rng.gen_bool(0.05) {
                user.push(0xFF);
            }
            let kind = if rng.gen_bool(0.8) {
                Kind::Put
            } else {
                Kind::Delete
            };
            let ik = key::internal_key(&user, i as u64 + 1, kind);
            let value = vec![b'v'; rng.gen_range(0..20)];
            (ik, value)
        })
        .collect();
    out.sort_by(|a, b| key::compare(&a.0, &b.0));
    out
}

fn entry(it: &dyn InternalIterator) -> Option<(Vec<u8>, Vec<u8>)> {
    it.valid().then(|| (it.key().to_vec(), it.value().to_vec()))
}

/// Checks `it` against `expected` (sorted): a forward and a backward scan,
/// `seek` and `seek_for_prev` to every key and between keys, and random walks
/// mixing `next` and `prev`.
pub(crate) fn check_bidirectional(
    it: &mut dyn InternalIterator,
    expected: &[(Vec<u8>, Vec<u8>)],
    seed: u64,
) {
    let mut fwd = Vec::new();
    it.seek_to_first().unwrap();
    while let Some(e) = entry(it) {
        fwd.push(e);
        it.next().unwrap();
    }
    assert_eq!(fwd, expected, "forward scan");
    let mut back = Vec::new();
    it.seek_to_last().unwrap();
    while let Some(e) = entry(it) {
        back.push(e);
        it.prev().unwrap();
    }
    back.reverse();
    assert_eq!(back, expected, "backward scan");
    for (i, (k, _)) in expected.iter().enumerate() {
        it.seek(k).unwrap();
        assert_eq!(entry(it).as_ref(), expected.get(i), "seek");
        it.seek_for_prev(k).unwrap();
        assert_eq!(entry(it).as_ref(), expected.get(i), "seek_for_prev");
        // Just past `k` (a smaller trailer) and just before it (a larger one).
        let t = key::trailer_of(k);
        let user = key::user_key(k);
        if t > 0 {
            let mut after = user.to_vec();
            after.extend_from_slice(&(t - 1).to_le_bytes());
            it.seek_for_prev(&after).unwrap();
            assert_eq!(entry(it).as_ref(), expected.get(i), "seek_for_prev after");
            it.seek(&after).unwrap();
            assert_eq!(entry(it).as_ref(), expected.get(i + 1), "seek after");
        }
        if t < u64::MAX {
            let mut before = user.to_vec();
            before.extend_from_slice(&(t + 1).to_le_bytes());
            it.seek_for_prev(&before).unwrap();
            let want = i.checked_sub(1).and_then(|j| expected.get(j));
            assert_eq!(entry(it).as_ref(), want, "seek_for_prev before");
        }
    }
    let below = key::internal_key(b"", u64::MAX >> 8, Kind::Put);
    it.seek_for_prev(&below).unwrap();
    assert!(!it.valid() || key::compare(it.key(), &below) != Ordering::Greater);
    random_walks(it, expected, seed);
}

/// Random sequences of `next` and `prev` from random starting points.
fn random_walks(it: &mut dyn InternalIterator, expected: &[(Vec<u8>, Vec<u8>)], seed: u64) {
    if expected.is_empty() {
        return;
    }
    let mut rng = SmallRng::seed_from_u64(seed ^ 0x5eed);
    for _ in 0..20 {
        let mut pos = rng.gen_range(0..expected.len());
        it.seek(&expected[pos].0).unwrap();
        for _ in 0..50 {
            if rng.gen_bool(0.5) {
                it.next().unwrap();
                pos += 1;
            } else {
                it.prev().unwrap();
                if pos == 0 {
                    assert!(!it.valid(), "prev before the first entry");
                    break;
                }
                pos -= 1;
            }
            if pos >= expected.len() {
                assert!(!it.valid(), "next past the last entry");
                break;
            }
            assert_eq!(entry(it).as_ref(), Some(&expected[pos]), "random walk");
        }
    }
}
