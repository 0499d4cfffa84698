//! What the filter budget needs from a filter kind, whatever its bits: the
//! false-positive rate of a filter (or of its first units) for a number of
//! bits per key, the bits per key a rate costs, and what probing one unit
//! costs.
//!
//! The budget (`filter/budget/`) and its policies (`filter/elastic/`) see a
//! file as a [`Family`] and a curve of rates, `fpr[n]` with `n` units
//! resident ([`rates`]); they never look at a concrete filter's layout. Three
//! families exist:
//!
//! * [`Family::Bloom`]: standard, blocked and ElasticBF units of Bloom
//!   filters; `b` bits per key at the best probe count give
//!   `p ≈ e^{−b·ln²2}` (`(1 − e^{−k/b})^k` exactly, see [`super::theory`]);
//! * [`Family::Ribbon`]: the wide Ribbon ([`FilterLayout::Ribbon`], 128-bit
//!   rows, fractional result bits): `b` bits per key over `n` keys give
//!   [`theory::ribbon_wide_fpr_for`], about `2^{−b/(1 + ε(n))}` with the
//!   wide `ε` ([`super::ribbon::wide::epsilon_for`], 1.5% to 3.5%);
//! * [`Family::Ribbon64`]: the 64-bit-row Ribbon, whole
//!   ([`FilterLayout::Ribbon64`]) or units ([`FilterLayout::RibbonUnits`]);
//!   `r` result bits cost `r·(1 + ε(n))` bits per key
//!   ([`super::ribbon::epsilon_for`], 4% to 10%) and give `p = 2^{−r}`.
//!
//! Either Ribbon spends about 30% fewer bits than Bloom at the same rate.
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
    /// The wide Ribbon filter (128-bit rows, fractional result bits).
    Ribbon,
    /// 64-bit-row Ribbon filters: whole, or units of them.
    Ribbon64,
}

impl Family {
    /// The family of filters of `layout`.
    pub fn of(layout: FilterLayout) -> Family {
        match layout {
            FilterLayout::Ribbon => Family::Ribbon,
            FilterLayout::Ribbon64 | FilterLayout::RibbonUnits => Family::Ribbon64,
            _ => Family::Bloom,
        }
    }

    /// Whether this is a Ribbon family (either width).
    pub fn is_ribbon(self) -> bool {
        self != Family::Bloom
    }

    /// The best false-positive rate of one filter (or unit) of this family
    /// with `bits_per_key` bits per key over `n` keys: Bloom at its optimal
    /// real probe count `(1 − e^{−k/b})^k`; the wide Ribbon as its builder
    /// sizes it ([`theory::ribbon_wide_fpr_for`]); the 64-bit Ribbon at
    /// `2^{−b/(1+ε(n))}` (fractional result bits: the continuous curve
    /// through its whole-`r` points).
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
                theory::ribbon_wide_fpr_for(bits_per_key, usize::try_from(n).unwrap_or(usize::MAX))
            }
            Family::Ribbon64 => {
                let r = bits_per_key / (1.0 + epsilon64(n));
                0.5f64.powf(r).min(1.0)
            }
        }
    }

    /// Bits per key a filter of this family needs for the rate `p` over `n`
    /// keys (`0` for `p ≥ 1`): Bloom `−ln p / ln²2`, Ribbon
    /// `log2(1/p)·(1 + ε(n))` with the family's `ε` (wide or 64-bit).
    /// Monkey's closed form turns its rates into units with it.
    pub fn bits_for_fpr(self, p: f64, n: u64) -> f64 {
        if p.is_nan() || p >= 1.0 {
            return 0.0;
        }
        let nats = -p.max(f64::MIN_POSITIVE).ln();
        match self {
            Family::Bloom => nats / (std::f64::consts::LN_2 * std::f64::consts::LN_2),
            Family::Ribbon => nats / std::f64::consts::LN_2 * (1.0 + epsilon_wide(n)),
            Family::Ribbon64 => nats / std::f64::consts::LN_2 * (1.0 + epsilon64(n)),
        }
    }

    /// What probing one resident unit costs, in Bloom unit probes.
    pub fn probe_cost(self) -> f64 {
        match self {
            Family::Bloom => 1.0,
            Family::Ribbon | Family::Ribbon64 => RIBBON_PROBE_COST,
        }
    }

    /// The layout of this family's kind (Bloom or Ribbon) of `layout`'s
    /// shape, as the hybrid tree ([`super::FilterOptions::for_level`]) picks
    /// it: a whole filter stays whole (standard Bloom for Bloom, the wide
    /// Ribbon for Ribbon; a blocked Bloom filter stays blocked, a Ribbon64
    /// stays Ribbon64 under either Ribbon family), units stay units (Bloom
    /// units, Ribbon units).
    pub fn layout_like(self, layout: FilterLayout) -> FilterLayout {
        match (self, layout) {
            (Family::Bloom, FilterLayout::Ribbon | FilterLayout::Ribbon64) => FilterLayout::Bloom,
            (Family::Bloom, FilterLayout::RibbonUnits) => FilterLayout::Units,
            (Family::Ribbon, FilterLayout::Bloom | FilterLayout::Blocked) => FilterLayout::Ribbon,
            (Family::Ribbon64, FilterLayout::Bloom | FilterLayout::Blocked) => {
                FilterLayout::Ribbon64
            }
            (Family::Ribbon | Family::Ribbon64, FilterLayout::Units) => FilterLayout::RibbonUnits,
            (_, l) => l,
        }
    }
}

/// The 64-bit-row Ribbon's slot overhead for `n` keys.
fn epsilon64(n: u64) -> f64 {
    ribbon::epsilon_for(usize::try_from(n).unwrap_or(usize::MAX))
}

/// The wide Ribbon's slot overhead for `n` keys.
fn epsilon_wide(n: u64) -> f64 {
    ribbon::wide::epsilon_for(usize::try_from(n).unwrap_or(usize::MAX))
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
    let p = &filter.p;
    let (k, units) = (p.k, p.units);
    if filter.partition_index().is_some() {
        // `enabled` shares of the partitions resident: the whole filter's
        // rate on that share of the lookups, 1 on the rest.
        let share = f64::from(enabled.min(units)) / f64::from(units);
        let whole = match p.layout {
            FilterLayout::Ribbon => theory::ribbon_wide_fpr(k, p.slots, p.upper, p.slots.max(1)),
            layout => theory::theoretical_fpr(layout, b, k, 1),
        };
        return share * whole + (1.0 - share);
    }
    match p.layout {
        FilterLayout::Units => theory::units_fpr(b, units, k, enabled.min(units)),
        FilterLayout::Ribbon64 => theory::ribbon_fpr(k, n),
        FilterLayout::Ribbon => theory::ribbon_wide_fpr(k, p.slots, p.upper, n),
        FilterLayout::RibbonUnits => theory::ribbon_units_fpr(k, enabled.min(units), n),
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
            let back = Family::Bloom.unit_fpr(bloom, 100_000);
            assert!(back >= p * 0.99 && back < p * 1.2, "{back} {p}");
            // The inverse of the rate: exact for the 64-bit Ribbon's
            // continuous curve, up to the wide one's mix of `r` and `r + 1`
            // columns (at most ~6% above `2^-x` for a fraction x).
            for (fam, tol) in [(Family::Ribbon64, 1e-9), (Family::Ribbon, 0.1)] {
                let ribbon = fam.bits_for_fpr(p, 100_000);
                assert!(ribbon < 0.85 * bloom, "{fam:?} {p}: {ribbon} vs {bloom}");
                let back = fam.unit_fpr(ribbon, 100_000);
                assert!((back / p - 1.0).abs() < tol, "{fam:?} {back} {p}");
            }
            // The wide Ribbon's smaller ε: fewer bits for the rate.
            assert!(
                Family::Ribbon.bits_for_fpr(p, 100_000) < Family::Ribbon64.bits_for_fpr(p, 100_000)
            );
        }
        assert_eq!(Family::Bloom.bits_for_fpr(1.0, 10), 0.0);
        assert_eq!(Family::Ribbon.unit_fpr(0.0, 10), 1.0);
        assert_eq!(Family::Ribbon64.unit_fpr(0.0, 10), 1.0);
        assert_eq!(Family::Bloom.unit_fpr(f64::NAN, 10), 1.0);
        assert!(Family::Ribbon.probe_cost() > Family::Bloom.probe_cost());
        assert!(Family::Ribbon64.probe_cost() > Family::Bloom.probe_cost());
    }

    #[test]
    fn layouts_map_across_families() {
        for &l in FilterLayout::ALL {
            for fam in [Family::Bloom, Family::Ribbon, Family::Ribbon64] {
                let m = fam.layout_like(l);
                assert_eq!(Family::of(m).is_ribbon(), fam.is_ribbon(), "{l} as {fam:?}");
                assert_eq!(l.is_units(), m.is_units(), "{l} as {fam:?}");
            }
        }
        // The hybrid tree's "Ribbon": the wide Ribbon for whole filters,
        // Ribbon units for units; an explicit Ribbon64 stays.
        assert_eq!(
            Family::Ribbon.layout_like(FilterLayout::Bloom),
            FilterLayout::Ribbon
        );
        assert_eq!(
            Family::Ribbon.layout_like(FilterLayout::Blocked),
            FilterLayout::Ribbon
        );
        assert_eq!(
            Family::Ribbon.layout_like(FilterLayout::Units),
            FilterLayout::RibbonUnits
        );
        assert_eq!(
            Family::Ribbon.layout_like(FilterLayout::Ribbon64),
            FilterLayout::Ribbon64
        );
        assert_eq!(
            Family::Bloom.layout_like(FilterLayout::Ribbon64),
            FilterLayout::Bloom
        );
        assert_eq!(Family::of(FilterLayout::RibbonUnits), Family::Ribbon64);
        assert_eq!(Family::of(FilterLayout::Ribbon), Family::Ribbon);
    }

    #[test]
    fn each_ribbon_layout_has_its_own_curve() {
        use crate::filter::{FilterBuilder, FilterOptions};
        let n = 20_000u64;
        for (layout, units) in [
            (FilterLayout::Ribbon, 1),
            (FilterLayout::Ribbon64, 1),
            (FilterLayout::RibbonUnits, 3),
        ] {
            let o = FilterOptions {
                layout,
                units,
                bits_per_key: 9.0,
                ..FilterOptions::default()
            };
            let f = FilterBuilder::new(&o).shape_for(n);
            let got = rates(&f);
            assert_eq!(got.len(), units as usize + 1);
            assert_eq!(got[0], 1.0);
            let p = &f.p;
            let want: Vec<f64> = (1..=units)
                .map(|e| match layout {
                    FilterLayout::Ribbon => theory::ribbon_wide_fpr(p.k, p.slots, p.upper, n),
                    FilterLayout::Ribbon64 => theory::ribbon_fpr(p.k, n),
                    _ => theory::ribbon_units_fpr(p.k, e, n),
                })
                .collect();
            assert_eq!(&got[1..], &want[..], "{layout}");
        }
        // 9 bits per key: the wide Ribbon spends the fraction (r = 8 plus
        // most of a bit), the 64-bit one rounds down to r = 8, three units
        // of 3 bits per key get r = 2 each.
        let at = |layout, units| {
            let o = FilterOptions {
                layout,
                units,
                bits_per_key: 9.0,
                ..FilterOptions::default()
            };
            rates(&FilterBuilder::new(&o).shape_for(n))
        };
        let (wide, r64, ru) = (
            at(FilterLayout::Ribbon, 1)[1],
            at(FilterLayout::Ribbon64, 1)[1],
            at(FilterLayout::RibbonUnits, 3),
        );
        assert!(wide < r64 && r64 <= 0.5f64.powi(8) * 1.001, "{wide} {r64}");
        assert!(
            (ru[1] / 0.25 - 1.0).abs() < 1e-6 && (ru[3] / 0.25f64.powi(3) - 1.0).abs() < 1e-6,
            "{ru:?}"
        );
    }
}
