//! Compaction: choosing which runs to merge, and merging them into new files.
//!
//! Leveling: when L0 holds `level0_compaction_trigger` runs, all of L0 merges
//! with the overlapping part of L1; when level `i` outgrows `level1_size·T^(i-1)`
//! one of its files (round robin) merges with the overlapping files of `i+1`,
//! or moves down untouched when nothing overlaps. A level >= 1 holding several
//! runs (left by tiering before a reopen with leveling) merges whole first.
//! The most urgent level goes first (see `scores`).
//! Tiering: when a level holds T runs (L0: the trigger), all of them merge into
//! one new run of the next level (the last level merges in place).
//!
//! Merging keeps, for each user key, the newest entry plus every entry a live
//! snapshot can still see, and drops a tombstone only when no file outside the
//! compaction at the output level or below may hold the key.
//!
//! Range tombstones of the inputs: a point entry a tombstone hides from every
//! reader (`entry.seq < tomb.seq <= smallest snapshot`) is dropped; a
//! tombstone is dropped when every reader sees it and no file outside the
//! compaction at the output level or below meets its range (nothing older it
//! could still hide), else it is written into an output. An output is never
//! cut while a kept tombstone is open: each tombstone goes whole into the
//! file holding the keys before the cut, so every file's key range covers its
//! tombstones and files of a run stay disjoint (a tombstone ending at the cut
//! key `k` gives its file the bound `(k, MAX_SEQ)`, which sorts before every
//! entry of `k` in the next file). Clipping tombstones to each file's span
//! would allow cuts anywhere, at the cost of more tombstones and bounds at
//! both ends; one long tombstone only makes one larger file here.
//!
//! Files: this one picks (`pick`, `scores`, `pending_bytes`); `claims.rs`
//! keeps what running compactions hold, so that several run at once;
//! `leveling.rs` and `tiering.rs` choose each style's inputs, `manual.rs`
//! those of a manual compaction; `merge.rs` runs a compaction (the merge,
//! outputs cut at the target file size); `range_dels.rs` handles the range
//! tombstones of its inputs and outputs.

use std::sync::Arc;

use crate::options::{CompactionStyle, Options};
use crate::version::{FileMeta, Version, VersionEdit};

mod claims;
mod filter;
mod leveling;
mod manual;
mod merge;
mod periodic;
mod range_dels;
mod tiering;

pub use claims::{ClaimId, Claims};
pub use filter::ActiveFilter;
pub use leveling::Pointers;
use leveling::{level0, leveled_whole, next_files};
pub use manual::manual;
#[cfg_attr(
    not(feature = "internals"),
    expect(
        unused_imports,
        reason = "the type of a parameter of write_outputs, named only in merge.rs"
    )
)]
pub use merge::BottomCheck;
pub use merge::{bottom_check, input_iter, remove_files, sync_outputs, write_outputs, OutputCtx};
pub use range_dels::{input_range_dels, range_bottom_check, RangeDels};
use tiering::whole_level;

/// A chosen compaction.
pub struct Compaction {
    /// Level the inputs come from.
    pub level: usize,
    /// Level the outputs go to.
    pub output_level: usize,
    /// Input runs, newest first: (level, files sorted and disjoint).
    pub inputs: Vec<(usize, Vec<Arc<FileMeta>>)>,
    /// Whether the single input file just moves down a level.
    pub trivial_move: bool,
    /// Run of the output level the outputs (or the moved file) join: `None`
    /// for a new run with a fresh id (tiering), `Some(id)` for the level's
    /// only run after the compaction (leveling; 0 when the level has none left).
    pub output_run: Option<u64>,
}

impl Compaction {
    /// The edit that removes the inputs (outputs are added by the caller).
    pub fn delete_inputs(&self, edit: &mut VersionEdit) {
        for (level, files) in &self.inputs {
            for f in files {
                edit.deleted.push((*level, f.number));
            }
        }
    }

    fn is_input(&self, number: u64) -> bool {
        self.inputs
            .iter()
            .any(|(_, fs)| fs.iter().any(|f| f.number == number))
    }
}

/// Picks the most urgent compaction the running ones (`claims`) leave free.
///
/// Levels are tried from the highest score down (the bytes running
/// compactions are taking out of a level do not count towards its score),
/// first those whose level pair no compaction runs in; only when none is
/// and L0 is empty, a leveled level >= 1 yields its next files beside a
/// running compaction of the same levels, on disjoint keys (see
/// `claims.rs`). Every other compaction needs both its levels free of
/// running ones.
///
/// Either style accepts any shape of tree, whatever style wrote it, so the
/// style may change between opens: under leveling a level >= 1 holding several
/// runs (left by tiering) scores at least its number of runs and is merged
/// whole (`leveled_whole`); tiering treats the single run of a leveled
/// level like any other run.
pub fn pick(
    v: &Version,
    opts: &Options,
    claims: &Claims,
    ptrs: &mut Pointers,
) -> Option<Compaction> {
    let last = opts.max_levels - 1;
    let free = |l: usize| claims.level_free(l) && claims.level_free((l + 1).min(last));
    let shape: Vec<(usize, u64)> = (0..opts.max_levels)
        .map(|l| {
            let bytes = v.level_bytes(l).saturating_sub(claims.leaving(l));
            (v.levels[l].len(), bytes)
        })
        .collect();
    let mut due: Vec<(f64, usize)> = scores(&shape, opts)
        .into_iter()
        .enumerate()
        .filter(|&(_, score)| score >= 1.0)
        .map(|(l, score)| (score, l))
        .collect();
    // Highest score first; of equal scores, the upper level (a stable sort).
    due.sort_by(|a, b| b.0.total_cmp(&a.0));
    // First a level pair no compaction runs in; only when there is none, a
    // second compaction of a level beside a running one.
    for &(_, level) in due.iter().filter(|&&(_, l)| free(l)) {
        let c = match opts.compaction_style {
            CompactionStyle::Tiering => Some(whole_level(v, level, last)),
            CompactionStyle::Leveling if level == 0 => Some(level0(v)),
            CompactionStyle::Leveling if v.levels[level].len() > 1 => {
                Some(leveled_whole(v, level, last))
            }
            CompactionStyle::Leveling => next_files(v, opts, level, ptrs, claims),
        };
        if c.is_some() {
            return c;
        }
    }
    // Only once L0 has drained: while writes flow in, two compactions of a
    // level take fewer files each and rewrite the files below they share
    // more often (loads of 30M entries wrote 3-7% more: a run kept in the git history of
    // BENCHMARKS.md);
    // after them, the debt left is catch-up, which a second thread shortens.
    if opts.compaction_style == CompactionStyle::Tiering || !v.levels[0].is_empty() {
        return periodic::pick(v, opts, &free);
    }
    // A due level of several runs (merged whole) waiting for its levels:
    // no second compaction may keep them taken.
    let waiting: Vec<usize> = due
        .iter()
        .map(|&(_, l)| l)
        .filter(|&l| !free(l) && v.levels[l].len() > 1)
        .collect();
    let starves = |l: usize| waiting.iter().any(|&w| w <= l + 1 && l <= w + 1);
    for (_, level) in due {
        if level > 0 && v.levels[level].len() == 1 && !starves(level) {
            if let Some(c) = next_files(v, opts, level, ptrs, claims) {
                debug_assert!(claims.admits(&c));
                return Some(c);
            }
        }
    }
    // Nothing due is free: files past their age, if any (periodic.rs).
    periodic::pick(v, opts, &free)
}

/// How urgently each level needs compaction (due at >= 1), from each
/// level's `(runs, bytes)`.
///
/// Tiering: runs over the level's trigger. Leveling (RocksDB's scoring): L0
/// scores its runs over `level0_compaction_trigger` and, once due, also its
/// bytes over L1's capacity; a level >= 1 its bytes over its capacity. So
/// the most urgent of a due L0 and an overgrown L1 is the bigger one: L1 is
/// kept near L0's size, which bounds what each L0 compaction rewrites, and
/// L0 is not starved (its runs are what stalls writers) by an L1 many times
/// its target. Runs alone (LevelDB's L0 score, at most
/// `level0_stop_trigger / level0_compaction_trigger`) lost to any L1 three
/// times its target, leaving writers stalled at the slowdown trigger. A
/// level >= 1 holding several runs (left by tiering) scores at least its
/// number of runs; the last level scores only that.
fn scores(shape: &[(usize, u64)], opts: &Options) -> Vec<f64> {
    let last = shape.len() - 1;
    let leveling = opts.compaction_style == CompactionStyle::Leveling;
    let score = |l: usize, runs: usize, bytes: u64| -> f64 {
        let by_bytes = || bytes as f64 / opts.level_capacity(l.max(1)) as f64;
        match (leveling, l) {
            (_, 0) => {
                let by_runs = runs as f64 / opts.level0_compaction_trigger as f64;
                if leveling && by_runs >= 1.0 && last > 0 {
                    by_runs.max(by_bytes())
                } else {
                    by_runs
                }
            }
            (true, l) => {
                let several = if runs > 1 { runs as f64 } else { 0.0 };
                several.max(if l < last { by_bytes() } else { 0.0 })
            }
            (false, l) if l == last && runs < 2 => 0.0,
            (false, _) => runs as f64 / opts.size_ratio as f64,
        }
    };
    shape
        .iter()
        .enumerate()
        .map(|(l, &(runs, bytes))| score(l, runs, bytes))
        .collect()
}

/// Estimated bytes compaction must still rewrite to bring every level under
/// its target (RocksDB's `estimate-pending-compaction-bytes`).
///
/// Leveling: L0's bytes once it holds `level0_compaction_trigger` runs; then,
/// level by level with what the level above pushes down added, each byte over
/// a level's capacity is rewritten once with its share of the next level
/// (`excess · (next / level + 1)`) and pushed down. Tiering: every level
/// holding its trigger of runs is rewritten whole, and its bytes join the
/// next level's count.
pub fn pending_bytes(v: &Version, opts: &Options) -> u64 {
    let last = opts.max_levels.min(v.levels.len()).saturating_sub(1);
    let mut pending = 0u64;
    let mut incoming = 0u64;
    for l in 0..=last {
        let bytes = v.level_bytes(l) + incoming;
        let runs = v.levels[l].len() + usize::from(incoming > 0);
        incoming = match (opts.compaction_style, l) {
            (_, 0) if runs >= opts.level0_compaction_trigger => bytes,
            (_, 0) => 0,
            (CompactionStyle::Tiering, l) if runs >= opts.size_ratio && (l < last || runs > 1) => {
                bytes
            }
            (CompactionStyle::Tiering, _) => 0,
            #[expect(
                clippy::cast_sign_loss,
                reason = "an excess over capacity times a ratio of sizes plus one is not negative"
            )]
            (CompactionStyle::Leveling, l) if l < last && bytes > opts.level_capacity(l) => {
                let excess = bytes - opts.level_capacity(l);
                let next = v.level_bytes(l + 1) as f64;
                let fanout = next / bytes as f64;
                pending = pending.saturating_add((excess as f64 * (fanout + 1.0)) as u64);
                excess
            }
            (CompactionStyle::Leveling, _) => 0,
        };
        if l == 0 || opts.compaction_style == CompactionStyle::Tiering {
            pending = pending.saturating_add(incoming);
        }
    }
    pending
}

/// A table cache for the file metadata of unit tests (nothing is opened).
#[cfg(test)]
fn test_tables() -> Arc<crate::cache::TableCache> {
    let opts = Options::default();
    Arc::new(crate::cache::TableCache::new(
        Arc::new(crate::io::StdFs),
        std::env::temp_dir(),
        &opts,
        None,
        Arc::new(crate::stats::Counters::new(opts.max_levels)),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leveling(l1: u64) -> Options {
        Options {
            level1_size: l1,
            size_ratio: 4,
            max_levels: 4,
            ..Options::default()
        }
    }

    #[test]
    fn a_due_level0_competes_with_level1_by_bytes() {
        let o = leveling(1 << 20);
        // L0 at its slowdown trigger (8 runs, 32 MiB); L1 20x its capacity:
        // runs alone (score 2) would lose, bytes (32) win.
        let shape = [(8, 32 << 20), (1, 20 << 20), (1, 3 << 20), (1, 10 << 20)];
        let s = scores(&shape, &o);
        assert!(s[0] > s[1] && s[1] >= 20.0 - 1e-9, "L0 must win: {s:?}");
        assert!(s[2] < 1.0, "L2 holds 3 of its 4 MiB: {s:?}");
        // An L1 bigger than L0 goes first: it stays near L0's size.
        let shape = [(8, 32 << 20), (1, 40 << 20), (1, 3 << 20), (1, 10 << 20)];
        let s = scores(&shape, &o);
        assert!(s[1] > s[0], "{s:?}");
        // Below the trigger, L0's bytes do not count.
        let s = scores(&[(3, 12 << 20), (1, 0), (1, 0), (1, 0)], &o);
        assert!(s[0] < 1.0, "{s:?}");
    }

    #[test]
    fn other_levels_score_bytes_runs_or_nothing() {
        let o = leveling(1 << 20);
        let s = scores(&[(0, 0), (1, 1 << 20), (1, 5 << 20), (1, 99 << 20)], &o);
        assert!(s[1] >= 1.0 && s[2] > 1.0, "{s:?}");
        assert_eq!(s[3], 0.0, "the last level in one run is never due");
        // Several runs in a level >= 1 (left by tiering) make it due.
        let s = scores(&[(0, 0), (3, 1), (1, 0), (2, 0)], &o);
        assert!(s[1] >= 3.0 && s[3] >= 2.0, "{s:?}");
        let tiering = Options {
            compaction_style: CompactionStyle::Tiering,
            ..o
        };
        let s = scores(&[(4, 99 << 20), (4, 0), (1, 0), (1, 0)], &tiering);
        assert_eq!(s, vec![1.0, 1.0, 0.25, 0.0]);
    }
}
