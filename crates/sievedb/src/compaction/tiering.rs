//! Tiering's choice of inputs: every run of a level, whole (its score is in
//! `scores`, in mod.rs).

use crate::version::Version;

use super::Compaction;

/// Tiering: every run of `level` into one new run of the next level (the last
/// level merges in place).
pub(super) fn whole_level(v: &Version, level: usize, last: usize) -> Compaction {
    Compaction {
        level,
        output_level: (level + 1).min(last),
        inputs: v.levels[level]
            .iter()
            .map(|r| (level, r.files.to_vec()))
            .collect(),
        trivial_move: false,
        output_run: None,
    }
}
