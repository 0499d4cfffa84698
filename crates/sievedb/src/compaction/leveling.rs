//! Leveling's choice of inputs: all of L0, a level holding several runs
//! whole, or the next files of a level in round-robin order ([`Pointers`]),
//! each with what it overlaps in the next level.

use std::sync::Arc;

use crate::options::Options;
use crate::version::{FileMeta, Run, Version};

use super::{Claims, Compaction};

/// Per-level round-robin positions for leveled compaction.
#[derive(Clone, Default)]
pub struct Pointers(Vec<Vec<u8>>);

/// Files of `run` whose user keys meet `[lo, hi]`.
///
/// A file ending at a range tombstone's end sentinel `(e, MAX_SEQ)` holds no
/// entry of `e`, but its user-key range is taken as `[.., e]`: the test may
/// take one file more than needed (its neighbour starting at `e`), never one
/// less, so the outputs still replace every file they overlap.
///
/// A run's files are sorted and disjoint, so their largest keys ascend too
/// (two neighbours may share that end key, never cross): the files meeting
/// the range are consecutive, found by a binary search instead of a look at
/// every file of the level.
fn overlapping(run: &Run, lo: &[u8], hi: &[u8]) -> Vec<Arc<FileMeta>> {
    let first = run.files.partition_point(|f| f.largest_user() < lo);
    run.files[first..]
        .iter()
        .take_while(|f| f.smallest_user() <= hi)
        .cloned()
        .collect()
}

/// User-key range covered by `files`.
fn range_of<'a>(files: impl Iterator<Item = &'a Arc<FileMeta>>) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut r: Option<(Vec<u8>, Vec<u8>)> = None;
    for f in files {
        let (s, l) = (f.smallest_user(), f.largest_user());
        r = Some(match r {
            None => (s.to_vec(), l.to_vec()),
            Some((a, b)) => (a.min(s.to_vec()), b.max(l.to_vec())),
        });
    }
    r
}

/// Leveling: the files of `level` a compaction writing keys `[lo, hi]` into it
/// must take, and the run its outputs join. With one run, the files overlapping
/// `[lo, hi]` (the rest of the run lies wholly outside the outputs' range, so the
/// outputs join that run); with several runs (left by tiering), all of them, so
/// the level ends up as one run and no output sits in a run older than data it
/// replaces.
/// Each run's files come as one list (a merge input is one sorted run).
fn leveled_target(
    v: &Version,
    level: usize,
    lo: &[u8],
    hi: &[u8],
) -> (Vec<Vec<Arc<FileMeta>>>, u64) {
    match v.levels[level].as_slice() {
        [] => (Vec::new(), 0),
        [run] => (vec![overlapping(run, lo, hi)], run.id),
        runs => (runs.iter().map(|r| r.files.to_vec()).collect(), 0),
    }
}

/// Leveling: the inputs of `level` (newest first) plus what they need below.
pub(super) fn leveled(
    v: &Version,
    level: usize,
    output_level: usize,
    mut inputs: Vec<(usize, Vec<Arc<FileMeta>>)>,
    may_move: bool,
) -> Compaction {
    let (lo, hi) = range_of(inputs.iter().flat_map(|(_, f)| f)).unwrap_or_default();
    let (below, run) = if output_level == level {
        (Vec::new(), 0)
    } else {
        leveled_target(v, output_level, &lo, &hi)
    };
    let below: Vec<_> = below.into_iter().filter(|f| !f.is_empty()).collect();
    let trivial_move = may_move && inputs.len() == 1 && inputs[0].1.len() == 1 && below.is_empty();
    inputs.extend(below.into_iter().map(|f| (output_level, f)));
    Compaction {
        level,
        output_level,
        inputs,
        trivial_move,
        output_run: Some(run),
    }
}

/// Leveling: all of L0 plus what it overlaps in L1.
pub(super) fn level0(v: &Version) -> Compaction {
    let inputs = v.levels[0].iter().map(|r| (0, r.files.to_vec())).collect();
    leveled(v, 0, 1, inputs, true)
}

/// Leveling, for a level >= 1 holding several runs: all of them plus what they
/// overlap in the next level, into one run there (the last level: merged in
/// place into one run). Taking only the newest run would move newer data below
/// the older runs left behind.
pub(super) fn leveled_whole(v: &Version, level: usize, last: usize) -> Compaction {
    let inputs = v.levels[level]
        .iter()
        .map(|r| (level, r.files.to_vec()))
        .collect();
    leveled(v, level, (level + 1).min(last), inputs, false)
}

/// Input bytes (both levels) a leveled compaction of a level >= 1 may grow
/// to, in target file sizes (RocksDB's `max_compaction_bytes` default).
const MAX_COMPACTION_FILES: u64 = 25;

/// Leveling, for a level >= 1 holding one run: the next file of that run in
/// round-robin order plus what it overlaps below, moved down untouched when
/// nothing overlaps. Otherwise the following files of the run join while
/// the level is still over its capacity without them (and without what
/// running compactions are taking out of it) and the inputs stay under
/// [`MAX_COMPACTION_FILES`] target file sizes: one compaction of
/// neighbouring files rewrites the file below they share once instead of
/// once each, and pays the MANIFEST commit, and its fsync, once. The files
/// taken are consecutive in the run, so nothing of the level between them
/// stays behind.
///
/// A file whose compaction would meet a running one's keys ([`Claims`]) is
/// passed over for the next, and the growth stops before such a file; so
/// compactions of one level run side by side. `None` when every file's
/// does, or when a running compaction holds the level or the next whole.
/// (A next level of several runs is taken whole; `pick` calls this beside
/// running compactions only when no such level is due.)
pub(super) fn next_files(
    v: &Version,
    opts: &Options,
    level: usize,
    ptrs: &mut Pointers,
    claims: &Claims,
) -> Option<Compaction> {
    // Every file would meet such a claim: no scan of the level.
    if claims.holds_whole(level) || claims.holds_whole(level + 1) {
        return None;
    }
    if ptrs.0.len() <= level {
        ptrs.0.resize(level + 1, Vec::new());
    }
    let files = &v.levels[level][0].files;
    let ptr = &ptrs.0[level];
    // The first file past the pointer (files are sorted by smallest key), or
    // the first of all once the pointer passed the last.
    let first = if ptr.is_empty() {
        0
    } else {
        match files.partition_point(|f| f.smallest_user() <= ptr.as_slice()) {
            i if i == files.len() => 0,
            i => i,
        }
    };
    let below = v
        .levels
        .get(level + 1)
        .and_then(|runs| match runs.as_slice() {
            [run] => Some(run),
            _ => None,
        });
    // The bytes below `chosen` overlaps, and whether its compaction (its
    // files and theirs) is free to start.
    let probe = |chosen: &[Arc<FileMeta>]| -> (u64, bool) {
        let (lo, hi) = range_of(chosen.iter()).unwrap_or_default();
        let under = below.map_or_else(Vec::new, |r| overlapping(r, &lo, &hi));
        let (lo, hi) = range_of(chosen.iter().chain(&under)).unwrap_or_default();
        let bytes = under.iter().map(|f| f.size).sum();
        (bytes, claims.keys_free(level, &lo, &hi))
    };
    let limit = opts.target_file_size.saturating_mul(MAX_COMPACTION_FILES);
    let excess = v
        .level_bytes(level)
        .saturating_sub(claims.leaving(level))
        .saturating_sub(opts.level_capacity(level));
    // Without running compactions the first candidate is free; with some,
    // the ones passed over meet their few files.
    for start in (first..files.len()).chain(0..first) {
        let (overlap, free) = probe(&files[start..=start]);
        if !free {
            continue;
        }
        let mut end = start + 1;
        if overlap > 0 {
            let mut taken = files[start].size;
            while end < files.len() && taken < excess {
                let next = taken + files[end].size;
                let (overlap, free) = probe(&files[start..=end]);
                if !free || next + overlap > limit {
                    break;
                }
                taken = next;
                end += 1;
            }
        }
        let chosen = files[start..end].to_vec();
        ptrs.0[level] = chosen[chosen.len() - 1].largest_user().to_vec();
        return Some(leveled(v, level, level + 1, vec![(level, chosen)], true));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compaction::pick;
    use crate::key::{self, Kind};

    const KIB: u64 = 1024;

    /// A version whose levels hold one run each of files `(first, last, size)`
    /// (user keys of one letter).
    fn version(levels: &[&[(u8, u8, u64)]]) -> Version {
        let tables = crate::compaction::test_tables();
        let mut number = 0;
        let runs = levels.iter().map(|files| {
            let mut metas = Vec::new();
            for &(a, b, size) in *files {
                number += 1;
                let ik = |u: u8| key::internal_key(&[u], 1, Kind::Put);
                let mut f = FileMeta::for_test(number, ik(a), ik(b), tables.clone());
                Arc::get_mut(&mut f).expect("fresh").size = size;
                metas.push(f);
            }
            if metas.is_empty() {
                Vec::new()
            } else {
                vec![Arc::new(Run::from_files(1, metas))]
            }
        });
        Version {
            levels: runs.collect(),
        }
    }

    /// L1 of 300 KiB, 100 KiB target files, `max_levels` levels.
    fn options(max_levels: usize) -> Options {
        Options {
            level1_size: 300 * KIB,
            target_file_size: 100 * KIB,
            max_levels,
            ..Options::default()
        }
    }

    /// Six files of `size` bytes: `a..b`, `c..d`, ..., `k..l`.
    fn six(size: u64) -> Vec<(u8, u8, u64)> {
        (0..6u8)
            .map(|i| (b'a' + 2 * i, b'a' + 2 * i + 1, size))
            .collect()
    }

    /// Numbers of the files `c` takes from `level`.
    fn numbers(c: &Compaction, level: usize) -> Vec<u64> {
        c.inputs
            .iter()
            .filter(|(l, _)| *l == level)
            .flat_map(|(_, fs)| fs.iter().map(|f| f.number))
            .collect()
    }

    /// `v` with `runs` copies of `run` as the runs of `level`.
    fn with_runs(mut v: Version, level: usize, run: &Arc<Run>, runs: u64) -> Version {
        v.levels[level] = (0..runs)
            .map(|id| {
                let mut r = (**run).clone();
                r.id = id + 100;
                Arc::new(r)
            })
            .collect();
        v
    }

    #[test]
    fn neighbouring_files_compact_together_up_to_the_excess_and_the_limit() {
        let o = options(3);
        // L1: six 100 KiB files (300 KiB over); L2 overlaps each of them.
        let l1 = six(100 * KIB);
        let v = version(&[&[], &l1, &l1]);
        let mut ptrs = Pointers::default();
        let none = Claims::default();
        let c = next_files(&v, &o, 1, &mut ptrs, &none).expect("due");
        assert_eq!(numbers(&c, 1), [1, 2, 3], "the 300 KiB excess, in order");
        assert_eq!(numbers(&c, 2), [7, 8, 9]);
        assert!(!c.trivial_move);
        // Round robin: the next pick starts after the last file taken.
        let c = next_files(&v, &o, 1, &mut ptrs, &none).expect("due");
        assert_eq!(numbers(&c, 1)[0], 4);
        // The input limit (25 target sizes) stops the growth first.
        let small = Options {
            target_file_size: 4 * KIB,
            ..o.clone()
        };
        let c = next_files(&v, &small, 1, &mut Pointers::default(), &none).expect("due");
        assert_eq!(numbers(&c, 1), [1], "one file is always taken");
        // A file overlapping nothing below moves down alone.
        let v = version(&[&[], &l1, &[(b'z', b'z', KIB)]]);
        let c = next_files(&v, &o, 1, &mut Pointers::default(), &none).expect("due");
        assert!(
            c.trivial_move && numbers(&c, 1) == [1],
            "{:?}",
            numbers(&c, 1)
        );
    }

    #[test]
    fn compactions_of_one_level_run_side_by_side_on_disjoint_keys() {
        let o = options(3);
        // L1: six 100 KiB files (300 KiB over); L2 overlaps each of them.
        let v = version(&[&[], &six(100 * KIB), &six(100 * KIB)]);
        let mut claims = Claims::default();
        let mut ptrs = Pointers::default();
        let first = pick(&v, &o, &claims, &mut ptrs).expect("due");
        assert_eq!(numbers(&first, 1), [1, 2, 3], "the whole excess");
        let held = claims.take(&first);
        // The level is still at its capacity without the bytes leaving it:
        // one more file goes, beside the first compaction.
        let second = pick(&v, &o, &claims, &mut ptrs).expect("due");
        assert_eq!(numbers(&second, 1), [4]);
        assert!(claims.admits(&second));
        // From the start again, the files the first one holds are passed over.
        let again = pick(&v, &o, &claims, &mut Pointers::default()).expect("due");
        assert_eq!(numbers(&again, 1), [4]);
        let _second = claims.take(&second);
        assert!(
            pick(&v, &o, &claims, &mut ptrs).is_none(),
            "400 KiB leaving: no longer over"
        );
        claims.release(held);
        // A compaction holding L2 whole (its run rewritten in place) leaves
        // nothing of L1 to compact.
        let mut in_place = Claims::default();
        let _whole = in_place.take(&Compaction {
            level: 2,
            output_level: 2,
            inputs: vec![(2, vec![v.levels[2][0].files[0].clone()])],
            trivial_move: false,
            output_run: Some(1),
        });
        assert!(pick(&v, &o, &in_place, &mut Pointers::default()).is_none());
    }

    #[test]
    fn a_second_compaction_of_a_level_waits_for_level0_to_drain() {
        let o = options(3);
        let mut v = version(&[&[(b'a', b'z', KIB)], &six(100 * KIB), &six(100 * KIB)]);
        let mut claims = Claims::default();
        let mut ptrs = Pointers::default();
        let first = pick(&v, &o, &claims, &mut ptrs).expect("due");
        assert_eq!(first.level, 1);
        let _first = claims.take(&first);
        // One L0 run (below its trigger): writes still come in.
        assert!(pick(&v, &o, &claims, &mut ptrs).is_none());
        v.levels[0].clear();
        let second = pick(&v, &o, &claims, &mut ptrs).expect("drained");
        assert_eq!(second.level, 1);
    }

    #[test]
    fn a_waiting_level_of_several_runs_is_not_starved_by_ranges_next_to_it() {
        let o = options(4);
        // L2 (3000 KiB capacity) holds 6 MiB in one run; L3 below it.
        let v = version(&[&[], &[], &six(1024 * KIB), &six(1024 * KIB)]);
        let mut claims = Claims::default();
        let mut ptrs = Pointers::default();
        let first = pick(&v, &o, &claims, &mut ptrs).expect("due");
        assert_eq!(first.level, 2);
        let _first = claims.take(&first);
        // Two runs in L1 (left by tiering): due, merged whole into L2, which
        // the first compaction holds. No second compaction of L2 may start.
        let l1 = version(&[&[], &[(b'a', b'z', KIB)], &[], &[]]);
        let v = with_runs(v, 1, &l1.levels[1][0], 2);
        assert!(pick(&v, &o, &claims, &mut ptrs).is_none());
        let v = with_runs(v, 1, &l1.levels[1][0], 1);
        let second = pick(&v, &o, &claims, &mut ptrs).expect("no waiting");
        assert_eq!(second.level, 2);
    }
}
