//! What the filter budget needs from a filter kind, whatever its bits: the
//! false-positive rate of a filter (or of its first units) for a number of
//! bits per key, the bits per key a rate costs, and what probing one unit
//! costs.
//!
//! The budget (`filter/budget/`) and its policies (`filter/elastic/`) see a
//! file as a [`Family`] and a curve of rates, `fpr[n]` with `n` units
//! resident ([`rates`]); they never look at a concrete filter's layout. Two
//! families exist:
//!
//! * [`Family::Bloom`]: standard, blocked and ElasticBF units of Bloom
//!   filters; `b` bits per key at the best probe count give
//!   `p ≈ e^{−b·ln²2}` (`(1 − e^{−k/b})^k` exactly, see [`super::theory`]);
//! * [`Family::Ribbon`]: Ribbon filters and Ribbon units; `r` result bits
//!   cost `r·(1 + ε(n))` bits per key ([`super::ribbon::epsilon_for`]) and
//!   give `p = 2^{−r}`: at the same rate about 30% fewer bits than Bloom.
//!
//! A unit's probe cost is stated in *Bloom unit probes*: 1 for a Bloom unit
//! (its `k` bits, mostly one cache line for the small `k` of units), and
//! [`RIBBON_PROBE_COST`] for a Ribbon unit (a remix of the digest, then up to
//! two neighbouring words per result bit, in one or two cache lines).

use super::ribbon;
use super::{theory, Filter, FilterLayout};

/// What probing one Ribbon unit costs, in Bloom unit probes (see the module
/// documentation): the in-cache bar allows 2× a blocked Bloom probe;
/// a unit of one or two result bits reads two adjacent words, as a Bloom
/// unit of one or two probes reads one or two.
pub const RIBBON_PROBE_COST: f64 = 1.5;

/// A kind of filter as the budget sees it: a rate curve and a probe cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Family {
    /// Bloom filters: standard, blocked, ElasticBF units of Bloom filters.
    #[default]
    Bloom,
    /// Ribbon filters: whole, or units of Ribbon filters.
    Ribbon,
}

impl Family {
    /// The family of filters of `layout`.
    pub fn of(layout: FilterLayout) -> Family {
        match layout {
            FilterLayout::Ribbon | FilterLayout::RibbonUnits => Family::Ribbon,
            _ => Family::Bloom,
        }
    }

    /// The best false-positive rate of one filter (or unit) of this family
    /// with `bits_per_key` bits per key over `n` keys: Bloom at its optimal
    /// real probe count `(1 − e^{−k/b})^k`, Ribbon at `2^{−b/(1+ε(n))}`
    /// (fractional result bits, as a Ribbon of mixed widths would give).
    pub fn unit_fpr(self, bits_per_key: f64, n: u64) -> f64 {
        if bits_per_key.is_nan() || bits_per_key <= 0.0 {
            return 1.0;
        }
        match self {
            Family::Bloom => {
                let k = (bits_per_key * std::f64::consts::LN_2).max(1.0);
                (1.0 - (-k / bits_per_key).exp()).powf(k).min(1.0)
            }
            Family::Ribbon => {
                let r = bits_per_key / (1.0 + epsilon(n));
                0.5f64.powf(r).min(1.0)
            }
        }
    }

    /// Bits per key a filter of this family needs for the rate `p` over `n`
    /// keys (`0` for `p ≥ 1`): Bloom `−ln p / ln²2`, Ribbon
    /// `log2(1/p)·(1 + ε(n))`. Monkey's closed form turns its rates into
    /// units with it.
    pub fn bits_for_fpr(self, p: f64, n: u64) -> f64 {
        if p.is_nan() || p >= 1.0 {
            return 0.0;
        }
        let nats = -p.max(f64::MIN_POSITIVE).ln();
        match self {
            Family::Bloom => nats / (std::f64::consts::LN_2 * std::f64::consts::LN_2),
            Family::Ribbon => nats / std::f64::consts::LN_2 * (1.0 + epsilon(n)),
        }
    }

    /// What probing one resident unit costs, in Bloom unit probes.
    pub fn probe_cost(self) -> f64 {
        match self {
            Family::Bloom => 1.0,
            Family::Ribbon => RIBBON_PROBE_COST,
        }
    }

    /// The layout of this family made of units of `layout`'s shape: a whole
    /// filter stays whole (standard Bloom for Bloom, Ribbon for Ribbon; a
    /// blocked Bloom filter stays blocked), units stay units.
    pub fn layout_like(self, layout: FilterLayout) -> FilterLayout {
        match (self, layout) {
            (Family::Bloom, FilterLayout::Ribbon) => FilterLayout::Bloom,
            (Family::Bloom, FilterLayout::RibbonUnits) => FilterLayout::Units,
            (Family::Ribbon, FilterLayout::Bloom | FilterLayout::Blocked) => FilterLayout::Ribbon,
            (Family::Ribbon, FilterLayout::Units) => FilterLayout::RibbonUnits,
            (_, l) => l,
        }
    }
}

/// Ribbon's slot overhead for `n` keys.
fn epsilon(n: u64) -> f64 {
    ribbon::epsilon_for(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The rate of `filter` with its first `enabled` units probed (1 for none,
/// and for a filter whose key count is unknown), from theory: a file's rate
/// is the product of its units' rates.
pub fn fpr(filter: &Filter, enabled: u32) -> f64 {
    let n = filter.num_keys();
    if n == 0 || enabled == 0 {
        return 1.0;
    }
    let b = filter.bits_per_key();
    let k = filter.probes_per_unit();
    let units = filter.units();
    match filter.layout() {
        FilterLayout::Units => theory::units_fpr(b, units, k, enabled.min(units)),
        FilterLayout::Ribbon | FilterLayout::RibbonUnits => {
            theory::ribbon_fpr(k, n).powf(f64::from(enabled.min(units)))
        }
        layout => theory::theoretical_fpr(layout, b, k, 1),
    }
}

/// `fpr[n]` of `filter` for `n = 0..=units` (`fpr[0] = 1`): the curve the
/// budget plans a file with.
pub fn rates(filter: &Filter) -> Vec<f64> {
    (0..=filter.units()).map(|n| fpr(filter, n)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ribbon_needs_fewer_bits_for_a_rate() {
        for p in [0.5, 0.1, 0.01, 0.001] {
            let bloom = Family::Bloom.bits_for_fpr(p, 100_000);
            let ribbon = Family::Ribbon.bits_for_fpr(p, 100_000);
            assert!(ribbon < 0.85 * bloom, "{p}: {ribbon} vs {bloom}");
            // The inverse of the rate, up to Bloom's integer-probe loss.
            let back = Family::Ribbon.unit_fpr(ribbon, 100_000);
            assert!((back / p - 1.0).abs() < 1e-9, "{back} {p}");
            let back = Family::Bloom.unit_fpr(bloom, 100_000);
            assert!(back >= p * 0.99 && back < p * 1.2, "{back} {p}");
        }
        assert_eq!(Family::Bloom.bits_for_fpr(1.0, 10), 0.0);
        assert_eq!(Family::Ribbon.unit_fpr(0.0, 10), 1.0);
        assert_eq!(Family::Bloom.unit_fpr(f64::NAN, 10), 1.0);
        assert!(Family::Ribbon.probe_cost() > Family::Bloom.probe_cost());
    }

    #[test]
    fn layouts_map_across_families() {
        for &l in FilterLayout::ALL {
            for fam in [Family::Bloom, Family::Ribbon] {
                let m = fam.layout_like(l);
                assert_eq!(Family::of(m), fam, "{l} as {fam:?}");
                let units = matches!(l, FilterLayout::Units | FilterLayout::RibbonUnits);
                let m_units = matches!(m, FilterLayout::Units | FilterLayout::RibbonUnits);
                assert_eq!(units, m_units, "{l} as {fam:?}");
            }
        }
    }
}
