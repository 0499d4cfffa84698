//! Versions: which SST files make up the tree, the edits that change it, and
//! the MANIFEST that logs those edits.
//!
//! Invariants:
//! - Level 0 holds one run per file, newest (highest file number) first.
//! - Every level holds runs newest (highest run id) first: where two runs of a
//!   level hold the same user key, the run with the higher id holds the newer
//!   entry, and every level is newer than the next.
//! - Tiering writes each merge as a new run with a fresh id (a file number, so
//!   larger than every run id before it). Leveling writes into the only run of
//!   the output level, keeping its id (0 for an empty level), and first merges
//!   a level holding several runs into one; so a level under leveling holds
//!   one run except transiently after a reopen with another style, and either
//!   style keeps the order above on any shape the other left (the style is
//!   not recorded; see `docs/format.md`).
//! - The files of a run are sorted and their user-key ranges do not overlap.
//! - A file is deleted only when no version references it (see [`FileMeta`]'s drop).
//!
//! # A failed MANIFEST write
//!
//! A MANIFEST is never appended to after an append or sync of it failed: the
//! failed write may have left a torn record, or a whole record whose
//! durability is unknown, at the end of the file, and records appended after
//! it would turn that tail into damage in the middle of the log, which
//! recovery refuses. So [`VersionSet::log_and_apply_all`] leaves the
//! in-memory version unchanged, drops its writer, tries once to start a fresh MANIFEST
//! (a snapshot of the unchanged version) and point `CURRENT` at it, and
//! returns the original error. If that attempt fails too, the next
//! `log_and_apply_all` starts the fresh MANIFEST instead of appending.
//!
//! Until a fresh MANIFEST is current ([`VersionSet::edit_in_doubt`]) the
//! failed edit may still be replayed by the next open: its bytes may all have
//! reached the disk although the sync reported an error. The files that edit
//! adds must therefore be kept until then (they are consistent with it: they
//! were synced before the edit was written); once a fresh MANIFEST is current
//! they are orphans that the next open deletes.
//!
//! Recovery keeps the strict tail rule of [`crate::wal`] for the MANIFEST: a
//! last record cut short by the end of the file (a write that failed or a
//! crash in the middle of an append, never acknowledged) is dropped; a
//! complete-length last record that fails its checksum is corruption, because
//! it cannot be told apart from a synced edit damaged later, and dropping a
//! synced edit could silently lose files (its WALs may already be deleted).
//! `Db::repair` rebuilds a MANIFEST for that case.
//!
//! Files: `file_meta.rs` ([`FileMeta`]), `files.rs` (a run's [`Files`], in
//! chunks shared between versions), `run.rs` ([`Run`] and its cursor),
//! `lookup.rs` ([`Version::get`]), `edit.rs` ([`VersionEdit`] and its codec),
//! `set.rs` ([`VersionSet`] and the MANIFEST), `apply.rs` (an edit applied
//! to a version), `check.rs` (the live files checked at open,
//! [`VersionSet::check_live_files`]); this file holds [`Version`].

use std::sync::Arc;

mod apply;
mod check;
mod edit;
mod file_meta;
mod files;
mod lookup;
pub(crate) mod operands;
pub mod run;
mod set;

pub use edit::{decode_record, encode_record, KeyspaceRecord, NewFile, VersionEdit};
pub use file_meta::FileMeta;
pub use files::Files;
#[cfg_attr(
    not(feature = "internals"),
    expect(
        unused_imports,
        reason = "named only outside the crate (tests/read_path.rs)"
    )
)]
pub use lookup::PREFETCHED_RUNS;
pub use run::Run;
pub(crate) use set::snapshot_record;
pub use set::{set_current, VersionSet};

/// The set of files that make up the tree at one moment; immutable once built.
#[derive(Clone, Default)]
pub struct Version {
    /// `levels[l]` = the runs of level `l`, newest first; a run is shared
    /// with the versions before this one until an edit changes it.
    pub levels: Vec<Vec<Arc<Run>>>,
}

impl Version {
    /// A version without files, of `max_levels` levels.
    pub fn empty(max_levels: usize) -> Version {
        Version {
            levels: vec![Vec::new(); max_levels],
        }
    }

    /// Bytes in `level`.
    pub fn level_bytes(&self, level: usize) -> u64 {
        self.levels[level].iter().map(|r| r.bytes()).sum()
    }

    /// Every file, with its level.
    pub fn files(&self) -> impl Iterator<Item = (usize, &Arc<FileMeta>)> {
        self.levels.iter().enumerate().flat_map(|(l, runs)| {
            runs.iter().flat_map(move |r| {
                r.files.iter().map(move |f| {
                    #[cfg(test)]
                    visit();
                    (l, f)
                })
            })
        })
    }
}

#[cfg(test)]
thread_local! {
    /// Files this thread visited in passes over a version's files
    /// ([`Version::files`] and an edit's deletions): the work the tests
    /// count an install by.
    static VISITED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Counts one file visited (see `VISITED`).
#[cfg(test)]
fn visit() {
    VISITED.with(|v| v.set(v.get() + 1));
}

/// Files this thread visited so far (see `VISITED`).
#[cfg(test)]
fn visited() -> u64 {
    VISITED.with(std::cell::Cell::get)
}
