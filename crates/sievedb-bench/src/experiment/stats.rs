//! Comparing two designs measured in the same repeats ([`alternating_order`],
//! [`PairedRatio`], [`gain`], [`GAIN_DEFINITION`]) and the paper's cost
//! model ([`Model`]).

use super::ctx::ReadStats;
use crate::report::median;
use crate::report::summary::gain_str;

/// The gain of `levels` sharing over `filter` sharing at one point:
/// latency(filter) ÷ latency(levels) per repeat, as a [`PairedRatio`]
/// (its [`PairedRatio::gain`] is the gain; see [`GAIN_DEFINITION`]).
pub fn gain(filter: &ReadStats, levels: &ReadStats) -> PairedRatio {
    PairedRatio::of(&filter.runs, &levels.runs)
}

/// The order in which repeat `rep` runs `n` designs measured side by side:
/// as listed in even repeats, reversed in odd ones, so that no design
/// always runs first or last.
pub fn alternating_order(n: usize, rep: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    if rep % 2 == 1 {
        order.reverse();
    }
    order
}

/// The one definition of "gain" every experiment that compares two designs
/// uses, printed at the top of each such summary.
pub const GAIN_DEFINITION: &str = "**Gain, as measured here.** Each repeat runs the two \
    designs back to back; the repeat's ratio is (cost of the baseline) ÷ (cost of the \
    proposal), the cost being time per lookup or device reads — for throughput, ops/s of the \
    proposal ÷ ops/s of the baseline. The gain shown is the **median of these paired ratios** \
    (− 1 when written as a percentage), which is robust to load drifting between repeats; it \
    can therefore differ slightly from the ratio of two printed medians. The bracket gives the \
    min–max of the paired ratios over the repeats (the run-to-run spread); a gain whose spread \
    crosses 1× (no change) or is wider than its distance from 1× is marked **⚠ within \
    noise**.";

/// The ratio of two designs measured in the same repeats (see
/// [`GAIN_DEFINITION`]): the median, min and max over repeats of
/// `num[i] ÷ den[i]`. Invariant: `min ≤ median ≤ max` when `n ≥ 1`; all NaN
/// when `n = 0`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PairedRatio {
    /// Repeats with a finite ratio.
    pub n: usize,
    /// Median of the per-repeat ratios.
    pub median: f64,
    /// Smallest per-repeat ratio.
    pub min: f64,
    /// Largest per-repeat ratio.
    pub max: f64,
}

impl PairedRatio {
    /// Pairs `num[i]` with `den[i]` (extra runs of the longer side are
    /// ignored; pairs whose ratio is not finite and positive are skipped).
    pub fn of(num: &[f64], den: &[f64]) -> PairedRatio {
        let mut v: Vec<f64> = num
            .iter()
            .zip(den)
            .map(|(a, b)| a / b)
            .filter(|r| r.is_finite() && *r > 0.0)
            .collect();
        if v.is_empty() {
            return PairedRatio {
                n: 0,
                median: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            };
        }
        let m = median(&mut v);
        let (min, max) = v
            .iter()
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), x| {
                (lo.min(*x), hi.max(*x))
            });
        PairedRatio {
            n: v.len(),
            median: m,
            min,
            max,
        }
    }

    /// The gain: median ratio − 1 (NaN without a pair).
    pub fn gain(&self) -> f64 {
        self.median - 1.0
    }

    /// Whether the run-to-run spread is larger than the effect: with at
    /// least two repeats, the min–max range contains 1× or is wider than
    /// |median − 1|. One repeat measures no spread and is never flagged
    /// (its display says so instead).
    pub fn within_noise(&self) -> bool {
        self.n >= 2
            && ((self.min <= 1.0 && self.max >= 1.0)
                || self.max - self.min > (self.median - 1.0).abs())
    }

    fn flag(&self) -> &'static str {
        if self.within_noise() {
            " ⚠ within noise"
        } else {
            ""
        }
    }

    /// As a ratio: `1.23× (1.20–1.25)`, `1.23× (1 run, no spread)`, with the
    /// noise flag.
    pub fn show_ratio(&self) -> String {
        self.show_ratio_to(2)
    }

    /// [`show_ratio`](Self::show_ratio) with `digits` decimals (where a bar
    /// sits within a rounding of the ratio, as `elastic-fig7`'s 0.97×).
    pub fn show_ratio_to(&self, digits: usize) -> String {
        match self.n {
            0 => "-".into(),
            1 => format!("{:.digits$}× (1 run, no spread)", self.median),
            _ => format!(
                "{:.digits$}× ({:.digits$}–{:.digits$}){}",
                self.median,
                self.min,
                self.max,
                self.flag()
            ),
        }
    }

    /// As a gain: `+23% (+20…+25%)`, `+23% (1 run, no spread)`, with the
    /// noise flag.
    pub fn show_gain(&self) -> String {
        match self.n {
            0 => "-".into(),
            1 => format!("{} (1 run, no spread)", gain_str(self.gain())),
            _ => format!(
                "{} ({}…{}){}",
                gain_str(self.gain()),
                gain_str(self.min - 1.0),
                gain_str(self.max - 1.0),
                self.flag()
            ),
        }
    }
}

/// The paper's cost model, Eq. 4 (per-filter hashing, `shared = false`) and
/// Eq. 5 (one hash per lookup, `shared = true`), in the unit of its inputs:
/// `(L − α/(T−1))·(T_H + T_P) + α·T_D + (L − α/(T−1))·f_p·T_D` and
/// `T_H + (L − α/(T−1))·T_P + α·T_D + (L − α/(T−1))·f_p·T_D`. T_P, which the
/// paper's Eq. 3 carries and its Eq. 4/5 drop as negligible, is kept.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Model {
    /// Hash cost of one digest.
    pub t_h: f64,
    /// Probe cost of one filter (memory accesses, given the digest).
    pub t_p: f64,
    /// Cost of one data access.
    pub t_d: f64,
    /// False-positive rate.
    pub f_p: f64,
    /// Levels.
    pub l: f64,
    /// Size ratio.
    pub t: f64,
    /// Fraction of non-empty lookups.
    pub alpha: f64,
}

impl Model {
    /// Levels probed on average: `L − α/(T−1)`.
    pub fn levels_probed(&self) -> f64 {
        self.l - self.alpha / (self.t - 1.0).max(1e-9)
    }

    /// Eq. 4: one digest per filter probed.
    pub fn cost_per_filter(&self) -> f64 {
        let lp = self.levels_probed();
        lp * (self.t_h + self.t_p) + self.alpha * self.t_d + lp * self.f_p * self.t_d
    }

    /// Eq. 5: one digest per lookup.
    pub fn cost_shared(&self) -> f64 {
        let lp = self.levels_probed();
        self.t_h + lp * self.t_p + self.alpha * self.t_d + lp * self.f_p * self.t_d
    }

    /// Eq. 4 ÷ Eq. 5 − 1.
    pub fn gain(&self) -> f64 {
        self.cost_per_filter() / self.cost_shared() - 1.0
    }
}

/// Per-probe ns of the filter phase and per-read ns of the data phase from a
/// breakdown, or NaN.
pub fn probe_and_data_ns(s: &ReadStats) -> (f64, f64) {
    match s.breakdown {
        Some(b) => (
            if s.probes > 0.0 {
                b[1] / s.probes
            } else {
                f64::NAN
            },
            if s.data_reads > 0.0 {
                b[3] / s.data_reads
            } else {
                f64::NAN
            },
        ),
        None => (f64::NAN, f64::NAN),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn alternating_order_reverses_odd_repeats() {
        assert_eq!(alternating_order(3, 0), [0, 1, 2]);
        assert_eq!(alternating_order(3, 1), [2, 1, 0]);
        assert_eq!(alternating_order(3, 2), [0, 1, 2]);
        assert!(alternating_order(0, 1).is_empty());
    }

    #[test]
    fn cost_model_matches_the_papers_equations() {
        let m = Model {
            t_h: 235.0,
            t_p: 0.0,
            t_d: 10_000.0,
            f_p: 0.0082,
            l: 5.0,
            t: 10.0,
            alpha: 0.0,
        };
        // Eq. 4 at α = 0: L·T_H + L·f_p·T_D.
        assert!((m.cost_per_filter() - (5.0 * 235.0 + 5.0 * 0.0082 * 10_000.0)).abs() < 1e-9);
        // Eq. 5: T_H + L·f_p·T_D.
        assert!((m.cost_shared() - (235.0 + 5.0 * 0.0082 * 10_000.0)).abs() < 1e-9);
        assert!(m.gain() > 0.0);
        let m1 = Model { alpha: 1.0, ..m };
        assert!((m1.levels_probed() - (5.0 - 1.0 / 9.0)).abs() < 1e-12);
    }
}
