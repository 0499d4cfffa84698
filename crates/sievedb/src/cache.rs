//! The block cache (bounded by bytes) and the table cache (bounded by open
//! files), which also holds the budget of the files' filter memory.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock, Weak};

use quick_cache::sync::{Cache, DefaultLifecycle};
use quick_cache::{UnitWeighter, Weighter};

use crate::error::{Error, Result};
use crate::filter::budget::{BudgetConfig, FilterBudget, UnitLoader};
use crate::filter::Filter;
use crate::io::{filename, Access, FileSystem};
use crate::options::Options;
use crate::sst::block::Block;
use crate::sst::meta::TableMeta;
use crate::sst::TableReader;
use crate::stats::Counters;

/// Key of a cached block: (file number, block offset).
pub type BlockKey = (u64, u64);

/// The caches' hasher, with fixed seeds: which entries share a shard and
/// which one eviction picks then depend on the keys alone, so the same
/// operations on the same tree read the same blocks in every process (with
/// a per-process random seed, the device reads of one experiment varied by
/// several percent between runs). The keys are file numbers and offsets the
/// engine chooses, never user input, so a fixed seed exposes nothing.
fn fixed_hasher() -> ahash::RandomState {
    ahash::RandomState::with_seeds(
        0x243f_6a88_85a3_08d3,
        0x1319_8a2e_0370_7344,
        0xa409_3822_299f_31d0,
        0x082e_fa98_ec4e_6c89,
    )
}

#[derive(Clone)]
struct BlockWeighter;

impl Weighter<BlockKey, Arc<Block>> for BlockWeighter {
    fn weight(&self, _k: &BlockKey, v: &Arc<Block>) -> u64 {
        v.size() as u64 + 64
    }
}

/// Uncompressed blocks shared by all readers, evicted by S3-FIFO under a byte budget.
pub struct BlockCache {
    cache: Cache<BlockKey, Arc<Block>, BlockWeighter, ahash::RandomState>,
}

impl BlockCache {
    /// A cache of about `capacity` bytes.
    pub fn new(capacity: u64) -> Self {
        let items = (capacity / 4096).max(16) as usize;
        BlockCache {
            cache: Cache::with(
                items,
                capacity.max(1),
                BlockWeighter,
                fixed_hasher(),
                DefaultLifecycle::default(),
            ),
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

#[derive(Clone)]
struct MetaWeighter;

impl Weighter<u64, Arc<TableMeta>> for MetaWeighter {
    fn weight(&self, _k: &u64, v: &Arc<TableMeta>) -> u64 {
        v.memory_bytes()
    }
}

/// Open SSTs, bounded by `max_open_files`, and the metadata their opens
/// read (index, fences, properties, range tombstones, filter index),
/// bounded by `table_meta_cache_capacity` bytes and kept past the closing
/// of a file: reopening a file whose metadata is held opens it and reads
/// nothing. Also deletes files that compaction made obsolete.
pub struct TableCache {
    fs: Arc<dyn FileSystem>,
    dir: PathBuf,
    tables: Cache<u64, Arc<TableReader>, UnitWeighter, ahash::RandomState>,
    /// `None` when `table_meta_cache_capacity` is 0.
    metas: Option<Cache<u64, Arc<TableMeta>, MetaWeighter, ahash::RandomState>>,
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
            tables: Cache::with(
                opts.max_open_files,
                opts.max_open_files as u64,
                UnitWeighter,
                fixed_hasher(),
                DefaultLifecycle::default(),
            ),
            metas: (opts.table_meta_cache_capacity > 0).then(|| {
                Cache::with(
                    opts.max_open_files,
                    opts.table_meta_cache_capacity,
                    MetaWeighter,
                    fixed_hasher(),
                    DefaultLifecycle::default(),
                )
            }),
            blocks,
            counters,
            access: opts.sst_access(),
            verify: opts.verify_checksums,
            io_delay_ns: opts.io_delay_ns,
            budget_config: BudgetConfig {
                memory: opts.filter_memory,
                policy: opts.filter_policy,
                lifetime: opts.filter_lifetime,
                access_sample: opts
                    .filter_access_sample
                    .unwrap_or(crate::filter::budget::ACCESS_SAMPLE),
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

    /// Opens file `number` without caching the open file (its metadata is
    /// cached): with its metadata held, no read.
    pub fn open(&self, number: u64) -> Result<TableReader> {
        let path = filename::sst(&self.dir, number);
        let file = TableReader::open_file(self.fs.as_ref(), &path, self.access)?;
        let held = self.metas.as_ref().and_then(|m| m.get(&number));
        let t = match held {
            Some(meta) => TableReader::with_meta(
                file,
                &path,
                number,
                self.verify,
                self.blocks.clone(),
                self.counters.clone(),
                meta,
            ),
            None => {
                let t = TableReader::from_file(
                    file,
                    &path,
                    number,
                    self.verify,
                    self.blocks.clone(),
                    self.counters.clone(),
                )?;
                if let Some(m) = &self.metas {
                    m.insert(number, t.meta().clone());
                }
                t
            }
        };
        Ok(t.with_io_delay_ns(self.io_delay_ns))
    }

    /// Bytes of table metadata held past the open files (see [`TableCache`]).
    pub fn meta_bytes(&self) -> u64 {
        self.metas.as_ref().map_or(0, |m| m.weight())
    }

    /// Forgets file `number` and removes it from disk (it is obsolete).
    pub fn remove_file(&self, number: u64) {
        self.tables.remove(&number);
        if let Some(m) = &self.metas {
            m.remove(&number);
        }
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
