//! Unit tests of the wide Ribbon (128-bit rows, fractional result bits).

use super::build::solve;
use super::query::may_contain;
use super::*;
use crate::filter::theory::ribbon_wide_fpr;

/// `n` pseudo-random digests.
fn digests(n: usize, base: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| {
            crate::filter::hash::fmix64(
                base.wrapping_add(i).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            )
        })
        .collect()
}

/// Solves `keys` at `bits_per_key` with the production sizing, homogeneous
/// (layout 7) or standard (layout 5).
fn solved(keys: &[u64], bits_per_key: f64, homogeneous: bool) -> (build::Solved, u32, u8) {
    let n = keys.len();
    let slots = slots_for(n, epsilon_for(n));
    if homogeneous {
        build::solve_homogeneous_within(keys, bits_per_key, slots)
    } else {
        build::solve_within(keys, bits_per_key, slots).expect("bands")
    }
}

/// Whether the solved `s` at `(r, q)` may contain digest `h`.
fn probe(s: &build::Solved, r: u32, q: u8, homogeneous: bool, h: u64) -> bool {
    let upper = upper_blocks(s.slots / BLOCK, q);
    may_contain(&s.words, s.seed, s.slots, r, upper, homogeneous, h)
}

#[test]
fn no_false_negatives_at_many_sizes() {
    for homogeneous in [true, false] {
        for n in [0, 1, 2, 63, 64, 65, 127, 128, 129, 1000, 10_000] {
            for bpk in [2.0, 7.2, 9.5, 16.0] {
                let keys = digests(n, 7 + n as u64);
                let (s, r, q) = solved(&keys, bpk, homogeneous);
                assert_eq!(s.words.len() as u64, words_for(s.slots / BLOCK, r, q));
                assert!(
                    keys.iter().all(|&h| probe(&s, r, q, homogeneous, h)),
                    "n={n} b={bpk} homogeneous={homogeneous}"
                );
            }
        }
    }
    // Equal digests are consistent rows.
    let s = solve(&[5, 5, 5, 9, 9], 16, 100, 128).expect("bands");
    assert_eq!(s.failed_seeds, 0);
    assert!(probe(&s, 16, 100, false, 5));
    let (s, r, q) = build::solve_homogeneous_within(&[5, 5, 5, 9, 9], 16.0, 128);
    assert!(probe(&s, r, q, true, 5) && probe(&s, r, q, true, 9));
}

#[test]
fn no_false_negatives_at_a_million_keys() {
    let keys = digests(1_000_000, 99);
    for homogeneous in [true, false] {
        let (s, r, q) = solved(&keys, 7.2, homogeneous);
        assert!(keys.iter().all(|&h| probe(&s, r, q, homogeneous, h)));
        let bits = s.words.len() as f64 * 64.0 / keys.len() as f64;
        assert!(bits <= 7.2 + 1e-9, "{bits}");
    }
}

#[test]
fn fpr_follows_theory_at_fractional_bits() {
    let keys = digests(100_000, 1);
    let absent = digests(400_000, 1 << 40);
    for homogeneous in [true, false] {
        for bpk in [2.0, 3.3, 5.5, 7.2, 8.0, 10.7] {
            let (s, r, q) = solved(&keys, bpk, homogeneous);
            let upper = upper_blocks(s.slots / BLOCK, q);
            let fp = absent
                .iter()
                .filter(|&&h| probe(&s, r, q, homogeneous, h))
                .count();
            let got = fp as f64 / absent.len() as f64;
            let want = ribbon_wide_fpr(r, s.slots, upper, keys.len() as u64);
            // 400K probes: at 10.7 bits/key ≈ 1/1700, ~240 false positives, ±3σ ≈ 20%.
            let tol = if bpk > 9.0 { 0.25 } else { 0.10 };
            assert!(
                (got / want - 1.0).abs() < tol,
                "b={bpk} homogeneous={homogeneous}: {got} vs {want}"
            );
            let used = s.words.len() as f64 * 64.0 / keys.len() as f64;
            assert!(used <= bpk + 1e-9 && used > bpk - 0.1, "b={bpk}: {used}");
        }
    }
}

/// A homogeneous solution's free slots are not all zero (with them all 0
/// the solution would be 0 and every key would match).
#[test]
fn homogeneous_free_slots_are_random() {
    let keys = digests(10_000, 3);
    let (s, r, q) = solved(&keys, 8.0, true);
    let absent = digests(100_000, 1 << 42);
    let fp = absent.iter().filter(|&&h| probe(&s, r, q, true, h)).count();
    assert!(fp < 1_000, "{fp} of 100000 absent keys match");
    assert_ne!(build::free_bits(0), build::free_bits(1));
}

#[test]
fn a_failed_banding_retries_with_a_new_seed_then_grows() {
    let keys = digests(1100, 3);
    let s = solve(&keys, 6, 128, 1024).expect("bands after growing");
    assert!(s.failed_seeds >= crate::filter::ribbon::TRIES_PER_SIZE);
    assert_eq!(u32::from(s.seed), s.failed_seeds);
    assert!(keys.iter().all(|&h| probe(&s, 6, 128, false, h)));
    // The homogeneous variant takes the same overloaded band in one pass.
    let (s, r, q) = build::solve_homogeneous_within(&keys, 6.5 * 1024.0 / 1100.0, 1024);
    assert_eq!((s.slots, s.failed_seeds), (1024, 0));
    assert!(keys.iter().all(|&h| probe(&s, r, q, true, h)));
    assert_ne!(WideRow::new(42, 0, 4096), WideRow::new(42, 1, 4096));
}

#[test]
fn sizing_and_block_arithmetic() {
    assert_eq!(result_bits_for(0.5, 10, 128), (1, 0));
    assert_eq!(result_bits_for(f64::NAN, 10, 128), (1, 0));
    assert_eq!(result_bits_for(1e6, 10, 128), (MAX_RESULT_BITS, 0));
    assert_eq!(result_bits_for(7.5, 1000, 1000), (7, 128));
    assert_eq!(slots_for(0, epsilon_for(0)), 128);
    assert_eq!(upper_blocks(10, 128), 5);
    assert_eq!(words_for(10, 7, 128), 75);
    for (blocks, r, q) in [(2, 1, 0), (2, 63, 255), (1000, 7, 200), (17, 3, 1)] {
        let w = words_for(blocks, r, q);
        assert_eq!(blocks_for_words(w, r, q), Some(blocks));
    }
    assert_eq!(blocks_for_words(1, 1, 0), None);
    assert_eq!(blocks_for_words(0, 0, 0), None);
    assert_eq!(block_offset(3, 7, 2), 23);
    let row = WideRow::new(u64::MAX, 255, 128);
    assert_eq!((row.start, row.coeff & 1), (0, 1));
}

/// First-seed banding success by ε and n (`--ignored --nocapture`, release):
/// the measurement behind [`epsilon_for`].
#[test]
#[ignore = "measurement"]
fn wide_banding_success_by_epsilon() {
    let ns: Vec<usize> = std::env::var("RIBBON_NS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000, 1_000_000]);
    let epss: Vec<f64> = std::env::var("RIBBON_EPS")
        .ok()
        .map(|s| s.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or_else(|| vec![0.01, 0.02, 0.03, 0.04, 0.05]);
    for &n in &ns {
        for &eps in &epss {
            let tries: u64 = if n >= 1_000_000 { 6 } else { 20 };
            let mut first = 0;
            for t in 0..tries {
                let keys = digests(n, t << 32);
                let s = solve(&keys, 7, 0, slots_for(n, eps)).expect("bands");
                first += u32::from(s.failed_seeds == 0);
            }
            println!("n={n} eps={eps}: first seed bands in {first}/{tries}");
        }
    }
}

/// The wide layout through [`crate::filter::FilterBuilder`]: header id 7,
/// `q` in the unit-hashing byte, decode(encode) identical, no false
/// negative, bits per key spent within the budget, FPR near its theory.
#[test]
fn layout_7_through_the_builder() {
    use crate::filter::{
        Filter, FilterBuilder, FilterLayout, FilterOptions, HashSharing, KeyProbe,
    };
    for n in [1, 63, 64, 65, 10_000] {
        for bpk in [2.0, 7.2, 9.9, 16.0] {
            let o = FilterOptions {
                layout: FilterLayout::Ribbon,
                bits_per_key: bpk,
                ..FilterOptions::default()
            };
            let mut b = FilterBuilder::new(&o);
            for i in 0..n {
                b.add(format!("key{i}").as_bytes());
            }
            let bytes = b.finish();
            assert_eq!(bytes[1], 7, "layout id");
            let f = Filter::decode(&bytes).expect("decodes");
            assert!(f == b.build());
            assert_eq!(f.encode(), bytes);
            assert_eq!(f.layout(), FilterLayout::Ribbon);
            assert_eq!(f.p.frac, bytes[5]);
            for i in 0..n {
                let k = format!("key{i}");
                assert!(f.may_contain(&mut KeyProbe::new(k.as_bytes(), HashSharing::Levels)));
            }
            if n >= 10_000 {
                assert!(
                    f.bits_per_key() <= bpk + 1e-9,
                    "n={n} b={bpk}: {}",
                    f.bits_per_key()
                );
                assert!(
                    f.bits_per_key() > bpk - 0.05,
                    "n={n} b={bpk}: {}",
                    f.bits_per_key()
                );
                let fp = (0..200_000)
                    .filter(|i| {
                        let k = format!("miss{i}");
                        f.may_contain(&mut KeyProbe::new(k.as_bytes(), HashSharing::Levels))
                    })
                    .count();
                let (got, want) = (fp as f64 / 200_000.0, f.theoretical_fpr());
                // At 16 bits/key ≈ 7 false positives: only a loose bound.
                let tol = if bpk > 12.0 {
                    1.5
                } else if bpk > 9.0 {
                    0.3
                } else {
                    0.12
                };
                assert!((got / want - 1.0).abs() < tol, "b={bpk}: {got} vs {want}");
            }
        }
    }
}

/// Hostile wide headers decode to errors, never a panic: a size that is no
/// block count of `r + q/256` columns, `r` out of range, units other than 1.
#[test]
fn bad_wide_headers_are_errors() {
    use crate::filter::{Filter, FilterBuilder, FilterLayout, FilterOptions};
    let o = FilterOptions {
        layout: FilterLayout::Ribbon,
        bits_per_key: 7.5,
        ..FilterOptions::default()
    };
    let mut b = FilterBuilder::new(&o);
    for i in 0..500 {
        b.add(format!("key{i}").as_bytes());
    }
    let good = b.finish();
    let mut shorter = good.clone();
    shorter.truncate(good.len() - 8);
    let n = shorter.len() as u64 - 24;
    shorter[16..24].copy_from_slice(&(n * 8).to_le_bytes());
    let mut frac = good.clone();
    frac[5] = frac[5].wrapping_add(37);
    let mut r0 = good.clone();
    r0[6] = 0;
    let mut r64 = good.clone();
    r64[6] = 64;
    let mut units = good.clone();
    units[7] = 2;
    for (what, bytes) in [
        ("size", shorter),
        ("frac", frac),
        ("r0", r0),
        ("r64", r64),
        ("units", units),
    ] {
        assert!(Filter::decode(&bytes).is_err(), "{what}");
    }
}

/// The homogeneous variant's FPR against `2^-r` by ε (`--ignored
/// --nocapture`, release; `RIBBON_N` keys, default 1M): the measurement
/// behind using [`epsilon_for`] for it too ([`super`]).
#[test]
#[ignore = "measurement"]
fn homogeneous_fpr_by_epsilon() {
    let n: usize = std::env::var("RIBBON_N")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1_000_000);
    let keys = digests(n, 5);
    let absent = digests(4_000_000, 1 << 41);
    for eps in [epsilon_for(n), 0.005, 0.01, 0.015, 0.02, 0.025, 0.035, 0.05] {
        let slots = slots_for(n, eps);
        // r = 7 exactly: 7 bits per slot.
        let bpk = (7.0 + 1e-7) * slots as f64 / n as f64;
        let (s, r, q) = build::solve_homogeneous_within(&keys, bpk, slots);
        assert_eq!((r, q), (7, 0));
        assert!(keys.iter().all(|&h| probe(&s, r, q, true, h)));
        let fp = absent.iter().filter(|&&h| probe(&s, r, q, true, h)).count();
        let got = fp as f64 / absent.len() as f64;
        println!(
            "n={n} r={r} eps={eps}: homogeneous FPR {got:.5} = {:.3} × 2^-r",
            got * 128.0
        );
    }
}

/// A layout-5 section written by the standard wide Ribbon before the
/// homogeneous layout 7 (git fad9d85, `FilterLayout::Ribbon` then): keys
/// `key0..key199` at 7.5 bits per key, default options (`r` = 3, `q` = 232);
/// and the keys among `probe0..probe399` it let through.
const LAYOUT5_GOLDEN: &str =
    "0305010000e80301c800000000000000c00500000000000040e12320c6956191a09007a82328a0953001276135\
    85832060a027ea373e23b46862454cd2046fe00046988952444241c098c18ca2035a4488b88001d24778e54713\
    e8dda423cb0a8f72e43427bf37261e7070e0e33ba32d12100b2f02bd92680a60f306c4788b5c0322f21b4da821\
    c00a60f2599d802bf50e42ea4f20e9a98901000000000000002400000000000000000000000000000001000000\
    00000000000000000000000000000000000000000000000000000000";
const LAYOUT5_THROUGH: &[u32] = &[
    2, 10, 52, 53, 54, 62, 68, 69, 75, 93, 94, 97, 99, 138, 142, 155, 189, 207, 255, 284, 298, 348,
    352, 354, 366, 368, 382,
];

#[test]
fn layout_5_files_decode_and_answer_as_before() {
    use crate::filter::FilterLayout;
    let (f, _) = crate::filter::ribbon::tests::golden(LAYOUT5_GOLDEN, 200, LAYOUT5_THROUGH);
    assert_eq!(
        (f.layout(), f.probes_per_unit(), f.num_keys(), f.p.frac),
        (FilterLayout::Ribbon, 3, 200, 232)
    );
    assert!(!f.p.homogeneous);
}

/// A digest of the homogeneous solutions of several key sets and budgets
/// (the bytes layout 7 writes): the banding and back-substitution may be
/// reorganised, never change a bit of what they produce.
#[test]
fn homogeneous_solutions_are_pinned() {
    let mut acc = 0u64;
    for n in [0usize, 1, 100, 5000, 20_000, 300_000] {
        for bpk in [2.0, 4.0, 7.0, 7.2, 10.0, 16.0, 40.0] {
            let keys = digests(n, 1000 + n as u64);
            let (s, r, q) = solved(&keys, bpk, true);
            acc = crate::filter::hash::fmix64(
                acc ^ s.slots ^ u64::from(r) << 32 ^ u64::from(q) << 40,
            );
            for &w in s.words.iter() {
                acc = crate::filter::hash::fmix64(acc ^ w).wrapping_add(w);
            }
            let mut through = 0u64;
            for (i, &h) in digests(20_000, 1 << 44).iter().enumerate() {
                if probe(&s, r, q, true, h) {
                    through = crate::filter::hash::fmix64(through ^ i as u64);
                }
            }
            acc ^= through;
        }
    }
    assert_eq!(acc, 0x455e_2995_9c36_3607, "{acc:#x}");
}

/// The query against a plain evaluation of the row on every checked column
/// (no early exit, no masked group), both variants, many `(r, q)`.
#[test]
fn the_query_matches_the_plain_parities() {
    let keys = digests(3000, 5);
    let absent = digests(20_000, 1 << 46);
    for homogeneous in [true, false] {
        for bpk in [1.5, 2.0, 3.3, 4.0, 5.2, 7.0, 8.9, 10.0, 13.7, 33.0, 70.0] {
            let (s, r, q) = solved(&keys, bpk, homogeneous);
            let upper = upper_blocks(s.slots / BLOCK, q);
            let word = |b: u64, j: u32| s.words[block_offset(b, r, upper) + j as usize];
            for &h in keys.iter().chain(&absent) {
                let row = WideRow::new(h, s.seed, s.slots);
                let bits = checked_bits(row.start, r, upper);
                let (b, o) = (row.start / BLOCK, (row.start % BLOCK) as u32);
                let want = (0..bits).all(|j| {
                    let c = row.coeff << o;
                    let mut v = (word(b, j) & c as u64) ^ (word(b + 1, j) & (c >> 64) as u64);
                    if o > 0 {
                        v ^= word(b + 2, j) & (row.coeff >> (128 - o)) as u64;
                    }
                    let fp = if homogeneous { 0 } else { (row.x >> j) & 1 };
                    u64::from(v.count_ones() & 1) == fp
                });
                let got = may_contain(&s.words, s.seed, s.slots, r, upper, homogeneous, h);
                assert_eq!(got, want, "b={bpk} homogeneous={homogeneous}");
            }
        }
    }
}
