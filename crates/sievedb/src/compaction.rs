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

use std::sync::Arc;

use crate::error::Result;
use crate::io::{filename, FileSystem};
use crate::iter::{InternalIterator, MergingIterator};
use crate::key::{self, Kind, SeqNo};
use crate::options::{CompactionStyle, Options};
use crate::range_del::{self, Fragments, RangeTombstone};
use crate::sst::reader::ReadCtx;
use crate::sst::TableWriter;
use crate::version::run::RunIter;
use crate::version::{FileMeta, NewFile, Run, Version, VersionEdit};

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

/// Files of `run` whose user keys meet `[lo, hi]`.
///
/// A file ending at a range tombstone's end sentinel `(e, MAX_SEQ)` holds no
/// entry of `e`, but its user-key range is taken as `[.., e]`: the test may
/// take one file more than needed (its neighbour starting at `e`), never one
/// less, so the outputs still replace every file they overlap.
fn overlapping(run: &Run, lo: &[u8], hi: &[u8]) -> Vec<Arc<FileMeta>> {
    run.files
        .iter()
        .filter(|f| f.overlaps(Some(lo), Some(hi)))
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

/// Per-level round-robin positions for leveled compaction.
#[derive(Clone, Default)]
pub struct Pointers(Vec<Vec<u8>>);

/// Picks the most urgent compaction among levels not in `busy`.
///
/// Either style accepts any shape of tree, whatever style wrote it, so the
/// style may change between opens: under leveling a level >= 1 holding several
/// runs (left by tiering) scores at least its number of runs and is merged
/// whole (`leveled_whole`); tiering treats the single run of a leveled
/// level like any other run.
pub fn pick(v: &Version, opts: &Options, busy: &[bool], ptrs: &mut Pointers) -> Option<Compaction> {
    let last = opts.max_levels - 1;
    let free = |l: usize| !busy[l] && !busy[(l + 1).min(last)];
    let shape: Vec<(usize, u64)> = (0..opts.max_levels)
        .map(|l| (v.levels[l].len(), v.level_bytes(l)))
        .collect();
    let mut best: Option<(f64, usize)> = None;
    for (l, score) in scores(&shape, opts).into_iter().enumerate() {
        if score >= 1.0 && free(l) && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, l));
        }
    }
    let (_, level) = best?;
    Some(match opts.compaction_style {
        CompactionStyle::Tiering => whole_level(v, level, last),
        CompactionStyle::Leveling if level == 0 => level0(v),
        CompactionStyle::Leveling if v.levels[level].len() > 1 => leveled_whole(v, level, last),
        CompactionStyle::Leveling => next_files(v, opts, level, ptrs),
    })
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

/// Tiering: every run of `level` into one new run of the next level (the last
/// level merges in place).
fn whole_level(v: &Version, level: usize, last: usize) -> Compaction {
    Compaction {
        level,
        output_level: (level + 1).min(last),
        inputs: v.levels[level]
            .iter()
            .map(|r| (level, r.files.clone()))
            .collect(),
        trivial_move: false,
        output_run: None,
    }
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
        runs => (runs.iter().map(|r| r.files.clone()).collect(), 0),
    }
}

/// Leveling: the inputs of `level` (newest first) plus what they need below.
fn leveled(
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
fn level0(v: &Version) -> Compaction {
    let inputs = v.levels[0].iter().map(|r| (0, r.files.clone())).collect();
    leveled(v, 0, 1, inputs, true)
}

/// Leveling, for a level >= 1 holding several runs: all of them plus what they
/// overlap in the next level, into one run there (the last level: merged in
/// place into one run). Taking only the newest run would move newer data below
/// the older runs left behind.
fn leveled_whole(v: &Version, level: usize, last: usize) -> Compaction {
    let inputs = v.levels[level]
        .iter()
        .map(|r| (level, r.files.clone()))
        .collect();
    leveled(v, level, (level + 1).min(last), inputs, false)
}

/// Input bytes (both levels) a leveled compaction of a level >= 1 may grow
/// to, in target file sizes (RocksDB's `max_compaction_bytes` default).
const MAX_COMPACTION_FILES: u64 = 25;

/// Leveling, for a level >= 1 holding one run: the next file of that run in
/// round-robin order plus what it overlaps below, moved down untouched when
/// nothing overlaps. Otherwise the following files of the run join while
/// the level is still over its capacity without them and the inputs stay
/// under [`MAX_COMPACTION_FILES`] target file sizes: one compaction of
/// neighbouring files rewrites the file below they share once instead of
/// once each, and pays the MANIFEST commit, and its fsync, once. The files
/// taken are consecutive in the run, so nothing of the level between them
/// stays behind.
fn next_files(v: &Version, opts: &Options, level: usize, ptrs: &mut Pointers) -> Compaction {
    if ptrs.0.len() <= level {
        ptrs.0.resize(level + 1, Vec::new());
    }
    let files = &v.levels[level][0].files;
    let ptr = &ptrs.0[level];
    let start = files
        .iter()
        .position(|f| ptr.is_empty() || f.smallest_user() > ptr.as_slice())
        .unwrap_or(0);
    let below = v
        .levels
        .get(level + 1)
        .and_then(|runs| match runs.as_slice() {
            [run] => Some(run),
            _ => None,
        });
    let overlap_bytes = |chosen: &[Arc<FileMeta>]| -> u64 {
        let (lo, hi) = range_of(chosen.iter()).unwrap_or_default();
        below.map_or(0, |r| overlapping(r, &lo, &hi).iter().map(|f| f.size).sum())
    };
    let mut end = start + 1;
    if overlap_bytes(&files[start..end]) > 0 {
        let limit = opts.target_file_size.saturating_mul(MAX_COMPACTION_FILES);
        let excess = v
            .level_bytes(level)
            .saturating_sub(opts.level_capacity(level));
        let mut taken = files[start].size;
        while end < files.len() && taken < excess {
            let next = taken + files[end].size;
            if next + overlap_bytes(&files[start..=end]) > limit {
                break;
            }
            taken = next;
            end += 1;
        }
    }
    let chosen = files[start..end].to_vec();
    ptrs.0[level] = chosen[chosen.len() - 1].largest_user().to_vec();
    leveled(v, level, level + 1, vec![(level, chosen)], true)
}

/// A manual compaction of `level` into the next one, restricted (where the
/// invariants allow) to files overlapping `[lo, hi]`. `None` if nothing
/// overlaps, or for a last level that already is one run.
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
    if !any || (level == last && runs < 2) {
        return None;
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

/// What writing output files needs.
pub struct OutputCtx<'a> {
    /// File system.
    pub fs: &'a dyn FileSystem,
    /// Database directory.
    pub dir: &'a std::path::Path,
    /// Options.
    pub opts: &'a Options,
    /// Level the outputs are written for.
    pub level: usize,
    /// Run id the outputs belong to.
    pub run: u64,
    /// Cut files at `target_file_size` (false: one file, as for a flush).
    pub split: bool,
    /// Oldest sequence number a reader may still ask for.
    pub smallest_snapshot: SeqNo,
    /// Allocates file numbers.
    pub new_file_number: &'a (dyn Fn() -> u64 + Sync),
}

/// Decides whether a tombstone for a user key may be dropped.
pub type BottomCheck<'a> = dyn Fn(&[u8]) -> bool + 'a;

/// The range tombstones a merge reads, and whether one of them may be dropped
/// when every reader sees it (nothing older below it can be covered).
pub struct RangeDels<'a> {
    /// The tombstones of the inputs (any order).
    pub tombstones: Vec<RangeTombstone>,
    /// Whether no file outside the merge may hold a key the tombstone covers.
    pub is_bottom: &'a dyn Fn(&RangeTombstone) -> bool,
}

/// Merges `input` into new SST files; returns their descriptions.
///
/// An entry whose internal key does not parse fails the merge with
/// [`crate::Error::Corruption`] (the SST readers report it first, naming the file).
/// On any error the files created so far are removed: nothing references
/// them yet, and the caller keeps its inputs.
pub fn write_outputs(
    input: &mut dyn InternalIterator,
    ctx: &OutputCtx<'_>,
    is_bottom: &BottomCheck<'_>,
    range_dels: RangeDels<'_>,
) -> Result<Vec<NewFile>> {
    let mut created = Vec::new();
    let r = merge_into(input, ctx, is_bottom, range_dels, &mut created);
    if r.is_err() {
        remove_files(ctx.fs, ctx.dir, created);
    }
    r
}

/// Makes the creation of `outputs` durable (fsyncs `dir`); if that fails,
/// removes them (nothing references them yet) and returns the error.
pub fn sync_outputs(fs: &dyn FileSystem, dir: &std::path::Path, outputs: &[NewFile]) -> Result<()> {
    fs.sync_dir(dir).map_err(|e| {
        remove_files(fs, dir, outputs.iter().map(|f| f.number).collect());
        e.into()
    })
}

/// Best-effort removal of SSTs `numbers` that no version references (outputs
/// of a failed flush or compaction); a file left behind is removed as
/// obsolete when the database next opens.
pub fn remove_files(fs: &dyn FileSystem, dir: &std::path::Path, numbers: Vec<u64>) {
    for n in numbers {
        let _ = fs.remove_file(&filename::sst(dir, n));
    }
}

/// The kept tombstones of a merge (sorted by start) and the ones assigned so far.
struct OpenTombstones {
    kept: Vec<RangeTombstone>,
    next: usize,
}

impl OpenTombstones {
    /// Whether an output may be cut before user key `k`: every unassigned
    /// tombstone starting before `k` ends at or before it.
    fn may_cut(&self, k: &[u8]) -> bool {
        self.kept[self.next..]
            .iter()
            .take_while(|t| t.start.as_slice() < k)
            .all(|t| t.end.as_deref().is_some_and(|e| e <= k))
    }

    /// Hands `w` the unassigned tombstones starting before `k` (all, if `None`).
    fn assign(&mut self, w: &mut TableWriter, k: Option<&[u8]>) {
        while let Some(t) = self.kept.get(self.next) {
            if k.is_some_and(|k| t.start.as_slice() >= k) {
                break;
            }
            w.add_range_del(t.clone());
            self.next += 1;
        }
    }
}

/// Splits `rd` into the fragments hiding point entries from every reader
/// and the tombstones to keep.
fn plan_range_dels(rd: RangeDels<'_>, smallest_snapshot: SeqNo) -> (Fragments, OpenTombstones) {
    let hide = Fragments::new(&rd.tombstones, smallest_snapshot);
    let mut kept: Vec<_> = rd
        .tombstones
        .into_iter()
        .filter(|t| !(t.seq <= smallest_snapshot && (rd.is_bottom)(t)))
        .collect();
    range_del::sort(&mut kept);
    (hide, OpenTombstones { kept, next: 0 })
}

fn new_writer(ctx: &OutputCtx<'_>, created: &mut Vec<u64>) -> Result<(TableWriter, u64)> {
    let n = (ctx.new_file_number)();
    let file = ctx.fs.create(&filename::sst(ctx.dir, n))?;
    created.push(n);
    let w = TableWriter::new(
        file,
        ctx.level,
        ctx.opts.block_size,
        ctx.opts.block_restart_interval,
        ctx.opts.compression_for(ctx.level),
        &ctx.opts.filter,
    );
    Ok((w, n))
}

fn merge_into(
    input: &mut dyn InternalIterator,
    ctx: &OutputCtx<'_>,
    is_bottom: &BottomCheck<'_>,
    range_dels: RangeDels<'_>,
    created: &mut Vec<u64>,
) -> Result<Vec<NewFile>> {
    let (hide, mut open) = plan_range_dels(range_dels, ctx.smallest_snapshot);
    let mut outputs = Vec::new();
    let mut writer: Option<(TableWriter, u64)> = None;
    let mut cur_key: Vec<u8> = Vec::new();
    let mut has_cur = false;
    let mut last_seq_for_key = SeqNo::MAX;
    input.seek_to_first()?;
    while input.valid() {
        let ik = input.key();
        let p = key::parse(ik).ok_or_else(|| key::malformed(ik))?;
        let new_key = !has_cur || p.user_key != cur_key.as_slice();
        if new_key {
            cur_key.clear();
            cur_key.extend_from_slice(p.user_key);
            has_cur = true;
            last_seq_for_key = SeqNo::MAX;
        }
        let drop = last_seq_for_key <= ctx.smallest_snapshot
            || (p.kind == Kind::Delete as u8
                && p.seq <= ctx.smallest_snapshot
                && is_bottom(p.user_key))
            || (!hide.is_empty() && hide.covers(p.user_key, p.seq));
        last_seq_for_key = p.seq;
        if !drop {
            if let Some((w, _)) = &writer {
                if ctx.split
                    && new_key
                    && w.estimated_size() >= ctx.opts.target_file_size
                    && open.may_cut(p.user_key)
                {
                    let (mut w, n) = writer.take().expect("writer");
                    open.assign(&mut w, Some(p.user_key));
                    outputs.push(finish(w, n, ctx)?);
                }
            }
            if writer.is_none() {
                writer = Some(new_writer(ctx, created)?);
            }
            let (w, _) = writer.as_mut().expect("writer");
            w.add(input.key(), input.value())?;
        }
        input.next()?;
    }
    if writer.is_none() && open.next < open.kept.len() {
        writer = Some(new_writer(ctx, created)?);
    }
    if let Some((mut w, n)) = writer {
        open.assign(&mut w, None);
        outputs.push(finish(w, n, ctx)?);
    }
    Ok(outputs)
}

fn finish(w: TableWriter, number: u64, ctx: &OutputCtx<'_>) -> Result<NewFile> {
    let (props, size) = w.finish()?;
    Ok(NewFile {
        level: ctx.level,
        run: ctx.run,
        number,
        size,
        entries: props.entries,
        smallest: props.smallest,
        largest: props.largest,
        range_dels: props.range_dels,
    })
}

/// The range tombstones of the inputs of `c` (read from their tables; only
/// files that have some are opened).
pub fn input_range_dels(c: &Compaction) -> Result<Vec<RangeTombstone>> {
    let mut out = Vec::new();
    for f in c.inputs.iter().flat_map(|(_, fs)| fs) {
        if f.range_dels > 0 {
            out.extend_from_slice(f.tables().get(f.number)?.range_dels());
        }
    }
    Ok(out)
}

/// Whether no file outside `c` at its output level or deeper meets the range
/// of a tombstone (so nothing it could still hide lies below it).
pub fn range_bottom_check<'a>(
    c: &'a Compaction,
    v: &'a Version,
) -> impl Fn(&RangeTombstone) -> bool + 'a {
    move |t: &RangeTombstone| {
        v.levels[c.output_level..]
            .iter()
            .flatten()
            .flat_map(|r| &r.files)
            .filter(|f| t.meets(f.smallest_user(), f.largest_user()))
            .all(|f| c.is_input(f.number))
    }
}

/// A merging iterator over the inputs of `c`.
pub fn input_iter(c: &Compaction) -> MergingIterator {
    let children: Vec<Box<dyn InternalIterator>> = c
        .inputs
        .iter()
        .map(|(level, files)| {
            Box::new(RunIter::new(
                files.clone(),
                ReadCtx {
                    level: *level,
                    fill_cache: false,
                    verify_checksums: true,
                },
            )) as Box<dyn InternalIterator>
        })
        .collect();
    MergingIterator::new(children)
}

/// Whether no file outside `c` at its output level or deeper may hold `user_key`.
pub fn bottom_check<'a>(c: &'a Compaction, v: &'a Version) -> impl Fn(&[u8]) -> bool + 'a {
    move |user_key: &[u8]| {
        v.levels[c.output_level..].iter().all(|runs| {
            runs.iter().all(|r| match r.file_for(user_key) {
                Some(f) => c.is_input(f.number),
                None => true,
            })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::range_del::test_tombstone as t;

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

    /// A version whose levels hold one run each of files `(first, last, size)`
    /// (user keys of one letter).
    fn version(levels: &[&[(u8, u8, u64)]]) -> Version {
        let opts = Options::default();
        let tables = Arc::new(crate::cache::TableCache::new(
            Arc::new(crate::io::StdFs),
            std::env::temp_dir(),
            &opts,
            None,
            Arc::new(crate::stats::Counters::new(opts.max_levels)),
        ));
        let mut number = 0;
        let runs = levels.iter().map(|files| {
            let mut run = Run::new(1);
            for &(a, b, size) in *files {
                number += 1;
                let ik = |u: u8| key::internal_key(&[u], 1, Kind::Put);
                let mut f = FileMeta::for_test(number, ik(a), ik(b), tables.clone());
                Arc::get_mut(&mut f).expect("fresh").size = size;
                run.files.push(f);
            }
            if run.files.is_empty() {
                Vec::new()
            } else {
                vec![run]
            }
        });
        Version {
            levels: runs.collect(),
        }
    }

    #[test]
    fn neighbouring_files_compact_together_up_to_the_excess_and_the_limit() {
        let kib = 1024;
        let o = Options {
            level1_size: 300 * kib,
            target_file_size: 100 * kib,
            max_levels: 3,
            ..Options::default()
        };
        // L1: six 100 KiB files (300 KiB over); L2 overlaps each of them.
        let l1: Vec<_> = (0..6u8)
            .map(|i| (b'a' + 2 * i, b'a' + 2 * i + 1, 100 * kib))
            .collect();
        let l2: Vec<_> = (0..6u8)
            .map(|i| (b'a' + 2 * i, b'a' + 2 * i + 1, 100 * kib))
            .collect();
        let v = version(&[&[], &l1, &l2]);
        let mut ptrs = Pointers::default();
        let c = next_files(&v, &o, 1, &mut ptrs);
        let numbers = |c: &Compaction, level| -> Vec<u64> {
            c.inputs
                .iter()
                .filter(|(l, _)| *l == level)
                .flat_map(|(_, fs)| fs.iter().map(|f| f.number))
                .collect()
        };
        assert_eq!(numbers(&c, 1), [1, 2, 3], "the 300 KiB excess, in order");
        assert_eq!(numbers(&c, 2), [7, 8, 9]);
        assert!(!c.trivial_move);
        // Round robin: the next pick starts after the last file taken.
        let c = next_files(&v, &o, 1, &mut ptrs);
        assert_eq!(numbers(&c, 1)[0], 4);
        // The input limit (25 target sizes) stops the growth first.
        let small = Options {
            target_file_size: 4 * kib,
            ..o.clone()
        };
        let c = next_files(&v, &small, 1, &mut Pointers::default());
        assert_eq!(numbers(&c, 1), [1], "one file is always taken");
        // A file overlapping nothing below moves down alone.
        let v = version(&[&[], &l1, &[(b'z', b'z', kib)]]);
        let c = next_files(&v, &o, 1, &mut Pointers::default());
        assert!(
            c.trivial_move && numbers(&c, 1) == [1],
            "{:?}",
            numbers(&c, 1)
        );
    }

    #[test]
    fn outputs_are_cut_only_where_no_kept_tombstone_is_open() {
        let rd = RangeDels {
            tombstones: vec![t("m", None, 9), t("b", Some("d"), 5), t("f", Some("h"), 2)],
            // The old tombstone over [f, h) is bottommost: dropped once seen by all.
            is_bottom: &|t: &RangeTombstone| t.start == b"f",
        };
        let (hide, open) = plan_range_dels(rd, 4);
        assert_eq!(
            open.kept.len(),
            2,
            "the bottommost visible tombstone is dropped"
        );
        assert!(
            hide.covers(b"g", 1),
            "a dropped tombstone still hides its entries"
        );
        assert!(
            !hide.covers(b"c", 1),
            "seq 5 is newer than the oldest snapshot"
        );
        assert!(open.may_cut(b"a"));
        assert!(
            open.may_cut(b"b"),
            "a tombstone starting at the cut goes after it"
        );
        assert!(!open.may_cut(b"c"), "[b, d) is open at c");
        assert!(open.may_cut(b"d"), "[b, d) ends exactly at the cut");
        assert!(open.may_cut(b"m"));
        assert!(!open.may_cut(b"n"), "[m, +inf) never closes");
    }
}
