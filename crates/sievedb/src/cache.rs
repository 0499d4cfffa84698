//! The block cache (bounded by bytes) and the table cache (bounded by open
//! files), which also holds the budget of the files' filter memory.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};

use quick_cache::{sync::Cache, Weighter};

use crate::error::{Error, Result};
use crate::filter::budget::{BudgetConfig, FilterBudget, UnitLoader};
use crate::filter::Filter;
use crate::io::{filename, Access, FileSystem};
use crate::options::Options;
use crate::sst::block::Block;
use crate::sst::TableReader;
use crate::stats::Counters;

/// Key of a cached block: (file number, block offset).
pub type BlockKey = (u64, u64);

#[derive(Clone)]
struct BlockWeighter;

impl Weighter<BlockKey, Arc<Block>> for BlockWeighter {
    fn weight(&self, _k: &BlockKey, v: &Arc<Block>) -> u64 {
        v.size() as u64 + 64
    }
}

/// Uncompressed blocks shared by all readers, evicted by S3-FIFO under a byte budget.
pub struct BlockCache {
    cache: Cache<BlockKey, Arc<Block>, BlockWeighter>,
}

impl BlockCache {
    /// A cache of about `capacity` bytes.
    pub fn new(capacity: u64) -> Self {
        let items = (capacity / 4096).max(16) as usize;
        BlockCache {
            cache: Cache::with_weighter(items, capacity.max(1), BlockWeighter),
        }
    }

    /// A cached block.
    #[inline]
    pub fn get(&self, key: &BlockKey) -> Option<Arc<Block>> {
        self.cache.get(key)
    }

    /// Caches a block.
    pub fn insert(&self, key: BlockKey, block: Arc<Block>) {
        self.cache.insert(key, block);
    }

    /// Drops every cached block of file `number` (it was deleted). A block
    /// of a mapped file holds its map, and the map holds the deleted file's
    /// disk space, so these must not wait for eviction. Walks the whole
    /// cache: a cost paid once per deleted file, in the background.
    pub fn forget_file(&self, number: u64) {
        self.cache.retain(|k, _| k.0 != number);
    }

    /// Bytes held.
    pub fn used_bytes(&self) -> u64 {
        self.cache.weight()
    }
}

/// Open SSTs, bounded by `max_open_files`; also deletes files that compaction made obsolete.
pub struct TableCache {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    tables: Cache<u64, Arc<TableReader>>,
    blocks: Option<Arc<BlockCache>>,
    counters: Arc<Counters>,
    access: Access,
    verify: bool,
    io_delay_ns: u64,
    budget_config: BudgetConfig,
    /// Made on first use (it loads units through this cache).
    budget: OnceLock<Arc<FilterBudget>>,
}

impl TableCache {
    /// A cache over the SSTs of `dir`.
    pub fn new(
        fs: Arc<dyn FileSystem>,
        dir: PathBuf,
        opts: &Options,
        blocks: Option<Arc<BlockCache>>,
        counters: Arc<Counters>,
    ) -> Self {
        if opts.io_delay_ns > 0 {
            // Calibrate the delay's clock now, not in the first block read.
            crate::clock::ns_per_tick();
        }
        TableCache {
            fs,
            dir,
            tables: Cache::new(opts.max_open_files),
            blocks,
            counters,
            access: opts.sst_access(),
            verify: opts.verify_checksums,
            io_delay_ns: opts.io_delay_ns,
            budget_config: BudgetConfig {
                memory: opts.filter_memory,
                policy: opts.filter_policy,
                lifetime: opts.filter_lifetime,
                initial_units: opts.initial_units,
                filter: opts.filter.clone(),
            },
            budget: OnceLock::new(),
        }
    }

    /// The budget of the filter memory of this cache's files.
    #[inline]
    pub fn filter_budget(self: &Arc<Self>) -> &Arc<FilterBudget> {
        self.budget.get_or_init(|| {
            let loader = Arc::new(CacheLoader(Arc::downgrade(self)));
            let budget = Arc::new(FilterBudget::new(
                self.budget_config.clone(),
                loader,
                self.counters.clone(),
            ));
            FilterBudget::start_worker(&budget);
            budget
        })
    }

    /// The open table of file `number`, opening it on a miss.
    pub fn get(&self, number: u64) -> Result<Arc<TableReader>> {
        if let Some(t) = self.tables.get(&number) {
            return Ok(t);
        }
        let t = Arc::new(self.open(number)?);
        self.tables.insert(number, t.clone());
        Ok(t)
    }

    /// Opens file `number` without caching it.
    pub fn open(&self, number: u64) -> Result<TableReader> {
        TableReader::open_access(
            self.fs.as_ref(),
            &filename::sst(&self.dir, number),
            number,
            self.access,
            self.verify,
            self.blocks.clone(),
            self.counters.clone(),
        )
        .map(|t| t.with_io_delay_ns(self.io_delay_ns))
    }

    /// Forgets file `number` and removes it from disk (it is obsolete).
    pub fn remove_file(&self, number: u64) {
        self.tables.remove(&number);
        if self.access == Access::Mapped {
            if let Some(blocks) = &self.blocks {
                blocks.forget_file(number);
            }
        }
        // A failed removal leaves an orphan that the next open deletes.
        let _ = self.fs.remove_file(&filename::sst(&self.dir, number));
    }

    /// The block cache, if any.
    pub fn block_cache(&self) -> Option<&Arc<BlockCache>> {
        self.blocks.as_ref()
    }
}

/// Loads filter units through a table cache (weakly held: the cache owns the
/// budget that owns this).
struct CacheLoader(Weak<TableCache>);

impl UnitLoader for CacheLoader {
    fn load_units(&self, number: u64, current: &Filter, to: u32) -> Result<Filter> {
        let tables = self.0.upgrade().ok_or(Error::Closed)?;
        tables.get(number)?.load_filter_units(current, to)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::Access;

    #[test]
    fn direct_reads_take_precedence_over_mapped_reads() {
        let with = |direct, mmap| {
            let o = Options::builder()
                .use_direct_reads(direct)
                .use_mmap_reads(mmap)
                .build();
            assert!(o.validate().is_ok());
            o.sst_access()
        };
        assert_eq!(with(false, false), Access::Buffered);
        assert_eq!(with(false, true), Access::Mapped);
        assert_eq!(with(true, false), Access::Direct);
        assert_eq!(with(true, true), Access::Direct);
    }

    /// A deleted file's blocks leave the cache (a mapped block would keep
    /// the deleted file's space); other files' blocks stay.
    #[test]
    fn forgetting_a_file_drops_only_its_blocks() {
        let cache = BlockCache::new(1 << 20);
        let block = || Arc::new(Block::new(vec![0, 0, 0, 0, 1, 0, 0, 0]).unwrap());
        for (file, off) in [(1, 0), (1, 100), (2, 0), (3, 7)] {
            cache.insert((file, off), block());
        }
        cache.forget_file(1);
        assert!(cache.get(&(1, 0)).is_none() && cache.get(&(1, 100)).is_none());
        assert!(cache.get(&(2, 0)).is_some() && cache.get(&(3, 7)).is_some());
    }
}
