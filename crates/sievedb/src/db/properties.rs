//! Named properties: statistics and estimates looked up by name, as
//! RocksDB's `GetProperty` / `GetIntProperty`; and the [`Stats`] they and
//! [`Db::stats`] read.

use super::*;

/// Prefix of every property name.
const PREFIX: &str = "sievedb.";

/// One property's value: a number, or text.
pub(super) enum Value {
    Int(u64),
    Text(String),
}

impl DbInner {
    /// The value of property `name` of keyspace `tree` (see
    /// [`Db::property`]; `sievedb.stats` of the default keyspace covers
    /// every keyspace); `None` if unknown.
    pub(super) fn property_value(&self, tree: &Arc<Tree>, name: &str) -> Option<Value> {
        let name = name.strip_prefix(PREFIX)?;
        let v = || tree.version();
        let int = Value::Int;
        Some(match name {
            "stats" if tree.id == 0 => Value::Text(self.stats(&self.trees()).to_string()),
            "stats" => Value::Text(self.stats(std::slice::from_ref(tree)).to_string()),
            "levels" => Value::Text(levels_table(&v())),
            "total-sst-files-size" => int(v().files().map(|(_, f)| f.size).sum()),
            "estimate-num-keys" => int(estimate_num_keys(tree, &v())),
            "estimate-pending-compaction-bytes" => {
                int(compaction::pending_bytes(&v(), &tree.opts()))
            }
            "stall-micros" => int(self.counters.write_slowdown_micros.load(Ordering::Relaxed)
                + self.counters.write_stop_micros.load(Ordering::Relaxed)),
            "filter-memory-bytes" => int(self.tables.filter_budget().usage().0),
            "num-snapshots" => int(self.snapshots.lock().values().sum::<usize>() as u64),
            "num-immutable-mem-table" => int(tree.frozen().len() as u64),
            "cur-size-all-mem-tables" => int(tree.memtable_bytes()),
            "recovery-dropped-records" => int(self.recovery.records_dropped),
            "recovery-dropped-entries" => int(self.recovery.entries_dropped),
            "recovery-dropped-bytes" => {
                int(self.recovery.bytes_dropped + self.recovery.manifest_bytes_dropped)
            }
            _ => {
                let level: usize = name.strip_prefix("num-files-at-level")?.parse().ok()?;
                let v = v();
                int(v
                    .levels
                    .get(level)?
                    .iter()
                    .map(|r| r.files.len() as u64)
                    .sum())
            }
        })
    }
}

/// Entries in the memtables and SST files of `tree` (`v`: its version):
/// every version of a key and every tombstone not yet compacted away counts
/// (no file is opened).
fn estimate_num_keys(tree: &Tree, v: &Version) -> u64 {
    let mem = {
        let m = tree.mem.read();
        m.mem.len() + m.imm.iter().map(|x| x.len()).sum::<usize>()
    } as u64;
    mem + v.files().map(|(_, f)| f.entries).sum::<u64>()
}

/// `Level Files Runs Size(MiB)`, one row per level (RocksDB's `levelstats`).
fn levels_table(v: &Version) -> String {
    let mut s = String::from("Level Files Runs Size(MiB)\n--------------------------\n");
    for (l, runs) in v.levels.iter().enumerate() {
        let files: usize = runs.iter().map(|r| r.files.len()).sum();
        let bytes = v.level_bytes(l) as f64 / (1 << 20) as f64;
        s += &format!("{l:>5} {files:>5} {:>4} {bytes:>9.3}\n", runs.len());
    }
    s
}

impl Db {
    /// The value of the named property of the default keyspace as text, or
    /// `None` for an unknown name (RocksDB's `GetProperty`;
    /// [`Keyspace::property`] for another keyspace). Names:
    ///
    /// * `sievedb.stats`: the multi-line [`Stats`] table (its `Display`), of
    ///   every keyspace together;
    /// * `sievedb.levels`: files, runs and MiB per level, one row each;
    /// * `sievedb.num-files-at-level<N>`: SST files in level `N`
    ///   (`None` past the last level);
    /// * `sievedb.total-sst-files-size`: bytes of the live SST files;
    /// * `sievedb.estimate-num-keys`: entries in memtables and files
    ///   (overwritten versions and tombstones not yet compacted count too);
    /// * `sievedb.estimate-pending-compaction-bytes`: bytes compaction must
    ///   still rewrite, as [`Stats::pending_compaction_bytes`];
    /// * `sievedb.stall-micros`: microseconds writers spent slowed or stopped;
    /// * `sievedb.filter-memory-bytes`: bytes of resident SST filter units;
    /// * `sievedb.num-snapshots`: live snapshots;
    /// * `sievedb.num-immutable-mem-table`: frozen memtables waiting for flush;
    /// * `sievedb.cur-size-all-mem-tables`: bytes of all memtables;
    /// * `sievedb.recovery-dropped-records`, `sievedb.recovery-dropped-entries`,
    ///   `sievedb.recovery-dropped-bytes`: what the open's recovery dropped
    ///   (intact WAL records, the writes they held, and bytes that were not
    ///   zeros; see [`RecoveryReport`]).
    ///
    /// Every name but `stats` and `levels` is a number, also available from
    /// [`property_int`](Self::property_int).
    ///
    /// ```
    /// # fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let dir = tempfile::tempdir()?;
    /// # let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
    /// db.put("k", "v")?;
    /// db.flush()?;
    /// println!("{}", db.property("sievedb.stats").unwrap());
    /// assert_eq!(db.property_int("sievedb.num-files-at-level0"), Some(1));
    /// assert_eq!(db.property("sievedb.no-such-property"), None);
    /// # Ok(()) }
    /// ```
    pub fn property(&self, name: &str) -> Option<String> {
        self.inner
            .property_value(&self.inner.tree, name)
            .map(Value::into_text)
    }

    /// The value of a numeric property (see [`property`](Self::property)),
    /// or `None` for an unknown or non-numeric name (RocksDB's
    /// `GetIntProperty`).
    pub fn property_int(&self, name: &str) -> Option<u64> {
        self.inner
            .property_value(&self.inner.tree, name)?
            .into_int()
    }
}

impl Value {
    /// The value as text.
    pub(super) fn into_text(self) -> String {
        match self {
            Value::Int(n) => n.to_string(),
            Value::Text(s) => s,
        }
    }

    /// The value as a number, if it is one.
    pub(super) fn into_int(self) -> Option<u64> {
        match self {
            Value::Int(n) => Some(n),
            Value::Text(_) => None,
        }
    }
}

impl DbInner {
    /// The statistics of keyspaces `trees` (their levels; the counters are
    /// the database's).
    pub(super) fn stats(&self, trees: &[Arc<Tree>]) -> Stats {
        // First the filter budget settles (this thread's access log replayed,
        // the loads and drops it calls for done), so that the residency per
        // level below and the totals agree: read before it, a level could
        // show units the worker was still loading.
        let budget = self.tables.filter_budget();
        let filter_memory = budget.usage();
        let versions: Vec<Arc<Version>> = trees.iter().map(|t| t.version()).collect();
        let mut s = Stats {
            levels: (0..self.opts.max_levels)
                .map(|level| {
                    let runs: Vec<&Arc<crate::version::Run>> =
                        versions.iter().flat_map(|v| &v.levels[level]).collect();
                    let files = runs.iter().flat_map(|r| &r.files);
                    let mut ls = LevelStats {
                        level,
                        files: runs.iter().map(|r| r.files.len()).sum(),
                        runs: runs.len(),
                        bytes: runs.iter().map(|r| r.bytes()).sum(),
                        entries: files.clone().map(|f| f.entries).sum(),
                        range_tombstones: files.clone().map(|f| f.range_dels).sum(),
                        ..LevelStats::default()
                    };
                    let unread = files.clone().filter(|f| !f.filter_read()).count() as u64;
                    if unread > 0 {
                        ls.filters_unread = unread;
                        ls.enabled_units = vec![unread];
                    }
                    for (resident, units, bytes) in files.filter_map(|f| f.filter_residency()) {
                        let n = resident as usize;
                        if ls.enabled_units.len() <= units as usize {
                            ls.enabled_units.resize(units as usize + 1, 0);
                        }
                        ls.enabled_units[n] += 1;
                        ls.filter_memory_bytes += bytes;
                    }
                    ls
                })
                .collect(),
            ..Stats::default()
        };
        self.counters.fill(&mut s);
        (s.filter_memory_bytes, s.filter_memory_budget_bytes) = filter_memory;
        s.estimated_extra_io = budget.expected_extra_io();
        s.block_cache_bytes = self.tables.block_cache().map_or(0, |c| c.used_bytes());
        s.table_meta_bytes = self.tables.meta_bytes();
        // The memtable lock is released before the background lock is taken:
        // the flush thread read-locks the memtables while it holds the
        // background lock, and a memtable switch waiting for the write lock
        // queues that read behind ours, so holding both here deadlocked.
        s.memtable_bytes = trees.iter().map(|t| t.memtable_bytes()).sum();
        s.last_sequence = self.last_seq.load(Ordering::Acquire);
        s.pending_compaction_bytes = trees
            .iter()
            .zip(&versions)
            .map(|(t, v)| compaction::pending_bytes(v, &t.opts()))
            .sum();
        s.background_error = self.bg.lock().error.as_ref().map(Error::to_string);
        s.recovery_records_dropped = self.recovery.records_dropped;
        s.recovery_entries_dropped = self.recovery.entries_dropped;
        s.recovery_bytes_dropped =
            self.recovery.bytes_dropped + self.recovery.manifest_bytes_dropped;
        s
    }
}
