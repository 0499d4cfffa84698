//! Planning files before their filters are read: the shape a file's filter
//! is planned with ([`Provisional`]: the configured options', or those of a
//! filter read), the batch planning of a version's files, the release of a
//! file found to have no filter, and a file's move to another level or run.

use std::collections::btree_map::Entry;

use super::{FileShape, FilterBudget, State, Tracked};
use crate::filter::elastic::FileDesc;
use crate::filter::family::{self, Family};
use crate::filter::partitioned::PARTITION_BYTES_RANGE;
use crate::filter::{Filter, FilterBuilder, FilterIndex, FilterOptions};

impl FilterBudget {
    /// Plans every file whose filter was not read yet again, in one batch,
    /// with the shape of `unread_shape`, keeping their counts; files the
    /// allocator knows that `st.files` does not are forgotten.
    pub(super) fn replan_unread(&self, st: &mut State) {
        let mut shapes = Provisional::new(&st.unread_shape);
        let unread: Vec<FileShape> = st
            .files
            .values()
            .filter(|t| t.filter.is_none())
            .map(|t| t.shape)
            .collect();
        let mut batch = Vec::with_capacity(unread.len());
        for shape in unread {
            let hotness = st.alloc.hotness(shape.number).unwrap_or(0.0);
            st.alloc.remove_file(shape.number);
            batch.push((shapes.desc(shape), hotness));
        }
        st.alloc.add_files(batch);
    }

    /// Learns the files of a version being installed (at open every file of
    /// the tree; after a flush or a compaction its outputs) in one batch and
    /// plans their units once, without reading them: a file is planned with
    /// the shape of the configured filter ([`BudgetConfig::filter`]), and
    /// the units the plan gives it are reserved in the budget, until its
    /// first lookup reads its filter index and [`register`](Self::register)
    /// loads them. Files known already learn their new place (see
    /// [`relocate_locked`](Self::relocate_locked)). Nothing happens without
    /// a budget (a filter is then read whole at its file's first lookup).
    ///
    /// [`BudgetConfig::filter`]: super::BudgetConfig::filter
    pub fn add_files(&self, shapes: &[FileShape]) {
        if !self.limited() || shapes.is_empty() {
            return;
        }
        let mut st = self.state.lock();
        self.drain_forgotten(&mut st);
        let mut planned = Provisional::new(&st.unread_shape);
        let mut batch = Vec::with_capacity(shapes.len());
        let hotness = |st: &mut State, number| {
            // (no hash of the number when nothing waits: every file at open)
            if st.pending.is_empty() {
                0.0
            } else {
                st.pending.remove(&number).unwrap_or(0.0)
            }
        };
        if st.files.is_empty() && distinct(shapes) {
            // A whole tree (the open): its files go into the map in one build.
            let mut tracked = Vec::with_capacity(shapes.len());
            for &shape in shapes {
                let filter = None;
                tracked.push((shape.number, Tracked { filter, shape }));
                let h = hotness(&mut st, shape.number);
                batch.push((planned.desc(shape), h));
            }
            st.files = tracked.into_iter().collect();
        } else {
            for &shape in shapes {
                match st.files.entry(shape.number) {
                    Entry::Occupied(_) => {
                        self.relocate_locked(&mut st, shape);
                        continue;
                    }
                    Entry::Vacant(v) => {
                        v.insert(Tracked {
                            filter: None,
                            shape,
                        });
                    }
                }
                let h = hotness(&mut st, shape.number);
                batch.push((planned.desc(shape), h));
            }
        }
        st.alloc.add_files(batch);
        self.apply(&mut st);
    }

    /// Whether no file's filter shape is known yet: the next
    /// [`add_files`](Self::add_files) would plan with the configured
    /// options' shape, which a tree written with other options does not
    /// have (then read one file's filter index first and
    /// [`learn_shape`](Self::learn_shape)).
    pub fn needs_shape(&self) -> bool {
        self.limited() && !self.state.lock().shape_learnt
    }

    /// Plans the files whose filter was not read yet with the shape of
    /// `index` (a filter of the tree, read before its files are planned).
    pub fn learn_shape(&self, index: &FilterIndex) {
        let f = index.empty();
        let mut st = self.state.lock();
        // The configured options, when they build filters of this layout
        // and units, give the files' exact unit size; options derived from
        // one filter (its bits per key, rounded up to whole words) are a
        // little off for files of other sizes.
        let o = &self.config.filter;
        let same_layout = [Family::Bloom, Family::Ribbon]
            .iter()
            .any(|fam| fam.layout_like(o.layout) == f.layout());
        if !(o.bits_per_key > 0.0 && same_layout && o.budget_units() == f.units()) {
            st.unread_shape = shape_options(f);
        }
        st.shape_learnt = true;
    }

    /// A file whose filter was planned in [`add_files`](Self::add_files)
    /// turned out to have none: its reservation is released.
    pub fn forget_unfiltered(&self, number: u64) {
        if !self.limited() {
            return;
        }
        let mut st = self.state.lock();
        if st.files.get(&number).is_some_and(|t| t.filter.is_none()) {
            st.files.remove(&number);
            st.alloc.remove_file(number);
            self.apply(&mut st);
        }
    }

    /// Records that the file of `shape` now sits at its level and run (a
    /// file moved down by a compaction keeps its units and hotness).
    fn relocate_locked(&self, st: &mut State, shape: FileShape) {
        let Some(t) = st.files.get_mut(&shape.number) else {
            return;
        };
        if t.shape == shape {
            return;
        }
        t.shape = shape;
        let (desc, resident) = match (&t.filter, t.live()) {
            (_, Some(rf)) => (describe(shape, rf.index()), Some(rf.resident())),
            (None, None) => (Provisional::new(&st.unread_shape).desc(shape), None),
            (Some(_), None) => return, // leaving
        };
        let hotness = st.alloc.hotness(shape.number).unwrap_or(0.0);
        st.alloc.remove_file(shape.number);
        st.alloc.add_file(desc, hotness);
        if let Some(units) = resident {
            st.alloc.applied(shape.number, units);
        }
    }
}

/// Whether no two of `shapes` are of one file.
fn distinct(shapes: &[FileShape]) -> bool {
    let mut numbers: Vec<u64> = shapes.iter().map(|s| s.number).collect();
    numbers.sort_unstable();
    numbers.windows(2).all(|w| w[0] < w[1])
}

/// The allocator's view of files whose filter index was not read: the shape
/// of the filter the options build for a file's entries at its level (see
/// [`FilterOptions::for_level`]).
struct Provisional {
    opts: FilterOptions,
    /// The builder of each family's options, made when first needed.
    builders: [Option<FilterBuilder>; 2],
    filters: bool,
    /// The last description made: files of one size share their shape (a
    /// bulk-loaded or compacted level is mostly files of one size).
    last: Option<FileDesc>,
}

impl Provisional {
    fn new(opts: &FilterOptions) -> Self {
        Provisional {
            opts: opts.clone(),
            builders: [None, None],
            filters: opts.bits_per_key > 0.0,
            last: None,
        }
    }

    fn desc(&mut self, shape: FileShape) -> FileDesc {
        let placed = |d: &FileDesc| FileDesc {
            id: shape.number,
            level: shape.level,
            run: shape.run,
            ..d.clone()
        };
        let opts = self.opts.for_level(shape.level);
        let fam = Family::of(opts.layout);
        if let Some(d) = self
            .last
            .as_ref()
            .filter(|d| d.entries == shape.entries && d.family == fam)
        {
            return placed(d);
        }
        let at = usize::from(fam.is_ribbon());
        let f = self.builders[at]
            .get_or_insert_with(|| FilterBuilder::new(&opts))
            .shape_for(shape.entries);
        let mut fpr = family::rates(&f);
        if !self.filters {
            fpr.truncate(1);
        }
        let d = FileDesc {
            id: shape.number,
            level: shape.level,
            run: shape.run,
            entries: shape.entries,
            unit_bytes: f.unit_memory_bytes() as u64,
            fpr: fpr.into(),
            family: fam,
        };
        self.last = Some(d.clone());
        d
    }
}

/// Options that build filters of `f`'s shape (layout, units, probes, bits
/// per key) for other key counts.
pub(super) fn shape_options(f: &Filter) -> FilterOptions {
    FilterOptions {
        bits_per_key: f.bits_per_key(),
        layout: f.layout(),
        units: f.units(),
        num_probes: Some(f.probes_per_unit()),
        // A partitioned filter's shares are not units of its layout.
        partition_bytes: f.partition_index().map(|p| {
            (p.total_bytes() / p.parts().len().max(1) as u64)
                .clamp(*PARTITION_BYTES_RANGE.start(), *PARTITION_BYTES_RANGE.end())
        }),
        ..FilterOptions::default()
    }
}

/// The allocator's view of a file.
pub(super) fn describe(shape: FileShape, index: &FilterIndex) -> FileDesc {
    FileDesc {
        id: shape.number,
        level: shape.level,
        run: shape.run,
        entries: shape.entries,
        unit_bytes: index.unit_bytes(),
        fpr: family::rates(index.empty()).into(),
        family: Family::of(index.empty().layout()),
    }
}
