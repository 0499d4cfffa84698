//! Generators of the model test: keys that collide, values, bounds, range
//! deletes, prefixes and merge operands, and the model of the merge operator.

use std::ops::Bound;

use rand::rngs::SmallRng;
use rand::Rng;

use crate::common::Model;

/// Number of distinct short keys: small so that writes collide.
pub const KEY_SPACE: u32 = 400;

pub fn gen_key(rng: &mut SmallRng) -> Vec<u8> {
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

pub fn gen_value(rng: &mut SmallRng, seed: u64, op: usize) -> Vec<u8> {
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

pub fn gen_bound(rng: &mut SmallRng) -> Bound<Vec<u8>> {
    match rng.gen_range(0..5) {
        0 => Bound::Unbounded,
        1 | 2 => Bound::Included(gen_key(rng)),
        _ => Bound::Excluded(gen_key(rng)),
    }
}

/// Random bounds, usually ordered low to high (sometimes inverted or empty).
pub fn gen_range(rng: &mut SmallRng) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
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
pub fn gen_delete_range(rng: &mut SmallRng) -> (Bound<Vec<u8>>, Bound<Vec<u8>>) {
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

/// A prefix to iterate: a piece of a present key, or one of the awkward
/// ones (empty, 0xFF bytes, a prefix of many keys).
pub fn gen_prefix(rng: &mut SmallRng, model: &Model) -> Vec<u8> {
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
/// The separator of the model's merge operator (`Append`).
pub const MERGE_SEP: &[u8] = b",";

/// A short merge operand.
pub fn gen_operand(rng: &mut SmallRng, op: usize) -> Vec<u8> {
    let mut v = format!("m{op}").into_bytes();
    v.extend(std::iter::repeat_n(b'+', rng.gen_range(0..4)));
    v
}

/// What `Append` does to the model: the operand after the value and a
/// separator, or alone on a missing key.
pub fn model_merge(model: &mut Model, k: Vec<u8>, operand: &[u8]) {
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
