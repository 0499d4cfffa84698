//! The read path: views, point lookups and iterators.

use super::handles::{HandleKind, Held};
use super::*;
use crate::filter::prefix::PrefixExtractor;
use crate::version::operands::{self, Below};

impl DbInner {
    /// The memtables and version to read, plus the newest sequence number they
    /// answer for consistently.
    ///
    /// Sound because (1) the view's version was installed before the
    /// sequence number is read, so every compaction in it chose what to drop
    /// with a smallest snapshot `<=` that number; and (2) no publish finished
    /// between loading the view and reading the number, so no memtable the
    /// view lacks holds a write up to that number: a switched-in memtable
    /// receives writes only after its publish finished (and a write seen
    /// through `last_seq` happened after it), and a retired memtable's data
    /// is in the version published with its retirement.
    pub(super) fn view(&self, tree: &Tree) -> (SeqNo, arc_swap::Guard<Arc<View>>) {
        loop {
            // A publish stores its view before it counts itself, so an
            // unchanged count means no publish finished in between.
            let before = tree.views_published.load(Ordering::Acquire);
            let view = tree.view.load();
            let seq = self.last_seq.load(Ordering::Acquire);
            if tree.views_published.load(Ordering::Acquire) == before {
                return (seq, view);
            }
        }
    }

    /// A view for a sequence number a registered snapshot protects: every
    /// write up to it was published before the snapshot was taken.
    pub(super) fn view_at_snapshot(&self, tree: &Tree) -> arc_swap::Guard<Arc<View>> {
        tree.view.load()
    }

    /// The sequence number and view of `tree` that `ro` reads at: its
    /// snapshot's, which must belong to this database, or the latest.
    pub(super) fn read_point(
        self: &Arc<Self>,
        tree: &Tree,
        ro: &ReadOptions,
    ) -> Result<(SeqNo, arc_swap::Guard<Arc<View>>)> {
        match ro.snapshot {
            None => Ok(self.view(tree)),
            Some(s) if s.belongs_to(self) => Ok((s.sequence(), self.view_at_snapshot(tree))),
            Some(_) => Err(Error::InvalidArgument(format!(
                "ReadOptions::snapshot was taken from another database than {}",
                self.dir.display()
            ))),
        }
    }

    /// [`Db::get_opt`] in `tree`.
    pub(super) fn get_opt(
        self: &Arc<Self>,
        tree: &Tree,
        key: &[u8],
        ro: &ReadOptions,
    ) -> Result<Option<Vec<u8>>> {
        let key = user_key(key)?;
        let (seq, view) = self.read_point(tree, ro)?;
        self.get_in(&view, key, seq, block_policy(ro))
    }

    /// [`Db::multi_get_opt`] in `tree`.
    pub(super) fn multi_get_opt<K: AsRef<[u8]>>(
        self: &Arc<Self>,
        tree: &Tree,
        keys: impl IntoIterator<Item = K>,
        ro: &ReadOptions,
    ) -> Result<Vec<Option<Vec<u8>>>> {
        let (seq, view) = self.read_point(tree, ro)?;
        let policy = block_policy(ro);
        keys.into_iter()
            .map(|k| self.get_in(&view, user_key(k.as_ref())?, seq, policy))
            .collect()
    }

    /// [`Db::range`] in `tree`: the iterator keeps the database open (its
    /// LOCK held) while it lives.
    pub(super) fn range(this: &Arc<Self>, tree: &Tree, bounds: Bounds) -> Result<DbIterator> {
        let (seq, view) = this.view(tree);
        let pin: Pin = Box::new(Held::new(this.clone(), HandleKind::Iterator));
        this.iter_in(&view, seq, bounds, vec![pin], ReadCtx::new(0))
    }

    /// [`Db::iter_opt`] in `tree`.
    pub(super) fn iter_opt(this: &Arc<Self>, tree: &Tree, ro: &ReadOptions) -> Result<DbIterator> {
        let lo = match &ro.lower_bound {
            Some(l) => Bound::Included(user_key(l)?.to_vec()),
            None => Bound::Unbounded,
        };
        let hi = match &ro.upper_bound {
            Some(u) => Bound::Excluded(user_key(u)?.to_vec()),
            None => Bound::Unbounded,
        };
        let (seq, view) = this.read_point(tree, ro)?;
        let pin: Pin = match ro.snapshot {
            Some(s) => s.pin(),
            None => Box::new(Held::new(this.clone(), HandleKind::Iterator)),
        };
        let mut it = this.iter_in(&view, seq, (lo, hi), vec![pin], block_policy(ro))?;
        if let (true, Some(x)) = (ro.prefix_same_as_start, &view.opts.prefix_extractor) {
            it.set_prefix_extractor(x.clone(), true);
        }
        Ok(it)
    }

    /// Looks `key` up in `view` as of `seq`. One [`KeyProbe`] serves the
    /// memtable filters and every SST filter, so under `levels` sharing the
    /// key is hashed at most once. One lookup in
    /// [`Options::lookup_breakdown_every`] is timed phase by phase.
    pub(super) fn get_in(
        &self,
        view: &View,
        key: &[u8],
        seq: SeqNo,
        ctx: ReadCtx,
    ) -> Result<Option<Vec<u8>>> {
        let start = Counters::sample_lookup(self.opts.lookup_breakdown_every).then(clock::ticks);
        let mut probe = KeyProbe::new(key, self.opts.filter.sharing);
        if start.is_some() {
            probe.enable_timing();
        }
        let r = match self.lookup(view, &mut probe, seq, ctx) {
            Ok(Lookup::Merge) => self.merge_in(view, &mut probe, seq, ctx).map(Lookup::Value),
            r => r,
        };
        self.counters
            .finish_lookup(&probe.tally, probe.digests_computed);
        if let (Some(t0), Some(phases)) = (start, probe.phase_ticks()) {
            self.counters
                .breakdown
                .record(clock::ticks().wrapping_sub(t0), phases);
        }
        match r? {
            Lookup::Value(v) => self.unstamp(&view.opts, v), // TTL: stamp, expiry (db/ttl.rs)
            _ => Ok(None),
        }
    }

    /// The value of `probe.key()` as of `seq` when its newest visible entry
    /// is a merge operand: the key's entries are gathered newest first (the
    /// memtables, then each run's candidate file past its filter, with the
    /// lookup's one digest) down to a value, a deletion (a range tombstone
    /// included) or the last entry, and combined by
    /// [`Options::merge_operator`]. Keys without operands never come here.
    fn merge_in(
        &self,
        view: &View,
        probe: &mut KeyProbe<'_>,
        seq: SeqNo,
        ctx: ReadCtx,
    ) -> Result<Vec<u8>> {
        let user_key = probe.key();
        let mut seek = Vec::with_capacity(user_key.len() + 8);
        key::append_internal_key(&mut seek, user_key, seq, key::KIND_FOR_SEEK);
        let mut ops = crate::merge::Operands::default();
        let mut below = Below::Nothing;
        for m in std::iter::once(&view.mem).chain(view.imm.iter().rev()) {
            let mut it = m.iter();
            it.seek(&seek)?;
            below = operands::gather(&mut it, user_key, m.max_covering(user_key, seq), &mut ops)?;
            if below != Below::Nothing {
                break;
            }
        }
        if below == Below::Nothing {
            below = view
                .version
                .gather_operands(probe, &seek, seq, ctx, &mut ops)?;
        }
        let base = match &below {
            Below::Base(v) => v.as_deref(),
            Below::Nothing => None,
        };
        ops.full_merge(view.opts.merge_operator.as_ref(), probe.key(), base)
    }

    /// The memtables, newest first, then the version.
    pub(super) fn lookup(
        &self,
        view: &View,
        probe: &mut KeyProbe<'_>,
        seq: SeqNo,
        ctx: ReadCtx,
    ) -> Result<Lookup> {
        thread_local! {
            /// The seek key of this thread's lookups, reused (no allocation per lookup).
            static SEEK: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
        }
        let budget = self.tables.filter_budget();
        probe.access_log = budget.sample_lookup();
        let r = SEEK.with(|cell| match cell.try_borrow_mut() {
            Ok(mut seek) => self.lookup_with(view, probe, seq, ctx, &mut seek),
            // A lookup nested in another on this thread (none today): its own buffer.
            Err(_) => self.lookup_with(view, probe, seq, ctx, &mut Vec::new()),
        });
        if let Some(log) = probe.access_log.take() {
            budget.end_lookup(log);
        }
        r
    }

    /// [`DbInner::lookup`] with `buf` as the buffer of the seek key.
    pub(super) fn lookup_with(
        &self,
        view: &View,
        probe: &mut KeyProbe<'_>,
        seq: SeqNo,
        ctx: ReadCtx,
        buf: &mut Vec<u8>,
    ) -> Result<Lookup> {
        let mut seek = key::LazySeek::new(buf, seq);
        if let Some(found) = self.memtables_get(view, probe, &mut seek) {
            return Ok(found);
        }
        view.version.get(probe, &mut seek, ctx)
    }

    /// The newest entry of `probe.key()` visible at `seek.seq()` in the
    /// memtables of `view`, newest first (`None`: they hold none, and no
    /// range tombstone of theirs covers the key; a covering one answers
    /// [`Lookup::Deleted`] unless a newer entry is found). Memory only.
    #[inline(always)]
    pub(super) fn memtables_get(
        &self,
        view: &View,
        probe: &mut KeyProbe<'_>,
        seek: &mut key::LazySeek<'_>,
    ) -> Option<Lookup> {
        let (user_key, seq) = (probe.key(), seek.seq());
        for m in std::iter::once(&view.mem).chain(view.imm.iter().rev()) {
            if m.is_empty() {
                continue;
            }
            // A range tombstone here hides this memtable's older entries and
            // everything in older memtables and files: nothing older is read.
            let covered = m.max_covering(user_key, seq);
            if covered > 0 {
                let found = m.get(user_key, seek.get(user_key), covered);
                bump(&self.counters.memtable_hits, 1);
                return Some(match found {
                    Lookup::Absent => Lookup::Deleted,
                    found => found,
                });
            }
            if m.filter().is_some() {
                probe.tally.memtable_filter_probes += 1;
                let start = probe.phase_start();
                let maybe = m.may_contain(probe);
                probe.phase_end(start, Phase::Filter);
                if !maybe {
                    probe.tally.memtable_filter_negatives += 1;
                    continue;
                }
            }
            match m.get(user_key, seek.get(user_key), 0) {
                Lookup::Absent => {}
                found => {
                    bump(&self.counters.memtable_hits, 1);
                    return Some(found);
                }
            }
        }
        None
    }

    /// An iterator over `view` as of `seq` within `bounds`, reading blocks
    /// under `policy`. Its cursors are made on demand, each over the same
    /// memtables and version (which the iterator keeps alive).
    pub(super) fn iter_in(
        &self,
        view: &Arc<View>,
        seq: SeqNo,
        (lo, hi): Bounds,
        pins: Vec<Pin>,
        policy: ReadCtx,
    ) -> Result<DbIterator> {
        let range_dels = range_dels_of(view, seq)?;
        let opts = view.opts.clone();
        // The factory holds the view itself (one count), not a copy of its
        // members (one count each).
        let view = Arc::clone(view);
        let prefix = opts.prefix_extractor.as_ref().map(|x| PrefixCtx {
            extractor: x.clone(),
            sharing: self.opts.filter.sharing,
            counters: self.counters.clone(),
        });
        let factory: CursorFactory =
            Box::new(move |p| merged_cursor(&view, policy, p.zip(prefix.as_ref())));
        let mut it = DbIterator::new(factory, seq, lo, hi, pins);
        if let Some(x) = &opts.prefix_extractor {
            it.set_prefix_extractor(x.clone(), false);
        }
        it.set_merge_operator(opts.merge_operator.clone());
        if let Some(rd) = range_dels {
            it.set_range_dels(rd);
        }
        if let Some(e) = super::ttl::expiry(&opts) {
            it.set_expiry(e); // TTL (db/ttl.rs)
        }
        Ok(it)
    }
}

impl Db {
    #[cfg(feature = "internals")]
    #[doc(hidden)]
    /// Appends to `out` the filters (with resident units) of the files a
    /// lookup of `key` would probe in the current version if every filter
    /// said "maybe", newest first; the memtables are not looked at. For
    /// reference measurements of a lookup's filter work alone (the
    /// benchmark `filterprobe`): probing them with one
    /// [`KeyProbe`](crate::filter::KeyProbe) is the digest and the filter
    /// probes of a lookup, without its fence searches, view load or counters.
    pub fn candidate_filters(
        &self,
        key: &[u8],
        out: &mut Vec<Arc<crate::filter::resident::ResidentFilter>>,
    ) -> Result<()> {
        let (_, view) = self.inner.view(&self.inner.tree);
        view.version.candidate_filters(key, out)
    }
}

/// The aggregate of the range tombstones `view` holds that a read at `seq`
/// sees (its memtables and the files that have tombstones), or `None` when
/// there is none: iterators over data without range deletes pay nothing.
/// Only the runs that count files with tombstones
/// ([`Files::tombstoned_files`](crate::version::Files::tombstoned_files))
/// are walked.
fn range_dels_of(view: &View, seq: SeqNo) -> Result<Option<Arc<Fragments>>> {
    let mut all = Vec::new();
    for m in std::iter::once(&view.mem).chain(view.imm.iter()) {
        all.extend(m.range_dels());
    }
    let runs = view.version.levels.iter().flatten();
    for run in runs.filter(|r| r.files.tombstoned_files() > 0) {
        for f in run.files.iter().filter(|f| f.range_dels > 0) {
            all.extend_from_slice(f.tables().get(f.number)?.range_dels());
        }
    }
    let frags = Fragments::new(&all, seq);
    Ok((!frags.is_empty()).then(|| Arc::new(frags)))
}

/// What an iterator's cursors need to consult the prefix filters.
struct PrefixCtx {
    /// The extractor, whose name the filters are checked against (filters
    /// built under another answer "maybe").
    extractor: Arc<dyn PrefixExtractor>,
    sharing: crate::filter::HashSharing,
    counters: Arc<Counters>,
}

/// One merged cursor over every memtable and run of `view`, newest first;
/// with a prefix `p`, over those whose prefix filter lets `p` through (and
/// of each run only the files that overlap the keys starting with `p`,
/// which the caller's bounds keep the cursor within). The prefix is hashed
/// once, for every memtable and level: one [`KeyProbe`].
fn merged_cursor(
    view: &View,
    policy: ReadCtx,
    prefix: Option<(&[u8], &PrefixCtx)>,
) -> MergingIterator {
    let Some((p, px)) = prefix else {
        let mut children: Vec<Box<dyn InternalIterator>> = vec![Box::new(view.mem.iter())];
        for m in view.imm.iter().rev() {
            children.push(Box::new(m.iter()));
        }
        for (level, runs) in view.version.levels.iter().enumerate() {
            for run in runs {
                let ctx = ReadCtx { level, ..policy };
                children.push(Box::new(RunIter::new(run.files.clone(), ctx)));
            }
        }
        return MergingIterator::new(children);
    };
    let name = px.extractor.name();
    let mut probe = KeyProbe::new(p, px.sharing);
    let mut skips = 0u64;
    let mut children: Vec<Box<dyn InternalIterator>> = Vec::new();
    for m in std::iter::once(&view.mem).chain(view.imm.iter().rev()) {
        if m.is_empty() {
            continue; // no entry to read (its range tombstones are the iterator's)
        } else if m.may_contain_prefix(name, &mut probe) {
            children.push(Box::new(m.iter()));
        } else {
            skips += 1;
        }
    }
    for (level, runs) in view.version.levels.iter().enumerate() {
        for run in runs {
            let kept: Vec<_> = run
                .files_of_prefix(p)
                .iter()
                .filter(|f| {
                    // A file that does not open is kept: reading it reports the error.
                    let keep = f
                        .tables()
                        .get(f.number)
                        .map_or(true, |t| t.may_contain_prefix(name, &mut probe));
                    skips += u64::from(!keep);
                    keep
                })
                .cloned()
                .collect();
            if !kept.is_empty() {
                let ctx = ReadCtx { level, ..policy };
                children.push(Box::new(RunIter::new(kept, ctx)));
            }
        }
    }
    bump(&px.counters.prefix_seeks, 1);
    bump(
        &px.counters.prefix_seek_digests,
        u64::from(probe.digests_computed),
    );
    bump(&px.counters.prefix_filter_skips, skips);
    MergingIterator::new(children)
}
