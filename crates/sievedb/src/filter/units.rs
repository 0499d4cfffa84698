//! Standard Bloom filters and ElasticBF filter units over one word array.
//!
//! A standard Bloom filter is the one-unit case. With `units = N`, unit `j`
//! is a Bloom filter of `unit_bits` bits probed `k` times:
//!
//! * shared hashing: unit `j` uses positions `j·k … (j+1)·k − 1` of the index
//!   scheme run on the one digest (hash sharing across units);
//! * separate hashing: unit `j` runs the scheme on its own seeded hash
//!   (primary seed index `j`, and secondary seed index `j` for double hashing),
//!   as ElasticBF's original design. The independent scheme already hashes
//!   every position separately and is the same in both modes.
//!
//! A probe visits the enabled units in order and stops at the first one that
//! rules the key out.

use super::bloom::BitOp;
use super::digest::HashSource;
use super::scheme::{Enhanced, Independent, Positions, Stepper};
use super::{IndexScheme, Params, UnitHashing};

/// Every unit enabled.
pub const ALL_UNITS: u64 = u64::MAX;

#[inline]
fn enabled(mask: u64, j: u32) -> bool {
    (mask >> j) & 1 != 0
}

/// Runs `op` on the units of `p` enabled in `mask` (bit `j` = unit `j`).
#[inline]
pub(crate) fn run<S: HashSource, O: BitOp>(p: &Params, src: &mut S, op: &mut O, mask: u64) -> bool {
    let m = p.unit_bits;
    if p.unit_hashing == UnitHashing::Separate && p.scheme != IndexScheme::Independent {
        for j in 0..p.units {
            if !enabled(mask, j) {
                continue;
            }
            let u = j as usize;
            let ok = match p.scheme {
                IndexScheme::Double => {
                    let h1 = src.primary(j);
                    let h2 = src.secondary(j);
                    op.apply(u, p.k, &mut Stepper::double(h1, h2, m))
                }
                IndexScheme::EnhancedDouble => {
                    op.apply(u, p.k, &mut Enhanced::new(src.primary(j), m))
                }
                _ => op.apply(u, p.k, &mut Stepper::rotation(src.primary(j), m)),
            };
            if !ok {
                return false;
            }
        }
        return true;
    }
    match p.scheme {
        IndexScheme::Rotation => {
            let h = src.primary(0);
            each_unit(op, p.units, p.k, mask, &mut Stepper::rotation(h, m))
        }
        IndexScheme::Double => {
            let h1 = src.primary(0);
            let h2 = src.secondary(0);
            each_unit(op, p.units, p.k, mask, &mut Stepper::double(h1, h2, m))
        }
        IndexScheme::EnhancedDouble => {
            let h = src.primary(0);
            each_unit(op, p.units, p.k, mask, &mut Enhanced::new(h, m))
        }
        IndexScheme::Independent => each_unit(
            op,
            p.units,
            p.k,
            mask,
            &mut Independent {
                src,
                idx: 0,
                m,
                first: None,
            },
        ),
    }
}

#[inline]
fn each_unit<O: BitOp, P: Positions>(
    op: &mut O,
    units: u32,
    k: u32,
    mask: u64,
    pos: &mut P,
) -> bool {
    for j in 0..units {
        if !enabled(mask, j) {
            pos.skip(k);
        } else if !op.apply(j as usize, k, pos) {
            return false;
        }
    }
    true
}
