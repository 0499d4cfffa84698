//! The live counters: the engine-wide atomics ([`Counters`]) and the read
//! path's per-thread shards, which a lookup adds its [`ReadTally`] to once it
//! ends; [`Counters::fill`] sums them into a [`Stats`] snapshot.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::{get, BreakdownCounters, Stats};

/// Levels whose read counters a lookup tallies locally; deeper levels count
/// straight into the shared atomics.
pub const TALLY_LEVELS: usize = 8;
/// Index of a counter in a [`ReadTally`] level row.
pub(crate) const PROBES: usize = 0;
/// See [`PROBES`].
pub(crate) const NEGATIVES: usize = 1;
/// See [`PROBES`].
pub(crate) const DIGESTS: usize = 2;
/// See [`PROBES`].
pub(crate) const FALSE_POSITIVES: usize = 3;

/// The read-path counts of one lookup, in plain integers while it runs; added
/// to the calling thread's `ReadShard` when it ends. An atomic
/// read-modify-write is a full barrier on x86: between filter probes it
/// would stall the probes' cache misses, and it did cost a third of a
/// lookup.
#[derive(Clone, Debug, Default)]
pub struct ReadTally {
    /// Memtable filters probed.
    pub memtable_filter_probes: u32,
    /// Memtable filter probes that ruled the key out.
    pub memtable_filter_negatives: u32,
    /// Per level: filter probes, negatives, digests computed, false positives.
    pub levels: [[u32; 4]; TALLY_LEVELS],
}

/// One thread's share of the read counters. Only its thread writes it
/// (plain load + store, no lock prefix); [`Counters::fill`] sums all shards.
#[derive(Default)]
struct ReadShard {
    gets: AtomicU64,
    digests_computed: AtomicU64,
    memtable_filter_probes: AtomicU64,
    memtable_filter_negatives: AtomicU64,
    levels: [[AtomicU64; 4]; TALLY_LEVELS],
}

/// Adds `n` to a counter that only the calling thread writes.
#[inline]
fn add_own(c: &AtomicU64, n: u64) {
    c.store(c.load(Ordering::Relaxed).wrapping_add(n), Ordering::Relaxed);
}

/// Source of [`Counters`] ids (the key of a thread's shard).
static NEXT_COUNTERS_ID: AtomicU64 = AtomicU64::new(1);

thread_local! {
    /// This thread's shard of each [`Counters`] it has read through.
    static SHARDS: RefCell<Vec<(u64, Arc<ReadShard>)>> = const { RefCell::new(Vec::new()) };
}

/// Counters of one level, updated on the read path.
#[derive(Default)]
#[allow(missing_docs)]
pub struct LevelCounters {
    pub digests_computed: AtomicU64,
    pub filter_probes: AtomicU64,
    pub filter_negatives: AtomicU64,
    pub filter_false_positives: AtomicU64,
    pub data_block_reads: AtomicU64,
}

/// Engine-wide counters, shared by every component that does work.
#[allow(missing_docs)]
pub struct Counters {
    /// Bumped by the writing thread on every write: kept on a cache line of
    /// their own, so that the flush and compaction threads, which bump the
    /// other counters as they read and write blocks, do not take that line
    /// from the writer (false sharing).
    pub writes: WriteCounters,
    pub memtable_hits: AtomicU64,
    pub block_cache_hits: AtomicU64,
    pub block_cache_misses: AtomicU64,
    pub bytes_read: AtomicU64,
    pub compactions: AtomicU64,
    pub compaction_filter_removed: AtomicU64,
    pub compaction_filter_changed: AtomicU64,
    pub flushes: AtomicU64,
    pub bg_errors: AtomicU64,
    pub bg_error_resumes: AtomicU64,
    pub compaction_bytes_written: AtomicU64,
    pub flush_bytes_written: AtomicU64,
    pub filter_memory: AtomicU64,
    pub filter_unit_loads: AtomicU64,
    pub filter_unit_reads: AtomicU64,
    pub filter_unit_evictions: AtomicU64,
    pub table_opens: AtomicU64,
    pub index_partition_reads: AtomicU64,
    pub table_open_reads: AtomicU64,
    pub table_open_bytes: AtomicU64,
    pub prefix_seeks: AtomicU64,
    pub prefix_seek_digests: AtomicU64,
    pub prefix_filter_skips: AtomicU64,
    pub write_slowdowns: AtomicU64,
    pub write_slowdown_micros: AtomicU64,
    pub write_stops: AtomicU64,
    pub write_stop_micros: AtomicU64,
    pub breakdown: BreakdownCounters,
    pub levels: Vec<LevelCounters>,
    id: u64,
    shards: Mutex<Vec<Arc<ReadShard>>>,
}

/// The counters of the write path (see [`Counters::writes`]).
#[derive(Default)]
#[repr(align(64))]
#[allow(missing_docs)]
pub struct WriteCounters {
    pub puts: AtomicU64,
    pub deletes: AtomicU64,
    pub merges: AtomicU64,
    pub user_bytes_written: AtomicU64,
    pub wal_bytes_written: AtomicU64,
}

impl Counters {
    /// Zeroed counters for `levels` levels.
    pub fn new(levels: usize) -> Self {
        Counters {
            writes: WriteCounters::default(),
            memtable_hits: AtomicU64::new(0),
            block_cache_hits: AtomicU64::new(0),
            block_cache_misses: AtomicU64::new(0),
            bytes_read: AtomicU64::new(0),
            compactions: AtomicU64::new(0),
            compaction_filter_removed: AtomicU64::new(0),
            compaction_filter_changed: AtomicU64::new(0),
            flushes: AtomicU64::new(0),
            bg_errors: AtomicU64::new(0),
            bg_error_resumes: AtomicU64::new(0),
            compaction_bytes_written: AtomicU64::new(0),
            flush_bytes_written: AtomicU64::new(0),
            filter_memory: AtomicU64::new(0),
            filter_unit_loads: AtomicU64::new(0),
            filter_unit_reads: AtomicU64::new(0),
            filter_unit_evictions: AtomicU64::new(0),
            table_opens: AtomicU64::new(0),
            index_partition_reads: AtomicU64::new(0),
            table_open_reads: AtomicU64::new(0),
            table_open_bytes: AtomicU64::new(0),
            prefix_seeks: AtomicU64::new(0),
            prefix_seek_digests: AtomicU64::new(0),
            prefix_filter_skips: AtomicU64::new(0),
            write_slowdowns: AtomicU64::new(0),
            write_slowdown_micros: AtomicU64::new(0),
            write_stops: AtomicU64::new(0),
            write_stop_micros: AtomicU64::new(0),
            breakdown: BreakdownCounters::default(),
            levels: (0..levels).map(|_| LevelCounters::default()).collect(),
            id: NEXT_COUNTERS_ID.fetch_add(1, Ordering::Relaxed),
            shards: Mutex::new(Vec::new()),
        }
    }

    /// Runs `f` on the calling thread's shard, creating it on first use.
    #[inline]
    #[expect(
        clippy::expect_used,
        reason = "the shard was pushed just before it is read"
    )]
    fn with_shard<R>(&self, f: impl FnOnce(&ReadShard) -> R) -> R {
        SHARDS.with(|cell| {
            let mut v = cell.borrow_mut();
            if let Some((_, s)) = v.iter().find(|(id, _)| *id == self.id) {
                return f(s);
            }
            // Forget the shards of counters that are gone (only we hold them).
            v.retain(|(_, s)| Arc::strong_count(s) > 1);
            let s = Arc::new(ReadShard::default());
            self.shards.lock().push(s.clone());
            v.push((self.id, s));
            f(&v.last().expect("just pushed").1)
        })
    }

    /// Whether the lookup this thread starts now is one of the sampled ones:
    /// one in `every` per thread (never for 0).
    #[inline]
    pub(crate) fn sample_lookup(every: u32) -> bool {
        thread_local! {
            static STARTED: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
        }
        every != 0
            && STARTED.with(|c| {
                let n = c.get();
                c.set(if n + 1 >= every { 0 } else { n + 1 });
                n == 0
            })
    }

    /// Counts a finished point lookup that computed `digests` digests.
    #[inline]
    pub(crate) fn finish_lookup(&self, t: &ReadTally, digests: u32) {
        self.with_shard(|s| {
            add_own(&s.gets, 1);
            add_own(&s.digests_computed, u64::from(digests));
            add_own(
                &s.memtable_filter_probes,
                u64::from(t.memtable_filter_probes),
            );
            add_own(
                &s.memtable_filter_negatives,
                u64::from(t.memtable_filter_negatives),
            );
            for (row, own) in t.levels.iter().zip(&s.levels) {
                if row[PROBES] != 0 || row[FALSE_POSITIVES] != 0 {
                    for (n, c) in row.iter().zip(own) {
                        add_own(c, u64::from(*n));
                    }
                }
            }
        })
    }
}

impl Counters {
    /// Fills the counter fields of `s` (shapes are filled by the caller).
    pub(crate) fn fill(&self, s: &mut Stats) {
        // Lookups count only into the per-thread shards.
        let mut tallied = [[0u64; 4]; TALLY_LEVELS];
        for sh in self.shards.lock().iter() {
            s.gets += get(&sh.gets);
            s.digests_computed += get(&sh.digests_computed);
            s.memtable_filter_probes += get(&sh.memtable_filter_probes);
            s.memtable_filter_negatives += get(&sh.memtable_filter_negatives);
            for (sum, own) in tallied.iter_mut().zip(&sh.levels) {
                for (x, c) in sum.iter_mut().zip(own) {
                    *x += get(c);
                }
            }
        }
        s.puts = get(&self.writes.puts);
        s.deletes = get(&self.writes.deletes);
        s.merges = get(&self.writes.merges);
        s.memtable_hits = get(&self.memtable_hits);
        s.block_cache_hits = get(&self.block_cache_hits);
        s.block_cache_misses = get(&self.block_cache_misses);
        // Every byte written to a file: the WAL's, flushes' and compactions'.
        s.bytes_written = get(&self.writes.wal_bytes_written)
            + get(&self.flush_bytes_written)
            + get(&self.compaction_bytes_written);
        s.bytes_read = get(&self.bytes_read);
        s.user_bytes_written = get(&self.writes.user_bytes_written);
        s.compactions = get(&self.compactions);
        s.compaction_filter_removed = get(&self.compaction_filter_removed);
        s.compaction_filter_changed = get(&self.compaction_filter_changed);
        s.flushes = get(&self.flushes);
        s.background_errors = get(&self.bg_errors);
        s.background_error_resumes = get(&self.bg_error_resumes);
        s.filter_unit_loads = get(&self.filter_unit_loads);
        s.filter_unit_reads = get(&self.filter_unit_reads);
        s.filter_unit_evictions = get(&self.filter_unit_evictions);
        s.table_opens = get(&self.table_opens);
        s.index_partition_reads = get(&self.index_partition_reads);
        s.table_open_reads = get(&self.table_open_reads);
        s.table_open_bytes = get(&self.table_open_bytes);
        s.prefix_seeks = get(&self.prefix_seeks);
        s.prefix_seek_digests = get(&self.prefix_seek_digests);
        s.prefix_filter_skips = get(&self.prefix_filter_skips);
        s.write_slowdowns = get(&self.write_slowdowns);
        s.write_slowdown_micros = get(&self.write_slowdown_micros);
        s.write_stops = get(&self.write_stops);
        s.write_stop_micros = get(&self.write_stop_micros);
        s.breakdown = self.breakdown.snapshot();
        let user = s.user_bytes_written;
        s.write_amplification = if user == 0 {
            0.0
        } else {
            s.bytes_written as f64 / user as f64
        };
        for (i, l) in self.levels.iter().enumerate() {
            if let Some(ls) = s.levels.get_mut(i) {
                let t = tallied.get(i).copied().unwrap_or_default();
                ls.digests_computed = get(&l.digests_computed) + t[DIGESTS];
                ls.filter_probes = get(&l.filter_probes) + t[PROBES];
                ls.filter_negatives = get(&l.filter_negatives) + t[NEGATIVES];
                ls.filter_false_positives = get(&l.filter_false_positives) + t[FALSE_POSITIVES];
                ls.data_block_reads = get(&l.data_block_reads);
            }
        }
        s.filter_probes = s.levels.iter().map(|l| l.filter_probes).sum();
        s.filter_negatives = s.levels.iter().map(|l| l.filter_negatives).sum();
        s.filter_false_positives = s.levels.iter().map(|l| l.filter_false_positives).sum();
        s.data_block_reads = s.levels.iter().map(|l| l.data_block_reads).sum();
    }
}
