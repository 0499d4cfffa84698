//! The family a new file's filter is written with when the budget picks it
//! ([`FilterOptions::choose_family`]): Bloom or Ribbon, of the shape of the
//! configured layout (whole, units or partitioned).
//!
//! A file's family is fixed when it is written (at a flush or a compaction);
//! the runtime budget then chooses how many of its units stay resident. So
//! the choice prices what a lookup that probes the file would cost under the
//! memory the budget is expected to give it:
//!
//! ```text
//! cost(family) = n · probe_cost(family) + fpr_family(n) · false_positive_cost
//! ```
//!
//! with `n` the units of that family fitting in the file's expected resident
//! bits (see [`FilterBudget::family_for`](super::FilterBudget::family_for)),
//! `probe_cost` in Bloom unit probes ([`Family::probe_cost`]) and
//! `false_positive_cost` what a false positive costs in the same unit (a data
//! block read: [`FilterOptions::false_positive_cost`]). The cheaper family
//! wins; a tie keeps the configured layout's. Ribbon spends about 30% fewer
//! bits for a rate, so it wins wherever false positives still cost more than
//! its dearer probes: for cold and deep files under a tight budget. Bloom
//! wins where the resident bits are many (a hot file, an upper level given
//! most of the memory), the rates of both are near 0, and what is left is
//! the probe.

use super::FilterBudget;
use crate::filter::elastic::FilterPolicy;
use crate::filter::family::{self, Family};
use crate::filter::{FilterBuilder, FilterLayout, FilterMemory, FilterOptions, MAX_UNITS};

impl FilterBudget {
    /// The family a file written now for `level` gets when `opts` let the
    /// budget choose ([`FilterOptions::choose_family`]; `None` otherwise:
    /// the writer keeps [`FilterOptions::for_level`]'s). `entries` is about
    /// the keys of one output file; `inputs`, the files it is made from
    /// (`(number, entries)`: a compaction's inputs, none for a flush), give
    /// its hotness, which its outputs inherit.
    ///
    /// The bits per key it is expected to hold resident: without a budget,
    /// every unit of either family (however large for the file's keys: no
    /// memory is saved by a smaller one). Under uniform, the budget's
    /// bits per key over the tree's entries. Under the others, Monkey's
    /// share for its level ([`monkey_bits`]: the budget over the levels'
    /// entries now, the file's own counted in its level), and `ln(h /
    /// h_level) / ln²2` more for a file whose inputs were read `h` times per key
    /// against its level's `h_level`: a plan that makes the marginal gains
    /// of files equal gives each a rate in inverse proportion to its
    /// accesses per key, and a Bloom filter's rate falls by `e^{−ln²2}` per
    /// bit per key. (Not the bits the level holds now: they come in whole
    /// units of the family its files have, so a level of one-unit Bloom
    /// files would price itself at one Bloom unit and never change.)
    pub fn family_for(
        &self,
        opts: &FilterOptions,
        level: usize,
        entries: u64,
        inputs: &[(u64, u64)],
    ) -> Option<Family> {
        if !opts.choose_family || !opts.enabled() {
            return None;
        }
        if !self.limited() {
            // Every unit resident, whatever the family's size for so many keys.
            return Some(choose(opts, entries, f64::INFINITY));
        }
        let st = self.state.lock();
        let mut levels = st.alloc.level_entries();
        if levels.len() <= level {
            levels.resize(level + 1, 0);
        }
        levels[level] += entries;
        let weights: Vec<f64> = levels.iter().map(|&n| n as f64).collect();
        let mut budget_bits = st.alloc.budget() as f64 * 8.0;
        if let (0, FilterMemory::BitsPerKey(b)) = (st.alloc.budget(), self.config.memory) {
            // No budget sized yet (a new database's first flush): what the
            // bits per key will give these entries.
            budget_bits = b.max(0.0) * weights.iter().sum::<f64>();
        }
        let mut bits = if self.config.policy == FilterPolicy::Uniform {
            // Uniform gives every file the same bits per key.
            budget_bits / weights.iter().sum::<f64>().max(1.0)
        } else {
            monkey_bits(&weights, budget_bits)[level]
        };
        let hot: f64 = inputs
            .iter()
            .filter_map(|&(n, _)| st.alloc.hotness(n))
            .sum();
        let input_entries: u64 = inputs.iter().map(|&(_, e)| e).sum();
        if self.config.policy != FilterPolicy::Uniform && hot > 0.0 && input_entries > 0 {
            if let Some(h_level) = st.alloc.level_hot_per_key(level).filter(|&h| h > 0.0) {
                let h = hot / input_entries as f64;
                bits += (h / h_level).ln() / std::f64::consts::LN_2.powi(2);
            }
        }
        drop(st);
        let bits = if bits.is_finite() { bits } else { 0.0 };
        Some(choose(opts, entries, bits.clamp(0.0, opts.bits_per_key)))
    }
}

/// The bits per key Monkey's plan gives each level when `total_bits` are
/// shared among levels of `entries[i]` entries, each taken as one run
/// (`filter/elastic/monkey.rs`): the rate of a Bloom filter of `b` bits per
/// key is `e^{−b·ln²2}`, so a rate `p` costs `−ln p / ln²2` bits per key.
pub fn monkey_bits(entries: &[f64], total_bits: f64) -> Vec<f64> {
    let ln2_sq = std::f64::consts::LN_2.powi(2);
    crate::filter::elastic::monkey::optimal_fprs(entries, total_bits.max(0.0))
        .into_iter()
        .map(|p| {
            if p >= 1.0 {
                0.0
            } else {
                -p.max(f64::MIN_POSITIVE).ln() / ln2_sq
            }
        })
        .collect()
}

/// Bits per key a Ribbon unit of one result bit is taken to cost when the
/// budget sizes Ribbon units for a units layout: `1 + ε`, `ε` at most 10%
/// (`filter/ribbon`'s slot overhead, 4% to 10%).
const RIBBON_UNIT_BITS: f64 = 1.1;

/// The filter options a file of `family` is written with when the budget
/// chose it: `opts` with the layout of that family like `opts.layout`
/// ([`Family::layout_like`]). Ribbon units chosen for Bloom units' options
/// are as many units of one result bit as `bits_per_key` pays for (at
/// least `opts.units`, at most [`MAX_UNITS`]): Ribbon units of the Bloom
/// units' count would round each unit down to whole result bits, and 6
/// units of 2 bits asked become 6 units of one bit, half the bits unspent.
pub fn options_for(opts: &FilterOptions, family: Family) -> FilterOptions {
    let layout = family.layout_like(opts.layout);
    let mut units = opts.units;
    if layout == FilterLayout::RibbonUnits && opts.layout == FilterLayout::Units {
        let fit = (opts.bits_per_key / RIBBON_UNIT_BITS).floor();
        #[expect(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "clamped to 0..=MAX_UNITS first"
        )]
        let fit = fit.clamp(0.0, f64::from(MAX_UNITS)) as u32;
        units = fit.clamp(opts.units.min(MAX_UNITS), MAX_UNITS);
    }
    FilterOptions {
        layout,
        units,
        ribbon_from_level: None,
        ..opts.clone()
    }
}

/// One family's price for a file.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Priced {
    /// The family.
    pub family: Family,
    /// Its units that fit in the expected resident bits.
    pub units: u32,
    /// Its false-positive rate with those units resident.
    pub fpr: f64,
    /// What a lookup probing the file costs, in Bloom unit probes.
    pub cost: f64,
}

/// What a file of `entries` keys written with the filter options `opts` in
/// `family` would cost a lookup that probes it, holding about
/// `bits_per_key` bits per key of its filter resident.
pub fn price(opts: &FilterOptions, family: Family, entries: u64, bits_per_key: f64) -> Priced {
    let o = options_for(opts, family);
    let f = FilterBuilder::new(&o).shape_for(entries.max(1));
    let rates = family::rates(&f);
    let all = u32::try_from(rates.len() - 1).unwrap_or(u32::MAX);
    // A partitioned filter's shares are of its one partition-sized unit's
    // bits; a units filter's units each take `unit_bits`.
    let unit_bits = (f.total_bits() as f64 / f64::from(all.max(1))).max(1.0);
    let b = if bits_per_key.is_nan() {
        0.0
    } else {
        bits_per_key.max(0.0)
    };
    let resident_bits = (b * entries.max(1) as f64).min(f64::MAX);
    #[expect(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        reason = "a non-negative count of units, capped at the filter's units"
    )]
    let units = ((resident_bits / unit_bits).floor() as u64).min(u64::from(all)) as u32;
    let fpr = rates[units as usize];
    let fp_cost = if opts.false_positive_cost.is_finite() {
        opts.false_positive_cost.max(0.0)
    } else {
        0.0
    };
    Priced {
        family,
        units,
        fpr,
        cost: f64::from(units) * family.probe_cost() + fpr * fp_cost,
    }
}

/// The filter options each level `1..=levels` of a bulk-loaded tree is
/// written with (`[i]` for level `i + 1`). Unless `opts` let the budget
/// choose ([`FilterOptions::choose_family`]), [`FilterOptions::for_level`]'s.
/// Else the family of each level is [`choose`]n at the bits per key the
/// budget `memory` is expected to give it under `policy`: uniform gives
/// every level the budget's bits per key; the others Monkey's share (a
/// bulk-loaded level is one run, of entries in proportion to
/// `size_ratio^(level − 1)`, and no file has been read yet, so Monkey's rate
/// per run, `filter/elastic/monkey.rs`, is the best guess; in bits per key of
/// a Bloom filter of that rate), at most `opts.bits_per_key`. Without a
/// budget every level is priced with every unit resident; with a budget in
/// bytes (the tree's size is not known before it is loaded) at
/// `opts.bits_per_key`.
/// `file_entries` is about the keys of one file.
pub fn bulk_levels(
    opts: &FilterOptions,
    memory: FilterMemory,
    policy: FilterPolicy,
    levels: usize,
    size_ratio: usize,
    file_entries: u64,
) -> Vec<FilterOptions> {
    if !opts.choose_family || !opts.enabled() {
        return (1..=levels).map(|l| opts.for_level(l)).collect();
    }
    let bits: Vec<f64> = match memory {
        FilterMemory::BitsPerKey(b) if policy == FilterPolicy::Uniform => {
            vec![b.min(opts.bits_per_key); levels]
        }
        FilterMemory::BitsPerKey(b) => {
            let t = size_ratio as f64;
            let weights: Vec<f64> = std::iter::successors(Some(1.0), |w| Some(w * t))
                .take(levels)
                .collect();
            let total: f64 = weights.iter().sum();
            let bits = monkey_bits(&weights, b.max(0.0) * total);
            bits.into_iter().map(|b| b.min(opts.bits_per_key)).collect()
        }
        FilterMemory::Unlimited => vec![f64::INFINITY; levels],
        FilterMemory::Bytes(_) => vec![opts.bits_per_key; levels],
    };
    bits.into_iter()
        .map(|b| options_for(opts, choose(opts, file_entries, b)))
        .collect()
}

/// The cheaper of Bloom and Ribbon (the wide Ribbon, or Ribbon units for a
/// units layout) for a file of `entries` keys expected to hold
/// `bits_per_key` bits per key resident (see [`price`]); a tie keeps the
/// family of `opts.layout`.
pub fn choose(opts: &FilterOptions, entries: u64, bits_per_key: f64) -> Family {
    let own = Family::of(opts.layout);
    let other = if own.is_ribbon() {
        Family::Bloom
    } else {
        Family::Ribbon
    };
    let (a, b) = (
        price(opts, own, entries, bits_per_key),
        price(opts, other, entries, bits_per_key),
    );
    if b.cost < a.cost {
        other
    } else {
        own
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(cost: f64) -> FilterOptions {
        FilterOptions {
            bits_per_key: 12.0,
            layout: FilterLayout::Units,
            units: 6,
            choose_family: true,
            false_positive_cost: cost,
            ..FilterOptions::default()
        }
    }

    #[test]
    fn a_tight_budget_picks_ribbon() {
        // 4 bits per key resident: two Bloom units (2 bits each), a rate of
        // about 0.15; three Ribbon units, 0.125.
        let o = units(1000.0);
        let (b, r) = (
            price(&o, Family::Bloom, 100_000, 4.0),
            price(&o, Family::Ribbon, 100_000, 4.0),
        );
        // Ribbon units of one result bit each (10 of them for 12 bits, about
        // 1.1 bits each): three fit where two Bloom units do.
        assert_eq!((b.units, r.units), (2, 3));
        assert!(r.fpr < b.fpr, "{r:?} against {b:?}");
        assert_eq!(choose(&o, 100_000, 4.0), Family::Ribbon);
    }

    #[test]
    fn many_bits_and_cheap_false_positives_keep_bloom() {
        // Every unit resident and a false positive worth little more than a
        // probe: the rates are both small, Ribbon's dearer probes decide.
        let o = units(2.0);
        assert_eq!(choose(&o, 100_000, 12.0), Family::Bloom);
        // Every unit resident: ten Ribbon unit probes (15) cost more than
        // the false positives they save over six Bloom units (about 0.37%
        // against 0.10%, under 3 probes' worth).
        assert_eq!(choose(&units(1000.0), 100_000, 12.0), Family::Bloom);
        assert_eq!(options_for(&units(1000.0), Family::Ribbon).units, 10);
        // Whole filters of 12 bits per key and dear false positives: the wide
        // Ribbon's lower rate pays for its dearer probe.
        let whole = FilterOptions {
            layout: FilterLayout::Bloom,
            ..units(1000.0)
        };
        assert_eq!(choose(&whole, 100_000, 12.0), Family::Ribbon);
    }

    #[test]
    fn nothing_resident_keeps_the_configured_family() {
        for layout in [FilterLayout::Units, FilterLayout::RibbonUnits] {
            let o = FilterOptions {
                layout,
                ..units(1000.0)
            };
            assert_eq!(choose(&o, 100_000, 0.0), Family::of(layout));
            assert_eq!(choose(&o, 100_000, f64::NAN), Family::of(layout));
        }
    }

    #[test]
    fn whole_filters_choose_between_bloom_and_the_wide_ribbon() {
        let o = FilterOptions {
            bits_per_key: 8.0,
            layout: FilterLayout::Bloom,
            choose_family: true,
            false_positive_cost: 1000.0,
            ..FilterOptions::default()
        };
        let (b, r) = (
            price(&o, Family::Bloom, 50_000, 8.0),
            price(&o, Family::Ribbon, 50_000, 8.0),
        );
        assert_eq!((b.units, r.units), (1, 1));
        assert!(r.fpr < b.fpr, "{r:?} against {b:?}");
        assert_eq!(choose(&o, 50_000, 8.0), Family::Ribbon);
        // Not enough bits for the whole filter: nothing resident either way.
        assert_eq!(price(&o, Family::Ribbon, 50_000, 4.0).units, 0);
        assert_eq!(choose(&o, 50_000, 4.0), Family::Bloom);
    }
}
