//! Registering a batch of files at once: a version being installed (at open
//! every file of the tree, after a flush or a compaction its outputs). Each
//! file is counted as [`Allocator::add_file`] counts it, but the batch is
//! planned once, and a batch into an empty allocator (an open) builds the
//! file map and the multi-queue in bulk, not one B-tree insert per file.

use super::{Allocator, FileDesc, FilterPolicy};

impl Allocator {
    /// Registers a batch of files (a version being installed: at open every
    /// file of the tree) and plans for them once: each is added as
    /// [`add_file`](Self::add_file) adds it, except that skew-at-write
    /// prices the whole batch at once (solving its optimum once if due),
    /// elastic starts the batch from one Monkey plan of the whole
    /// tree with at least one unit per file
    /// ([`monkey_start_plan`](Self::monkey_start_plan)), and uniform and
    /// monkey plan once, when changes are taken; so a batch of `n` files
    /// costs `O(n log n)`, not `O(n²)`. Under elastic the whole-tree plan is
    /// made only for a batch of at least half the files live after it (an
    /// open, a first flush): a compaction's few outputs start file by file
    /// from Monkey's count for their run, `O(runs)` each, instead of a pass
    /// over a tree of tens of thousands of files per compaction.
    pub fn add_files(&mut self, files: Vec<(FileDesc, f64)>) {
        let elastic = self.cfg.policy.is_elastic();
        self.filing_deferred = elastic;
        let ids = self.add_files_unfiled(files);
        self.filing_deferred = false;
        if elastic {
            self.file_in_queues(&ids);
        }
    }

    /// [`add_files`](Self::add_files) but for the batch's multi-queue
    /// filing. Returns the batch's ids, in its order.
    fn add_files_unfiled(&mut self, files: Vec<(FileDesc, f64)>) -> Vec<u64> {
        let batch_plan = match self.cfg.policy {
            FilterPolicy::SkewAtWrite => true,
            FilterPolicy::Elastic => {
                let new = files
                    .iter()
                    .filter(|(f, _)| !self.files.contains_key(&f.id))
                    .count();
                2 * files.len() >= self.files.len() + new
            }
            FilterPolicy::Uniform | FilterPolicy::Monkey | FilterPolicy::ElasticUniform => false,
        };
        let was_empty = self.files.is_empty();
        if !batch_plan && !was_empty {
            return files
                .into_iter()
                .map(|(f, hotness)| {
                    let id = f.id;
                    self.add_file(f, hotness);
                    id
                })
                .collect();
        }
        let ids = self.insert_files(files);
        if !batch_plan {
            // Uniform, monkey (planned when changes are taken) and
            // elastic-uniform, whose start does not depend on the other
            // files: as `add_file` does after each insert.
            if self.cfg.policy == FilterPolicy::ElasticUniform {
                for &id in &ids {
                    let want = self.start_units(id);
                    self.start_at(id, want);
                }
            }
            return ids;
        }
        // Planned once the batch is in: a file planned as it came would see
        // only the runs registered before it (at open, the upper levels
        // first, which took the budget before the last level came).
        if self.cfg.policy == FilterPolicy::SkewAtWrite {
            let (units, solved) = self.skew_solve_or_price(&ids);
            let mut all_fit = true;
            let batch = ids.len();
            for (&id, n) in ids.iter().zip(units) {
                all_fit &= self.start_at(id, n) == n;
            }
            // The batch was the whole tree (no file before it, none twice)
            // and every file got its count in the optimum just solved: the
            // targets are that optimum, until anything changes.
            if was_empty && batch == self.files.len() && solved && all_fit {
                self.skew.in_force = Some(self.epoch);
            }
            return ids;
        }
        self.visit_all();
        let units = self.monkey_start_plan();
        // In id order, as `files`: looked up by binary search.
        let plan: Vec<(u64, u32)> = self.files.keys().copied().zip(units).collect();
        for &id in &ids {
            let n = plan
                .binary_search_by_key(&id, |&(id, _)| id)
                .map_or(0, |i| plan[i].1);
            self.start_at(id, n);
        }
        ids
    }

    /// Inserts the batch's files in its order, as
    /// [`insert_file`](Self::insert_file) does one by one; into an empty
    /// allocator, a batch of distinct files goes into the file map in one
    /// bulk build. Returns the ids, in the batch's order.
    fn insert_files(&mut self, files: Vec<(FileDesc, f64)>) -> Vec<u64> {
        let ids: Vec<u64> = files.iter().map(|(f, _)| f.id).collect();
        let mut sorted = ids.clone();
        sorted.sort_unstable();
        let distinct = sorted.windows(2).all(|w| w[0] < w[1]);
        if !(self.files.is_empty() && distinct) {
            for (f, hotness) in files {
                self.insert_file(f, hotness);
            }
            return ids;
        }
        let mut states = Vec::with_capacity(files.len());
        for (f, hotness) in files {
            states.push(self.new_state(f, hotness));
        }
        // Files that are not filed here are filed by `add_files` at the
        // batch's end (only the elastic policies keep queues, and under them
        // filing is deferred for every batch).
        debug_assert!(!self.cfg.policy.is_elastic() || self.filing_deferred);
        self.files = states.into_iter().collect();
        ids
    }
}
