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
pub(super) fn fill(items: &mut [Item<'_>], mut free: u64) -> f64 {
    let (mut last, mut short) = (0.0, false);
    let mut heap = BinaryHeap::new();
    for (i, it) in items.iter().enumerate() {
        if it.n < it.units() {
            heap.push(Key(it.gain_per_byte(), i));
        }
    }
    while let Some(Key(g, i)) = heap.pop() {
        if g <= 0.0 {
            break; // every remaining unit gains nothing (scores never increase)
        }
        let it = &mut items[i];
        if it.unit_bytes > free {
            short = true;
            continue; // this file's units no longer fit; drop it
        }
        free -= it.unit_bytes;
        it.n += 1;
        last = g;
        if it.n < it.units() {
            heap.push(Key(it.gain_per_byte(), i));
        }
    }
    if short {
        last
    } else {
        0.0
    }
}

/// Removes units, least cost per byte first, until at least `excess` bytes
/// are freed (or nothing is left). Returns the bytes freed. (A live
/// allocator keeps this order between shrinks instead, see `trim`.)
pub(super) fn trim(items: &mut [Item<'_>], excess: u64) -> u64 {
    let mut heap = BinaryHeap::new();
    for (i, it) in items.iter().enumerate() {
        if it.n > 0 {
            heap.push(Key(-it.cost_per_byte(), i));
        }
    }
    let mut freed = 0;
    while freed < excess {
        let Some(Key(_, i)) = heap.pop() else { break };
        let it = &mut items[i];
        it.n -= 1;
        freed += it.unit_bytes;
        if it.n > 0 {
            heap.push(Key(-it.cost_per_byte(), i));
        }
    }
    freed
}
