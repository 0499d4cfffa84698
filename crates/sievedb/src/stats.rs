//! Counters of where lookups, writes and background work spend their effort.

use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::clock::{ns_per_tick, PhaseTicks};

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
    pub table_open_reads: AtomicU64,
    pub table_open_bytes: AtomicU64,
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

/// Sums of the sampled lookups' phase times, in nanoseconds.
#[derive(Default)]
#[allow(missing_docs)]
pub struct BreakdownCounters {
    pub samples: AtomicU64,
    pub total_ns: AtomicU64,
    pub hash_ns: AtomicU64,
    pub filter_ns: AtomicU64,
    pub index_ns: AtomicU64,
    pub data_ns: AtomicU64,
}

impl BreakdownCounters {
    /// Adds one sampled lookup that took `total` ticks, `phases` of them in
    /// the named phases.
    pub(crate) fn record(&self, total: u64, phases: PhaseTicks) {
        let rate = ns_per_tick();
        let ns = |t: u64| (t as f64 * rate) as u64;
        bump(&self.samples, 1);
        bump(&self.total_ns, ns(total));
        bump(&self.hash_ns, ns(phases.hash));
        bump(&self.filter_ns, ns(phases.filter));
        bump(&self.index_ns, ns(phases.index));
        bump(&self.data_ns, ns(phases.data));
    }

    fn snapshot(&self) -> LookupBreakdown {
        LookupBreakdown {
            samples: get(&self.samples),
            total_ns: get(&self.total_ns),
            hash_ns: get(&self.hash_ns),
            filter_ns: get(&self.filter_ns),
            index_ns: get(&self.index_ns),
            data_ns: get(&self.data_ns),
        }
    }
}

/// Where sampled point lookups spent their time (sums over `samples`
/// lookups; see [`crate::Options::lookup_breakdown_every`]).
///
/// * `hash`: computing key digests;
/// * `filter`: probing memtable and SST filters (hashing excluded);
/// * `index`: fence pointers across files, the table cache and index blocks;
/// * `data`: fetching data blocks (block cache or file) and searching them;
/// * `other` (= total − the four): memtable search, bookkeeping, the clock.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LookupBreakdown {
    /// Lookups timed.
    pub samples: u64,
    /// Their total time.
    pub total_ns: u64,
    /// Time spent hashing.
    pub hash_ns: u64,
    /// Time spent probing filters.
    pub filter_ns: u64,
    /// Time spent in fence pointers and index blocks.
    pub index_ns: u64,
    /// Time spent reading and searching data blocks.
    pub data_ns: u64,
}

impl LookupBreakdown {
    /// Time in none of the named phases.
    pub fn other_ns(&self) -> u64 {
        self.total_ns
            .saturating_sub(self.hash_ns + self.filter_ns + self.index_ns + self.data_ns)
    }

    /// Mean nanoseconds per sampled lookup: `[hash, filter, index, data,
    /// other]`, or `None` without samples.
    pub fn per_lookup(&self) -> Option<[f64; 5]> {
        if self.samples == 0 {
            return None;
        }
        let n = self.samples as f64;
        Some([
            self.hash_ns as f64 / n,
            self.filter_ns as f64 / n,
            self.index_ns as f64 / n,
            self.data_ns as f64 / n,
            self.other_ns() as f64 / n,
        ])
    }

    fn minus(&self, e: &LookupBreakdown) -> LookupBreakdown {
        LookupBreakdown {
            samples: self.samples.saturating_sub(e.samples),
            total_ns: self.total_ns.saturating_sub(e.total_ns),
            hash_ns: self.hash_ns.saturating_sub(e.hash_ns),
            filter_ns: self.filter_ns.saturating_sub(e.filter_ns),
            index_ns: self.index_ns.saturating_sub(e.index_ns),
            data_ns: self.data_ns.saturating_sub(e.data_ns),
        }
    }
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
            table_open_reads: AtomicU64::new(0),
            table_open_bytes: AtomicU64::new(0),
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

/// Adds `n` to a counter (relaxed: counters are statistics, not synchronisation).
#[inline]
pub(crate) fn bump(c: &AtomicU64, n: u64) {
    c.fetch_add(n, Ordering::Relaxed);
}

#[inline]
fn get(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

/// The shape and counters of one level.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct LevelStats {
    /// Level number (0 = newest).
    pub level: usize,
    /// Number of SST files.
    pub files: usize,
    /// Number of sorted runs (under leveling 1 for levels >= 1, once levels
    /// a reopen from tiering left with several runs have been merged).
    pub runs: usize,
    /// Bytes of its files.
    pub bytes: u64,
    /// Entries in its files.
    pub entries: u64,
    /// Range tombstones in its files.
    pub range_tombstones: u64,
    /// Key digests computed to probe this level's filters.
    pub digests_computed: u64,
    /// Filters probed in this level.
    pub filter_probes: u64,
    /// Probes answered "surely not".
    pub filter_negatives: u64,
    /// Probes answered "maybe" for a key the file did not hold.
    pub filter_false_positives: u64,
    /// Data blocks read (from cache or file) in this level.
    pub data_block_reads: u64,
    /// Bytes of this level's resident filter units.
    pub filter_memory_bytes: u64,
    /// `enabled_units[n]` = files of this level with `n` filter units
    /// resident (its length is one more than the most units any file has);
    /// files whose filter was not read yet count as 0.
    pub enabled_units: Vec<u64>,
    /// Files of this level whose filter was not read yet: a filter is read
    /// at its file's first lookup, not when the database opens.
    pub filters_unread: u64,
}

impl LevelStats {
    /// Resident filter bits per entry of this level (0 for an empty level).
    pub fn filter_bits_per_key(&self) -> f64 {
        if self.entries == 0 {
            0.0
        } else {
            self.filter_memory_bytes as f64 * 8.0 / self.entries as f64
        }
    }

    /// Measured false-positive rate of this level's filters:
    /// false positives / (false positives + negatives).
    pub fn measured_fpr(&self) -> f64 {
        let empty = self.filter_false_positives + self.filter_negatives;
        if empty == 0 {
            0.0
        } else {
            self.filter_false_positives as f64 / empty as f64
        }
    }
}

/// A snapshot of the database's statistics; see [`Db::stats`](crate::Db::stats).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Stats {
    /// Per-level shape and read counters.
    pub levels: Vec<LevelStats>,
    /// Point lookups (`get`, and each key of `multi_get`).
    pub gets: u64,
    /// Puts written.
    pub puts: u64,
    /// Deletes written (point and range).
    pub deletes: u64,
    /// Merge operands written.
    pub merges: u64,
    /// Lookups answered by a memtable.
    pub memtable_hits: u64,
    /// Key digests computed by lookups.
    pub digests_computed: u64,
    /// Filters probed.
    pub filter_probes: u64,
    /// Filter probes answered "surely not".
    pub filter_negatives: u64,
    /// Filter "maybe" answers for keys the file did not hold.
    pub filter_false_positives: u64,
    /// Data blocks read by lookups and scans.
    pub data_block_reads: u64,
    /// Memtable filters probed (memtable filters are off by default).
    pub memtable_filter_probes: u64,
    /// Memtable filter probes answered "surely not" (skiplist walk skipped).
    pub memtable_filter_negatives: u64,
    /// Time breakdown of the sampled lookups.
    pub breakdown: LookupBreakdown,
    /// Blocks found in the block cache.
    pub block_cache_hits: u64,
    /// Blocks read from files.
    pub block_cache_misses: u64,
    /// Bytes written to files (WAL, flushes, compactions).
    pub bytes_written: u64,
    /// Bytes read from SST files.
    pub bytes_read: u64,
    /// Bytes of keys and values written by users.
    pub user_bytes_written: u64,
    /// Compactions run.
    pub compactions: u64,
    /// Entries compactions turned into tombstones: expired under
    /// [`Options::ttl`](crate::Options::ttl), or removed by the
    /// [`CompactionFilter`](crate::CompactionFilter).
    pub compaction_filter_removed: u64,
    /// Values the [`CompactionFilter`](crate::CompactionFilter) changed.
    pub compaction_filter_changed: u64,
    /// Memtable flushes run.
    pub flushes: u64,
    /// Background errors that stopped writes (WAL, flush, compaction, MANIFEST).
    pub background_errors: u64,
    /// Background errors cleared by a resume (by `Db::resume` or automatically).
    pub background_error_resumes: u64,
    /// The background error now stopping writes, if any.
    pub background_error: Option<String>,
    /// Bytes of filter units resident in memory (all SST filters).
    pub filter_memory_bytes: u64,
    /// The filter memory budget in bytes (`None` = unlimited; see
    /// [`crate::FilterMemory`]).
    pub filter_memory_budget_bytes: Option<u64>,
    /// Filter units read from their files into memory.
    pub filter_unit_loads: u64,
    /// The reads that loaded them: one per load of a file's units (the
    /// units a load adds to a file are adjacent in it and read at once), so
    /// at most `filter_unit_loads`.
    pub filter_unit_reads: u64,
    /// Resident filter units dropped to make room or because the budget shrank
    /// (not counting the units of deleted files).
    pub filter_unit_evictions: u64,
    /// Tables opened (table-cache misses: the footer, index, properties,
    /// range tombstones and filter index read again; filter units are not,
    /// they live in the filter budget, independent of the table cache).
    pub table_opens: u64,
    /// Reads the table opens made (device reads under O_DIRECT).
    pub table_open_reads: u64,
    /// Bytes the table opens read.
    pub table_open_bytes: u64,
    /// The filter allocator's estimate of the data block reads false positives
    /// cost, ElasticBF's `E[Extra_IO] = Σ f_i·fp_i` over live files, `f_i`
    /// the file's (decayed) access count and `fp_i` the theoretical
    /// false-positive rate of its resident units (0 without a budget).
    pub estimated_extra_io: f64,
    /// Bytes in the block cache.
    pub block_cache_bytes: u64,
    /// Bytes of table metadata the table cache holds past its open files
    /// ([`crate::Options::table_meta_cache_capacity`]).
    pub table_meta_bytes: u64,
    /// Bytes in memtables.
    pub memtable_bytes: u64,
    /// (WAL + flush + compaction bytes written) / user bytes written.
    pub write_amplification: f64,
    /// Last sequence number.
    pub last_sequence: u64,
    /// Sleeps of writers paced to `delayed_write_rate` because L0 reached
    /// `level0_slowdown_trigger` (each at least 1 ms, paying for the groups
    /// written since the last one).
    pub write_slowdowns: u64,
    /// Microseconds those sleeps took.
    pub write_slowdown_micros: u64,
    /// Times a write group waited for a flush or compaction (too many frozen
    /// memtables, or L0 at `level0_stop_trigger`).
    pub write_stops: u64,
    /// Microseconds those waits took.
    pub write_stop_micros: u64,
    /// Estimated bytes compaction must still rewrite to bring every level
    /// under its target (RocksDB's estimate: L0 past its trigger, then each
    /// level's excess over its capacity, carried down).
    pub pending_compaction_bytes: u64,
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
        s.table_open_reads = get(&self.table_open_reads);
        s.table_open_bytes = get(&self.table_open_bytes);
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

impl Stats {
    /// The counters of `self` minus those of `earlier` (sizes stay those of `self`):
    /// the work done between two snapshots.
    #[must_use]
    pub fn delta_since(&self, earlier: &Stats) -> Stats {
        let mut d = self.clone();
        macro_rules! sub {
            ($($f:ident),*) => { $( d.$f = self.$f.saturating_sub(earlier.$f); )* };
        }
        sub!(
            gets,
            puts,
            deletes,
            merges,
            memtable_hits,
            digests_computed,
            filter_probes,
            filter_negatives,
            filter_false_positives,
            data_block_reads,
            block_cache_hits,
            block_cache_misses,
            bytes_written,
            bytes_read,
            user_bytes_written,
            compactions,
            compaction_filter_removed,
            compaction_filter_changed,
            flushes,
            filter_unit_loads,
            filter_unit_reads,
            filter_unit_evictions,
            table_opens,
            table_open_reads,
            table_open_bytes,
            memtable_filter_probes,
            memtable_filter_negatives,
            write_slowdowns,
            write_slowdown_micros,
            write_stops,
            write_stop_micros
        );
        d.breakdown = self.breakdown.minus(&earlier.breakdown);
        for l in &mut d.levels {
            if let Some(e) = earlier.levels.iter().find(|e| e.level == l.level) {
                l.digests_computed -= e.digests_computed.min(l.digests_computed);
                l.filter_probes -= e.filter_probes.min(l.filter_probes);
                l.filter_negatives -= e.filter_negatives.min(l.filter_negatives);
                l.filter_false_positives -= e.filter_false_positives.min(l.filter_false_positives);
                l.data_block_reads -= e.data_block_reads.min(l.data_block_reads);
            }
        }
        d.write_amplification = if d.user_bytes_written == 0 {
            0.0
        } else {
            d.bytes_written as f64 / d.user_bytes_written as f64
        };
        d
    }
}

/// `n` bytes in the largest binary unit that keeps it at least 1.
fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// `part / whole` as a percentage (0 when `whole` is 0).
fn percent(part: u64, whole: u64) -> f64 {
    if whole == 0 {
        0.0
    } else {
        part as f64 * 100.0 / whole as f64
    }
}

/// A multi-line table in the manner of RocksDB's "** Compaction Stats **"
/// dump: one row per level (files, runs, bytes, entries, resident filter
/// bits/key and memory, filter probes and their outcomes), a `Sum` row, then
/// writes, stalls, caches and filters. Levels without files or reads are
/// left out.
impl std::fmt::Display for Stats {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(f, "** Compaction Stats **")?;
        writeln!(
            f,
            "{:<5} {:>6} {:>5} {:>11} {:>11} {:>7} {:>11} {:>11} {:>11} {:>9} {:>11}",
            "Level",
            "Files",
            "Runs",
            "Size",
            "Entries",
            "FltB/K",
            "FltMem",
            "Probes",
            "Negatives",
            "FalsePos",
            "DataReads"
        )?;
        let row = |f: &mut std::fmt::Formatter<'_>, name: &str, l: &LevelStats| {
            writeln!(
                f,
                "{:<5} {:>6} {:>5} {:>11} {:>11} {:>7.2} {:>11} {:>11} {:>11} {:>9} {:>11}",
                name,
                l.files,
                l.runs,
                human_bytes(l.bytes),
                l.entries,
                l.filter_bits_per_key(),
                human_bytes(l.filter_memory_bytes),
                l.filter_probes,
                l.filter_negatives,
                l.filter_false_positives,
                l.data_block_reads
            )
        };
        let mut sum = LevelStats::default();
        for l in &self.levels {
            if l.files == 0 && l.filter_probes == 0 && l.data_block_reads == 0 {
                continue;
            }
            row(f, &format!("L{}", l.level), l)?;
            sum.files += l.files;
            sum.runs += l.runs;
            sum.bytes += l.bytes;
            sum.entries += l.entries;
            sum.filter_memory_bytes += l.filter_memory_bytes;
            sum.filter_probes += l.filter_probes;
            sum.filter_negatives += l.filter_negatives;
            sum.filter_false_positives += l.filter_false_positives;
            sum.data_block_reads += l.data_block_reads;
        }
        row(f, "Sum", &sum)?;
        writeln!(f, "** Writes **")?;
        writeln!(
            f,
            "Puts: {}  Deletes: {}  Merges: {}  User bytes: {}  Bytes written: {}  W-Amp: {:.2}",
            self.puts,
            self.deletes,
            self.merges,
            human_bytes(self.user_bytes_written),
            human_bytes(self.bytes_written),
            self.write_amplification
        )?;
        writeln!(
            f,
            "Flushes: {}  Compactions: {}  Pending compaction: {}  Memtables: {}  Last sequence: {}",
            self.flushes,
            self.compactions,
            human_bytes(self.pending_compaction_bytes),
            human_bytes(self.memtable_bytes),
            self.last_sequence
        )?;
        writeln!(
            f,
            "Stalls: {} slowdowns ({:.3} s), {} stops ({:.3} s)",
            self.write_slowdowns,
            self.write_slowdown_micros as f64 / 1e6,
            self.write_stops,
            self.write_stop_micros as f64 / 1e6
        )?;
        if self.compaction_filter_removed + self.compaction_filter_changed > 0 {
            writeln!(
                f,
                "Compaction filter: {} removed (TTL included), {} changed",
                self.compaction_filter_removed, self.compaction_filter_changed
            )?;
        }
        writeln!(
            f,
            "Background errors: {}  Resumes: {}  Now: {}",
            self.background_errors,
            self.background_error_resumes,
            self.background_error.as_deref().unwrap_or("none")
        )?;
        writeln!(f, "** Reads **")?;
        let blocks = self.block_cache_hits + self.block_cache_misses;
        writeln!(
            f,
            "Gets: {}  Memtable hits: {}  Block cache: {} hits, {} misses ({:.1}% hit), {} held  Bytes read: {}",
            self.gets,
            self.memtable_hits,
            self.block_cache_hits,
            self.block_cache_misses,
            percent(self.block_cache_hits, blocks),
            human_bytes(self.block_cache_bytes),
            human_bytes(self.bytes_read)
        )?;
        let empty = self.filter_negatives + self.filter_false_positives;
        writeln!(
            f,
            "Filters: {} probes, {} negatives, {} false positives ({:.3}% FPR), {} digests",
            self.filter_probes,
            self.filter_negatives,
            self.filter_false_positives,
            percent(self.filter_false_positives, empty),
            self.digests_computed
        )?;
        let budget = self
            .filter_memory_budget_bytes
            .map_or_else(|| "unlimited".to_string(), human_bytes);
        writeln!(
            f,
            "Filter memory: {} of {}  Unit loads: {} ({} reads)  Evictions: {}  Memtable filter: {} probes, {} negatives",
            human_bytes(self.filter_memory_bytes),
            budget,
            self.filter_unit_loads,
            self.filter_unit_reads,
            self.filter_unit_evictions,
            self.memtable_filter_probes,
            self.memtable_filter_negatives
        )?;
        writeln!(
            f,
            "Table opens: {} ({} reads, {}), metadata held: {}",
            self.table_opens,
            self.table_open_reads,
            human_bytes(self.table_open_bytes),
            human_bytes(self.table_meta_bytes)
        )
    }
}
