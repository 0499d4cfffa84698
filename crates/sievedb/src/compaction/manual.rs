//! Manual compaction: the inputs of a compaction of one level asked for by
//! the user, chosen with the pickers of each style.

use crate::options::{CompactionStyle, Options};
use crate::version::Version;

use super::leveling::{level0, leveled, leveled_whole};
use super::tiering::whole_level;
use super::Compaction;

/// A manual compaction of `level` into the next one, restricted (where the
/// invariants allow) to files overlapping `[lo, hi]`, for a range compacted
/// down to level `last` (the deepest holding data when it began, at least
/// 1), where the data stays: `last` is merged in place when it holds
/// several runs. When it is one run, its overlapping files are rewritten in
/// place only if that can drop something a second pass would not otherwise
/// reach: a compaction filter or TTL is set (RocksDB's
/// `bottommost_level_compaction` default, `kIfHaveCompactionFilter`), or one
/// of them holds range tombstones (kept for a snapshot when they were
/// written there, and dropped once none needs them). `None` if nothing
/// overlaps or nothing is to be done; so compacting a range twice neither
/// moves its data down a level nor rewrites it.
pub fn manual(
    v: &Version,
    opts: &Options,
    level: usize,
    last: usize,
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
) -> Option<Compaction> {
    let overlapping = || {
        v.levels[level]
            .iter()
            .flat_map(|r| r.files.iter())
            .filter(|f| f.overlaps(lo, hi))
    };
    let runs = v.levels[level].len();
    let filtering = opts.compaction_filter.is_some() || opts.ttl.is_some();
    let in_place = runs > 1 || filtering || overlapping().any(|f| f.range_dels > 0);
    if overlapping().next().is_none() || (level == last && !in_place) {
        return None;
    }
    if level == last && runs == 1 {
        let run = &v.levels[level][0];
        let files: Vec<_> = run
            .files
            .iter()
            .filter(|f| f.overlaps(lo, hi))
            .cloned()
            .collect();
        return Some(Compaction {
            level,
            output_level: level,
            inputs: vec![(level, files)],
            trivial_move: false,
            output_run: Some(run.id),
        });
    }
    match opts.compaction_style {
        // Runs of one level may overlap each other: moving part of a level down
        // could put newer data below older data, so take the level whole.
        CompactionStyle::Tiering => Some(whole_level(v, level, last)),
        CompactionStyle::Leveling if level == 0 => Some(level0(v)),
        CompactionStyle::Leveling if runs > 1 => Some(leveled_whole(v, level, last)),
        CompactionStyle::Leveling => {
            let files: Vec<_> = v.levels[level][0]
                .files
                .iter()
                .filter(|f| f.overlaps(lo, hi))
                .cloned()
                .collect();
            Some(leveled(v, level, level + 1, vec![(level, files)], false))
        }
    }
}
