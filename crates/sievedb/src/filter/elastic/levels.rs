//! Totals per level of the tree: entries and hotness. What a new file's
//! filter family is chosen by (see `filter/budget/choice.rs`): how the
//! budget would divide among the levels, and how hot a level is per key.
//! Kept as files come, go and are read, `O(1)` per change; made again
//! exactly with `E` ([`Allocator`]'s `recompute`), so the hotness sums do
//! not drift.

use super::Allocator;

/// Levels beyond this are not totalled (no tree has them; a level number
/// from a damaged manifest does not grow the table).
const MAX_LEVELS: usize = 256;

/// One level's totals.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct LevelAgg {
    /// Entries of its files.
    pub entries: u64,
    /// `Σ hot` of its files.
    pub hot: f64,
}

/// The totals of every level, by level.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Levels(Vec<LevelAgg>);

impl Levels {
    fn at(&mut self, level: usize) -> Option<&mut LevelAgg> {
        if level >= MAX_LEVELS {
            return None;
        }
        if level >= self.0.len() {
            self.0.resize(level + 1, LevelAgg::default());
        }
        self.0.get_mut(level)
    }

    /// A file of `entries` entries and hotness `hot` joined `level`.
    pub(super) fn add(&mut self, level: usize, entries: u64, hot: f64) {
        if let Some(l) = self.at(level) {
            l.entries += entries;
            l.hot += hot;
        }
    }

    /// A file of `entries` entries and hotness `hot` left `level`.
    pub(super) fn remove(&mut self, level: usize, entries: u64, hot: f64) {
        if let Some(l) = self.at(level) {
            l.entries = l.entries.saturating_sub(entries);
            l.hot = (l.hot - hot).max(0.0);
        }
    }

    /// A file of `level` was read `weight` more times.
    pub(super) fn heat(&mut self, level: usize, weight: f64) {
        if let Some(l) = self.at(level) {
            l.hot += weight;
        }
    }

    /// Every count was multiplied by `factor`.
    pub(super) fn decay(&mut self, factor: f64) {
        for l in &mut self.0 {
            l.hot *= factor;
        }
    }

    pub(super) fn get(&self, level: usize) -> Option<&LevelAgg> {
        self.0.get(level)
    }
}

impl Allocator {
    /// The entries of every level, by level (`[0]`: level 0), as far as
    /// the deepest level holding any.
    pub fn level_entries(&self) -> Vec<u64> {
        let mut out: Vec<u64> = self.levels.0.iter().map(|l| l.entries).collect();
        while out.last() == Some(&0) {
            out.pop();
        }
        out
    }

    /// The accesses per key of the files of `level` (decayed counts);
    /// `None` when the level has no entries.
    pub fn level_hot_per_key(&self, level: usize) -> Option<f64> {
        let l = self.levels.get(level).filter(|l| l.entries > 0)?;
        Some(l.hot / l.entries as f64)
    }

    /// The level totals made again from every file (what the kept ones
    /// must equal, up to rounding of the counts).
    pub(super) fn remade_levels(&self) -> Levels {
        let mut out = Levels::default();
        for f in self.files.values() {
            out.add(f.desc.level, f.desc.entries, f.hot);
        }
        out
    }
}
