//! Manual compaction: the inputs of a compaction of one level asked for by
//! the user, chosen with the pickers of each style.

use crate::options::{CompactionStyle, Options};
use crate::version::Version;

use super::leveling::{level0, leveled, leveled_whole};
use super::tiering::whole_level;
use super::Compaction;

/// A manual compaction of `level` into the next one, restricted (where the
/// invariants allow) to files overlapping `[lo, hi]`. `None` if nothing
/// overlaps, or for a last level that already is one run (unless a
/// compaction filter or TTL is set: then its overlapping files are
/// rewritten in place).
pub fn manual(
    v: &Version,
    opts: &Options,
    level: usize,
    lo: Option<&[u8]>,
    hi: Option<&[u8]>,
) -> Option<Compaction> {
    let last = opts.max_levels - 1;
    let any = v.levels[level]
        .iter()
        .any(|r| r.files.iter().any(|f| f.overlaps(lo, hi)));
    let runs = v.levels[level].len();
    // With a compaction filter or a TTL, the last level is rewritten in
    // place too (RocksDB's `bottommost_level_compaction` default,
    // `kIfHaveCompactionFilter`): else its entries would never be filtered.
    let filtering = opts.compaction_filter.is_some() || opts.ttl.is_some();
    if !any || (level == last && runs < 2 && !filtering) {
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
