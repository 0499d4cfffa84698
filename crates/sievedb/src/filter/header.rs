//! The filter header (`docs/format.md`, filter section versions 2 to 4):
//! its fields, after the version byte, checked and turned into a filter's
//! [`Params`], layout by layout.

use super::{
    blocked, ribbon, ribbon_units, truncated, FilterLayout, HashFn, IndexScheme, Params,
    UnitHashing, MAX_PROBES, MAX_UNITS,
};
use crate::coding::Reader;

/// Parses the header shared by format versions 2, 3 and 4 (after the version
/// byte): everything but the bits. See `docs/format.md`.
pub(crate) fn parse_header(
    r: &mut Reader<'_>,
    version: u8,
) -> std::result::Result<(Params, u64), String> {
    let mut byte = || r.u8().ok_or_else(truncated);
    let layout_id = byte()?;
    let hash_id = byte()?;
    let secondary_id = byte()?;
    let scheme_id = byte()?;
    let unit_hashing_id = byte()?;
    let k = u32::from(byte()?);
    let units = u32::from(byte()?);
    let num_keys = r.u64().ok_or_else(truncated)?;
    let unit_bits = r.u64().ok_or_else(truncated)?;

    let layout = FilterLayout::from_id(layout_id)
        .ok_or_else(|| format!("unknown filter layout {layout_id}"))?;
    let hash = HashFn::from_id(hash_id)
        .ok_or_else(|| format!("unknown filter hash function {hash_id}"))?;
    let scheme = IndexScheme::from_id(scheme_id)
        .ok_or_else(|| format!("unknown filter index scheme {scheme_id}"))?;
    if layout == FilterLayout::Ribbon {
        // The unit-hashing byte is the fraction `q` (shared hashing).
        let p = parse_ribbon(
            layout,
            hash,
            secondary_id,
            scheme,
            UnitHashing::Shared,
            k,
            units,
        )?;
        let p = Params {
            homogeneous: layout_id == FilterLayout::Ribbon.id(),
            ..p
        };
        return ribbon_wide_sized(p, unit_hashing_id, unit_bits).map(|p| (p, num_keys));
    }
    let unit_hashing = UnitHashing::from_id(unit_hashing_id)
        .ok_or_else(|| format!("unknown filter unit hashing {unit_hashing_id}"))?;
    if layout == FilterLayout::RibbonUnits {
        return parse_ribbon_units(
            hash,
            secondary_id,
            scheme,
            unit_hashing,
            k,
            units,
            unit_bits,
        )
        .map(|p| (p, num_keys));
    }
    if layout == FilterLayout::Ribbon64 {
        return parse_ribbon(layout, hash, secondary_id, scheme, unit_hashing, k, units)
            .and_then(|p| ribbon_sized(p, unit_bits))
            .map(|p| (p, num_keys));
    }
    let secondary = match (scheme, secondary_id) {
        (IndexScheme::Double, id) => HashFn::from_id(id)
            .ok_or_else(|| format!("unknown filter secondary hash function {id}"))?,
        (_, 0) => hash,
        (_, id) => return Err(format!("secondary hash {id} without double hashing")),
    };
    if !(1..=MAX_UNITS).contains(&units) || (layout != FilterLayout::Units && units != 1) {
        return Err(format!("bad unit count {units} for layout {layout}"));
    }
    if layout != FilterLayout::Units && unit_hashing != UnitHashing::Shared {
        return Err(format!("separate unit hashing in layout {layout}"));
    }
    if k == 0 || k * units > MAX_PROBES {
        return Err(format!("bad probe count {k} × {units} units"));
    }
    let granule = if layout == FilterLayout::Blocked {
        blocked::LINE_BITS
    } else {
        64
    };
    if unit_bits == 0 || !unit_bits.is_multiple_of(granule) {
        return Err(format!("bad unit size {unit_bits} bits"));
    }
    let p = Params {
        layout,
        scheme,
        unit_hashing,
        hash,
        secondary,
        k,
        units,
        unit_bits,
        wpu: (unit_bits / 64) as usize,
        lines: if layout == FilterLayout::Blocked {
            unit_bits / blocked::LINE_BITS
        } else {
            0
        },
        line_fields: if version >= 3 {
            blocked::V3_FIELDS_PER_VALUE
        } else {
            1
        },
        seed: 0,
        slots: 0,
        frac: 0,
        upper: 0,
        homogeneous: false,
    };
    Ok((p, num_keys))
}

/// The parameters of a Ribbon header (its secondary byte is the seed, its
/// `k` the result bits), before the size is checked.
fn parse_ribbon(
    layout: FilterLayout,
    hash: HashFn,
    seed: u8,
    scheme: IndexScheme,
    unit_hashing: UnitHashing,
    r: u32,
    units: u32,
) -> std::result::Result<Params, String> {
    if scheme != IndexScheme::Rotation || unit_hashing != UnitHashing::Shared || units != 1 {
        return Err(format!(
            "ribbon filter with scheme {scheme}, unit hashing {unit_hashing}, {units} units"
        ));
    }
    let max_r = if layout == FilterLayout::Ribbon {
        ribbon::wide::MAX_RESULT_BITS
    } else {
        ribbon::MAX_RESULT_BITS
    };
    if !(1..=max_r).contains(&r) {
        return Err(format!("bad ribbon result bits {r}"));
    }
    Ok(Params {
        layout,
        scheme,
        unit_hashing,
        hash,
        secondary: hash,
        k: r,
        units: 1,
        unit_bits: 0,
        wpu: 0,
        lines: 0,
        line_fields: blocked::V3_FIELDS_PER_VALUE,
        seed,
        slots: 0,
        frac: 0,
        upper: 0,
        homogeneous: false,
    })
}

/// The parameters of a Ribbon-units header: `units` units of `k = r`
/// result bits, each of `unit_bits` bits (see [`ribbon_units`]).
fn parse_ribbon_units(
    hash: HashFn,
    secondary: u8,
    scheme: IndexScheme,
    unit_hashing: UnitHashing,
    r: u32,
    units: u32,
    unit_bits: u64,
) -> std::result::Result<Params, String> {
    if scheme != IndexScheme::Rotation || unit_hashing != UnitHashing::Shared || secondary != 0 {
        return Err(format!(
            "ribbon units with scheme {scheme}, unit hashing {unit_hashing}, secondary {secondary}"
        ));
    }
    if !(1..=MAX_UNITS).contains(&units) {
        return Err(format!("bad unit count {units} for layout ribbon-units"));
    }
    if !(1..=ribbon::MAX_RESULT_BITS).contains(&r) {
        return Err(format!("bad ribbon result bits {r}"));
    }
    let slots = ribbon_units::slots_of(unit_bits, r)
        .ok_or_else(|| format!("bad ribbon unit size {unit_bits} bits for {r} result bits"))?;
    Ok(Params {
        layout: FilterLayout::RibbonUnits,
        scheme,
        unit_hashing,
        hash,
        secondary: hash,
        k: r,
        units,
        unit_bits,
        wpu: (unit_bits / 64) as usize,
        lines: 0,
        line_fields: blocked::V3_FIELDS_PER_VALUE,
        seed: 0,
        slots,
        frac: 0,
        upper: 0,
        homogeneous: false,
    })
}

/// `p` (a Ribbon's) of `unit_bits = slots · r` bits, slots a nonzero multiple
/// of 64.
pub(crate) fn ribbon_sized(mut p: Params, unit_bits: u64) -> std::result::Result<Params, String> {
    let per_block = ribbon::W * u64::from(p.k);
    if unit_bits == 0 || !unit_bits.is_multiple_of(per_block) {
        return Err(format!(
            "bad ribbon size {unit_bits} bits for {} result bits",
            p.k
        ));
    }
    p.unit_bits = unit_bits;
    p.wpu = (unit_bits / 64) as usize;
    p.slots = unit_bits / u64::from(p.k);
    Ok(p)
}

/// `p` (a wide Ribbon's, `r = p.k`) at fraction `q` with `unit_bits` bits:
/// `64 ·` [`ribbon::wide::words_for`] of some block count of at least 2.
pub(crate) fn ribbon_wide_sized(
    mut p: Params,
    q: u8,
    unit_bits: u64,
) -> std::result::Result<Params, String> {
    use ribbon::wide::{blocks_for_words, upper_blocks, BLOCK};
    let bad = || {
        format!(
            "bad ribbon size {unit_bits} bits for {} + {q}/256 result bits",
            p.k
        )
    };
    if unit_bits == 0 || !unit_bits.is_multiple_of(64) {
        return Err(bad());
    }
    let blocks = blocks_for_words(unit_bits / 64, p.k, q).ok_or_else(bad)?;
    p.frac = q;
    p.upper = upper_blocks(blocks, q);
    p.unit_bits = unit_bits;
    p.wpu = (unit_bits / 64) as usize;
    p.slots = blocks * BLOCK;
    Ok(p)
}
