//! Skew-at-write's choice for a new file: its count in the optimum of
//! `Σ (f + tie·share)·fp` over every live file under the budget, read off
//! the price of memory of the last optimum solved.
//!
//! The greedy optimum gives a file every unit whose gain per byte
//! `w·(fp(n) − fp(n+1)) / unit_bytes` is at least the price of memory, the
//! gain per byte of the last unit it placed ([`greedy::fill`]). Solving it
//! costs `O(n log n)` for `n` files, which, solved for every compaction's
//! outputs, was a pass over the tree per compaction. So it is solved when the
//! tree opens, when the budget moved by more than 1/64 since the last one,
//! and once the files registered or removed since then pass 1/64 of the
//! live files (`O(64 log n)` per file changed, amortised); in between a new
//! file's count is read off that price, `O(units)`. Counts decay together,
//! so the price is scaled by the total count since it was solved.
//!
//! [`greedy::fill`]: super::greedy::fill

use super::{Allocator, FilterPolicy, SKEW_TIE_WEIGHT};

/// The price of memory of skew-at-write's last optimum.
#[derive(Debug, Default)]
pub(super) struct SkewPrice {
    /// `(price, Σ f)` when the optimum was solved; `None` before the first.
    pub(super) at: Option<(f64, f64)>,
    /// Files registered or removed since then.
    pub(super) changed: u64,
    /// The budget it was solved for.
    budget: u64,
    /// The allocator's epoch when every live file's target was its count in
    /// the optimum last solved, set by a batch that registered the whole
    /// tree (an open): while the epoch is the same, solving again gives
    /// the same counts and moves nothing, so the warm start that follows
    /// an open skips it (a second greedy solve over every file).
    pub(super) in_force: Option<u64>,
}

impl Allocator {
    /// Skew-at-write: a file registered or left.
    pub(super) fn skew_changed(&mut self) {
        if self.cfg.policy == FilterPolicy::SkewAtWrite {
            self.skew.changed += 1;
        }
    }

    /// Skew-at-write: the counts of the files `ids`, just registered, in the
    /// optimum over every live file (solved again if due, else read off the
    /// last optimum's price).
    pub(super) fn skew_units(&mut self, ids: &[u64]) -> Vec<u32> {
        self.skew_solve_or_price(ids).0
    }

    /// [`skew_units`](Self::skew_units), and whether the optimum was solved
    /// for them (not read off the last one's price).
    pub(super) fn skew_solve_or_price(&mut self, ids: &[u64]) -> (Vec<u32>, bool) {
        let (at, changed, planned) = (self.skew.at, self.skew.changed, self.skew.budget);
        let due = self.whole_plan_due(at.is_some(), changed, planned);
        if let (false, Some((price, hot))) = (due, at) {
            let scale = if hot > 0.0 {
                self.total_hot.max(0.0) / hot
            } else {
                1.0
            };
            self.work += ids.len() as u64;
            let units = ids
                .iter()
                .map(|&id| self.priced_units(id, price * scale))
                .collect();
            return (units, false);
        }
        let (plan, price) = self.greedy_plan(SKEW_TIE_WEIGHT, false);
        self.skew = SkewPrice {
            at: Some((price, self.total_hot.max(0.0))),
            changed: 0,
            budget: self.budget,
            in_force: None,
        };
        // In id order, as `files`: looked up by binary search.
        let plan: Vec<(u64, u32)> = self.files.keys().copied().zip(plan).collect();
        let units = ids
            .iter()
            .map(|&id| {
                plan.binary_search_by_key(&id, |&(id, _)| id)
                    .map_or(0, |i| plan[i].1)
            })
            .collect();
        (units, true)
    }

    /// The units of file `id` whose gain per byte is at least `price` (all
    /// that gain anything at price 0).
    pub(super) fn priced_units(&self, id: u64, price: f64) -> u32 {
        let Some(f) = self.files.get(&id) else {
            return 0;
        };
        let weight = f.hot + SKEW_TIE_WEIGHT * self.run_share(&f.desc);
        let per_byte = f.desc.unit_bytes.max(1) as f64;
        (0..f.units)
            .take_while(|&n| {
                let gain = weight * (f.fp(n) - f.fp(n + 1)) / per_byte;
                gain > 0.0 && gain >= price
            })
            .count() as u32
    }
}
