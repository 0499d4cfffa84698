//! Applying a [`VersionEdit`]: the version it makes of the live one, the
//! files it took out and put in ([`Applied`]), and what the filter budget
//! hears of them (hotness passed from inputs to outputs, new files planned).
//!
//! An install copies only the runs the edit changes (the others are shared
//! with the version before) and, in those, only the chunks of files it
//! changes ([`super::Files`]); it finds the files it deletes in each run's
//! flat file numbers and places each file it adds by a search, never a pass
//! over the tree per file it names (a compaction names about twenty files
//! of a tree of tens of thousands); a run's fences and byte total follow its
//! files in place.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use crate::filter::budget::FileShape;
use crate::key;

use super::{FileMeta, NewFile, Run, Version, VersionEdit};

/// The version `edit` makes of `base`, with the files it took out and
/// put in (`new_meta` makes the metadata of a file the edit writes).
///
/// One pass over the flat file numbers of each run the edit deletes from,
/// whatever the number of files it deletes: a compaction deletes about ten
/// files from levels of tens of thousands, and a pass per deleted file (and
/// a search of the whole tree per added one) made each install cost
/// `O(files × edit)`.
pub(super) fn apply(
    base: &Version,
    edit: &VersionEdit,
    new_meta: impl Fn(&NewFile) -> Arc<FileMeta>,
) -> Applied {
    let mut v = base.clone();
    let mut removed = Vec::new();
    // Runs whose fences are built again at the end: new runs, runs whose
    // fences were never built, and runs given a file outside their fences'
    // prefix. The others' fences follow their files' changes in place (a
    // rebuild reads every file's keys, a pointer chase each: a third of the
    // samples of a 44,000-file tree's compaction waits went to it).
    let mut stale: BTreeSet<(usize, u64)> = BTreeSet::new();
    let mut deleted: BTreeMap<usize, Vec<u64>> = BTreeMap::new();
    for &(level, number) in &edit.deleted {
        deleted.entry(level).or_default().push(number);
    }
    for (level, mut numbers) in deleted {
        numbers.sort_unstable();
        let Some(runs) = v.levels.get_mut(level) else {
            continue;
        };
        for run in runs.iter_mut() {
            let Some(keep) = run.files.kept(&numbers) else {
                continue;
            };
            let run = Arc::make_mut(run);
            let id = run.id;
            if run.fences.len() != run.files.len() {
                stale.insert((level, id));
            }
            let mut bytes = run.bytes;
            run.files.remove(&keep, |f| {
                #[cfg(test)]
                super::visit();
                removed.push(Placed::new(level, id, f));
                bytes -= f.size;
            });
            run.bytes = bytes;
            run.fences.retain(&keep);
        }
        runs.retain(|r| !r.files.is_empty());
    }
    let mut by_number: Vec<(u64, usize)> = removed
        .iter()
        .enumerate()
        .map(|(i, p)| (p.meta.number, i))
        .collect();
    by_number.sort_unstable();
    let mut moved = Vec::new();
    let mut added = Vec::with_capacity(edit.added.len());
    let mut into: BTreeMap<(usize, u64), Vec<Arc<FileMeta>>> = BTreeMap::new();
    for nf in &edit.added {
        // A moved file (deleted and re-added by the same edit) keeps its
        // metadata: versions from before and after the move share one
        // `FileMeta`, so the file lives as long as either. Any other
        // added file is new (file numbers are never reused).
        let was = by_number
            .binary_search_by_key(&nf.number, |&(n, _)| n)
            .ok()
            .map(|i| &removed[by_number[i].1]);
        let meta = match was {
            Some(p) => {
                moved.push(nf.number);
                p.meta.clone()
            }
            None => new_meta(nf),
        };
        into.entry((nf.level, nf.run))
            .or_default()
            .push(meta.clone());
        added.push(Placed {
            level: nf.level,
            run: nf.run,
            meta,
        });
    }
    for ((level, run), metas) in into {
        if !add_files(&mut v, level, run, metas) {
            stale.insert((level, run));
        }
    }
    for (level, runs) in v.levels.iter_mut().enumerate() {
        for run in runs {
            if stale.contains(&(level, run.id)) {
                Arc::make_mut(run).refresh();
            } else if cfg!(debug_assertions)
                && (edit.deleted.iter().any(|&(l, _)| l == level)
                    || edit.added.iter().any(|f| f.level == level))
            {
                let bounds = run
                    .files
                    .iter()
                    .map(|f| (f.smallest_user(), f.largest_user()));
                debug_assert!(run.fences.indexes(bounds), "level {level} run {}", run.id);
                let bytes: u64 = run.files.iter().map(|f| f.size).sum();
                debug_assert_eq!(run.bytes, bytes, "level {level} run {}", run.id);
            }
        }
    }
    moved.sort_unstable();
    Applied {
        version: v,
        removed,
        added,
        moved,
    }
}

/// A file in its place in a version.
pub(super) struct Placed {
    level: usize,
    run: u64,
    pub(super) meta: Arc<FileMeta>,
}

impl Placed {
    fn new(level: usize, run: u64, meta: &Arc<FileMeta>) -> Placed {
        Placed {
            level,
            run,
            meta: meta.clone(),
        }
    }

    fn shape(&self) -> FileShape {
        self.meta.shape(self.level, self.run)
    }
}

/// What one edit did to its keyspace's version.
pub(super) struct Applied {
    /// The version it made.
    pub(super) version: Version,
    /// The files it took out (a moved file is here and in `added`).
    pub(super) removed: Vec<Placed>,
    /// The files it put in, in their new places.
    pub(super) added: Vec<Placed>,
    /// Numbers of the files in both (moved), sorted.
    moved: Vec<u64>,
}

impl Applied {
    fn moved(&self, number: u64) -> bool {
        self.moved.binary_search(&number).is_ok()
    }

    /// The files that left (removed, not re-added).
    pub(super) fn gone(&self) -> impl Iterator<Item = &Placed> {
        self.removed.iter().filter(|p| !self.moved(p.meta.number))
    }

    /// The files written by the edit's flush or compaction (added, not moved).
    fn written(&self) -> impl Iterator<Item = &Placed> {
        self.added.iter().filter(|p| !self.moved(p.meta.number))
    }
}

/// Every file of `v` in its place.
pub(super) fn placed(v: &Version) -> Vec<Placed> {
    let mut all = Vec::new();
    for (level, runs) in v.levels.iter().enumerate() {
        for run in runs {
            all.extend(run.files.iter().map(|f| Placed::new(level, run.id, f)));
        }
    }
    all
}

/// Gives the files an edit wrote the hotness of the files it deleted (a
/// flush deletes none; a moved file is neither).
pub(super) fn inherit_hotness(a: &Applied) {
    let Some(any) = a.added.first().or(a.removed.first()) else {
        return;
    };
    let budget = any.meta.tables.filter_budget();
    if !budget.limited() {
        return;
    }
    fn keys(p: &Placed) -> (FileShape, &[u8], &[u8]) {
        (p.shape(), p.meta.smallest_user(), p.meta.largest_user())
    }
    let inputs: Vec<_> = a.gone().map(keys).collect();
    let outputs: Vec<_> = a.written().map(keys).collect();
    budget.inherit(&inputs, &outputs);
}

/// Tells the filter budget about `files` of `v` (new files, or moved ones,
/// which learn their new place), in one batch and without reading them: a
/// file's filter is read at its first lookup
/// ([`FileMeta::resident_filter`]), so opening a tree of any size reads no
/// filter. `total_entries`: the entries of every keyspace's files.
pub(super) fn register_filters<'a>(
    v: &Version,
    files: impl Iterator<Item = &'a Placed>,
    total_entries: u64,
) {
    let Some((_, first)) = v.files().next() else {
        return;
    };
    let budget = first.tables.filter_budget();
    if !budget.limited() {
        return;
    }
    budget.set_tree_entries(total_entries);
    if budget.needs_shape() {
        // One table of the largest level tells the shape the tree's filters
        // have (one table open), so that the plan is made with it.
        let last = v
            .levels
            .iter()
            .rev()
            .flatten()
            .flat_map(|r| &r.files)
            .next();
        if let Some(table) = last.and_then(|f| f.tables.get(f.number).ok()) {
            if let Some(index) = table.filter_index() {
                budget.learn_shape(index);
            }
        }
    }
    let shapes: Vec<FileShape> = files
        .filter(|p| !matches!(p.meta.filter.get(), Some(None)))
        .map(Placed::shape)
        .collect();
    budget.add_files(&shapes);
}

/// Inserts `metas` into run `run_id` of `level` (made if new), each where
/// its key belongs, all in one batch ([`super::Files::insert_sorted`]);
/// `false` if the run's fences must be built again (a new run, fences never
/// built, or a key outside their prefix).
pub(super) fn add_files(
    v: &mut Version,
    level: usize,
    run_id: u64,
    mut metas: Vec<Arc<FileMeta>>,
) -> bool {
    let runs = &mut v.levels[level];
    let (i, new) = match runs.iter().position(|r| r.id == run_id) {
        Some(i) => (i, false),
        None => {
            let pos = runs.partition_point(|r| r.id > run_id);
            runs.insert(pos, Arc::new(Run::new(run_id)));
            (pos, true)
        }
    };
    let run = Arc::make_mut(&mut runs[i]);
    metas.sort_by(|a, b| key::compare(&a.smallest, &b.smallest));
    let at: Vec<usize> = metas
        .iter()
        .map(|f| {
            run.files
                .partition_point(|g| key::compare(&g.smallest, &f.smallest) == Ordering::Less)
        })
        .collect();
    let fenced = !new
        && run.fences.len() == run.files.len()
        && run.fences.insert_sorted(
            &at,
            metas.iter().map(|m| (m.smallest_user(), m.largest_user())),
        );
    run.bytes += metas.iter().map(|f| f.size).sum::<u64>();
    run.files.insert_sorted(at.into_iter().zip(metas).collect());
    fenced
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::super::files::{copied, shifted};
    use super::super::{visited, NewFile, VersionEdit, VersionSet};
    use crate::cache::TableCache;
    use crate::io::StdFs;
    use crate::key;
    use crate::stats::Counters;
    use crate::Options;

    /// File `number` holding keys `k{lo}` to `k{hi}` (metadata only).
    fn file(level: usize, run: u64, number: u64, lo: u64, hi: u64) -> NewFile {
        let ikey = |i: u64| key::internal_key(format!("k{i:012}").as_bytes(), 1, key::Kind::Put);
        NewFile {
            level,
            run,
            number,
            size: 256 << 10,
            entries: 1000,
            smallest: ikey(lo),
            largest: ikey(hi),
            range_dels: 0,
            creation_time: 0,
        }
    }

    /// An empty version set in `dir`, of the default levels.
    fn version_set(dir: &std::path::Path) -> VersionSet {
        let opts = Options::default();
        let fs: Arc<dyn crate::io::FileSystem> = Arc::new(StdFs);
        let counters = Arc::new(Counters::new(opts.max_levels));
        let tables = Arc::new(TableCache::new(
            fs.clone(),
            dir.to_path_buf(),
            &opts,
            None,
            counters,
        ));
        VersionSet::new(dir, fs, tables, opts.max_levels)
    }

    /// A compaction's install works on the files its edit names, not on the
    /// tree: on a tree of 55,000 files, 100 compactions each moving one file
    /// of level 5 and ten of level 6 into ten new files each read the
    /// metadata of the 11 files they delete and one more (visits), and copy
    /// a few chunks of the two levels (one reference per file copied). The
    /// earlier installs made a pass over the level per deleted file and
    /// searched the whole tree per added and per deleted file (over 1M
    /// visits each here), then one pass over each level deleted from
    /// (55,000 visits), and copied every file of the tree (55,000
    /// references).
    #[test]
    fn an_install_works_on_the_files_it_names() {
        let dir = tempfile::tempdir().unwrap();
        let mut vs = version_set(dir.path());
        let (l5, l6) = (5_000u64, 50_000u64);
        // Level 6: file i holds keys 10i..10i+9; level 5: file j holds 100j..100j+99.
        let mut tree = VersionEdit::default();
        tree.added
            .extend((0..l6).map(|i| file(6, 1, 10 + i, 10 * i, 10 * i + 9)));
        tree.added
            .extend((0..l5).map(|j| file(5, 2, 100_000 + j, 100 * j, 100 * j + 99)));
        vs.next_file_number = 1_000_000;
        vs.log_and_apply(tree).unwrap();
        let compactions = 100u64;
        let (mut worst, mut worst_copies, mut worst_moves) = (0, 0, 0);
        for c in 0..compactions {
            // Level 5's file c and the ten files of level 6 under it.
            let mut edit = VersionEdit::default();
            edit.deleted.push((5, 100_000 + c));
            edit.deleted.extend((0..10).map(|i| (6, 10 + 10 * c + i)));
            for i in 0..10 {
                let number = vs.new_file_number();
                let lo = 100 * c + 10 * i;
                edit.added.push(file(6, 1, number, lo, lo + 9));
            }
            let (before, copies, moves) = (visited(), copied(), shifted());
            let v = vs.log_and_apply(edit).unwrap();
            worst = worst.max(visited() - before);
            worst_copies = worst_copies.max(copied() - copies);
            worst_moves = worst_moves.max(shifted() - moves);
            assert_eq!(v.levels[5][0].files.len() as u64, l5 - c - 1);
            assert_eq!(v.levels[6][0].files.len() as u64, l6);
        }
        // The 11 deleted files, and the first file of the tree (the
        // filter budget's, `register_filters`).
        assert!(
            worst <= 12,
            "an install visited {worst} files of a tree of {}",
            l5 + l6
        );
        // The ten inserts (one batch) and the two levels' deletions copy at
        // most two chunks and a neighbour each.
        assert!(
            worst_copies <= 3 * 3 * 128,
            "an install copied {worst_copies} files of a tree of {}",
            l5 + l6
        );
        // Each level's flat arrays move once for its deletions and once for
        // the batch of inserts, not once per inserted file.
        assert!(
            worst_moves <= 2 * l6 + l5,
            "an install moved {worst_moves} positions of a tree of {}",
            l5 + l6
        );
    }

    /// An install copies only the runs its edit changes: the others are
    /// the very runs of the version before it, and that version still
    /// holds its own files and byte totals after the new one changed its
    /// copies.
    #[test]
    fn an_install_shares_the_runs_it_does_not_change() {
        let dir = tempfile::tempdir().unwrap();
        let mut vs = version_set(dir.path());
        vs.next_file_number = 1_000;
        // Levels 1..=6, level l holding l files of ten keys each.
        let mut tree = VersionEdit::default();
        for l in 1..=6u64 {
            tree.added
                .extend((0..l).map(|i| file(l as usize, 1, 10 * l + i, 10 * i, 10 * i + 9)));
        }
        let before = vs.log_and_apply(tree).unwrap();
        // A compaction of level 5's first file into level 6's first.
        let mut edit = VersionEdit::default();
        edit.deleted.extend([(5, 50), (6, 60)]);
        let number = vs.new_file_number();
        edit.added.push(file(6, 1, number, 0, 9));
        let after = vs.log_and_apply(edit).unwrap();
        for l in 0..Options::default().max_levels {
            let shared = before.levels[l]
                .iter()
                .zip(&after.levels[l])
                .all(|(a, b)| Arc::ptr_eq(a, b));
            assert_eq!(shared, !(l == 5 || l == 6), "level {l}");
        }
        let bytes = |v: &super::Version, l: usize| -> (u64, u64) {
            let run = &v.levels[l][0];
            (run.bytes(), run.files.iter().map(|f| f.size).sum())
        };
        for (v, l5, l6) in [(&before, 5, 6), (&after, 4, 6)] {
            assert_eq!(bytes(v, 5), (l5 * (256 << 10), l5 * (256 << 10)));
            assert_eq!(bytes(v, 6), (l6 * (256 << 10), l6 * (256 << 10)));
        }
        assert_eq!(before.levels[6][0].files[0].number, 60);
        assert_eq!(after.levels[6][0].files[0].number, number);
    }
}
