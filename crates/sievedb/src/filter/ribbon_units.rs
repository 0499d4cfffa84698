//! ElasticBF units made of Ribbon filters ([`super::FilterLayout::RibbonUnits`]).
//!
//! Unit `j` of a file is a Ribbon filter ([`super::ribbon`]) of the file's
//! stored digests, each remixed with the unit's salt (`unit_digest(h, j)`),
//! so that the units answer independently and a file's rate with `n` units
//! resident is the product of theirs, `2^{−r·n}`. Every unit has the same
//! slots and result bits `r`; each has its own seed (the one its band
//! solved with: a failed construction retries with the next seed, applied
//! to the remixed digests, never a rehash of the keys). A lookup probes unit
//! `j` with its one digest remixed with the salt of `j` and the unit's seed.
//!
//! A unit's bits, in memory and in its block on disk, are its solution
//! (`slots / 64 · r` words, interleaved column-major as the Ribbon64 layout's)
//! followed by one word holding its seed (`0..=255`): `unit_bits =
//! slots · r + 64`. Units are loaded, dropped and counted as Bloom units
//! are: whole words per unit, the first `n` resident.
//!
//! This module calls the Ribbon code through four functions only (sizing,
//! `build::solve`, `query::may_contain`), so that Ribbon's internals may
//! change under it.

use super::hash::fmix64;
use super::ribbon;
use super::Params;

/// Words after a unit's solution: its seed.
pub const SEED_WORDS: u64 = 1;

/// Units tried again at a larger size before giving up (each round only
/// re-solves the units smaller than the largest so far).
const MAX_ROUNDS: u32 = 16;

/// The salt remixing digests for unit `j` (odd multiples of a golden-ratio
/// constant, distinct per unit).
#[inline(always)]
fn salt(j: u32) -> u64 {
    (u64::from(j) * 2 + 1).wrapping_mul(0xa076_1d64_78bd_642f)
}

/// Digest `h` as unit `j` sees it.
#[inline(always)]
pub(crate) fn unit_digest(h: u64, j: u32) -> u64 {
    fmix64(h ^ salt(j))
}

/// Result bits of each of `units` units sharing `bits_per_key` over `n`
/// keys: `⌊(b / units) / (1 + ε(n))⌋`, at least 1.
pub fn result_bits(bits_per_key: f64, units: u32, n: usize) -> u32 {
    ribbon::result_bits_for(bits_per_key / f64::from(units.max(1)), n)
}

/// Slots of every unit for `n` keys (before any growth on failure).
pub fn slots(n: usize) -> u64 {
    ribbon::slots_for(n, ribbon::epsilon_for(n))
}

/// Bits of one unit of `slots` slots and `r` result bits, its seed word
/// included.
pub fn unit_bits(slots: u64, r: u32) -> u64 {
    slots * u64::from(r) + 64 * SEED_WORDS
}

/// The slots of a unit of `unit_bits` bits and `r` result bits, `None` when
/// the size is not a seed word plus a nonzero multiple of 64 slots.
pub fn slots_of(unit_bits: u64, r: u32) -> Option<u64> {
    let per_block = ribbon::W * u64::from(r);
    let solution = unit_bits.checked_sub(64 * SEED_WORDS)?;
    (r > 0 && solution > 0 && solution.is_multiple_of(per_block)).then(|| solution / u64::from(r))
}

/// Builds `units` units of `r` result bits from `digests` (one per key),
/// starting at `slots` slots: `(slots, words)` with `units × unit_bits / 64`
/// words, or `None` if some unit banded under no seed.
pub(crate) fn build(digests: &[u64], units: u32, r: u32, slots: u64) -> Option<(u64, Vec<u64>)> {
    let mut target = slots;
    // Per unit: (seed, slots, solution) once solved.
    type Unit = (u8, u64, Box<[u64]>);
    let mut solved: Vec<Option<Unit>> = vec![None; units as usize];
    let mut remixed = Vec::with_capacity(digests.len());
    for _ in 0..MAX_ROUNDS {
        let mut changed = false;
        for (j, slot) in (0u32..).zip(solved.iter_mut()) {
            if slot.as_ref().is_some_and(|s| s.1 == target) {
                continue;
            }
            remixed.clear();
            remixed.extend(digests.iter().map(|&h| unit_digest(h, j)));
            let s = ribbon::build::solve(&remixed, r, target)?;
            if s.slots > target {
                target = s.slots;
                changed = true;
            }
            *slot = Some((s.seed, s.slots, s.words));
        }
        if !changed
            && solved
                .iter()
                .all(|s| s.as_ref().is_some_and(|s| s.1 == target))
        {
            let wpu = (unit_bits(target, r) / 64) as usize;
            let mut words = Vec::with_capacity(wpu * units as usize);
            for (seed, _, w) in solved.into_iter().flatten() {
                words.extend_from_slice(&w);
                words.push(u64::from(seed));
            }
            return Some((target, words));
        }
    }
    None
}

/// Whether the units of `words` enabled in `mask` (bit `j` = unit `j`, all
/// of them resident) may hold the key of digest `h1`, stopping at the first
/// unit that rules it out.
#[inline(always)]
pub(crate) fn run(p: &Params, words: &[u64], h1: u64, mask: u64) -> bool {
    let wpu = p.wpu;
    let solution = wpu - SEED_WORDS as usize;
    for (j, unit) in (0u32..p.units).zip(words.chunks_exact(wpu)) {
        if (mask >> j) & 1 == 0 {
            continue;
        }
        let seed = unit[solution] as u8;
        let d = unit_digest(h1, j);
        if !ribbon::query::may_contain(&unit[..solution], seed, p.slots, p.k, d) {
            return false;
        }
    }
    true
}

/// Checks the seed word of every unit of `words`; the error names the first
/// bad one.
pub(crate) fn check_seeds(words: &[u64], wpu: usize) -> std::result::Result<(), String> {
    for (j, unit) in words.chunks_exact(wpu.max(1)).enumerate() {
        let seed = unit[unit.len() - 1];
        if seed > u64::from(u8::MAX) {
            return Err(format!("ribbon unit {j} has seed word {seed:#x}"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn digests(n: u64, salt: u64) -> Vec<u64> {
        (0..n).map(|i| fmix64(i ^ salt.rotate_left(17))).collect()
    }

    #[test]
    fn sizes_round_trip() {
        for (n, r) in [(1usize, 1u32), (1000, 1), (5000, 3), (100_000, 2)] {
            let s = slots(n);
            assert_eq!(slots_of(unit_bits(s, r), r), Some(s));
        }
        assert_eq!(slots_of(64, 1), None);
        assert_eq!(slots_of(0, 1), None);
        assert_eq!(slots_of(64 + 64 * 3 + 64, 3), None);
        assert_eq!(result_bits(10.0, 7, 100_000), 1);
        assert_eq!(result_bits(8.0, 2, 1000), 3);
    }

    #[test]
    fn units_find_every_key_and_are_independent() {
        let keys = digests(20_000, 1);
        let (units, r) = (4, 1);
        let (s, words) = build(&keys, units, r, slots(keys.len())).unwrap();
        let p = Params {
            layout: super::super::FilterLayout::RibbonUnits,
            scheme: super::super::IndexScheme::Rotation,
            unit_hashing: super::super::UnitHashing::Shared,
            hash: super::super::HashFn::Murmur64A,
            secondary: super::super::HashFn::Murmur64A,
            k: r,
            units,
            unit_bits: unit_bits(s, r),
            wpu: (unit_bits(s, r) / 64) as usize,
            lines: 0,
            line_fields: 0,
            seed: 0,
            slots: s,
            frac: 0,
            upper: 0,
            homogeneous: false,
        };
        assert_eq!(words.len(), p.wpu * units as usize);
        check_seeds(&words, p.wpu).unwrap();
        for &h in &keys {
            assert!(run(&p, &words, h, u64::MAX));
        }
        // Rate with n units ≈ 2^-n: independent units multiply.
        let others = digests(200_000, 2);
        for n in 1..=units {
            let mask = (1u64 << n) - 1;
            let fp = others.iter().filter(|&&h| run(&p, &words, h, mask)).count();
            let rate = fp as f64 / others.len() as f64;
            let want = 0.5f64.powf(f64::from(n));
            assert!(
                (rate / want - 1.0).abs() < 0.1,
                "{n} units: {rate} vs {want}"
            );
        }
        let mut bad = words.clone();
        bad[p.wpu - 1] = 256;
        assert!(check_seeds(&bad, p.wpu).is_err());
    }
}
