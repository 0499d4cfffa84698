//! Theoretical false-positive rates, for comparison with measured ones.

use super::blocked::LINE_BITS;
use super::FilterLayout;

/// Standard Bloom filter with `b` bits per key and `k` probes:
/// `(1 − e^{−k/b})^k` (the large-`m` limit of `(1 − (1 − 1/m)^{kn})^k`).
pub fn bloom_fpr(bits_per_key: f64, k: u32) -> f64 {
    if bits_per_key <= 0.0 {
        return 1.0;
    }
    let k = f64::from(k);
    (1.0 - (-k / bits_per_key).exp()).powf(k)
}

/// Cache-blocked Bloom filter with `b` bits per key, `k` probes per key and
/// lines of `line_bits` bits (Putze, Sanders & Singler 2009): the number of
/// keys in the line a query hits is Poisson with mean `λ = line_bits / b`, and a
/// line holding `l` keys answers yes with probability
/// `(1 − (1 − 1/line_bits)^{k·l})^k`, so
/// `FPR = Σ_l e^{−λ} λ^l / l! · (1 − (1 − 1/line_bits)^{k·l})^k`.
pub fn blocked_fpr_with_line(bits_per_key: f64, k: u32, line_bits: u64) -> f64 {
    if bits_per_key <= 0.0 {
        return 1.0;
    }
    let lambda = line_bits as f64 / bits_per_key;
    let kf = f64::from(k);
    let miss = (1.0 - 1.0 / line_bits as f64).ln();
    let yes_at = |l: f64| (1.0 - (miss * kf * l).exp()).powf(kf);
    if lambda > 1e6 {
        // The Poisson load is concentrated at λ (relative spread < 0.1%).
        return yes_at(lambda);
    }
    // Sum over λ ± 12√λ (+30), the rest of the mass is negligible.
    let spread = 12.0 * lambda.sqrt() + 30.0;
    #[expect(clippy::cast_sign_loss, reason = "clamped at zero before the cast")]
    let first = (lambda - spread).max(0.0).floor() as u64;
    #[expect(
        clippy::cast_sign_loss,
        reason = "lambda plus a positive spread is positive"
    )]
    let last = (lambda + spread).ceil() as u64;
    let mut log_p = -lambda + first as f64 * lambda.ln() - ln_factorial(first);
    let mut sum = 0.0;
    for l in first..=last {
        if l > first {
            log_p += lambda.ln() - (l as f64).ln();
        }
        sum += log_p.exp() * yes_at(l as f64);
    }
    sum
}

/// `ln(n!)`: exact below 64, Stirling's series above.
fn ln_factorial(n: u64) -> f64 {
    if n < 64 {
        return (2..=n).map(|i| (i as f64).ln()).sum();
    }
    let x = n as f64;
    x * x.ln() - x + 0.5 * (2.0 * std::f64::consts::PI * x).ln() + 1.0 / (12.0 * x)
        - 1.0 / (360.0 * x * x * x)
}

/// [`blocked_fpr_with_line`] with 512-bit lines.
pub fn blocked_fpr(bits_per_key: f64, k: u32) -> f64 {
    blocked_fpr_with_line(bits_per_key, k, LINE_BITS)
}

/// `units` filter units of `b / units` bits per key and `k` probes each, of
/// which `enabled` are probed, assuming independent units:
/// `(1 − e^{−k·units/b})^{k·enabled}`.
pub fn units_fpr(bits_per_key: f64, units: u32, k: u32, enabled: u32) -> f64 {
    if bits_per_key <= 0.0 || units == 0 {
        return 1.0;
    }
    let per_unit = bits_per_key / f64::from(units);
    bloom_fpr(per_unit, k).powf(f64::from(enabled))
}

/// Ribbon filter with `r` result bits over `n` keys: `2^-r` (an absent key's
/// fingerprint is independent of the solution, so it matches the XOR of its
/// row with probability exactly `2^-r`) plus the chance that its 64-bit digest
/// equals a key's, `n · 2^-64`. The 64-bit coefficient rows cost space
/// (`ε`, see [`crate::filter::ribbon::epsilon_for`]), not FPR.
pub fn ribbon_fpr(r: u32, n: u64) -> f64 {
    let collision = n as f64 * 0.5f64.powi(64);
    (0.5f64.powi(i32::try_from(r).unwrap_or(i32::MAX)) + collision).min(1.0)
}

/// Wide Ribbon (layout ids 7 and 5) over `n` keys in `slots` slots with `r` base
/// result bits and `upper` blocks of `r + 1` columns: an absent key starting
/// below slot `64 · (upper − 2)` is checked on `r + 1` bits, the others on
/// `r`, starts uniform over `slots − 127`: `f · 2^-(r+1) + (1 − f) · 2^-r`
/// plus `n · 2^-64` for digest collisions.
pub fn ribbon_wide_fpr(r: u32, slots: u64, upper: u64, n: u64) -> f64 {
    let starts = slots.saturating_sub(127).max(1) as f64;
    let high = (upper.saturating_sub(2) * 64) as f64;
    let f = (high / starts).min(1.0);
    let p = 0.5f64.powi(i32::try_from(r).unwrap_or(i32::MAX));
    (f * p / 2.0 + (1.0 - f) * p + n as f64 * 0.5f64.powi(64)).min(1.0)
}

/// Ribbon units (layout id 6) of `r` result bits each over `n` keys with
/// `enabled` of them probed: the units see independently remixed digests, so
/// their rates multiply, `2^-(r · enabled)`, plus `n · 2^-64` for a digest
/// equal to a key's (which every unit then accepts).
pub fn ribbon_units_fpr(r: u32, enabled: u32, n: u64) -> f64 {
    let bits = u64::from(r) * u64::from(enabled);
    let collision = n as f64 * 0.5f64.powi(64);
    (0.5f64.powi(i32::try_from(bits).unwrap_or(i32::MAX)) + collision).min(1.0)
}

/// Theoretical FPR of `layout` at `bits_per_key` bits per key (in total, over
/// all units) with `k` probes (per unit for the units layout) and `units` units
/// (ignored unless the layout is units; all of them probed). For the 64-bit
/// Ribbon layout `k` is the result bits `r` and the bits per key do not
/// matter; for Ribbon units `k` is each unit's `r`; for the wide Ribbon `k`
/// does not matter: its result bits are the bits per key spread over the
/// slots of a file of [`crate::filter::ribbon::NOMINAL_KEYS`] keys
/// ([`ribbon_wide_fpr_for`]).
pub fn theoretical_fpr(layout: FilterLayout, bits_per_key: f64, k: u32, units: u32) -> f64 {
    match layout {
        FilterLayout::Bloom => bloom_fpr(bits_per_key, k),
        FilterLayout::Blocked => blocked_fpr(bits_per_key, k),
        FilterLayout::Units => units_fpr(bits_per_key, units.max(1), k, units.max(1)),
        FilterLayout::Ribbon64 => ribbon_fpr(k, 0),
        FilterLayout::Ribbon => {
            ribbon_wide_fpr_for(bits_per_key, crate::filter::ribbon::NOMINAL_KEYS)
        }
        FilterLayout::RibbonUnits => ribbon_units_fpr(k, units.max(1), 0),
    }
}

/// Wide Ribbon at `bits_per_key` over `n` keys, sized as the builder sizes
/// it when the first seed bands (`ε(n)`, [`crate::filter::ribbon::wide`]):
/// [`ribbon_wide_fpr`] of its `r`, slots and upper blocks.
pub fn ribbon_wide_fpr_for(bits_per_key: f64, n: usize) -> f64 {
    use crate::filter::ribbon::wide;
    let slots = wide::slots_for(n, wide::epsilon_for(n));
    let (r, q) = wide::result_bits_for(bits_per_key, n, slots);
    let upper = wide::upper_blocks(slots / wide::BLOCK, q);
    ribbon_wide_fpr(r, slots, upper, n as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        // b = 10, k = 7: 0.819% (the paper's "theoretical optimal").
        assert!((bloom_fpr(10.0, 7) - 0.008_194).abs() < 1e-5);
        // Units: 7 × 1 probe at 10 bits/key is the same filter in expectation.
        let u = units_fpr(10.0, 7, 1, 7);
        assert!((u - bloom_fpr(10.0, 7)).abs() < 1e-12);
        // Blocked costs FPR (Putze et al.: ~1% → ~1.2–1.5% at 10 bits/key).
        let bl = blocked_fpr(10.0, 7);
        assert!(bl > bloom_fpr(10.0, 7) && bl < 0.02, "{bl}");
        // With one huge line the mixture collapses onto the standard formula.
        let big = blocked_fpr_with_line(10.0, 7, 1 << 20);
        assert!((big / bloom_fpr(10.0, 7) - 1.0).abs() < 0.01, "{big}");
        assert_eq!(theoretical_fpr(FilterLayout::Bloom, 0.0, 1, 1), 1.0);
        // Very few bits per key: no underflow, sane result.
        let low = blocked_fpr(0.25, 1);
        assert!(low > 0.9 && low <= 1.0, "{low}");
        assert!(blocked_fpr(1e-9, 3) > 0.999);
        // Stirling branch agrees with the exact sum.
        let exact: f64 = (2..=100u64).map(|i| (i as f64).ln()).sum();
        assert!((ln_factorial(100) - exact).abs() < 1e-9);
        // The windowed sum is continuous across the exact/Stirling boundary.
        let a = blocked_fpr(512.0 / 63.0, 5);
        let b = blocked_fpr(512.0 / 65.0, 5);
        assert!(a < b && b / a < 1.2, "{a} {b}");
    }
}
