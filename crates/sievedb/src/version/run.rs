//! Sorted runs: a run of a level ([`Run`]: files with disjoint key ranges,
//! sorted by key, and their fence pointers), and a cursor over a sorted run
//! ([`RunIter`]): the concatenation of files with disjoint ranges.

use std::sync::Arc;

use crate::error::Result;
use crate::fence::Fences;
use crate::iter::InternalIterator;
use crate::key;
use crate::sst::reader::{ReadCtx, TableIter};

use super::{FileMeta, Files};

/// A sorted run: files with disjoint key ranges, sorted by key.
///
/// A [`Version`](super::Version) holds its runs behind `Arc`s: a new version
/// shares every run its edit leaves alone with the version before it, and
/// copies only the runs the edit changes (`Arc::make_mut`), whose files
/// ([`Files`]) share in turn every chunk the edit leaves alone.
#[derive(Clone)]
pub struct Run {
    /// Run id: larger is newer within a level.
    pub id: u64,
    /// The files, sorted by smallest key (a slice to readers).
    pub files: Files,
    /// Fence pointers over `files`: built for every run at recovery, then
    /// kept in step with the files by each applied edit (`apply` removes
    /// and inserts fences in place, and rebuilds a run only when it is new
    /// or a key leaves its fence prefix). A run whose fences were never
    /// built (their length differs) is searched by its keys directly.
    pub(super) fences: Fences,
    /// Total bytes of `files`, kept in step by every change to them (the
    /// compaction picker reads every level's bytes before each compaction).
    pub(super) bytes: u64,
}

impl Run {
    /// An empty run.
    pub fn new(id: u64) -> Self {
        Run {
            id,
            files: Files::default(),
            fences: Fences::default(),
            bytes: 0,
        }
    }

    /// A run of `files` (sorted by key, disjoint), its fences built.
    pub(crate) fn from_files(id: u64, files: Vec<Arc<FileMeta>>) -> Self {
        let mut run = Run {
            id,
            files: Files::from_vec(files),
            fences: Fences::default(),
            bytes: 0,
        };
        run.refresh();
        run
    }

    /// Rebuilds the fences and the byte total from the files.
    pub(super) fn refresh(&mut self) {
        self.fences = Fences::new(
            self.files
                .iter()
                .map(|f| (f.smallest_user(), f.largest_user())),
        );
        self.bytes = self.files.iter().map(|f| f.size).sum();
    }

    /// The file that may hold `user_key` (binary search on largest keys).
    ///
    /// A file whose largest key is a range tombstone's end sentinel (see
    /// [`crate::range_del::RangeTombstone::largest_key`]) holds nothing of
    /// that user key, and the next file may start at it: such a file is
    /// passed over for its largest user key.
    #[inline]
    pub fn file_for(&self, user_key: &[u8]) -> Option<&Arc<FileMeta>> {
        // One slice for the whole search: the closures then index it
        // directly instead of going through `Files` per comparison.
        let files = self.files.as_slice();
        let i = if self.fences.len() == files.len() {
            self.fences.find(
                user_key,
                |i| files[i].smallest_user(),
                |i| files[i].largest_user(),
            )?
        } else {
            let i = files.partition_point(|f| f.largest_user() < user_key);
            files.get(i).filter(|f| f.smallest_user() <= user_key)?;
            i
        };
        let f = &files[i];
        if f.range_dels > 0
            && crate::range_del::is_end_sentinel(&f.largest)
            && f.largest_user() == user_key
        {
            return files.get(i + 1).filter(|g| g.smallest_user() <= user_key);
        }
        Some(f)
    }

    /// The files that may hold a key starting with `prefix`: from the first
    /// whose largest user key is `>= prefix` (found on the fences when they
    /// are built) through the last whose smallest user key is below the
    /// keys after the prefix. Walks the files after the first, so it costs
    /// what reading them would.
    #[inline]
    pub fn files_of_prefix(&self, prefix: &[u8]) -> &[Arc<FileMeta>] {
        let files = self.files.as_slice();
        let lo = if self.fences.len() == files.len() {
            self.fences
                .first_ending_at_or_after(prefix, |i| files[i].largest_user())
        } else {
            files.partition_point(|f| f.largest_user() < prefix)
        };
        let rest = &files[lo..];
        // A key is below every key after the keys starting with `prefix`
        // exactly when its first `prefix.len()` bytes are `<= prefix`.
        let n = rest
            .iter()
            .take_while(|f| {
                let s = f.smallest_user();
                s[..s.len().min(prefix.len())] <= *prefix
            })
            .count();
        &rest[..n]
    }

    /// Total bytes of the run's files.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }
}

/// Iterates over `files` (sorted, disjoint) opening one table at a time.
pub struct RunIter {
    files: Files,
    index: usize,
    current: Option<TableIter>,
    ctx: ReadCtx,
}

impl RunIter {
    /// A cursor over `files` (a run's [`Files`], shared, or a `Vec`).
    pub fn new(files: impl Into<Files>, ctx: ReadCtx) -> Self {
        RunIter {
            files: files.into(),
            index: 0,
            current: None,
            ctx,
        }
    }

    fn open(&mut self, i: usize) -> Result<()> {
        self.index = i;
        self.current = match self.files.get(i) {
            Some(f) => Some(f.tables().get(f.number)?.iter(self.ctx)),
            None => None,
        };
        Ok(())
    }

    /// Moves to preceding files while the current one is exhausted.
    fn settle_back(&mut self) -> Result<()> {
        while let Some(c) = &self.current {
            if c.valid() {
                return Ok(());
            }
            if self.index == 0 {
                self.current = None;
                return Ok(());
            }
            self.open(self.index - 1)?;
            if let Some(c) = &mut self.current {
                c.seek_to_last()?;
            }
        }
        Ok(())
    }

    /// Moves to following files while the current one is exhausted.
    fn settle(&mut self) -> Result<()> {
        while let Some(c) = &self.current {
            if c.valid() {
                return Ok(());
            }
            self.open(self.index + 1)?;
            if let Some(c) = &mut self.current {
                c.seek_to_first()?;
            }
        }
        Ok(())
    }
}

impl InternalIterator for RunIter {
    fn valid(&self) -> bool {
        self.current.as_ref().is_some_and(|c| c.valid())
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.open(0)?;
        if let Some(c) = &mut self.current {
            c.seek_to_first()?;
        }
        self.settle()
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        let i = self
            .files
            .partition_point(|f| key::compare(&f.largest, target).is_lt());
        self.open(i)?;
        if let Some(c) = &mut self.current {
            c.seek(target)?;
        }
        self.settle()
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.open(self.files.len().saturating_sub(1))?;
        if let Some(c) = &mut self.current {
            c.seek_to_last()?;
        }
        self.settle_back()
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        // The last file whose smallest key is <= target holds the answer,
        // or it lies in an earlier file (when target precedes its entries).
        let i = self
            .files
            .partition_point(|f| key::compare(&f.smallest, target).is_le());
        let Some(i) = i.checked_sub(1) else {
            self.current = None;
            return Ok(());
        };
        self.open(i)?;
        if let Some(c) = &mut self.current {
            c.seek_for_prev(target)?;
        }
        self.settle_back()
    }
    fn next(&mut self) -> Result<()> {
        if let Some(c) = &mut self.current {
            c.next()?;
        }
        self.settle()
    }
    fn prev(&mut self) -> Result<()> {
        if let Some(c) = &mut self.current {
            c.prev()?;
        }
        self.settle_back()
    }
    #[expect(
        clippy::expect_used,
        reason = "the iterator traits call `key` only while valid, when a file is open"
    )]
    fn key(&self) -> &[u8] {
        self.current.as_ref().expect("valid iterator").key()
    }
    #[expect(
        clippy::expect_used,
        reason = "the iterator traits call `value` only while valid, when a file is open"
    )]
    fn value(&self) -> &[u8] {
        self.current.as_ref().expect("valid iterator").value()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::TableCache;
    use crate::io::{filename, StdFs};
    use crate::iter::testing::{check_bidirectional, random_entries};
    use crate::options::Options;
    use crate::sst::reader::tests::write_table;
    use crate::stats::Counters;

    #[test]
    fn run_iter_in_both_directions_across_files() {
        let dir = tempfile::tempdir().unwrap();
        let opts = Options::default();
        let tables = Arc::new(TableCache::new(
            Arc::new(StdFs),
            dir.path().to_path_buf(),
            &opts,
            None,
            Arc::new(Counters::new(opts.max_levels)),
        ));
        let entries = random_entries(9, 600);
        let mut files = Vec::new();
        // Files of uneven sizes, one of a single entry.
        let cuts = [0, 1, 150, 151, 400, 600];
        for (i, w) in cuts.windows(2).enumerate() {
            let part = &entries[w[0]..w[1]];
            let number = i as u64 + 1;
            write_table(&filename::sst(dir.path(), number), number, part);
            let (first, last) = (part[0].0.clone(), part[part.len() - 1].0.clone());
            files.push(FileMeta::for_test(number, first, last, tables.clone()));
        }
        let mut run = RunIter::new(files, ReadCtx::new(1));
        check_bidirectional(&mut run, &entries, 9);
        let mut empty = RunIter::new(Vec::new(), ReadCtx::new(1));
        check_bidirectional(&mut empty, &[], 1);
    }
}
