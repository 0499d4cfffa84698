//! The files of a sorted run ([`Files`]): a slice of `Arc<FileMeta>` in key
//! order to every reader, held in shared chunks so that a version made by
//! an edit copies only the chunks the edit changes.
//!
//! A compaction deletes and adds a few files in a level of tens of
//! thousands. Copying the level's `Vec<Arc<FileMeta>>` per install took a
//! reference count per file (a cache miss each, in the file's metadata),
//! again when the old version was dropped, and a pass reading every file's
//! number to find the deleted ones: a quarter of the samples of a
//! 35,000-file load. Here a copy takes one count per chunk and copies flat
//! arrays (the slice's pointers and the files' numbers); an edit rebuilds
//! only the chunks it touches, and finds the files it deletes in the flat
//! numbers.
//!
//! Layout: `chunks` own the files (`Arc<[Arc<FileMeta>]>`, never mutated,
//! shared between versions); `slots[i]` is a bitwise copy of the `Arc` of
//! position `i` in its chunk, not counted (`ManuallyDrop`), so that the run
//! reads as one contiguous `&[Arc<FileMeta>]` (the lookup path indexes it
//! as it indexed a `Vec`).

use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::sync::Arc;

use super::FileMeta;

/// Most files in one chunk: an edit copies the chunks it touches (this many
/// references each), and a copy of the run one reference per chunk.
const CHUNK: usize = 128;

/// The files of a run, in key order (see the module doc).
#[derive(Default)]
pub struct Files {
    /// The files, in order: chunks of at most [`CHUNK`] files, each at
    /// least `CHUNK / 2` unless the run has fewer files.
    chunks: Vec<Arc<[Arc<FileMeta>]>>,
    /// `ends[k]` = files in chunks `0..=k`.
    ends: Vec<usize>,
    /// Per position, an uncounted copy of the file's `Arc` in its chunk.
    ///
    /// Invariant: every slot is a bitwise copy of an `Arc` stored in one of
    /// `chunks`, in order, so it points to a live `FileMeta` as long as this
    /// value holds that chunk; slots are never dropped as `Arc`s nor cloned
    /// as `Arc`s (`ManuallyDrop`, and the `Clone` below copies their bits).
    slots: Vec<ManuallyDrop<Arc<FileMeta>>>,
    /// Per position, the file's number.
    numbers: Vec<u64>,
    /// Per chunk, how many of its files hold range tombstones, counted when
    /// the chunk is made (chunks never change afterwards).
    tombstoned: Vec<usize>,
    /// The sum of `tombstoned`, summed again at every change of the chunks:
    /// readers skip the files' tombstones when it is 0.
    tombstoned_files: usize,
}

/// An uncounted copy of `f`, for `slots`.
///
/// # Safety
/// The copy must only live in the `slots` of a [`Files`] that holds the
/// chunk `f` is stored in (see the invariant on `slots`).
unsafe fn uncounted(f: &Arc<FileMeta>) -> ManuallyDrop<Arc<FileMeta>> {
    // SAFETY: a bitwise copy of an `Arc` is a valid `Arc` to the same value
    // while the original lives (the caller's contract); `ManuallyDrop`
    // keeps it from ever decrementing the count it did not increment.
    ManuallyDrop::new(unsafe { std::ptr::read(f) })
}

impl Files {
    /// The files of `files` (sorted by key, disjoint ranges).
    pub fn from_vec(files: Vec<Arc<FileMeta>>) -> Files {
        let mut f = Files::default();
        f.replace(0, 0, files);
        f
    }

    /// How many of the files hold range tombstones (`FileMeta::range_dels`
    /// above 0): exact for any sequence of edits, since each chunk's count is
    /// taken from its files when it is made.
    #[inline]
    pub fn tombstoned_files(&self) -> usize {
        self.tombstoned_files
    }

    /// The files as a slice.
    #[inline]
    pub fn as_slice(&self) -> &[Arc<FileMeta>] {
        let slots: &[ManuallyDrop<Arc<FileMeta>>] = &self.slots;
        // SAFETY: `ManuallyDrop<T>` is `repr(transparent)` over `T`, so the
        // slices have one layout; every slot is a valid `Arc` while `self`
        // is borrowed (the invariant on `slots`), and a shared slice lets
        // no caller drop or move one out (a caller's `clone` counts).
        unsafe { &*(slots as *const [ManuallyDrop<Arc<FileMeta>>] as *const [Arc<FileMeta>]) }
    }

    /// Per position, whether the file stays when the files numbered in
    /// `sorted` leave (`None` if none of them is here): a pass over the
    /// flat numbers, reading no file's metadata.
    pub(super) fn kept(&self, sorted: &[u64]) -> Option<Vec<bool>> {
        let keep: Vec<bool> = self
            .numbers
            .iter()
            .map(|n| sorted.binary_search(n).is_err())
            .collect();
        keep.contains(&false).then_some(keep)
    }

    /// Removes the files `keep` (from [`kept`](Self::kept)) marks false,
    /// calling `gone` on each; rebuilds only the chunks that lost files.
    pub(super) fn remove(&mut self, keep: &[bool], mut gone: impl FnMut(&Arc<FileMeta>)) {
        assert_eq!(keep.len(), self.len(), "one mark per file");
        // Maximal spans of chunks that lost files, rebuilt last to first so
        // that a rebuild (which may merge with the chunk after it, or before
        // it when it is the last) leaves the spans before it in place.
        let touched: Vec<bool> = (0..self.chunks.len())
            .map(|c| keep[self.start(c)..self.ends[c]].contains(&false))
            .collect();
        let mut k = self.chunks.len();
        while k > 0 {
            if !touched[k - 1] {
                k -= 1;
                continue;
            }
            let b = k;
            while k > 0 && touched[k - 1] {
                k -= 1;
            }
            let (start, end) = (self.start(k), self.ends[b - 1]);
            let mut kept = Vec::with_capacity(end - start);
            let files = self.chunks[k..b].iter().flat_map(|c| c.iter());
            for (f, &stays) in files.zip(&keep[start..end]) {
                if stays {
                    kept.push(f.clone());
                } else {
                    gone(f);
                }
            }
            self.replace(k, b, kept);
        }
    }

    /// Inserts `items`, each `(at, file)` with `at` a position before any of
    /// them goes in (nondecreasing; files of one position go in the order
    /// given): one rebuild of each chunk they land in, and one splice of
    /// the flat arrays per such chunk, not per file (a compaction adds its
    /// outputs side by side, into one or two chunks of the run).
    pub(super) fn insert_sorted(&mut self, mut items: Vec<(usize, Arc<FileMeta>)>) {
        let len = self.len();
        assert!(
            items.windows(2).all(|w| w[0].0 <= w[1].0) && items.last().is_none_or(|i| i.0 <= len),
            "insert positions must be sorted and at most {len}"
        );
        if self.chunks.is_empty() {
            if !items.is_empty() {
                self.replace(0, 0, items.into_iter().map(|(_, f)| f).collect());
            }
            return;
        }
        // Last chunk first: a rebuild moves only the positions after it.
        while let Some(&(at, _)) = items.last() {
            // The chunk holding position `at` (the one before, at a boundary).
            let k = self.ends.partition_point(|&e| e < at);
            let start = self.start(k);
            let from = if k == 0 {
                0
            } else {
                items.partition_point(|i| i.0 <= start)
            };
            let group = items.split_off(from);
            let mut old = self.chunks[k].iter().cloned();
            let mut files = Vec::with_capacity(self.chunks[k].len() + group.len());
            let mut pos = start;
            for (at, f) in group {
                files.extend(old.by_ref().take(at - pos));
                pos = at;
                files.push(f);
            }
            files.extend(old);
            self.replace(k, k + 1, files);
        }
    }

    /// First position of chunk `k`.
    fn start(&self, k: usize) -> usize {
        if k == 0 {
            0
        } else {
            self.ends[k - 1]
        }
    }

    /// Replaces chunks `a..b` by chunks of `files` (the files those chunks
    /// held, changed), first taking in a neighbour if `files` is under half
    /// a chunk, so that every chunk but a lone one keeps at least half.
    fn replace(&mut self, mut a: usize, mut b: usize, mut files: Vec<Arc<FileMeta>>) {
        if files.len() < CHUNK / 2 {
            if b < self.chunks.len() {
                files.extend(self.chunks[b].iter().cloned());
                b += 1;
            } else if a > 0 {
                a -= 1;
                let mut before = self.chunks[a].to_vec();
                before.append(&mut files);
                files = before;
            }
        }
        let (start, end) = (self.start(a), self.start(b));
        #[cfg(test)]
        {
            COPIED.with(|c| c.set(c.get() + files.len() as u64));
            SHIFTED.with(|c| c.set(c.get() + (self.slots.len() - end) as u64));
        }
        let pieces = files.len().div_ceil(CHUNK);
        let len = files.len();
        let mut rest = files.into_iter();
        let chunks: Vec<Arc<[Arc<FileMeta>]>> = (0..pieces)
            .map(|p| {
                let size = len * (p + 1) / pieces - len * p / pieces;
                rest.by_ref().take(size).collect()
            })
            .collect();
        // SAFETY: each copy is of an `Arc` in one of `chunks`, which go into
        // `self.chunks` below (moving an `Arc` of a chunk keeps its
        // elements where they are).
        let slots = chunks
            .iter()
            .flat_map(|c| c.iter().map(|f| unsafe { uncounted(f) }));
        self.slots.splice(start..end, slots);
        let numbers = chunks.iter().flat_map(|c| c.iter().map(|f| f.number));
        self.numbers.splice(start..end, numbers);
        let tombstoned = chunks.iter().map(|c| tombstoned_in(c));
        self.tombstoned.splice(a..b, tombstoned);
        self.tombstoned_files = self.tombstoned.iter().sum();
        // The old chunks drop here, after no slot refers to them.
        self.chunks.splice(a..b, chunks);
        self.ends.truncate(a);
        let mut total = self.start(a);
        for c in &self.chunks[a..] {
            total += c.len();
            self.ends.push(total);
        }
        #[cfg(debug_assertions)]
        self.check(a..a + pieces);
    }

    /// Checks the invariants: the bounds of every chunk, and the slots and
    /// numbers of the chunks `changed` (debug builds, after each change;
    /// the tests check all of them, in release builds too).
    #[cfg(any(test, debug_assertions))]
    fn check(&self, changed: std::ops::Range<usize>) {
        let mut end = 0;
        for (k, c) in self.chunks.iter().enumerate() {
            assert!(c.len() <= CHUNK && !c.is_empty(), "chunk {k}: {}", c.len());
            assert!(c.len() >= CHUNK / 2 || self.chunks.len() == 1);
            if changed.contains(&k) {
                for (i, f) in (end..).zip(c.iter()) {
                    assert!(Arc::ptr_eq(&self.slots[i], f), "slot {i}");
                    assert_eq!(self.numbers[i], f.number);
                }
                assert_eq!(self.tombstoned[k], tombstoned_in(c), "chunk {k}");
            }
            end += c.len();
            assert_eq!(self.ends[k], end);
        }
        assert_eq!(self.slots.len(), end);
        assert_eq!(self.numbers.len(), end);
        assert_eq!(self.tombstoned.len(), self.chunks.len());
        assert_eq!(self.tombstoned_files, self.tombstoned.iter().sum::<usize>());
    }
}

/// Files of `chunk` that hold range tombstones.
fn tombstoned_in(chunk: &[Arc<FileMeta>]) -> usize {
    chunk.iter().filter(|f| f.range_dels > 0).count()
}

impl Clone for Files {
    /// One reference per chunk and a copy of the flat arrays.
    fn clone(&self) -> Files {
        let chunks = self.chunks.clone();
        // SAFETY: copies of `Arc`s held by `chunks`, which the clone holds
        // (the same chunks, so the same `Arc`s).
        let slots = self.slots.iter().map(|s| unsafe { uncounted(s) }).collect();
        Files {
            chunks,
            ends: self.ends.clone(),
            slots,
            numbers: self.numbers.clone(),
            tombstoned: self.tombstoned.clone(),
            tombstoned_files: self.tombstoned_files,
        }
    }
}

impl Deref for Files {
    type Target = [Arc<FileMeta>];
    #[inline]
    fn deref(&self) -> &[Arc<FileMeta>] {
        self.as_slice()
    }
}

impl<'a> IntoIterator for &'a Files {
    type Item = &'a Arc<FileMeta>;
    type IntoIter = std::slice::Iter<'a, Arc<FileMeta>>;
    fn into_iter(self) -> Self::IntoIter {
        self.as_slice().iter()
    }
}

impl From<Vec<Arc<FileMeta>>> for Files {
    fn from(files: Vec<Arc<FileMeta>>) -> Files {
        Files::from_vec(files)
    }
}

#[cfg(test)]
thread_local! {
    /// Files this thread copied into new chunks (a reference count each).
    static COPIED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// Positions of the flat arrays this thread moved to make room or close
    /// a gap (the files after each changed span, per change).
    static SHIFTED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Files this thread copied into new chunks so far.
#[cfg(test)]
pub(super) fn copied() -> u64 {
    COPIED.with(std::cell::Cell::get)
}

/// Flat-array positions this thread moved so far.
#[cfg(test)]
pub(super) fn shifted() -> u64 {
    SHIFTED.with(std::cell::Cell::get)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::TableCache;
    use crate::io::StdFs;
    use crate::key;
    use crate::options::Options;
    use crate::stats::Counters;

    fn metas(numbers: impl Iterator<Item = u64>) -> Vec<Arc<FileMeta>> {
        let opts = Options::default();
        let tables = Arc::new(TableCache::new(
            Arc::new(StdFs),
            std::env::temp_dir(),
            &opts,
            None,
            Arc::new(Counters::new(opts.max_levels)),
        ));
        numbers
            .map(|n| {
                let k = key::internal_key(format!("k{n:08}").as_bytes(), 1, key::Kind::Put);
                FileMeta::for_test(n, k.clone(), k, tables.clone())
            })
            .collect()
    }

    fn numbers(f: &Files) -> Vec<u64> {
        f.iter().map(|f| f.number).collect()
    }

    /// Random inserts and removals against a `Vec`, with a clone kept
    /// before each change: the clone never sees the change, every file is
    /// dropped exactly once in the end (counts back to one), and every
    /// chunk stays within its bounds (`check`).
    #[test]
    fn files_follow_a_vec_through_inserts_and_removals() {
        let pool = metas(0..2_000);
        let mut model: Vec<u64> = Vec::new();
        let mut files = Files::default();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let mut kept = Vec::new();
        for step in 0..3_000 {
            if step % 50 == 0 {
                kept.push((files.clone(), model.clone()));
            }
            if next() % 3 != 0 || model.len() < 10 {
                // A batch of new files, as a compaction adds them.
                let mut batch: Vec<u64> = (0..1 + next() % 30)
                    .map(|_| next() % 2_000)
                    .filter(|n| !model.contains(n))
                    .collect();
                batch.sort_unstable();
                batch.dedup();
                let items = batch
                    .iter()
                    .map(|&n| (model.partition_point(|&m| m < n), pool[n as usize].clone()))
                    .collect();
                files.insert_sorted(items);
                model.extend(batch);
                model.sort_unstable();
            } else {
                let mut gone: Vec<u64> = (0..1 + next() % 40)
                    .map(|_| model[(next() % model.len() as u64) as usize])
                    .collect();
                gone.sort_unstable();
                gone.dedup();
                let mut seen = Vec::new();
                let keep = files.kept(&gone).unwrap();
                files.remove(&keep, |f| seen.push(f.number));
                assert_eq!(keep.iter().filter(|k| !**k).count(), gone.len());
                seen.sort_unstable();
                assert_eq!(seen, gone);
                model.retain(|m| gone.binary_search(m).is_err());
            }
            assert_eq!(numbers(&files), model);
            files.check(0..files.chunks.len());
        }
        assert!(files.kept(&[5_000]).is_none());
        for (f, m) in &kept {
            assert_eq!(&numbers(f), m);
        }
        drop(kept);
        drop(files);
        assert!(pool.iter().all(|f| Arc::strong_count(f) == 1));
    }

    /// An edit of a few files copies a few chunks, whatever the run's size,
    /// and moves the flat arrays after it once per change, not per file.
    #[test]
    fn an_edit_copies_the_chunks_it_touches() {
        let mut files = Files::from_vec(metas((0..50_000).map(|n| 2 * n)));
        let before = files.clone();
        let (start, moves) = (copied(), shifted());
        // A compaction: ten neighbours out, ten new files in their place.
        let gone: Vec<u64> = (0..10).map(|n| 2 * (20_000 + n)).collect();
        let keep = files.kept(&gone).unwrap();
        files.remove(&keep, |_| ());
        let added = metas((0..10).map(|n| 2 * (20_000 + n) + 1));
        files.insert_sorted(added.into_iter().map(|f| (20_000, f)).collect());
        let work = copied() - start;
        assert!(work <= 3 * CHUNK as u64, "copied {work} files");
        // The files after the edit move once for the removal and once for
        // the ten inserts together, not once per inserted file.
        let moved = shifted() - moves;
        assert!(moved <= 2 * 30_000, "moved {moved} positions");
        assert_eq!(files.len(), 50_000);
        assert_eq!(before.len(), 50_000);
        assert_eq!(before[20_000].number, 40_000);
        assert_eq!(files[20_000].number, 40_001);
        assert!(Arc::ptr_eq(&files[0], &before[0]));
    }
}
