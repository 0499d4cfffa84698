//! Key popularity of the read benchmarks (`--distribution`, `--zipf-s`,
//! `--hot-shift-every`): which key index each lookup asks for.

use rand::{rngs::SmallRng, Rng};

/// Popularity of the keys the read benchmarks look up (`--distribution`).
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum KeyDistribution {
    /// Every key index equally likely.
    #[default]
    Uniform,
    /// Zipfian over ranks `1..=num` (rank r with probability ∝ 1/r^s); rank
    /// r maps to key index `(r − 1)·a mod num` for an `a` coprime with `num`,
    /// so the hot keys are scattered over the key space (and over the files
    /// of every level) rather than packed at its start.
    Zipfian,
    /// YCSB's "latest" (workload D): zipfian over recency, rank r maps to
    /// key index `num − r`, so the most recently written keys (the highest
    /// indices: a fill or bulk load writes index order) are the hottest and
    /// sit together in few files of each level.
    Latest,
    /// YCSB's "hotspot": a fraction of the lookups (`--hot-op-fraction`,
    /// default 0.8) go uniformly to one contiguous range of the key indices
    /// (`--hot-data-fraction` of them, default 0.2, centred in the key
    /// space), the rest uniformly to the other indices; the hot keys fill
    /// some of the files of each level (too many for the block cache), and
    /// the files around them are cold.
    Hotspot,
}

/// YCSB's default share of the key indices in the hot range of `hotspot`.
pub const DEFAULT_HOT_DATA_FRACTION: f64 = 0.2;
/// YCSB's default share of the lookups that go to the hot range of `hotspot`.
pub const DEFAULT_HOT_OP_FRACTION: f64 = 0.8;

/// Draws key indices in `0..num` from a [`KeyDistribution`]; with a hot
/// shift, the popular keys move every so many draws.
#[derive(Clone, Debug)]
pub struct KeyChooser {
    num: u64,
    zipf: Option<(rand_distr::Zipf<f64>, u64)>,
    latest: bool,
    /// `hotspot`: the hot range's first index and length (≥ 1, ≤ num), and
    /// the share of the draws that land in it.
    hotspot: Option<(u64, u64, f64)>,
    /// Draws per phase of the hot set (`None`: it never moves).
    shift_every: Option<u64>,
    /// Key indices the hot set moves by at each phase.
    shift: u64,
    draws: u64,
    offset: u64,
}

impl KeyChooser {
    /// A chooser over `0..num` (`num` ≥ 1); `s` is the zipfian exponent.
    pub fn new(dist: KeyDistribution, num: u64, s: f64) -> Result<Self, String> {
        if num == 0 {
            return Err("read benchmarks need --num >= 1".into());
        }
        let zipf = match dist {
            KeyDistribution::Uniform | KeyDistribution::Hotspot => None,
            KeyDistribution::Zipfian | KeyDistribution::Latest => {
                let z = rand_distr::Zipf::new(num, s)
                    .map_err(|e| format!("--distribution {dist:?}: {e}"))?;
                Some((z, scatter_multiplier(num)))
            }
        };
        let chooser = KeyChooser {
            num,
            zipf,
            latest: dist == KeyDistribution::Latest,
            hotspot: None,
            shift_every: None,
            shift: golden_step(num),
            draws: 0,
            offset: 0,
        };
        if dist == KeyDistribution::Hotspot {
            return chooser.with_hotspot(DEFAULT_HOT_DATA_FRACTION, DEFAULT_HOT_OP_FRACTION);
        }
        Ok(chooser)
    }

    /// Sets the hot range of a `hotspot` chooser: `data` of the key indices
    /// (in `(0, 1]`; at least one index) receive `ops` of the draws (in
    /// `[0, 1]`). Refused for the other distributions.
    pub fn with_hotspot(mut self, data: f64, ops: f64) -> Result<Self, String> {
        if self.zipf.is_some() || self.latest {
            return Err(
                "--hot-data-fraction and --hot-op-fraction need --distribution hotspot".into(),
            );
        }
        check_hotspot(data, ops)?;
        #[expect(
            clippy::cast_sign_loss,
            reason = "the key count times a fraction in (0, 1] is not negative"
        )]
        let len = ((self.num as f64 * data) as u64).clamp(1, self.num);
        // Centred: a range at index 0 would coincide with the files a
        // policy favours when it breaks ties in file order.
        self.hotspot = Some(((self.num - len) / 2, len, ops));
        Ok(self)
    }

    /// Moves the hot set every `n` draws (`--hot-shift-every`): each phase
    /// adds `⌊0.382·num⌋` (a golden-ratio step, so the phases do not come
    /// back for a long time) to every drawn index, mod `num`, so the popular
    /// keys of the next phase live in other files than the last phase's.
    /// `0` is refused.
    pub fn with_hot_shift(mut self, n: Option<u64>) -> Result<Self, String> {
        if n == Some(0) {
            return Err("--hot-shift-every must be at least 1".into());
        }
        self.shift_every = n;
        Ok(self)
    }

    /// The next key index.
    #[inline]
    pub fn next(&mut self, rng: &mut SmallRng) -> u64 {
        if let Some(every) = self.shift_every {
            if self.draws > 0 && self.draws.is_multiple_of(every) {
                self.offset = (self.offset + self.shift) % self.num;
            }
            self.draws += 1;
        }
        let base = match &self.zipf {
            None => match self.hotspot {
                None => return rng.gen_range(0..self.num),
                Some((start, len, ops)) => {
                    let i = if len == self.num || rng.gen_bool(ops) {
                        rng.gen_range(0..len)
                    } else {
                        rng.gen_range(len..self.num)
                    };
                    (start + i) % self.num
                }
            },
            Some((z, a)) => {
                #[expect(
                    clippy::cast_sign_loss,
                    reason = "a zipf sample is a rank of at least 1"
                )]
                let rank = (rng.sample(z) as u64).clamp(1, self.num) - 1;
                if self.latest {
                    self.num - 1 - rank
                } else {
                    ((u128::from(rank) * u128::from(*a)) % u128::from(self.num)) as u64
                }
            }
        };
        (base + self.offset) % self.num
    }
}

/// Checks the hot range's shares of `hotspot`: `data` of the key indices in
/// `(0, 1]`, `ops` of the lookups in `[0, 1]`.
pub fn check_hotspot(data: f64, ops: f64) -> Result<(), String> {
    if !(data > 0.0 && data <= 1.0) {
        return Err(format!("--hot-data-fraction must be in (0, 1], not {data}"));
    }
    if !(0.0..=1.0).contains(&ops) {
        return Err(format!("--hot-op-fraction must be in [0, 1], not {ops}"));
    }
    Ok(())
}

/// `⌊0.382·num⌋`, at least 1.
#[expect(
    clippy::cast_sign_loss,
    reason = "the key count times a positive constant is not negative"
)]
fn golden_step(num: u64) -> u64 {
    ((num as f64 * 0.381_966_011_25) as u64).max(1)
}

/// An odd multiplier near `0.618·num` coprime with `num` (a bijection of `0..num`).
fn scatter_multiplier(num: u64) -> u64 {
    fn gcd(mut a: u64, mut b: u64) -> u64 {
        while b != 0 {
            (a, b) = (b, a % b);
        }
        a
    }
    #[expect(
        clippy::cast_sign_loss,
        reason = "the key count times a positive constant is not negative"
    )]
    let mut a = ((num as f64 * 0.618_033_988_7) as u64).max(1) | 1;
    while gcd(a, num) != 1 {
        a += 2;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use std::collections::HashMap;

    fn counts(c: &mut KeyChooser, draws: u64, rng: &mut SmallRng) -> HashMap<u64, u32> {
        let mut counts = HashMap::new();
        for _ in 0..draws {
            let i = c.next(rng);
            assert!(i < c.num);
            *counts.entry(i).or_insert(0u32) += 1;
        }
        counts
    }

    fn top(counts: &HashMap<u64, u32>) -> u64 {
        *counts.iter().max_by_key(|(i, c)| (**c, **i)).unwrap().0
    }

    #[test]
    fn zipfian_chooser_is_skewed_and_in_range() {
        for num in [1u64, 2, 10, 1000, 1 << 20] {
            let a = scatter_multiplier(num);
            let mut seen = std::collections::HashSet::new();
            for r in 0..num.min(5000) {
                assert!(seen.insert((u128::from(r) * u128::from(a) % u128::from(num)) as u64));
            }
        }
        let mut c = KeyChooser::new(KeyDistribution::Zipfian, 10_000, 0.99).unwrap();
        let mut rng = SmallRng::seed_from_u64(1);
        let counts = counts(&mut c, 100_000, &mut rng);
        // Rank 1 (index 0) is the most popular key, far above the uniform 10.
        let top = counts[&0];
        assert!(top > 5_000, "{top}");
        assert!(counts.values().all(|&c| c <= top));
        let mut u = KeyChooser::new(KeyDistribution::Uniform, 10_000, 0.99).unwrap();
        assert!((0..1000).all(|_| u.next(&mut rng) < 10_000));
        assert!(KeyChooser::new(KeyDistribution::Uniform, 0, 0.99).is_err());
    }

    /// `latest`: the hottest keys are the last written, packed at the top.
    #[test]
    fn latest_skews_to_the_most_recent_keys() {
        let mut c = KeyChooser::new(KeyDistribution::Latest, 10_000, 0.99).unwrap();
        let mut rng = SmallRng::seed_from_u64(2);
        let counts = counts(&mut c, 100_000, &mut rng);
        assert_eq!(top(&counts), 9_999);
        let recent: u32 = (9_900..10_000).filter_map(|i| counts.get(&i)).sum();
        let oldest: u32 = (0..100).filter_map(|i| counts.get(&i)).sum();
        assert!(recent > 40_000 && oldest < 200, "{recent} vs {oldest}");
    }

    /// `hotspot`: the hot range (centred) gets its share of the draws,
    /// spread evenly over it; bad fractions are refused.
    #[test]
    fn hotspot_sends_its_share_to_one_centred_range() {
        let num = 10_000;
        let mut c = KeyChooser::new(KeyDistribution::Hotspot, num, 0.99).unwrap();
        let mut rng = SmallRng::seed_from_u64(4);
        let n = 200_000;
        let seen = counts(&mut c, n, &mut rng);
        let in_hot: u32 = (4_000..6_000).filter_map(|i| seen.get(&i)).sum();
        let share = f64::from(in_hot) / n as f64;
        assert!((share - 0.8).abs() < 0.01, "{share}");
        // Uniform within the range: its two halves alike.
        let low: u32 = (4_000..5_000).filter_map(|i| seen.get(&i)).sum();
        assert!((f64::from(low) / f64::from(in_hot) - 0.5).abs() < 0.02);
        // The cold keys on both sides get the rest, evenly.
        let below: u32 = (0..4_000).filter_map(|i| seen.get(&i)).sum();
        let above: u32 = (6_000..num).filter_map(|i| seen.get(&i)).sum();
        assert!((f64::from(below) / f64::from(above) - 1.0).abs() < 0.1);
        let mut all = KeyChooser::new(KeyDistribution::Hotspot, num, 0.99)
            .unwrap()
            .with_hotspot(1.0, 0.5)
            .unwrap();
        assert!((0..1000).all(|_| all.next(&mut rng) < num));
        let mk = || KeyChooser::new(KeyDistribution::Hotspot, num, 0.99).unwrap();
        assert!(mk().with_hotspot(0.0, 0.8).is_err());
        assert!(mk().with_hotspot(1.5, 0.8).is_err());
        assert!(mk().with_hotspot(0.2, -0.1).is_err());
        assert!(mk().with_hotspot(f64::NAN, 0.8).is_err());
        assert!(KeyChooser::new(KeyDistribution::Zipfian, num, 0.99)
            .unwrap()
            .with_hotspot(0.2, 0.8)
            .is_err());
        // With a hot shift the range moves by ⌊0.382·num⌋ = 3,819 a phase.
        let mut m = mk().with_hot_shift(Some(10_000)).unwrap();
        counts(&mut m, 10_000, &mut rng);
        let moved = counts(&mut m, 10_000, &mut rng);
        let share = |c: &HashMap<u64, u32>, r: std::ops::Range<u64>| {
            f64::from(r.filter_map(|i| c.get(&i)).sum::<u32>()) / 10_000.0
        };
        assert!((share(&moved, 7_819..9_819) - 0.8).abs() < 0.02);
        assert!(share(&moved, 4_000..6_000) < 0.1);
    }

    /// With a hot shift the most popular key moves after every N draws, to
    /// a key far from the last phase's, and stays put within a phase.
    #[test]
    fn the_hot_set_moves_every_n_draws() {
        for dist in [KeyDistribution::Zipfian, KeyDistribution::Latest] {
            let num = 10_000;
            let mut c = KeyChooser::new(dist, num, 0.99)
                .unwrap()
                .with_hot_shift(Some(20_000))
                .unwrap();
            let mut rng = SmallRng::seed_from_u64(3);
            let first = top(&counts(&mut c, 20_000, &mut rng));
            let second = top(&counts(&mut c, 20_000, &mut rng));
            let third = top(&counts(&mut c, 20_000, &mut rng));
            let gap = |a: u64, b: u64| a.abs_diff(b).min(num - a.abs_diff(b));
            assert!(
                gap(first, second) > num / 4,
                "{dist:?}: {first} -> {second}"
            );
            assert!(
                gap(second, third) > num / 4,
                "{dist:?}: {second} -> {third}"
            );
            assert_eq!(
                gap(first, second),
                gap(second, third),
                "{dist:?}: one step a phase"
            );
        }
        assert!(KeyChooser::new(KeyDistribution::Zipfian, 10, 0.99)
            .unwrap()
            .with_hot_shift(Some(0))
            .is_err());
    }
}
