//! The allocator's plans: the per-file counts each policy starts a file at
//! (Monkey's closed form, skew-at-write's greedy optimum, elastic's initial
//! units), the warm start at open and the steps the planned policies share
//! (uniform's plan is in `uniform`, Monkey's in `monkey_plan`, the order
//! units are given back in when the budget falls in `trim`).

use super::greedy::{self, Item};
use super::monkey::{self, MonkeyFile};
use super::{
    Allocator, FileDesc, FilterPolicy, DEFAULT_INITIAL_UNITS, SKEW_TIE_WEIGHT, WAIT_FRACTION,
};

impl Allocator {
    /// The file's share of its run's entries: the chance that a lookup
    /// probing the run probes this file.
    pub(super) fn run_share(&self, desc: &FileDesc) -> f64 {
        match self.runs.get(&(desc.level, desc.run)) {
            Some(r) if r.entries > 0 => desc.entries as f64 / r.entries as f64,
            _ => 1.0,
        }
    }

    /// The prior count of a new file with no history under elastic:
    /// Monkey assumes every run is probed by every lookup, so each run gets
    /// the same share of accesses, the mean count per run of the live files
    /// (`Σ f / runs`, the new file's run included); within its run a probe
    /// lands on a file in proportion to its entries, so the file gets
    /// `Σ f / runs × entries / run entries`.
    pub(super) fn monkey_prior(&self, desc: &FileDesc) -> f64 {
        let runs = self.runs.len();
        let run_entries = self.runs[&(desc.level, desc.run)].entries;
        if runs == 0 || run_entries == 0 {
            return 0.0;
        }
        self.total_hot.max(0.0) / runs as f64 * desc.entries as f64 / run_entries as f64
    }

    /// Monkey's closed-form count for file `id` given the current runs and
    /// budget (no fix-up: the multi-queue adjusts from there).
    pub(super) fn monkey_units(&self, id: u64) -> u32 {
        let f = &self.files[&id];
        let keys: Vec<(usize, u64)> = self.runs.keys().copied().collect();
        let entries: Vec<f64> = self.runs.values().map(|r| r.entries as f64).collect();
        let p = monkey::optimal_fprs(&entries, self.budget as f64 * 8.0);
        let run = (f.desc.level, f.desc.run);
        #[expect(
            clippy::expect_used,
            reason = "every file's run is registered in `runs`"
        )]
        let r = keys.iter().position(|&k| k == run).expect("run registered");
        monkey::closed_form_units(&f.monkey_file(false), p[r])
    }

    /// Bytes of one unit of every live file that has a filter: what a floor
    /// of one unit per file sets aside.
    fn one_unit_each_bytes(&self) -> u64 {
        self.files
            .values()
            .filter(|f| f.units > 0)
            .map(|f| f.desc.unit_bytes)
            .fold(0, u64::saturating_add)
    }

    /// Elastic-monkey's start for every live file (in id order), when a
    /// batch of files registers (a tree opened): Monkey's plan over the
    /// whole tree with at least one unit per file. The first unit of each
    /// file is set aside and Monkey plans the rest of the budget over the
    /// files' further units; if the budget cannot give every file one unit,
    /// Monkey's plan as it is.
    pub(super) fn monkey_start_plan(&self) -> Vec<u32> {
        let reserved = self.one_unit_each_bytes();
        let floor = reserved <= self.budget;
        let files: Vec<MonkeyFile<'_>> =
            self.files.values().map(|f| f.monkey_file(floor)).collect();
        if !floor {
            return monkey::plan(&files, self.budget);
        }
        let extra = monkey::plan(&files, self.budget - reserved);
        self.files
            .values()
            .zip(extra)
            .map(|(f, n)| if f.units > 0 { n + 1 } else { 0 })
            .collect()
    }

    /// The units a new file starts with under the elastic policies:
    /// `initial_units` under elastic-uniform; under elastic Monkey's count for
    /// its run, but at least one unit. Monkey gives the largest runs the
    /// highest false-positive rate, and at a few bits per key its closed form
    /// can round a last-level file down to no filter at all: every lookup
    /// probing it would then read a block until the multi-queue moved memory
    /// there, which it does only once the file is hot and others expired.
    pub(super) fn start_units(&self, id: u64) -> u32 {
        match self.cfg.policy {
            FilterPolicy::Elastic => self.monkey_units(id).max(1),
            _ => self.cfg.initial_units.unwrap_or(DEFAULT_INITIAL_UNITS),
        }
    }

    /// Under the elastic policies, after memory was freed: the files that
    /// registered short (`short`: fewer units than a new file starts with,
    /// [`start_units`](Self::start_units)) get up to that many from the free
    /// budget, one unit per file per round, hottest first (then by id), and
    /// leave `short` once they have them or a top-up gave them any. A
    /// compaction's outputs register while its inputs still hold their
    /// units, so they may start short; without this they would wait for an
    /// access to take the memory the inputs left. Files the multi-queue
    /// took units from are not topped up here; an access gives them free
    /// memory first (see `elastic_grow`).
    ///
    /// The first round serves `short` from the front and stops at the first
    /// file one more unit of which does not fit: the memory waits for the
    /// hotter file rather than go to a colder one with smaller units (a file
    /// whose next unit would not fit in the whole budget leaves `short`
    /// instead). So a top-up visits the files it serves and one more. A pass over every
    /// file after each compaction, then a Monkey solve for every short file,
    /// then a sort of every short file one unit of which fitted, were in turn
    /// the largest CPU cost of writing a 35,000–44,000-file tree under a
    /// budget.
    pub(super) fn top_up_starts(&mut self) {
        if !self.cfg.policy.is_elastic() {
            return;
        }
        // (file, units wanted) of the files served in the first round
        let mut served: Vec<(u64, u32)> = Vec::new();
        let mut at = None;
        while self.used < self.budget {
            let Some(place) = self.short.next_after(at) else {
                break;
            };
            at = Some(place);
            let id = place.1;
            self.work += 1;
            let f = &self.files[&id];
            let (t, units, unit) = (f.target, f.units, f.desc.unit_bytes);
            let w = self.start_units(id).min(units);
            if t < w {
                if self.fitting(id, t + 1) > t {
                    self.set_target(id, t + 1);
                } else if (u64::from(t) + 1).saturating_mul(unit) <= self.budget {
                    break;
                }
                // Otherwise more than the whole budget: it can never be
                // served, and leaves `short` rather than hold up the files
                // behind it.
            }
            served.push((id, w));
        }
        // Further rounds, one unit per file each, so that the memory of a
        // compaction's inputs gives each of its outputs a filter before any
        // gets two.
        let mut round: Vec<(u64, u32)> = served
            .iter()
            .copied()
            .filter(|&(id, w)| self.files[&id].target < w)
            .collect();
        while !round.is_empty() && self.used < self.budget {
            let mut grew = false;
            for &(id, w) in &round {
                let t = self.files[&id].target;
                if t < w && self.fitting(id, t + 1) > t {
                    self.set_target(id, t + 1);
                    grew = true;
                }
            }
            round.retain(|&(id, w)| self.files[&id].target < w);
            if !grew {
                break;
            }
        }
        // A served file leaves `short`: it has its units, or a top-up gave
        // it some and what it lacks is the multi-queue's to give; so `short`
        // never grows into a list of the tree's files.
        for (id, _) in served {
            self.short.remove(id);
        }
    }

    /// At open, once every file registered: re-plans every file's units as
    /// the optimum for the access counts the files have (greedy by gain per
    /// byte). Under the elastic policies, when any file has a count (restored
    /// from the hotness file), every file with a filter first keeps one unit
    /// (where the budget gives every file one, as a cold start does) and the
    /// rest of the budget goes where the counts say, so a reopened database
    /// starts warm instead of waiting a lifetime for files to expire. The
    /// floor matters at scale: the restored counts are the few accesses of a
    /// half-life or two per file, so many files that lookups will probe have
    /// counts near 0, and the plain optimum could leave them without a
    /// filter, which a cold start never does. Under skew-at-write it is the
    /// choice a file gets when it is written, made for all files at once:
    /// registering files one by one would give the first ones all the
    /// memory. Nothing under the other
    /// policies.
    pub fn warm_start(&mut self) {
        let (tie, one_each) = match self.cfg.policy {
            FilterPolicy::ElasticUniform | FilterPolicy::Elastic if self.total_hot > 0.0 => {
                (0.0, true)
            }
            // Nothing changed since an open's batch placed every file at
            // the optimum this would solve again (see `SkewPrice::in_force`).
            FilterPolicy::SkewAtWrite if self.skew.in_force == Some(self.epoch) => return,
            FilterPolicy::SkewAtWrite => (SKEW_TIE_WEIGHT, false),
            _ => return,
        };
        self.visit_all();
        let plan: Vec<(u64, u32)> = self
            .files
            .keys()
            .copied()
            .zip(self.greedy_plan(tie, one_each).0)
            .collect();
        self.apply_plan(plan);
    }

    /// Every file's units (in id order) in the greedy optimum of
    /// `Σ (f + tie·share)·fp` under the whole budget, `share` the file's
    /// share of its run's entries; with `one_each` every file that has a
    /// filter first gets one unit, as elastic's start gives it, and the
    /// greedy optimum places the rest of the budget (if the budget cannot
    /// give every file one unit, the plain optimum). Also the optimum's price
    /// of memory ([`greedy::fill`]).
    pub(super) fn greedy_plan(&self, tie: f64, one_each: bool) -> (Vec<u32>, f64) {
        let reserved = self.one_unit_each_bytes();
        let floor = u32::from(one_each && reserved <= self.budget);
        let mut items: Vec<Item<'_>> = self
            .files
            .values()
            .map(|f| Item {
                weight: f.hot + tie * self.run_share(&f.desc),
                unit_bytes: f.desc.unit_bytes,
                fpr: &f.desc.fpr,
                n: floor.min(f.units),
            })
            .collect();
        let free = if floor == 1 {
            self.budget - reserved
        } else {
            self.budget
        };
        let price = greedy::fill(&mut items, free);
        (items.iter().map(|i| i.n).collect(), price)
    }

    /// Uniform and Monkey: brings every target to the plan (see `uniform`
    /// and `monkey_plan`).
    pub(super) fn replan(&mut self) {
        self.dirty = false;
        match self.cfg.policy {
            FilterPolicy::Uniform => self.uniform_replan(),
            FilterPolicy::Monkey => self.monkey_replan(),
            _ => {}
        }
    }

    /// Whether a whole-tree plan (monkey's, skew-at-write's optimum) is due:
    /// none was made (`made` false), or the files registered or removed since
    /// it (`changed`) pass `1 / WAIT_FRACTION` of the live files, or the budget
    /// moved by that fraction from the one it was made for. When it is, the
    /// plan's pass and its greedy heap are counted as work.
    pub(super) fn whole_plan_due(&mut self, made: bool, changed: u64, planned_budget: u64) -> bool {
        let live = self.files.len() as u64;
        let due = !made
            || changed * WAIT_FRACTION > live
            || planned_budget.abs_diff(self.budget) > self.budget / WAIT_FRACTION;
        if due {
            self.count_whole_plan();
        }
        due
    }

    /// Counts a whole-tree plan as work: its pass and its greedy heap.
    pub(super) fn count_whole_plan(&mut self) {
        let live = self.files.len() as u64;
        self.work += live * (1 + u64::from(live.max(1).ilog2()));
    }

    /// Sets every file's target to `plan` (in id order, one entry per live
    /// file), decreases first so that `used` never passes the budget on the
    /// way; each part stays in id order.
    pub(super) fn apply_plan(&mut self, plan: Vec<(u64, u32)>) {
        // Two passes over the files beside the plan, both in id order:
        // decreases, then increases (no search per file).
        let (files, mut books) = self.split();
        for down in [true, false] {
            for (&(pid, n), (&id, f)) in plan.iter().zip(files.iter_mut()) {
                debug_assert_eq!(pid, id, "plans are in id order");
                if (n < f.target) == down && n != f.target {
                    books.retarget(id, f, n);
                }
            }
        }
    }

    /// Gives each file of `fresh` (registered since the plan) the count
    /// `want` gives it, or what of it fits in the free budget; the files
    /// short of it stay in `fresh`, those gone leave. Returns the bytes they
    /// lack.
    pub(super) fn place_fresh(&mut self, fresh: &mut Vec<u64>, want: fn(&Self, u64) -> u32) -> u64 {
        let mut missing = 0u64;
        fresh.retain(|&id| {
            self.work += 1;
            let Some(f) = self.files.get(&id) else {
                return false;
            };
            let unit = f.desc.unit_bytes;
            let want = want(self, id).min(f.units);
            let fit = self.fitting(id, want);
            self.set_target(id, fit);
            missing = missing.saturating_add(u64::from(want - fit) * unit);
            fit < want
        });
        missing
    }
}
