//! Uniform's plan, kept up to date by what changed instead of made again
//! over the whole tree.
//!
//! The plan: every file keeps `min(level, units)` units, `level` the largest
//! count with `Σ min(level, units)·unit_bytes ≤ budget`; then the files with
//! more units than `level`, in id order, get one more unit each while it fits
//! in what is left, and the first one that does not fit ends them. So the
//! files with one more unit are a prefix in id order.
//!
//! Three things make it cheap when a compaction swaps a few files of a tree
//! of tens of thousands:
//! * `sums[k]`, the unit bytes of the files with at least `k` units, give
//!   the cost of any level in `O(MAX_UNITS)`, so finding `level` visits no file;
//! * while `level` stays, only the end of the prefix moves: a file that leaves
//!   or joins it changes what is left, and the prefix gives or takes units at
//!   its end. The files visited are the files changed plus those the end
//!   passes over;
//! * the files registered since the plan first take only free memory, and
//!   wait for more while what they lack is at most 1/64 of the budget. A
//!   compaction's outputs register while its inputs still hold their units:
//!   making room for them at once would take a unit from the end of the
//!   prefix, or lower the level of the whole tree, to give it back (and
//!   load it again) once the inputs leave moments later.
//!
//! When `level` moves, every file's count moves with it, and the plan is made
//! again over every file. Before, the plan was remade, with a binary search
//! over the level, at every change: 7 passes over the tree, twice per
//! compaction (a run kept in the git history of BENCHMARKS.md).

use super::{Allocator, FilterPolicy, MAX_UNITS, WAIT_FRACTION};

/// What uniform's plan keeps between changes.
#[derive(Debug)]
pub(super) struct UniformPlan {
    /// `sums[k]`, `k = 1..=MAX_UNITS`: `Σ unit_bytes` over the files with at
    /// least `k` units (`sums[0]` unused).
    sums: [u64; MAX_UNITS as usize + 1],
    /// The level of the plan in force; `None` until a plan is made.
    level: Option<u32>,
    /// The files with more units than `level` and an id below this bound have
    /// one more unit (`None`: all of them).
    extra_end: Option<u64>,
    /// `Σ unit_bytes` of the files in that prefix (a file registered into it
    /// since the plan counts before it has its units).
    extra_bytes: u64,
    /// Files registered or reshaped since the plan that still lack units of
    /// their count (all of them until the next plan places them).
    pub(super) fresh: Vec<u64>,
}

impl Default for UniformPlan {
    fn default() -> Self {
        UniformPlan {
            sums: [0; MAX_UNITS as usize + 1],
            level: None,
            extra_end: None,
            extra_bytes: 0,
            fresh: Vec::new(),
        }
    }
}

impl UniformPlan {
    /// Whether file `id` of `units` units is in the prefix with one more
    /// unit under the plan in force.
    fn in_extra(&self, id: u64, units: u32) -> bool {
        self.level.is_some_and(|l| units > l) && self.extra_end.is_none_or(|e| id < e)
    }

    /// Counts a file of `units` units of `unit_bytes` each (`add`) or stops
    /// counting it; `id` places it in or out of the prefix.
    fn count(&mut self, id: u64, units: u32, unit_bytes: u64, add: bool) {
        let units = units.min(MAX_UNITS) as usize;
        for s in &mut self.sums[1..=units] {
            *s = if add {
                s.saturating_add(unit_bytes)
            } else {
                s.saturating_sub(unit_bytes)
            };
        }
        if self.in_extra(id, units as u32) {
            self.extra_bytes = if add {
                self.extra_bytes.saturating_add(unit_bytes)
            } else {
                self.extra_bytes.saturating_sub(unit_bytes)
            };
        }
    }

    /// `Σ min(n, units)·unit_bytes` over the files counted.
    fn cost(&self, n: u32) -> u64 {
        self.sums[1..=n as usize]
            .iter()
            .fold(0, |a, &s| a.saturating_add(s))
    }

    /// The largest `n ≤ MAX_UNITS` with `cost(n) ≤ budget`.
    fn level_for(&self, budget: u64) -> u32 {
        let (mut n, mut cost) = (0u32, 0u64);
        while n < MAX_UNITS {
            let next = cost.saturating_add(self.sums[n as usize + 1]);
            if next > budget {
                break;
            }
            (n, cost) = (n + 1, next);
        }
        n
    }
}

impl Allocator {
    /// Uniform: counts file `id` of `units` units of `unit_bytes` each,
    /// just registered (or reshaped), in the plan; its units are set at the
    /// next plan.
    pub(super) fn uniform_add(&mut self, id: u64, units: u32, unit_bytes: u64) {
        if self.cfg.policy != FilterPolicy::Uniform {
            return;
        }
        self.uniform.count(id, units, unit_bytes, true);
        self.uniform.fresh.push(id);
    }

    /// Uniform: stops counting a file that left (or whose unit size
    /// changed: it is counted again with [`uniform_add`](Self::uniform_add)).
    pub(super) fn uniform_remove(&mut self, id: u64, units: u32, unit_bytes: u64) {
        if self.cfg.policy != FilterPolicy::Uniform {
            return;
        }
        self.uniform.count(id, units, unit_bytes, false);
    }

    /// Uniform: brings every target to the plan for the files and budget of
    /// now; `O(files changed)` visits while the level stays, a pass over
    /// every file when it moves. A file whose units failed to load
    /// ([`applied`](Self::applied)) keeps its lower count until the level
    /// moves or it is registered again.
    pub(super) fn uniform_replan(&mut self) {
        let new = self.uniform.level_for(self.budget);
        let level = match self.uniform.level {
            Some(level) if new <= level => level,
            _ => return self.uniform_remake(new),
        };
        // The files registered since the plan first take free memory only:
        // a compaction's outputs register while its inputs still hold their
        // units, and room made for them would take units from other files
        // (or the whole tree's level) that the inputs give back moments
        // later, to be loaded again. They wait while what they lack is at
        // most 1/64 of the budget. When they would not wait and the level
        // falls, the plan is made again at once, without placing them
        // first: the remake sets every target whatever the fresh files had.
        if new < level && self.uniform_fresh_wait() == Some(false) {
            return self.uniform_remake(new);
        }
        let mut fresh = std::mem::take(&mut self.uniform.fresh);
        let missing = self.place_fresh(&mut fresh, Self::uniform_units);
        self.uniform.fresh = fresh;
        if missing > 0 && missing <= self.budget / WAIT_FRACTION && self.used <= self.budget {
            return;
        }
        if new < level {
            return self.uniform_remake(new);
        }
        let left = self.budget - self.uniform.cost(level);
        // Decreases first, so `used` never passes the budget on the way: the
        // prefix gives back units from its end until it fits in what is left.
        while self.uniform.extra_bytes > left {
            let end = self.uniform.extra_end.unwrap_or(u64::MAX);
            let mut visited = 0;
            let last = self
                .files
                .range(..end)
                .rev()
                .inspect(|_| visited += 1)
                .find(|(_, f)| f.units > level)
                .map(|(&id, f)| (id, f.target, f.desc.unit_bytes));
            self.work += visited;
            let Some((id, target, unit)) = last else {
                // No file left in the prefix: nothing of it to count.
                debug_assert!(
                    false,
                    "prefix bytes {} without files",
                    self.uniform.extra_bytes
                );
                self.uniform.extra_bytes = 0;
                break;
            };
            self.set_target(id, target.min(level));
            self.uniform.extra_bytes -= unit;
            self.uniform.extra_end = Some(id);
        }
        for id in std::mem::take(&mut self.uniform.fresh) {
            self.work += 1;
            if self.files.contains_key(&id) {
                self.set_target(id, self.uniform_units(id));
            }
        }
        // Then the prefix takes units at its end while they fit.
        let Some(start) = self.uniform.extra_end else {
            return;
        };
        let mut end = None;
        let mut at = start;
        loop {
            let mut visited = 0;
            let next = self
                .files
                .range(at..)
                .inspect(|_| visited += 1)
                .find(|(_, f)| f.units > level)
                .map(|(&id, f)| (id, f.desc.unit_bytes));
            self.work += visited;
            let Some((id, unit)) = next else { break };
            if self.uniform.extra_bytes.saturating_add(unit) > left {
                end = Some(id);
                break;
            }
            self.set_target(id, level + 1);
            self.uniform.extra_bytes += unit;
            match id.checked_add(1) {
                Some(n) => at = n,
                None => break,
            }
        }
        self.uniform.extra_end = end;
    }

    /// Uniform: whether the files registered since the plan, placed in free
    /// memory as [`place_fresh`](Self::place_fresh) places them (in list
    /// order, each `uniform_units` or what fits of it), would wait for
    /// memory (what they lack is above 0, at most `budget / WAIT_FRACTION`,
    /// and the plan fits the budget), worked out without moving a target.
    /// A tree opened registers every file at once, the budget sized before:
    /// placing them for real moved the first third of the tree into the
    /// free memory, then the remake moved every file again (`4n/3` moves
    /// and four lookups per file for nothing). `None` when the list holds a
    /// file twice (reshaped twice since the plan), whose second placement
    /// would start from the first's: then the placement is made for real.
    /// When every live file is fresh (a tree opened, a first flush) nothing
    /// waits: the wait is for a compaction's outputs while its inputs hold
    /// their units, and its check cost two searches per file of the tree.
    fn uniform_fresh_wait(&mut self) -> Option<bool> {
        let fresh = &self.uniform.fresh;
        if fresh.len() >= self.files.len() {
            return Some(false);
        }
        // A file is listed twice only if reshaped again since the plan; a
        // batch comes in level order, not in id order, so a sorted copy
        // tells.
        if !fresh.windows(2).all(|w| w[0] < w[1]) {
            let mut ids = fresh.clone();
            ids.sort_unstable();
            if ids.windows(2).any(|w| w[0] == w[1]) {
                return None;
            }
        }
        let (mut used, mut missing) = (self.used, 0u64);
        for &id in fresh {
            let Some(f) = self.files.get(&id) else {
                continue;
            };
            let ub = f.desc.unit_bytes;
            let want = self.uniform_units(id).min(f.units);
            // As `fitting`, with the memory the files before it took.
            let fit = self.units_fitting(used, f.target, ub, want);
            used = used - u64::from(f.target) * ub + u64::from(fit) * ub;
            missing = missing.saturating_add(u64::from(want - fit) * ub);
        }
        self.work += fresh.len() as u64;
        Some(missing > 0 && missing <= self.budget / WAIT_FRACTION && used <= self.budget)
    }

    /// Uniform: the count file `id` has under the plan in force.
    pub(super) fn uniform_units(&self, id: u64) -> u32 {
        let (f, level) = (&self.files[&id], self.uniform.level.unwrap_or(0));
        level.min(f.units) + u32::from(self.uniform.in_extra(id, f.units))
    }

    /// Uniform: the plan made again over every file at `level`.
    fn uniform_remake(&mut self, level: u32) {
        self.visit_all();
        let left = self.budget - self.uniform.cost(level);
        let (mut extra_bytes, mut extra_end) = (0u64, None);
        let mut plan = Vec::with_capacity(self.files.len());
        for (&id, f) in &self.files {
            let mut n = level.min(f.units);
            if f.units > level && extra_end.is_none() {
                match extra_bytes.checked_add(f.desc.unit_bytes) {
                    Some(b) if b <= left => {
                        extra_bytes = b;
                        n += 1;
                    }
                    _ => extra_end = Some(id),
                }
            }
            plan.push((id, n));
        }
        self.apply_plan(plan);
        self.uniform = UniformPlan {
            level: Some(level),
            extra_end,
            extra_bytes,
            fresh: Vec::new(),
            ..std::mem::take(&mut self.uniform)
        };
    }
}
