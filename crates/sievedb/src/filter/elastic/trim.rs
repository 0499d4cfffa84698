//! The order in which the elastic policies and skew-at-write give units
//! back when the budget falls below what they hold, kept between shrinks.
//!
//! A budget in bits per key falls when a compaction drops overwritten or
//! deleted entries; the tree's new size is set before the compaction's
//! inputs leave, so units must go at once. The elastic policies drop the
//! unit costing least, `f·(fp(n−1) − fp(n))` per byte; skew-at-write empties
//! the coldest file first. Each sorted every file for that, a pass over the
//! tree per compaction under overwrites (under elastic, 19,790 files visited
//! per compaction of a 50,000-file tree in the budget's test
//! `compactions_that_drop_entries_cost_their_files`; 290 now).
//!
//! Here every file holding units is filed under its key, `(key, id)`, when
//! its target or shape changes. An access only raises a file's count, so it
//! only raises its key, and it does not re-file the file: a filed key is at
//! most the file's key now. A shrink takes the first filed file; if its key
//! grew it is filed again under the new one, otherwise every other file's
//! key is at least its own, and its unit goes. That is the order of sorting
//! every file, ties by id, at the cost of the files a shrink meets. Halving
//! the counts lowers keys: the order is then dropped and filed again at the
//! next shrink only (a pass over the tree once per half-life at most).
//!
//! Invariant while `valid`: `order` holds `(k, id)` for every live file
//! `id` with a target above 0, `k` its `filed` key, which is at most its
//! key now; files with no unit have no `filed` key.

use std::collections::BTreeSet;

use super::{Allocator, FileState, FilterPolicy};

/// The shrink order (see the module documentation).
#[derive(Debug, Default)]
pub(super) struct TrimOrder {
    /// Whether `order` is up to date; false until the first shrink and after
    /// counts halve (nothing is filed while it is false).
    valid: bool,
    /// `(key, id)`: the file to give a unit first comes first.
    order: BTreeSet<(u64, u64)>,
}

impl TrimOrder {
    /// File `id`, whose state is `f`, is filed again under its key now
    /// (nothing while the order is not kept).
    pub(super) fn refile(&mut self, policy: FilterPolicy, id: u64, f: &mut FileState) {
        if !self.valid {
            return;
        }
        if let Some(old) = f.filed.take() {
            self.order.remove(&(old, id));
        }
        f.filed = f.trim_key(policy);
        if let Some(k) = f.filed {
            self.order.insert((k, id));
        }
    }
}

/// A non-negative value as a key that sorts like it (the bit patterns of
/// finite values `>= 0` order like the values; NaN and negatives as 0).
fn key(v: f64) -> u64 {
    if v > 0.0 {
        v.to_bits()
    } else {
        0
    }
}

impl FileState {
    /// The file's place in the shrink order under `policy` (lower goes
    /// first), `None` if it has no unit to give or the policy shrinks
    /// otherwise: the cost per byte of its last unit for the elastic
    /// policies (as `greedy::trim` prices it), its count for skew-at-write.
    fn trim_key(&self, policy: FilterPolicy) -> Option<u64> {
        if self.target == 0 {
            return None;
        }
        match policy {
            FilterPolicy::Elastic | FilterPolicy::ElasticUniform => {
                let cost = self.hot * (self.fp(self.target - 1) - self.fp(self.target));
                Some(key(cost / self.desc.unit_bytes.max(1) as f64))
            }
            FilterPolicy::SkewAtWrite => Some(key(self.hot)),
            FilterPolicy::Uniform | FilterPolicy::Monkey => None,
        }
    }
}

impl Allocator {
    /// File `id`'s target or shape changed, or its count grew: it is filed
    /// again under its key now. `O(log n)`; nothing while the order is not
    /// kept.
    pub(super) fn trim_refile(&mut self, id: u64) {
        if !self.trim.valid {
            return;
        }
        let policy = self.cfg.policy;
        let Some(f) = self.files.get_mut(&id) else {
            return; // it left: `remove_file` unfiled it
        };
        self.trim.refile(policy, id, f);
    }

    /// File `id`, whose state `f` was, left: it leaves the order.
    pub(super) fn trim_unfile(&mut self, id: u64, f: &FileState) {
        if let Some(k) = f.filed {
            self.trim.order.remove(&(k, id));
        }
    }

    /// Every count changed (they halved): the order is dropped, to be filed
    /// again at the next shrink (a pass over the tree, as halving is).
    pub(super) fn trim_forget_order(&mut self) {
        if std::mem::take(&mut self.trim.valid) {
            self.trim.order.clear();
            for f in self.files.values_mut() {
                f.filed = None;
            }
        }
    }

    /// Files every live file with units (a pass over the tree).
    fn trim_file_all(&mut self) {
        self.visit_all();
        let policy = self.cfg.policy;
        for (&id, f) in self.files.iter_mut() {
            f.filed = f.trim_key(policy);
            if let Some(k) = f.filed {
                self.trim.order.insert((k, id));
            }
        }
        self.trim.valid = true;
    }

    /// The elastic policies and skew-at-write: gives units back in the
    /// shrink order until the plan fits the budget (see the module
    /// documentation); each file met counts as work.
    pub(super) fn shrink_in_order(&mut self) {
        if !self.trim.valid {
            self.trim_file_all();
        }
        let policy = self.cfg.policy;
        while self.used > self.budget {
            let Some(&(k, id)) = self.trim.order.first() else {
                break;
            };
            self.work += 1;
            let f = &self.files[&id];
            if f.trim_key(policy) != Some(k) {
                self.trim_refile(id); // its count grew since it was filed
                continue;
            }
            let t = f.target;
            self.set_target(id, t - 1);
        }
    }
}
