//! The executor: `write_outputs` merges its input into new SST files, cut at
//! the target file size (flush, open and repair use it too); `sync_outputs`
//! and `remove_files` make them durable or remove them; `input_iter` and
//! `bottom_check` are a compaction's input and its point-tombstone check.

use crate::error::Result;
use crate::io::{filename, FileSystem};
use crate::iter::{InternalIterator, MergingIterator};
use crate::key::{self, Kind, SeqNo};
use crate::options::Options;
use crate::sst::reader::ReadCtx;
use crate::sst::TableWriter;
use crate::version::run::RunIter;
use crate::version::{NewFile, Version};

use super::filter::{ActiveFilter, Filtered};
use super::range_dels::{plan_range_dels, RangeDels};
use super::Compaction;

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
    /// The compaction filter and TTL hook (`None` for flushes, which do not
    /// filter, and when neither is configured).
    pub filter: Option<ActiveFilter>,
}

/// Decides whether a tombstone for a user key may be dropped.
pub type BottomCheck<'a> = dyn Fn(&[u8]) -> bool + 'a;

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
        let mut drop = last_seq_for_key <= ctx.smallest_snapshot
            || (p.kind == Kind::Delete as u8
                && p.seq <= ctx.smallest_snapshot
                && is_bottom(p.user_key))
            || (!hide.is_empty() && hide.covers(p.user_key, p.seq));
        last_seq_for_key = p.seq;
        // --- compaction filter / TTL (compaction/filter.rs) ---
        let filtered = match &ctx.filter {
            Some(f) if new_key && !drop && f.applies(&p) => f.apply(ctx.level, &p, input.value())?,
            _ => Filtered::Keep,
        };
        if filtered == Filtered::Tombstone {
            // The tombstone obeys the rule of every point tombstone.
            drop = p.seq <= ctx.smallest_snapshot && is_bottom(p.user_key);
        }
        // --- end compaction filter ---
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
            match filtered {
                Filtered::Keep => w.add(input.key(), input.value())?,
                Filtered::Value(v) => w.add(input.key(), &v)?,
                Filtered::Tombstone => {
                    let mut tomb = Vec::with_capacity(p.user_key.len() + 8);
                    key::append_internal_key(&mut tomb, p.user_key, p.seq, Kind::Delete as u8);
                    w.add(&tomb, &[])?
                }
            }
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
        creation_time: ctx.opts.file_creation_time(),
    })
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
