//! Monkey's plan as a policy: made over the whole tree, and between two
//! such plans kept by what changed.
//!
//! A whole-tree plan ([`monkey::plan`]) is Monkey's closed form per run
//! fixed up to the exact budget by a greedy pass, `O(n log n)` for `n`
//! files; made at every change, it was made twice per compaction (the
//! outputs register while the inputs still hold their units, then the
//! inputs leave; BENCHMARKS.md, "`uniform` and `monkey` under writes"). So
//! it is made when the tree opens,
//! when the budget falls below what is planned or has moved by more than
//! 1/64 since the last one, and once the files registered or removed since
//! the last one pass 1/64 of the live files (`O(64 log n)` per file changed,
//! amortised). In between, a file that registers starts at Monkey's
//! closed-form count for its run (`O(runs)`), from free memory only: a
//! compaction's outputs wait for what their inputs free when they leave,
//! while what the waiting files lack is at most 1/64 of the budget.

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
        // Over budget (the budget fell below the plan) the plan is made again
        // as if none were in force.
        let made = self.monkey.made && self.used <= self.budget;
        let (changed, planned) = (self.monkey.changed, self.monkey.budget);
        if !self.whole_plan_due(made, changed, planned) {
            let mut fresh = std::mem::take(&mut self.monkey.fresh);
            let missing = self.place_fresh(&mut fresh, Self::monkey_units);
            self.monkey.fresh = fresh;
            if missing <= self.budget / WAIT_FRACTION {
                return;
            }
        }
        self.monkey_whole_plan();
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
