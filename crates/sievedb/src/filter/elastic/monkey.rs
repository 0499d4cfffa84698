//! Monkey (Dayan, Athanassoulis, Idreos, SIGMOD 2017): filter memory divided
//! among the runs of an LSM-tree so that the sum of their false-positive rates
//! (the expected number of wasted I/Os of a zero-result lookup, which probes
//! one file per run) is minimal.
//!
//! Modelling a run's rate as `p = e^(−b·ln²2)` for `b` bits per key, the
//! Lagrangian optimum has every filtered run's rate proportional to its
//! entries, `p_r = c·N_r`, and [`optimal_fprs`] solves for `c` in closed form.
//! [`plan`] turns those rates into whole units per file and fixes the result
//! up to the exact byte budget with the files' real rates.

use std::collections::BTreeMap;

use super::greedy::{self, Item};
use crate::filter::family::Family;

/// `ln² 2`: bits per key needed per nat of false-positive reduction.
const LN2_SQ: f64 = std::f64::consts::LN_2 * std::f64::consts::LN_2;

/// The false-positive rate Monkey gives each run, for runs of `entries` keys
/// sharing `total_bits` bits; `1.0` means "no filter".
///
/// With the filtered runs `F`, `ln c = −(M·ln²2 + Σ_F N_r ln N_r) / Σ_F N_r`
/// and `p_r = c·N_r`. A run whose `p_r` comes out `≥ 1` would gain nothing
/// from bits, so it leaves `F` and the rest are solved again, until stable.
/// Runs with no entries get no filter.
pub fn optimal_fprs(entries: &[f64], total_bits: f64) -> Vec<f64> {
    let mut p = vec![1.0; entries.len()];
    // Invariant: `active[r]` ⇔ run r is still a candidate for a filter.
    let mut active: Vec<bool> = entries.iter().map(|&n| n > 0.0).collect();
    let m = total_bits.max(0.0);
    loop {
        let (sum_n, sum_nln) = entries
            .iter()
            .zip(&active)
            .filter(|(_, &a)| a)
            .fold((0.0, 0.0), |(s, l), (&n, _)| (s + n, l + n * n.ln()));
        if sum_n <= 0.0 {
            return p;
        }
        let ln_c = -(m * LN2_SQ + sum_nln) / sum_n;
        let mut dropped = false;
        for r in 0..entries.len() {
            if !active[r] {
                continue;
            }
            let ln_p = ln_c + entries[r].ln();
            if ln_p >= 0.0 {
                active[r] = false;
                p[r] = 1.0;
                dropped = true;
            } else {
                p[r] = ln_p.exp();
            }
        }
        if !dropped {
            return p;
        }
    }
}

/// Bits per key for a false-positive rate `p` (`0` for `p ≥ 1`), in
/// Monkey's (Bloom) model.
#[cfg(test)]
pub fn bits_per_key(p: f64) -> f64 {
    if p >= 1.0 {
        0.0
    } else {
        -p.max(f64::MIN_POSITIVE).ln() / LN2_SQ
    }
}

/// One file as Monkey sees it.
#[derive(Clone, Copy, Debug)]
pub struct MonkeyFile<'a> {
    /// The run it belongs to: `(level, run id)`.
    pub run: (usize, u64),
    /// Keys in its filter.
    pub entries: u64,
    /// Bytes one unit takes in memory.
    pub unit_bytes: u64,
    /// `fpr[n]` for `n = 0..=units`.
    pub fpr: &'a [f64],
    /// The family of its filter: the bits per key a rate costs.
    pub family: Family,
}

/// Units per file from the closed form alone: the bits per key the run's
/// rate costs in the file's filter family ([`Family::bits_for_fpr`]; Bloom's
/// is `bits_per_key`) divided by the bits per key one unit of the file holds, rounded, capped at the
/// file's units. `run_p` is the rate [`optimal_fprs`] gave the file's run.
#[expect(clippy::cast_sign_loss, reason = "clamped at zero before the cast")]
pub fn closed_form_units(file: &MonkeyFile<'_>, run_p: f64) -> u32 {
    let units = file.fpr.len().saturating_sub(1) as u32;
    if file.entries == 0 || file.unit_bytes == 0 || units == 0 {
        return 0;
    }
    let per_unit = file.unit_bytes as f64 * 8.0 / file.entries as f64;
    let n = (file.family.bits_for_fpr(run_p, file.entries) / per_unit).round();
    (n.max(0.0) as u32).min(units)
}

/// Monkey's unit count for every file (in input order) under `budget` bytes:
/// the closed form over runs grouped by `(level, run)`, rounded per file,
/// then fixed up with the real rates, each file weighted by its share of its
/// run's entries (the chance that a probe of the run lands on it): while over
/// budget the unit whose removal costs least per byte goes, while under the
/// unit with the best gain per byte that fits comes. The result never exceeds
/// `budget`.
pub fn plan(files: &[MonkeyFile<'_>], budget: u64) -> Vec<u32> {
    let mut runs: BTreeMap<(usize, u64), u64> = BTreeMap::new();
    for f in files {
        *runs.entry(f.run).or_default() += f.entries;
    }
    let keys: Vec<(usize, u64)> = runs.keys().copied().collect();
    let entries: Vec<f64> = runs.values().map(|&n| n as f64).collect();
    let p = optimal_fprs(&entries, budget as f64 * 8.0);
    let run_p: BTreeMap<(usize, u64), f64> = keys.into_iter().zip(p).collect();

    // A file like the one before it (most of a level) gets its weight and
    // count without the two searches and the closed form.
    let mut last: Option<(&MonkeyFile<'_>, f64, u32)> = None;
    let mut items: Vec<Item<'_>> = Vec::with_capacity(files.len());
    for f in files {
        let (weight, n) = match last {
            Some((l, w, n)) if alike(l, f) => (w, n),
            _ => {
                let run_entries = runs[&f.run];
                let weight = if run_entries == 0 {
                    0.0
                } else {
                    f.entries as f64 / run_entries as f64
                };
                (weight, closed_form_units(f, run_p[&f.run]))
            }
        };
        last = Some((f, weight, n));
        items.push(Item {
            weight,
            unit_bytes: f.unit_bytes,
            fpr: f.fpr,
            n,
        });
    }
    let used: u64 = items.iter().map(|i| i.n as u64 * i.unit_bytes).sum();
    if used > budget {
        greedy::trim(&mut items, used - budget);
    }
    let used: u64 = items.iter().map(|i| i.n as u64 * i.unit_bytes).sum();
    greedy::fill(&mut items, budget.saturating_sub(used));
    items.iter().map(|i| i.n).collect()
}

/// Whether two files of a plan are alike: one run, size and filter shape.
fn alike(a: &MonkeyFile<'_>, b: &MonkeyFile<'_>) -> bool {
    a.run == b.run
        && a.entries == b.entries
        && a.unit_bytes == b.unit_bytes
        && a.family == b.family
        && a.fpr == b.fpr
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model_fpr(units: usize, bits_per_unit: f64) -> Vec<f64> {
        (0..=units)
            .map(|n| (-(n as f64) * bits_per_unit * LN2_SQ).exp())
            .collect()
    }

    /// The closed form against a brute-force search over the bits of three
    /// runs (the third gets what is left).
    #[test]
    fn closed_form_matches_brute_force() {
        let n = [1_000.0, 10_000.0, 100_000.0];
        let m = 5.0 * 111_000.0; // 5 bits per key on average
        let p = optimal_fprs(&n, m);
        let used: f64 = n.iter().zip(&p).map(|(&n, &p)| n * bits_per_key(p)).sum();
        assert!((used - m).abs() / m < 1e-9, "closed form spends the budget");
        let cost: f64 = p.iter().sum();
        let mut best = f64::INFINITY;
        let steps = 400;
        for i in 0..=steps {
            for j in 0..=steps {
                let b0 = 30.0 * i as f64 / steps as f64;
                let b1 = 30.0 * j as f64 / steps as f64;
                let rest = m - n[0] * b0 - n[1] * b1;
                if rest < 0.0 {
                    continue;
                }
                let b2 = rest / n[2];
                let c: f64 = [b0, b1, b2]
                    .iter()
                    .map(|&b| (-b * LN2_SQ).exp().min(1.0))
                    .sum();
                best = best.min(c);
            }
        }
        assert!(
            cost <= best + 1e-9,
            "closed form {cost} vs brute force {best}"
        );
        assert!(cost >= best * 0.99, "brute force is near the optimum");
        // Proportionality: p_r / N_r is the same for every filtered run.
        assert!((p[0] / n[0] - p[2] / n[2]).abs() < 1e-12);
    }

    /// With little memory the largest run gets no filter at all.
    #[test]
    fn closed_form_drops_runs() {
        let n = [100.0, 1_000_000.0];
        let p = optimal_fprs(&n, 1_000.0);
        assert_eq!(p[1], 1.0);
        assert!(p[0] < 1.0);
        assert!((n[0] * bits_per_key(p[0]) - 1_000.0).abs() < 1e-6);
        assert_eq!(optimal_fprs(&n, 0.0), vec![1.0, 1.0]);
        assert_eq!(optimal_fprs(&[0.0, 5.0], 100.0)[0], 1.0);
    }

    /// The discrete plan against exhaustive enumeration of unit counts.
    #[test]
    fn plan_matches_exhaustive_optimum() {
        let fpr_a = model_fpr(6, 2.0);
        let fpr_b = model_fpr(6, 2.0);
        let fpr_c = model_fpr(6, 2.0);
        // Run (1,0) has one file of 100 keys; run (2,0) has two files.
        let files = [
            MonkeyFile {
                run: (1, 0),
                entries: 100,
                unit_bytes: 25,
                fpr: &fpr_a,
                family: Default::default(),
            },
            MonkeyFile {
                run: (2, 0),
                entries: 400,
                unit_bytes: 100,
                fpr: &fpr_b,
                family: Default::default(),
            },
            MonkeyFile {
                run: (2, 0),
                entries: 400,
                unit_bytes: 100,
                fpr: &fpr_c,
                family: Default::default(),
            },
        ];
        let weights = [1.0, 0.5, 0.5];
        let objective = |n: &[u32]| -> f64 {
            files
                .iter()
                .zip(n)
                .zip(weights)
                .map(|((f, &n), w)| w * f.fpr[n as usize])
                .sum()
        };
        for budget in [0, 50, 100, 325, 500, 800, 1_000, 1_400, 2_000] {
            let got = plan(&files, budget);
            let bytes: u64 = files
                .iter()
                .zip(&got)
                .map(|(f, &n)| n as u64 * f.unit_bytes)
                .sum();
            assert!(bytes <= budget);
            let mut best = f64::INFINITY;
            for a in 0..=6u32 {
                for b in 0..=6u32 {
                    for c in 0..=6u32 {
                        let cost = a as u64 * 25 + (b + c) as u64 * 100;
                        if cost <= budget {
                            best = best.min(objective(&[a, b, c]));
                        }
                    }
                }
            }
            let obj = objective(&got);
            assert!(
                obj <= best * (1.0 + 1e-9),
                "budget {budget}: {got:?} {obj} vs {best}"
            );
        }
    }
}
