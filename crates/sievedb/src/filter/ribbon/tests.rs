//! Unit tests of the Ribbon filter proper (banding, solution, query).

use super::build::solve;
use super::query::{may_contain, result};
use super::*;

/// `n` pseudo-random digests (splitmix64 of `base + i`).
fn digests(n: usize, base: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| {
            crate::filter::hash::fmix64(
                base.wrapping_add(i).wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1,
            )
        })
        .collect()
}

#[test]
fn no_false_negatives_and_fpr_near_two_to_minus_r() {
    let keys = digests(100_000, 1);
    let absent = digests(200_000, 1 << 40);
    for r in [1, 4, 7, 12] {
        let s = solve(&keys, r, slots_for(keys.len(), epsilon_for(keys.len()))).expect("bands");
        assert_eq!(s.words.len() as u64, s.slots / W * u64::from(r));
        assert!(keys
            .iter()
            .all(|&h| may_contain(&s.words, s.seed, s.slots, r, h)));
        let fp = absent
            .iter()
            .filter(|&&h| may_contain(&s.words, s.seed, s.slots, r, h))
            .count();
        let (got, want) = (
            fp as f64 / absent.len() as f64,
            0.5f64.powi(r.cast_signed()),
        );
        // 200K probes: at r = 12 about 49 false positives, ±3σ ≈ ±43%.
        let tol = if r >= 10 { 0.45 } else { 0.15 };
        assert!((got / want - 1.0).abs() < tol, "r={r}: {got} vs {want}");
    }
}

#[test]
fn small_sets_and_empty_sets() {
    for n in [0, 1, 2, 63, 64, 65, 200] {
        let keys = digests(n, 7);
        let s = solve(&keys, 8, slots_for(n, epsilon_for(n))).expect("bands");
        assert!(s.slots >= 64 && s.slots.is_multiple_of(64));
        assert!(keys
            .iter()
            .all(|&h| may_contain(&s.words, s.seed, s.slots, 8, h)));
    }
    // Equal digests are consistent rows, never a banding failure.
    let s = solve(&[5, 5, 5, 9, 9], 16, 64).expect("bands");
    assert_eq!(s.failed_seeds, 0);
    assert!(may_contain(&s.words, s.seed, s.slots, 16, 5));
}

#[test]
fn a_failed_banding_retries_with_a_new_seed_then_grows() {
    // 1100 keys in 1024 slots (ε < 0) cannot band: seeds fail until the band
    // has grown enough.
    let keys = digests(1100, 3);
    let s = solve(&keys, 6, 1024).expect("bands after growing");
    assert!(s.failed_seeds >= TRIES_PER_SIZE, "{:?}", s.failed_seeds);
    assert_eq!(u32::from(s.seed), s.failed_seeds);
    assert!(s.slots > 1024);
    assert!(keys
        .iter()
        .all(|&h| may_contain(&s.words, s.seed, s.slots, 6, h)));
    // A seed remixes the digest: the rows differ from seed to seed.
    assert_ne!(KeyRow::new(42, 0, 4096, 8), KeyRow::new(42, 1, 4096, 8));
}

#[test]
fn sizing() {
    assert_eq!(result_bits_for(10.0, 1_000_000), 9);
    assert_eq!(result_bits_for(7.7, 1_000_000), 7);
    assert_eq!(result_bits_for(7.35, 1000), 7);
    assert_eq!(result_bits_for(0.5, 10), 1);
    assert_eq!(result_bits_for(f64::NAN, 10), 1);
    assert_eq!(result_bits_for(1e6, 10), MAX_RESULT_BITS);
    assert!((epsilon_for(0) - 0.04).abs() < 1e-12);
    assert!((epsilon_for(1_000_000) - 0.10).abs() < 1e-12);
    assert_eq!(slots_for(0, epsilon_for(0)), 64);
    assert_eq!(slots_for(1_000_000, 0.1) % 64, 0);
    assert!(slots_for(1_000_000, 0.1) >= 1_100_064);
    assert_eq!(grown(6400), 6592);
    let row = KeyRow::new(u64::MAX, 255, 64, 64);
    assert_eq!((row.start, row.coeff & 1), (0, 1));
}

/// Success rate of banding by ε and n (run with `--ignored --nocapture`, in
/// release): the measurement behind [`epsilon_for`].
#[test]
#[ignore = "measurement"]
fn banding_success_by_epsilon() {
    let grid = std::env::var("RIBBON_GRID").unwrap_or_default();
    let (ns, epss): (Vec<usize>, Vec<f64>) = if grid == "fine" {
        (
            vec![30_000, 100_000, 300_000, 1_000_000],
            vec![0.05, 0.06, 0.07, 0.08, 0.09, 0.10, 0.12],
        )
    } else {
        (
            vec![1_000, 10_000, 100_000, 1_000_000],
            vec![0.02, 0.03, 0.04, 0.05, 0.06, 0.08],
        )
    };
    for &n in &ns {
        for &eps in &epss {
            let tries: u64 = if n >= 1_000_000 { 8 } else { 20 };
            let mut first = 0;
            for t in 0..tries {
                let keys = digests(n, t << 32);
                let s = solve(&keys, 7, slots_for(n, eps)).expect("bands");
                first += u32::from(s.failed_seeds == 0);
            }
            println!("n={n} eps={eps}: first seed bands in {first}/{tries}");
        }
    }
}

#[test]
fn the_early_exit_query_matches_the_plain_result() {
    let keys = digests(5000, 11);
    for r in [1, 3, 4, 5, 8, 13, 64] {
        let s = solve(&keys, r, slots_for(keys.len(), epsilon_for(keys.len()))).expect("bands");
        for &h in keys.iter().chain(&digests(20_000, 1 << 50)) {
            let row = KeyRow::new(h, s.seed, s.slots, r);
            let want = result(&s.words, r, &row) == row.fp;
            assert_eq!(may_contain(&s.words, s.seed, s.slots, r, h), want, "r={r}");
        }
    }
}

/// A layout-4 section written by the Ribbon code before the wide layout
/// (git 294da87, `FilterLayout::Ribbon` then): keys `key0..key39` at 8 bits
/// per key, default options; and the keys among `probe0..probe399` it let
/// through.
const LAYOUT4_GOLDEN: &str =
    "030401000000070128000000000000008003000000000000388206864f2e200a300326426662354030c101824b\
    28854220402e06922b144238c327c2a40b200230812582bd233440300103c6d440950801000000000000002000\
    000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000\
    00";
const LAYOUT4_THROUGH: &[u32] = &[12, 295];

/// Decodes the golden filter `hex` (whitespace ignored), checks that it
/// re-encodes to the same bytes, that keys `key0..key{keys}` all pass, and
/// that of `probe0..probe399` exactly `through` pass; returns it and its bytes.
pub(super) fn golden(hex: &str, keys: u32, through: &[u32]) -> (crate::filter::Filter, Vec<u8>) {
    use crate::filter::{Filter, HashSharing, KeyProbe};
    let hex: String = hex.split_whitespace().collect();
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let f = Filter::decode(&bytes).expect("decodes");
    assert_eq!(f.encode(), bytes, "re-encodes to the same bytes");
    let passes = |k: String| f.may_contain(&mut KeyProbe::new(k.as_bytes(), HashSharing::Levels));
    assert!(
        (0..keys).all(|i| passes(format!("key{i}"))),
        "a false negative"
    );
    let got: Vec<u32> = (0..400u32)
        .filter(|i| passes(format!("probe{i}")))
        .collect();
    assert_eq!(got, through);
    (f, bytes)
}

#[test]
fn layout_4_files_decode_and_answer_as_before() {
    use crate::filter::{FilterBuilder, FilterLayout, FilterOptions};
    let (f, bytes) = golden(LAYOUT4_GOLDEN, 40, LAYOUT4_THROUGH);
    assert_eq!(
        (f.layout(), f.probes_per_unit(), f.num_keys()),
        (FilterLayout::Ribbon64, 7, 40)
    );
    // And `ribbon64` still writes exactly these bytes.
    let o = FilterOptions {
        layout: FilterLayout::Ribbon64,
        bits_per_key: 8.0,
        ..FilterOptions::default()
    };
    let mut b = FilterBuilder::new(&o);
    for i in 0..40 {
        b.add(format!("key{i}").as_bytes());
    }
    assert_eq!(b.finish(), bytes);
}
