//! The executor: `write_outputs` merges its input into new SST files, cut at
//! the target file size (flush, open and repair use it too); `sync_outputs`
//! and `remove_files` make them durable or remove them; `input_iter` and
//! `bottom_check` are a compaction's input and its point-tombstone check.

use crate::error::Result;
use crate::io::{filename, FileSystem, SyncBatch, WritableFile};
use crate::iter::{InternalIterator, MergingIterator};
use crate::key::{self, Kind, SeqNo};
use crate::options::Options;
use crate::sst::reader::ReadCtx;
use crate::sst::TableWriter;
use crate::version::run::RunIter;
use crate::version::{NewFile, Version};

use super::filter::{ActiveFilter, Filtered};
use super::range_dels::{plan_range_dels, OpenTombstones, RangeDels};
use super::Compaction;
use crate::filter::family::Family;
use crate::merge::{MergeOperator, Operands};
use crate::range_del::Fragments;

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
    /// The keyspace the outputs belong to (id, name), recorded in their
    /// properties.
    pub keyspace: (u32, &'a str),
    /// The filter family the budget chose for the outputs
    /// ([`FilterOptions::choose_family`](crate::FilterOptions::choose_family));
    /// `None`: the options' own ([`FilterOptions::for_level`](crate::FilterOptions::for_level)).
    pub filter_family: Option<Family>,
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
    let chosen;
    let filter = match ctx.filter_family {
        Some(family) => {
            chosen = crate::filter::budget::choice::options_for(&ctx.opts.filter, family);
            &chosen
        }
        None => &ctx.opts.filter,
    };
    let mut w = TableWriter::new(
        file,
        ctx.level,
        ctx.opts.block_size,
        ctx.opts.block_restart_interval,
        ctx.opts.compression_for(ctx.level),
        filter,
    );
    w.set_keyspace(ctx.keyspace.0, ctx.keyspace.1);
    w.set_prefix_extractor(ctx.opts.prefix_extractor.clone());
    w.set_index_partition_bytes(ctx.opts.index_partition_bytes);
    Ok((w, n))
}

fn merge_into(
    input: &mut dyn InternalIterator,
    ctx: &OutputCtx<'_>,
    is_bottom: &BottomCheck<'_>,
    range_dels: RangeDels<'_>,
    created: &mut Vec<u64>,
) -> Result<Vec<NewFile>> {
    let (hide, open) = plan_range_dels(range_dels, ctx.smallest_snapshot);
    let mut out = Outputs {
        ctx,
        created,
        open,
        writer: None,
        files: Vec::new(),
        unsynced: SyncBatch::default(),
    };
    let mut cur_key: Vec<u8> = Vec::new();
    let mut has_cur = false;
    // A newer put or delete of the current key that every reader sees: every
    // older entry of the key is dropped.
    let mut shadowed = false;
    input.seek_to_first()?;
    while input.valid() {
        let ik = input.key();
        let p = key::parse(ik).ok_or_else(|| key::malformed(ik))?;
        let new_key = !has_cur || p.user_key != cur_key.as_slice();
        if new_key {
            cur_key.clear();
            cur_key.extend_from_slice(p.user_key);
            has_cur = true;
            shadowed = false;
        }
        let visible_to_all = p.seq <= ctx.smallest_snapshot;
        let mut drop = shadowed
            || (p.kind == Kind::Delete as u8 && visible_to_all && is_bottom(p.user_key))
            || (!hide.is_empty() && hide.covers(p.user_key, p.seq));
        shadowed |= visible_to_all && p.kind != Kind::Merge as u8;
        // --- compaction filter / TTL (compaction/filter.rs) ---
        let filtered = match &ctx.filter {
            Some(f) if new_key && !drop && f.applies(&p) => {
                f.apply(ctx.level, &p, input.value())?
            }
            _ => Filtered::Keep,
        };
        if filtered == Filtered::Tombstone {
            // The tombstone obeys the rule of every point tombstone.
            drop = visible_to_all && is_bottom(p.user_key);
        }
        // --- end compaction filter ---
        if drop {
            input.next()?;
            continue;
        }
        if p.kind == Kind::Merge as u8 && visible_to_all {
            if let Some(op) = &ctx.opts.merge_operator {
                let merge = MergeInput {
                    op: op.as_ref(),
                    user_key: &cur_key,
                    hide: &hide,
                    is_bottom,
                };
                // Leaves `input` on the first entry it did not take.
                shadowed |= merge.run(input, &mut out, new_key)?;
                continue;
            }
        }
        let first = new_key.then_some(p.user_key);
        match filtered {
            Filtered::Keep => out.add(input.key(), input.value(), first)?,
            Filtered::Value(v) => out.add(input.key(), &v, first)?,
            Filtered::Tombstone => {
                let mut tomb = Vec::with_capacity(p.user_key.len() + 8);
                key::append_internal_key(&mut tomb, p.user_key, p.seq, Kind::Delete as u8);
                out.add(&tomb, &[], first)?;
            }
        }
        input.next()?;
    }
    out.finish()
}

/// The output files of a merge, cut at the target file size.
///
/// A finished file is not fsynced at once: its writeback starts
/// ([`TableWriter::finish_unsynced`]) and the merge goes on with the next
/// file while the device writes it. The finished files are fsynced
/// [`SyncBatch::LIMIT`] at a time and all before the merge returns, so every
/// file [`write_outputs`] returns is durable, as when each was synced alone.
struct Outputs<'a, 'c> {
    ctx: &'a OutputCtx<'a>,
    created: &'c mut Vec<u64>,
    open: OpenTombstones,
    writer: Option<(TableWriter, u64)>,
    files: Vec<NewFile>,
    unsynced: SyncBatch,
}

impl Outputs<'_, '_> {
    /// Adds an entry; `first_of_key` (its user key, on the first entry kept
    /// of a key) allows an output to be cut before it.
    fn add(&mut self, ikey: &[u8], value: &[u8], first_of_key: Option<&[u8]>) -> Result<()> {
        if let (Some((w, _)), Some(user_key)) = (&self.writer, first_of_key) {
            if self.ctx.split
                && w.estimated_size() >= self.ctx.opts.target_file_size
                && self.open.may_cut(user_key)
            {
                #[expect(clippy::expect_used, reason = "the `if let` above matched a writer")]
                let (mut w, n) = self.writer.take().expect("writer");
                self.open.assign(&mut w, Some(user_key));
                self.finish_file(w, n)?;
            }
        }
        if self.writer.is_none() {
            self.writer = Some(new_writer(self.ctx, self.created)?);
        }
        #[expect(clippy::expect_used, reason = "set just above when there was none")]
        let (w, _) = self.writer.as_mut().expect("writer");
        w.add(ikey, value)
    }

    fn finish(mut self) -> Result<Vec<NewFile>> {
        if self.writer.is_none() && self.open.next < self.open.kept.len() {
            self.writer = Some(new_writer(self.ctx, self.created)?);
        }
        if let Some((mut w, n)) = self.writer.take() {
            self.open.assign(&mut w, None);
            self.finish_file(w, n)?;
        }
        self.unsynced.sync_all()?;
        Ok(self.files)
    }

    /// Finishes output `number`; its sync comes with its batch's.
    fn finish_file(&mut self, w: TableWriter, number: u64) -> Result<()> {
        let (file, desc) = finish(w, number, self.ctx)?;
        self.files.push(desc);
        Ok(self.unsynced.push(file)?)
    }
}

/// The merge operands of one key that every reader sees, from the newest
/// (under the input cursor) down.
struct MergeInput<'a, 'b> {
    op: &'a dyn MergeOperator,
    user_key: &'a [u8],
    hide: &'a Fragments,
    is_bottom: &'a BottomCheck<'b>,
}

impl MergeInput<'_, '_> {
    /// Gathers the operands down to a put, a delete (point or range) or the
    /// key's last entry, and writes what replaces them: one put of the
    /// merged value when the base is known (found, or nothing older can
    /// exist outside this merge), else one operand if the operator combines
    /// them, else the entries as they were. When the operator refuses, the
    /// entries are written unchanged (a read then reports the failure).
    /// Returns whether the key's older entries are now shadowed.
    fn run(
        &self,
        input: &mut dyn InternalIterator,
        out: &mut Outputs<'_, '_>,
        new_key: bool,
    ) -> Result<bool> {
        let newest = input.key().to_vec();
        let mut taken: Vec<(Vec<u8>, Vec<u8>)> = Vec::new();
        let mut operands = Operands::default();
        // Whether the base is known, and the base value.
        let (mut ended, mut base) = (false, None);
        while input.valid() {
            let ik = input.key();
            let p = key::parse(ik).ok_or_else(|| key::malformed(ik))?;
            if p.user_key != self.user_key
                || (!self.hide.is_empty() && self.hide.covers(p.user_key, p.seq))
            {
                // A covered entry is dropped by the caller; it ends the gathering.
                ended = p.user_key == self.user_key;
                break;
            }
            taken.push((ik.to_vec(), input.value().to_vec()));
            if p.kind == Kind::Merge as u8 {
                operands.push_older(input.value());
                input.next()?;
                continue;
            }
            if p.kind == Kind::Put as u8 {
                base = Some(input.value().to_vec());
            }
            ended = true;
            input.next()?;
            break;
        }
        let ended = ended || (self.is_bottom)(self.user_key);
        let first = new_key.then_some(self.user_key);
        let p = key::parse(&newest).ok_or_else(|| key::malformed(&newest))?;
        if ended {
            if let Some(v) =
                self.op
                    .full_merge(self.user_key, base.as_deref(), &operands.oldest_first())
            {
                let mut ik = Vec::with_capacity(newest.len());
                key::append_internal_key(&mut ik, self.user_key, p.seq, Kind::Put as u8);
                out.add(&ik, &v, first)?;
                return Ok(true);
            }
        } else if let Some(v) = operands.partial_merge(self.op, self.user_key) {
            out.add(&newest, &v, first)?;
            return Ok(false);
        }
        // Unchanged: the operator refused, or cannot combine them.
        let shadowed = ended && taken.len() > operands.len();
        for (i, (k, v)) in taken.iter().enumerate() {
            out.add(k, v, if i == 0 { first } else { None })?;
        }
        Ok(shadowed)
    }
}

/// Finishes output `number` without syncing it: returns the file to sync
/// and its description.
fn finish(
    w: TableWriter,
    number: u64,
    ctx: &OutputCtx<'_>,
) -> Result<(Box<dyn WritableFile>, NewFile)> {
    let (props, size, file) = w.finish_unsynced()?;
    let desc = NewFile {
        level: ctx.level,
        run: ctx.run,
        number,
        size,
        entries: props.entries,
        smallest: props.smallest,
        largest: props.largest,
        range_dels: props.range_dels,
        creation_time: ctx.opts.file_creation_time(),
    };
    Ok((file, desc))
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
