//! [`FileMeta`]: the metadata of one SST, shared by every version that holds
//! the file, which deletes the file when the last of them drops it.

use std::sync::atomic::{AtomicBool, Ordering as AtOrd};
use std::sync::{Arc, OnceLock};

use crate::cache::TableCache;
use crate::error::Result;
use crate::filter::budget::FileShape;
use crate::filter::digest::Phase;
use crate::filter::resident::ResidentFilter;
use crate::filter::KeyProbe;
use crate::key;
use crate::sst::reader::TableReader;

use super::NewFile;

/// Metadata of one SST. When the last reference to an obsolete file's metadata
/// is dropped, the file itself is deleted.
///
/// Layout: `repr(C)`, cache-line aligned, with what every lookup of the file
/// reads first (`range_dels`, `filter`, `number`, `tables`) in its first
/// cache line, which [`Version::get`](super::Version::get) prefetches.
#[repr(C, align(64))]
pub struct FileMeta {
    /// Range tombstones in the file (0 for most files: reads then never
    /// look at the table's tombstones).
    pub range_dels: u64,
    /// The file's resident filter (or its absence), registered with the
    /// filter budget when a version holding the file is installed (or at
    /// the first lookup, if that failed): lookups probe it before touching
    /// the table cache. Its units come and go as the budget decides.
    pub(super) filter: OnceLock<Option<Arc<ResidentFilter>>>,
    /// File number (`NNNNNN.sst`).
    pub number: u64,
    /// The table cache the file is read through.
    pub(super) tables: Arc<TableCache>,
    /// Size in bytes.
    pub size: u64,
    /// Entries in the file.
    pub entries: u64,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
    /// When the file was written (seconds since the epoch) for periodic
    /// compaction; a file recorded without one counts as written when the
    /// database was opened (0 only while periodic compaction is off).
    pub creation_time: u64,
    /// Set when an edit deletes the file: the last drop removes it.
    pub(super) obsolete: AtomicBool,
}

impl FileMeta {
    /// Metadata of table `number` of `tables` spanning `smallest..=largest`
    /// (unit tests of the readers above tables).
    #[cfg(test)]
    pub(crate) fn for_test(
        number: u64,
        smallest: Vec<u8>,
        largest: Vec<u8>,
        tables: Arc<TableCache>,
    ) -> Arc<FileMeta> {
        Arc::new(FileMeta {
            number,
            size: 0,
            entries: 0,
            smallest,
            largest,
            range_dels: 0,
            creation_time: 0,
            obsolete: AtomicBool::new(false),
            tables,
            filter: OnceLock::new(),
        })
    }

    /// This file, as an edit adds it at `level` in run `run`.
    pub fn placed_at(&self, level: usize, run: u64) -> NewFile {
        NewFile {
            level,
            run,
            number: self.number,
            size: self.size,
            entries: self.entries,
            smallest: self.smallest.clone(),
            largest: self.largest.clone(),
            range_dels: self.range_dels,
            creation_time: self.creation_time,
        }
    }

    /// Smallest user key.
    pub fn smallest_user(&self) -> &[u8] {
        key::user_key(&self.smallest)
    }
    /// Largest user key.
    pub fn largest_user(&self) -> &[u8] {
        key::user_key(&self.largest)
    }
    /// Whether the file's user-key range meets `[lo, hi]` (None = unbounded).
    pub fn overlaps(&self, lo: Option<&[u8]>, hi: Option<&[u8]>) -> bool {
        lo.is_none_or(|l| self.largest_user() >= l) && hi.is_none_or(|h| self.smallest_user() <= h)
    }
    /// The open table, from the table cache (index time, for sampled lookups).
    pub(super) fn table(&self, probe: &mut KeyProbe<'_>) -> Result<Arc<TableReader>> {
        let start = probe.phase_start();
        let t = self.tables.get(self.number);
        probe.phase_end(start, Phase::Index);
        t
    }

    /// The table cache the file is read through.
    pub fn tables(&self) -> &Arc<TableCache> {
        &self.tables
    }

    /// The file's place in the tree, for the filter budget.
    pub(super) fn shape(&self, level: usize, run: u64) -> FileShape {
        FileShape {
            number: self.number,
            level,
            run,
            entries: self.entries,
        }
    }

    /// The file's resident filter (`None`: it has none), registering it with
    /// the filter budget on first use (opening the table).
    pub fn resident_filter(
        &self,
        level: usize,
        run: u64,
        probe: &mut KeyProbe<'_>,
    ) -> Result<Option<&Arc<ResidentFilter>>> {
        if let Some(f) = self.filter.get() {
            return Ok(f.as_ref());
        }
        let table = self.table(probe)?;
        let budget = self.tables.filter_budget();
        let rf = match table.filter_index() {
            Some(index) => Some(budget.register(self.shape(level, run), index)?),
            None => {
                budget.forget_unfiltered(self.number);
                None
            }
        };
        let _ = self.filter.set(rf);
        Ok(self.filter.get().and_then(Option::as_ref))
    }

    /// Whether the file's filter (or its absence) is known: read at the
    /// file's first lookup.
    pub fn filter_read(&self) -> bool {
        self.filter.get().is_some()
    }

    /// Units resident, units in all and resident bytes of the file's filter
    /// (`None` until it is registered, or when the file has no filter).
    pub fn filter_residency(&self) -> Option<(u32, u32, u64)> {
        let rf = self.filter.get()?.as_ref()?;
        Some((rf.resident(), rf.index().units(), rf.resident_bytes()))
    }
}

impl Drop for FileMeta {
    fn drop(&mut self) {
        // Hand the resident filter to the budget, which drops it (freeing
        // its units) when it forgets the file, under its lock.
        match self.filter.take() {
            Some(Some(rf)) => self.tables.filter_budget().retire(rf),
            Some(None) => {}
            // Never read: the budget may hold units reserved for it.
            None => self.tables.filter_budget().forget(self.number),
        }
        if self.obsolete.load(AtOrd::Acquire) {
            self.tables.remove_file(self.number);
        }
    }
}
