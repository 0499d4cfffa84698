//! Marginal-gain allocation of filter units: adding the unit with the best
//! gain per byte, or removing the one with the least cost per byte.
//!
//! With non-increasing, convex false-positive curves the marginal gain of a
//! file's next unit never increases, so a greedy choice one unit at a time
//! reaches the optimum of `Σ wᵢ·fpᵢ(nᵢ)` under a byte budget (exactly when all
//! units weigh the same, up to the last unit otherwise). Every tie is broken
//! by the item's index, so the outcome is deterministic.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

/// One file as the greedy allocator sees it.
pub(super) struct Item<'a> {
    /// Weight of the file's false-positive rate in the objective.
    pub weight: f64,
    /// Bytes one unit takes.
    pub unit_bytes: u64,
    /// `fpr[n]` for `n = 0..=units`.
    pub fpr: &'a [f64],
    /// Units currently given (changed in place); invariant: `n < fpr.len()`.
    pub n: u32,
}

impl Item<'_> {
    fn units(&self) -> u32 {
        self.fpr.len().saturating_sub(1) as u32
    }
    fn fp(&self, n: u32) -> f64 {
        self.fpr.get(n as usize).copied().unwrap_or(1.0)
    }
    /// Objective reduction per byte of adding unit `n + 1`.
    fn gain_per_byte(&self) -> f64 {
        let g = self.weight * (self.fp(self.n) - self.fp(self.n + 1));
        g / self.unit_bytes.max(1) as f64
    }
    /// Objective increase per byte of removing unit `n`.
    fn cost_per_byte(&self) -> f64 {
        let c = self.weight * (self.fp(self.n - 1) - self.fp(self.n));
        c / self.unit_bytes.max(1) as f64
    }
}

/// A heap key: a score (higher pops first) then the lower index.
#[derive(PartialEq)]
struct Key(f64, usize);

impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0
            .total_cmp(&other.0)
            .then_with(|| other.1.cmp(&self.1))
    }
}

/// Adds units, best gain per byte first, while they fit in `free` bytes and
/// gain something. Returns the price of memory in the result: the gain per
/// byte of the last unit added if some unit with a gain did not fit, else 0
/// (memory was not short). A unit with at least that gain per byte is one
/// the optimum would take.
///
/// Neighbouring items that are alike (same weight, unit size, rates and
/// units so far: the files of one size of a level, most of a bulk-loaded or
/// compacted tree) move as one class: each class's next unit goes to its
/// files together, lowest index first when only some of them fit, so the
/// heap holds classes, not files (a greedy pass over a 50,584-file tree
/// popped 147,000 units one by one).
pub(super) fn fill(items: &mut [Item<'_>], mut free: u64) -> f64 {
    let (mut last, mut short) = (0.0, false);
    let mut classes = classes(items);
    let mut heap = BinaryHeap::new();
    // The smallest unit of a file with room: once less is free, no unit
    // fits, and the classes left need not be popped one by one.
    let mut smallest = u64::MAX;
    for (c, class) in classes.iter().enumerate() {
        let it = &items[class.start];
        if it.n < it.units() {
            heap.push(Key(it.gain_per_byte(), c));
            smallest = smallest.min(it.unit_bytes);
        }
    }
    while let Some(Key(g, c)) = heap.pop() {
        if free < smallest {
            short |= g > 0.0; // the best unit left gains and does not fit
            break;
        }
        if g <= 0.0 {
            break; // every remaining unit gains nothing (scores never increase)
        }
        let class = &mut classes[c];
        let (ub, files) = (items[class.start].unit_bytes, class.end - class.start);
        let fit = match free.checked_div(ub) {
            Some(f) => files.min(usize::try_from(f).unwrap_or(usize::MAX)),
            None => files, // units that take no memory always fit
        };
        if fit == 0 {
            short = true;
            continue; // this class's units no longer fit; drop it
        }
        free -= fit as u64 * ub;
        last = g;
        if fit < files {
            short = true;
            class.end = class.start + fit; // the rest no longer fits
        }
        for it in &mut items[class.start..class.end] {
            it.n += 1;
        }
        let it = &items[class.start];
        if it.n < it.units() {
            heap.push(Key(it.gain_per_byte(), c));
        }
    }
    if short {
        last
    } else {
        0.0
    }
}

/// A run of neighbouring, alike items (see [`fill`]): `start..end`.
struct Class {
    start: usize,
    end: usize,
}

/// The items in runs of neighbours alike: same weight, unit size, rates
/// and units so far.
fn classes(items: &[Item<'_>]) -> Vec<Class> {
    let alike = |a: &Item<'_>, b: &Item<'_>| {
        a.n == b.n
            && a.unit_bytes == b.unit_bytes
            && a.weight.to_bits() == b.weight.to_bits()
            && a.fpr == b.fpr
    };
    let mut out: Vec<Class> = Vec::new();
    for (i, it) in items.iter().enumerate() {
        match out.last_mut() {
            Some(c) if alike(&items[c.start], it) => c.end = i + 1,
            _ => out.push(Class {
                start: i,
                end: i + 1,
            }),
        }
    }
    out
}

/// Removes units, least cost per byte first, until at least `excess` bytes
/// are freed (or nothing is left). Returns the bytes freed. (A live
/// allocator keeps this order between shrinks instead, see `trim`.) Alike
/// neighbours move as one class, as in [`fill`]: a class gives a unit from
/// its files together, lowest index first when fewer free enough (which
/// ends the trim).
pub(super) fn trim(items: &mut [Item<'_>], excess: u64) -> u64 {
    let mut classes = classes(items);
    let mut heap = BinaryHeap::new();
    for (c, class) in classes.iter().enumerate() {
        let it = &items[class.start];
        if it.n > 0 {
            heap.push(Key(-it.cost_per_byte(), c));
        }
    }
    let mut freed = 0;
    while freed < excess {
        let Some(Key(_, c)) = heap.pop() else { break };
        let class = &mut classes[c];
        let (ub, files) = (items[class.start].unit_bytes, class.end - class.start);
        let take = match (excess - freed).div_ceil(ub.max(1)) {
            _ if ub == 0 => files, // frees nothing: every file gives its unit
            need => files.min(usize::try_from(need).unwrap_or(usize::MAX)),
        };
        for it in &mut items[class.start..class.start + take] {
            it.n -= 1;
            freed += it.unit_bytes;
        }
        if take < files {
            break; // freed enough
        }
        let it = &items[class.start];
        if it.n > 0 {
            heap.push(Key(-it.cost_per_byte(), c));
        }
    }
    freed
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One unit at a time, best gain per byte first, lowest index on ties:
    /// what `fill` did before classes.
    fn fill_one_by_one(items: &mut [Item<'_>], mut free: u64) {
        loop {
            let best = items
                .iter()
                .enumerate()
                .filter(|(_, it)| it.n < it.units() && it.unit_bytes <= free)
                .map(|(i, it)| Key(it.gain_per_byte(), i))
                .max();
            match best {
                Some(Key(g, i)) if g > 0.0 => {
                    free -= items[i].unit_bytes;
                    items[i].n += 1;
                }
                _ => return,
            }
        }
    }

    /// One unit at a time, least cost per byte first, lowest index on ties:
    /// what `trim` did before classes.
    fn trim_one_by_one(items: &mut [Item<'_>], excess: u64) {
        let mut freed = 0;
        while freed < excess {
            let Some(Key(_, i)) = items
                .iter()
                .enumerate()
                .filter(|(_, it)| it.n > 0)
                .map(|(i, it)| Key(-it.cost_per_byte(), i))
                .max()
            else {
                return;
            };
            items[i].n -= 1;
            freed += items[i].unit_bytes;
        }
    }

    /// Classes of alike neighbours give (and take back) each unit to (from)
    /// the same files as one file at a time does (the lowest indices when a
    /// class only partly fits), and a tree of a few file sizes is a few
    /// classes.
    #[test]
    fn classes_fill_and_trim_as_file_by_file() {
        let rates = |bits: f64| -> Vec<f64> {
            (0..=6).map(|n| (-(n as f64) * bits * 0.48).exp()).collect()
        };
        let (a, b) = (rates(2.0), rates(1.5));
        let mut shapes = Vec::new();
        for i in 0..300u64 {
            // runs of alike files, one odd file between them
            let (weight, unit_bytes, fpr) = match i {
                0..=99 => (0.5, 100, &a),
                100 => (0.7, 100, &a),
                101..=199 => (0.2, 400, &b),
                _ => (0.05, 1_000, &a),
            };
            shapes.push((weight, unit_bytes, fpr));
        }
        let items = || -> Vec<Item<'_>> {
            shapes
                .iter()
                .map(|&(weight, unit_bytes, fpr)| Item {
                    weight,
                    unit_bytes,
                    fpr,
                    n: 0,
                })
                .collect()
        };
        assert_eq!(classes(&items()).len(), 4);
        for free in [0, 99, 100, 5_050, 60_000, 123_456, 400_000, 3_000_000] {
            let (mut got, mut want) = (items(), items());
            fill(&mut got, free);
            fill_one_by_one(&mut want, free);
            let units = |v: &[Item<'_>]| v.iter().map(|i| i.n).collect::<Vec<_>>();
            assert_eq!(units(&got), units(&want), "free {free}");
            // and back down, from three units each
            let bytes =
                |v: &[Item<'_>]| v.iter().map(|i| u64::from(i.n) * i.unit_bytes).sum::<u64>();
            let (mut got_t, mut want_t) = (items(), items());
            for it in got_t.iter_mut().chain(want_t.iter_mut()) {
                it.n = 3;
            }
            let before = bytes(&got_t);
            let freed = trim(&mut got_t, free);
            trim_one_by_one(&mut want_t, free);
            assert_eq!(units(&got_t), units(&want_t), "excess {free}");
            assert_eq!(freed, before - bytes(&got_t));
        }
    }
}
