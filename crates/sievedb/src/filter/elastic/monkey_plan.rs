//! Monkey's plan as a policy: made over the whole tree, and between two
//! such plans kept by what changed.
//!
//! A whole-tree plan ([`monkey::plan`]) is Monkey's closed form per run
//! fixed up to the exact budget by a greedy pass, `O(n log n)` for `n`
//! files; made at every change, it was made twice per compaction (the
//! outputs register while the inputs still hold their units, then the
//! inputs leave: a run kept in the git history of BENCHMARKS.md). So
//! it is made when the tree opens, when the budget falls below what is
//! planned by more than 1/64 of it or has moved by more than 1/64 since the
//! last one, and once the files registered or removed since the last one
//! pass 1/64 of the live files (`O(64 log n)` per file changed, amortised).
//! In between:
//! * a file that registers starts at Monkey's closed-form count for its run
//!   (`O(runs)`), from free memory only: a compaction's outputs wait for
//!   what their inputs free when they leave, while what the waiting files
//!   lack is at most 1/64 of the budget;
//! * when the budget falls below the plan by less (a compaction dropped
//!   overwritten entries, and the tree's new size is set before its inputs
//!   leave), the newest files give back what is over and wait with the new
//!   ones. A whole plan there cost 316,069 files visited per compaction of a
//!   50,000-file tree (the budget's test
//!   `compactions_that_drop_entries_cost_their_files`; 28,097 now, the
//!   plans due by the 1/64 rules).

use super::monkey::{self, MonkeyFile};
use super::{Allocator, FilterPolicy, WAIT_FRACTION};

/// What Monkey's plan keeps between whole-tree plans.
#[derive(Debug, Default)]
pub(super) struct MonkeyPlan {
    /// Whether a whole-tree plan is in force.
    made: bool,
    /// Files registered or removed since it was made.
    pub(super) changed: u64,
    /// The budget it was made for.
    pub(super) budget: u64,
    /// Files registered since it was made that still lack units of their
    /// count.
    pub(super) fresh: Vec<u64>,
}

impl Allocator {
    /// Monkey: file `id` registered.
    pub(super) fn monkey_add(&mut self, id: u64) {
        if self.cfg.policy == FilterPolicy::Monkey {
            self.monkey.changed += 1;
            self.monkey.fresh.push(id);
        }
    }

    /// Monkey: a file left, or its shape changed (its count stays until the
    /// next whole-tree plan).
    pub(super) fn monkey_changed(&mut self) {
        if self.cfg.policy == FilterPolicy::Monkey {
            self.monkey.changed += 1;
        }
    }

    /// Monkey: brings the targets to the plan, whole or kept (see the
    /// module documentation).
    pub(super) fn monkey_replan(&mut self) {
        // Over budget by more than 1/64 of it, the plan is made again as if
        // none were in force; by less, the newest files give units back.
        let over = self.used.saturating_sub(self.budget);
        let made = self.monkey.made && over <= self.budget / WAIT_FRACTION;
        let (changed, planned) = (self.monkey.changed, self.monkey.budget);
        if !self.whole_plan_due(made, changed, planned) {
            if over > 0 {
                self.monkey_give_back();
            }
            let mut fresh = std::mem::take(&mut self.monkey.fresh);
            let missing = self.place_fresh(&mut fresh, Self::monkey_units);
            self.monkey.fresh = fresh;
            if missing <= self.budget / WAIT_FRACTION {
                return;
            }
            self.count_whole_plan(); // what waits is too much: a plan after all
        }
        self.monkey_whole_plan();
    }

    /// Monkey over budget, its plan otherwise in force (the budget fell a
    /// little, as when a compaction drops overwritten entries): the newest
    /// files give back what is over, newest first, and wait with the files
    /// registered since the plan for memory to free (the compaction's inputs
    /// leaving). Visits the files it passes, not the tree.
    fn monkey_give_back(&mut self) {
        let mut before = u64::MAX;
        while self.used > self.budget {
            let Some((&id, f)) = self.files.range(..before).next_back() else {
                break;
            };
            before = id;
            self.work += 1;
            if f.target == 0 {
                continue;
            }
            let over = self.used - self.budget;
            let give = over.div_ceil(f.desc.unit_bytes.max(1));
            let keep = u64::from(f.target).saturating_sub(give) as u32;
            self.set_target(id, keep);
            if !self.monkey.fresh.contains(&id) {
                self.monkey.fresh.push(id);
            }
        }
    }

    /// Monkey's plan made over every live file.
    fn monkey_whole_plan(&mut self) {
        let files: Vec<MonkeyFile<'_>> =
            self.files.values().map(|f| f.monkey_file(false)).collect();
        let units = monkey::plan(&files, self.budget);
        let plan: Vec<(u64, u32)> = self.files.keys().copied().zip(units).collect();
        self.apply_plan(plan);
        self.monkey = MonkeyPlan {
            made: true,
            changed: 0,
            budget: self.budget,
            fresh: Vec::new(),
        };
    }
}
