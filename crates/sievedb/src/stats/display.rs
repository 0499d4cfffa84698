//! `Stats` as text: the table `sievedb stats` prints, in the manner of
//! RocksDB's "** Compaction Stats **" dump.

use super::{LevelStats, Stats};

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
        if self.recovery_records_dropped + self.recovery_bytes_dropped > 0 {
            writeln!(
                f,
                "Recovery dropped: {} WAL records ({} writes), {} of data (Db::recovery_report)",
                self.recovery_records_dropped,
                self.recovery_entries_dropped,
                human_bytes(self.recovery_bytes_dropped)
            )?;
        }
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
            "Table opens: {} ({} reads, {}), metadata held: {}, index partition reads: {}",
            self.table_opens,
            self.table_open_reads,
            human_bytes(self.table_open_bytes),
            human_bytes(self.table_meta_bytes),
            self.index_partition_reads
        )
    }
}
