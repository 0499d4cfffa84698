//! What [`crate::Db::stats`] returns: the database's counters and the shape
//! of each level at one moment ([`Stats`], [`LevelStats`]), and the work done
//! between two such moments ([`Stats::delta_since`]).

use super::LookupBreakdown;

/// The shape and counters of one level.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
/// for i in 0..1000 {
///     db.put(format!("key{i}"), "v")?;
/// }
/// db.flush()?;
/// for i in 0..1000 {
///     db.get(format!("key{i}x"))?; // absent, inside the file's key range
/// }
/// let l0 = &db.stats().levels[0];
/// assert_eq!((l0.level, l0.files, l0.entries), (0, 1, 1000));
/// assert!(l0.filter_negatives > 900); // most lookups stopped at the filter
/// assert!(l0.measured_fpr() < 0.05); // 10 bits per key: about 1%
/// # Ok(()) }
/// ```
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
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
/// for i in 0..100 {
///     db.put(format!("key{i:03}"), "value")?;
/// }
/// db.flush()?;
/// let stats = db.stats();
/// assert_eq!((stats.puts, stats.flushes, stats.levels[0].files), (100, 1, 1));
/// assert!(stats.write_amplification > 0.0);
/// db.get("key007")?;
/// let work = db.stats().delta_since(&stats); // what happened since
/// assert_eq!((work.gets, work.puts), (1, 0));
/// println!("{stats}");
/// # Ok(()) }
/// ```
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
    /// Index partitions of two-level indexes read from their files (block
    /// cache misses, also counted in `block_cache_misses`; see
    /// [`crate::Options::index_partition_bytes`]).
    pub index_partition_reads: u64,
    /// Iterator seeks that consulted the prefix filters (see
    /// [`crate::Options::prefix_extractor`]): one per cursor made over one
    /// prefix.
    pub prefix_seeks: u64,
    /// Prefix digests those seeks computed: one per seek, for every level,
    /// under `levels` hash sharing.
    pub prefix_seek_digests: u64,
    /// Files and memtables those seeks skipped because their prefix filter
    /// ruled the prefix out (none of their blocks read).
    pub prefix_filter_skips: u64,
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
    /// Intact WAL records (write batches) the open did not apply
    /// ([`RecoveryReport::records_dropped`](crate::RecoveryReport::records_dropped)).
    pub recovery_records_dropped: u64,
    /// Writes those records held
    /// ([`RecoveryReport::entries_dropped`](crate::RecoveryReport::entries_dropped)).
    pub recovery_entries_dropped: u64,
    /// Bytes of WAL and MANIFEST the open dropped that were not zeros
    /// ([`RecoveryReport::bytes_dropped`](crate::RecoveryReport::bytes_dropped)
    /// plus
    /// [`manifest_bytes_dropped`](crate::RecoveryReport::manifest_bytes_dropped)).
    pub recovery_bytes_dropped: u64,
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
            index_partition_reads,
            prefix_seeks,
            prefix_seek_digests,
            prefix_filter_skips,
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
