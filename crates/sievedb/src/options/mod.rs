//! Database options and their builder.

use std::sync::Arc;
use std::time::Duration;

use crate::compaction_filter::CompactionFilter;
use crate::error::{Error, Result};
use crate::filter::{FilterMemory, FilterOptions, FilterPolicy};
use crate::ttl::Clock;

mod builder;
pub use builder::OptionsBuilder;

/// How runs are organised inside a level.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{CompactionStyle, Db, Options};
///
/// let tiered = Options::builder().compaction_style(CompactionStyle::Tiering).build();
/// let db = Db::open(dir.path(), tiered)?;
/// db.put("k", "v")?;
/// db.flush()?;
/// db.close()?;
/// // Either style accepts the tree the other left.
/// let style: CompactionStyle = "leveling".parse()?;
/// let db = Db::open(dir.path(), Options::builder().compaction_style(style).build())?;
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v"[..]));
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum CompactionStyle {
    /// One sorted run per level; a level that outgrows its capacity merges a file
    /// into the next level (LevelDB/RocksDB default). Lowest space and read cost.
    Leveling,
    /// Up to `size_ratio` runs per level; a full level is merged into one run of
    /// the next level. Lower write amplification, more runs to probe on reads.
    Tiering,
}

impl std::str::FromStr for CompactionStyle {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "leveling" => Ok(CompactionStyle::Leveling),
            "tiering" => Ok(CompactionStyle::Tiering),
            _ => Err(Error::InvalidArgument(format!(
                "compaction style must be leveling or tiering, not {s:?}"
            ))),
        }
    }
}

/// Block compression, chosen per level.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Compression, Db, Options};
///
/// let strong: Compression = "zstd:9".parse()?;
/// assert_eq!(strong, Compression::Zstd(9));
/// assert_eq!(Compression::zstd().to_string(), "zstd:3");
/// assert!("zstd:99".parse::<Compression>().is_err()); // not a zstd level
/// // L0 uncompressed, L1 LZ4, zstd from L2 down (the last entry applies below).
/// let levels = vec![Compression::None, Compression::Lz4, strong];
/// let db = Db::open(dir.path(), Options::builder().compression_per_level(levels).build())?;
/// assert_eq!(db.options().compression_for(6), strong);
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum Compression {
    /// Blocks are stored as they are.
    None,
    /// LZ4 block compression (kept only when it saves at least 1/8 of the block).
    Lz4,
    /// Zstandard compression at the given level (1 = fastest .. 22 = smallest;
    /// negative levels trade ratio for speed), kept only when it saves at
    /// least 1/8 of the block. [`Compression::zstd`] picks the default level.
    Zstd(i32),
}

impl Compression {
    /// The zstd level [`Compression::zstd`] uses (zstd's own default).
    pub const ZSTD_DEFAULT_LEVEL: i32 = 3;

    /// Zstandard at [`Compression::ZSTD_DEFAULT_LEVEL`].
    pub fn zstd() -> Compression {
        Compression::Zstd(Self::ZSTD_DEFAULT_LEVEL)
    }

    /// Checks the parameters (a zstd level the library accepts).
    pub fn validate(&self) -> Result<()> {
        match *self {
            Compression::Zstd(l) if !zstd::compression_level_range().contains(&l) || l == 0 => {
                let r = zstd::compression_level_range();
                Err(Error::InvalidArgument(format!(
                    "zstd level must be in {}..={} and not 0, not {l}",
                    r.start(),
                    r.end()
                )))
            }
            _ => Ok(()),
        }
    }
}

impl std::fmt::Display for Compression {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Compression::None => f.write_str("none"),
            Compression::Lz4 => f.write_str("lz4"),
            Compression::Zstd(l) => write!(f, "zstd:{l}"),
        }
    }
}

/// Parses `none`, `lz4`, `zstd` (default level) or `zstd:LEVEL`.
impl std::str::FromStr for Compression {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let c = match s.split_once(':') {
            None if s == "none" => Compression::None,
            None if s == "lz4" => Compression::Lz4,
            None if s == "zstd" => Compression::zstd(),
            Some(("zstd", l)) => Compression::Zstd(l.parse().map_err(|_| {
                Error::InvalidArgument(format!("zstd level must be an integer, not {l:?}"))
            })?),
            _ => {
                return Err(Error::InvalidArgument(format!(
                    "compression must be none, lz4, zstd or zstd:LEVEL, not {s:?}"
                )))
            }
        };
        c.validate()?;
        Ok(c)
    }
}

/// How opening a database treats damage in its write-ahead logs (WALs), as
/// RocksDB's `WALRecoveryMode`. The WALs still needed at open are replayed
/// oldest first. Only the newest WAL that holds any bytes can have a *torn
/// tail*: every older WAL was synced whole before a newer one received a
/// write, and ends at its last record or in the zeros preallocated for it
/// (its end, when the next WAL continues its sequence numbers). A torn tail
/// is damage in the newest WAL that no sync mark after it shows was synced:
/// the unfinished write a crash cut short, zeros, a bad checksum, or zeros
/// followed by fragments of later writes that a power loss let reach the
/// disk out of order. None of it was acknowledged as durable (a sync write
/// returns only after its bytes were synced, and the next group commit
/// marks the sync); damage a mark covers lies in synced bytes.
///
/// Damage is reported as [`Error::Corruption`] naming the `.log` file and the
/// offset of the damaged record. A gap in sequence numbers between replayed
/// records (a WAL missing from the directory) counts as damage at the start of
/// the record after the gap. What any mode dropped is in
/// [`Db::recovery_report`](crate::Db::recovery_report) (and counted in
/// [`Stats`](crate::Stats)).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, Options, WalRecovery, WriteOptions};
///
/// assert_eq!(WalRecovery::default(), WalRecovery::PointInTime);
/// // Every write synced, so no damage at all is acceptable.
/// let strict = WalRecovery::AbsoluteConsistency;
/// let db = Db::open(dir.path(), Options::builder().wal_recovery(strict).build())?;
/// db.put_with("k", "v", &WriteOptions { sync: true })?;
/// db.close()?;
/// let mode: WalRecovery = "absolute-consistency".parse()?;
/// let db = Db::open(dir.path(), Options::builder().wal_recovery(mode).build())?;
/// assert_eq!(db.recovery_report().mode, WalRecovery::AbsoluteConsistency);
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v"[..]));
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum WalRecovery {
    /// A torn tail of the newest WAL is dropped (writes never acknowledged
    /// as synced). Any other damage (in an older WAL, or in bytes of the
    /// newest that were synced) fails the open with [`Error::Corruption`];
    /// nothing else is skipped.
    TolerateCorruptedTail,
    /// The default. Replay stops at the first damaged record of any WAL: that
    /// record, the rest of its WAL and every newer WAL are not applied, so the
    /// database opens consistent as of the last good write before the damage
    /// (its last sequence number is that write's). What was dropped is in
    /// [`Db::recovery_report`](crate::Db::recovery_report). Unless the only
    /// damage is a torn tail of the newest WAL holding no intact record (the
    /// normal result of a crash, dropped as under `TolerateCorruptedTail`), a
    /// read-write open keeps the evidence: the damaged WAL is copied and the
    /// newer WALs are moved into the `lost/` subdirectory before the
    /// recovered writes are committed, so they are never replayed later and
    /// can be inspected or removed by hand.
    #[default]
    PointInTime,
    /// Any damage at all, including a torn tail of the newest WAL, fails the
    /// open with [`Error::Corruption`]. For databases written only with
    /// synced writes that must never lose an acknowledged one. Under this
    /// mode WALs are written with `write(2)` rather than through a
    /// preallocated map (whose zero tail after a crash would fail the open),
    /// so unsynced writes cost a system call each.
    AbsoluteConsistency,
}

impl std::str::FromStr for WalRecovery {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        match s {
            "tolerate-corrupted-tail" => Ok(WalRecovery::TolerateCorruptedTail),
            "point-in-time" => Ok(WalRecovery::PointInTime),
            "absolute-consistency" => Ok(WalRecovery::AbsoluteConsistency),
            _ => Err(Error::InvalidArgument(format!(
                "WAL recovery mode must be tolerate-corrupted-tail, point-in-time or \
                 absolute-consistency, not {s:?}"
            ))),
        }
    }
}

/// Options fixed when a database is opened. Build them with [`Options::builder`]
/// or start from [`Options::default`].
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, Options};
///
/// let opts = Options {
///     write_buffer_size: 64 << 10,
///     block_cache_capacity: 32 << 20,
///     ..Options::default()
/// };
/// opts.validate()?;
/// assert!(Options { size_ratio: 1, ..opts.clone() }.validate().is_err());
/// let db = Db::open(dir.path(), opts)?;
/// assert_eq!(db.options().write_buffer_size, 64 << 10);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct Options {
    /// Create the directory (and a new database) when missing. Default true.
    pub create_if_missing: bool,
    /// Fail if a database already exists. Default false.
    pub error_if_exists: bool,
    /// Bytes a memtable may hold before it is frozen and flushed. Default 4 MiB.
    pub write_buffer_size: usize,
    /// Frozen memtables waiting for flush before writers stall. Default 2.
    pub max_immutable_memtables: usize,
    /// Number of L0 runs that triggers a compaction. Default 4.
    pub level0_compaction_trigger: usize,
    /// Number of L0 runs from which writes are slowed to
    /// [`delayed_write_rate`](Self::delayed_write_rate). Default 20
    /// (RocksDB's; LevelDB's is 8): L0 absorbs bursts, and a slowdown
    /// starts only when compaction is clearly behind.
    pub level0_slowdown_trigger: usize,
    /// Number of L0 runs at which writers wait for compaction. Default 36
    /// (RocksDB's; LevelDB's is 12).
    pub level0_stop_trigger: usize,
    /// Bytes per second writers may log while L0 holds
    /// [`level0_slowdown_trigger`](Self::level0_slowdown_trigger) runs or
    /// more (RocksDB's `delayed_write_rate`): each write group is delayed in
    /// proportion to its size, so a slowed database still takes writes at
    /// this rate, whatever their size or grouping. Default 16 MiB/s.
    pub delayed_write_rate: u64,
    /// Size ratio T between adjacent levels. Default 10.
    pub size_ratio: usize,
    /// Capacity of level 1 in bytes (level i holds `base * T^(i-1)`). Default 10 MiB.
    pub level1_size: u64,
    /// Size at which compaction output files are cut. Default 2 MiB (as in the papers).
    pub target_file_size: u64,
    /// Number of levels including L0. Default 7. Reopening with fewer levels
    /// than the deepest level holding a file needs is refused with
    /// [`Error::InvalidArgument`]; more levels are always accepted.
    pub max_levels: usize,
    /// Uncompressed size of a data block. Default 4 KiB.
    pub block_size: usize,
    /// Keys between restart points inside a block. Default 16.
    pub block_restart_interval: usize,
    /// Cut each new file's index into partitions of about this many bytes
    /// (a two-level index, RocksDB's `kTwoLevelIndexSearch` with
    /// `metadata_block_size`): opening the file reads and holds only the
    /// top level, one entry per partition, and a lookup reads the one
    /// partition it needs through the block cache. With
    /// [`FilterOptions::partition_bytes`] it makes large files (64–256 MB)
    /// cheap to open and to hold open. 64 B to 64 MiB; `None` (default):
    /// one index block per file, resident while the file is open. Files
    /// record their own index shape, so the option may change between
    /// opens; builds before two-level indexes refuse such files (SST format
    /// version 2, see `docs/format.md`).
    pub index_partition_bytes: Option<u64>,
    /// Bytes of the block cache (uncompressed blocks). Default 8 MiB; 0 disables it.
    pub block_cache_capacity: u64,
    /// SST files kept open at once. Default 1000.
    pub max_open_files: usize,
    /// Bytes of table metadata (index blocks and their fences, properties,
    /// range tombstones, filter indexes: about 1% of the data with 4 KiB
    /// blocks) kept past the closing of a file by the table cache, so that
    /// reopening it reads nothing; a tree of more files than
    /// `max_open_files` otherwise reads them again at every table-cache
    /// miss. Default 256 MiB; 0 disables it (LevelDB's behaviour).
    pub table_meta_cache_capacity: u64,
    /// Filter settings (bits per key etc.).
    pub filter: FilterOptions,
    /// Compaction style. Default leveling. May change between opens: either
    /// style accepts the tree the other left.
    pub compaction_style: CompactionStyle,
    /// Threads for background flushes and compactions: one flushes, the
    /// others (at least one) compact, each its own compaction; two
    /// compactions never share a file, and once L0 has drained those of one
    /// leveled level run side by side on disjoint key ranges. Default 2.
    pub background_threads: usize,
    /// Read SST data with O_DIRECT (no page cache). Default false. Takes
    /// precedence over [`Options::use_mmap_reads`].
    pub use_direct_reads: bool,
    /// Read SSTs through a read-only memory map (RocksDB's
    /// `allow_mmap_reads`; LevelDB maps its tables on 64-bit systems): a
    /// data block that misses the block cache is used in place, with no
    /// `pread` system call and no copy (a compressed block is decompressed
    /// from the map). The block cache, checksums, [`Options::io_delay_ns`]
    /// and the read counters behave as with `pread`: a block entering the
    /// cache is checked once. Applies only to file systems that map files
    /// ([`crate::io::FileSystem::open_mapped`]; others read as usual) and
    /// only when [`Options::use_direct_reads`] is off: O_DIRECT asks to
    /// bypass the page cache, which a map reads through, so direct reads
    /// win rather than being refused (a default-on setting must not make an
    /// explicit `use_direct_reads` fail). A mapped file holds no file
    /// descriptor. Default true.
    pub use_mmap_reads: bool,
    /// Extra latency, in nanoseconds, added to every data block read that goes
    /// to the file (a block-cache miss: lookups, scans and compaction inputs;
    /// not the index, filter and properties read when a table is opened). The
    /// delay is a busy wait on the engine's tick clock
    /// (`clock::spin_wait_ns`), not a sleep, so it can emulate
    /// latencies far below a scheduler tick (e.g. 70 ns NVM, 10 µs PCIe SSD,
    /// 113 µs SATA SSD); it occupies the reading thread's CPU. A sampled
    /// lookup counts it in its `data` phase. Default 0 (none).
    pub io_delay_ns: u64,
    /// Compression per level (index = level; the last entry applies to deeper levels).
    /// Default: no compression anywhere.
    pub compression_per_level: Vec<Compression>,
    /// Verify block checksums on every read. Default true.
    pub verify_checksums: bool,
    /// Time one point lookup in this many phase by phase (hash, filter,
    /// index, data, other; see [`crate::LookupBreakdown`]); 0 = never.
    /// Default 0. Timing costs a few clock reads per sampled lookup.
    pub lookup_breakdown_every: u32,
    /// Automatic attempts to clear a recoverable background error (a full
    /// disk) as [`Db::resume`](crate::Db::resume) does, one every
    /// [`Options::bg_error_resume_retry_interval`]; 0 turns them off.
    /// Default `u32::MAX` (keep trying, as RocksDB's `max_bgerror_resume_count`).
    pub max_bg_error_resume_count: u32,
    /// Time between automatic resume attempts. Default 1 s.
    pub bg_error_resume_retry_interval: std::time::Duration,
    /// How damage in the write-ahead logs is treated at open. Default
    /// [`WalRecovery::PointInTime`].
    pub wal_recovery: WalRecovery,
    /// Skip the size half of the check an open makes of every live SST
    /// (RocksDB's option of this name). Default false: an open, read-write
    /// or read-only, fails with [`Error::Corruption`] naming the first live
    /// SST (those the MANIFEST lists, of every keyspace) that is missing
    /// from the directory or whose size is not the one the MANIFEST
    /// recorded for it, before anything is replayed or written; the error
    /// points to [`Db::repair`](crate::Db::repair), which rebuilds the
    /// database from the files that are there. The check costs one `stat`
    /// per live file (see `docs/format.md`, "Live files at open").
    ///
    /// Set, the open still fails on a missing file (as RocksDB does) but
    /// does not ask any file its size: a short (truncated) or longer
    /// (appended to) table opens, and every read that touches it fails with
    /// [`Error::Corruption`] naming it (its footer is read from the file's
    /// actual end). So does a compaction that reads it (a move to another
    /// level reads nothing): [`Db::compact_range`](crate::Db::compact_range)
    /// returns the error, and a background compaction stops writes
    /// ([`Error::ReadOnly`] until the database is reopened). For salvage:
    /// read what is still readable, then repair.
    pub skip_checking_sst_file_sizes_on_db_open: bool,
    /// Memory all SST filters may hold together. Default
    /// [`FilterMemory::Unlimited`].
    pub filter_memory: FilterMemory,
    /// How a filter memory budget is divided among files. Default
    /// [`FilterPolicy::Uniform`]. Ignored under [`FilterMemory::Unlimited`].
    pub filter_policy: FilterPolicy,
    /// ElasticBF's *lifeTime*: lookups after its last access at which a file
    /// counts as cold (its units may go to hotter files). `None` = the order
    /// of the number of files, as the paper advises. Elastic policies only.
    pub filter_lifetime: Option<u64>,
    /// One lookup in this many records which files' filters it probed, and
    /// counts for this many, under a filter memory budget (`None` = 4,
    /// the engine's `ACCESS_SAMPLE`). 1 counts
    /// every lookup (exact counts, e.g. for an experiment's offline oracle)
    /// at about four times the bookkeeping; larger values cost less and aim
    /// worse.
    pub filter_access_sample: Option<u32>,
    /// Filter units a new file starts with under the `elastic-uniform` policy
    /// (`None` = 2, the ElasticBF prototype's default).
    pub initial_units: Option<u32>,
    /// Combines the operands [`Db::merge`](crate::Db::merge) writes with the
    /// key's older value (see [`crate::merge`]). Default `None`: a merge
    /// into the default keyspace is refused with
    /// [`Error::InvalidArgument`], and reading a key that has operands (of a
    /// database written with an operator) is [`Error::MergeFailed`]. Reopen
    /// a database with the same operator (by meaning) it was written with.
    pub merge_operator: Option<std::sync::Arc<dyn crate::merge::MergeOperator>>,
    /// Maps keys to prefixes for the prefix filters (RocksDB's
    /// `prefix_extractor`): with one set, every SST written and every
    /// memtable gets a filter over the prefixes of its keys, which
    /// [`Db::prefix`](crate::Db::prefix), iterators with
    /// [`ReadOptions::prefix_same_as_start`](crate::ReadOptions::prefix_same_as_start)
    /// and iterators bounded within one prefix consult to skip files that
    /// hold no key of the prefix (see [`crate::filter::prefix`]). Default
    /// none. It may change between opens: files written under another
    /// extractor (by [`name`](crate::PrefixExtractor::name)) or none are
    /// read, never skipped.
    pub prefix_extractor: Option<Arc<dyn crate::filter::prefix::PrefixExtractor>>,
    /// Called by compactions on the newest version of each key no snapshot
    /// sees, to keep, change or remove it (RocksDB's compaction filter; not
    /// called by flushes). See [`crate::compaction_filter`]. Default none.
    pub compaction_filter: Option<Arc<dyn CompactionFilter>>,
    /// Time to live of every value (whole seconds, at least 1): a value
    /// written more than `ttl` ago reads as deleted, and compactions remove
    /// it (see [`crate::ttl`]). Default none. Every value of a database
    /// opened with a TTL carries an 8-byte write-time stamp, so whether a
    /// database has a TTL is recorded in it when it is created: opening it
    /// with a TTL when it was created without one, or the other way round,
    /// is [`Error::InvalidArgument`]. The duration itself may change between
    /// opens (it applies to old values too: their write time is stored).
    pub ttl: Option<Duration>,
    /// Compact a file once it is this old, even if nothing else would
    /// (RocksDB's `periodic_compaction_seconds`): expired values and
    /// filtered entries then leave the disk although no write touches their
    /// keys. A level above the last compacts such a file into the next
    /// level; the last level rewrites it in place. These compactions run
    /// only when no other compaction is due. `None` (the default) means the
    /// TTL when one is set, else off; `Some(Duration::ZERO)` turns them off;
    /// otherwise at least 1 second. A file's creation time is recorded in
    /// the MANIFEST only while periodic compaction is on; a file without
    /// one counts as created when the database was opened.
    pub periodic_compaction: Option<Duration>,
    /// The wall clock of TTL expiry and periodic compaction. Default
    /// [`SystemClock`](crate::SystemClock).
    pub clock: Arc<dyn Clock>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            create_if_missing: true,
            error_if_exists: false,
            write_buffer_size: 4 << 20,
            max_immutable_memtables: 2,
            level0_compaction_trigger: 4,
            level0_slowdown_trigger: 20,
            level0_stop_trigger: 36,
            delayed_write_rate: 16 << 20,
            size_ratio: 10,
            level1_size: 10 << 20,
            target_file_size: 2 << 20,
            max_levels: 7,
            block_size: 4096,
            block_restart_interval: 16,
            index_partition_bytes: None,
            block_cache_capacity: 8 << 20,
            max_open_files: 1000,
            table_meta_cache_capacity: 256 << 20,
            filter: FilterOptions::default(),
            compaction_style: CompactionStyle::Leveling,
            background_threads: 2,
            use_direct_reads: false,
            use_mmap_reads: true,
            io_delay_ns: 0,
            compression_per_level: vec![Compression::None],
            verify_checksums: true,
            lookup_breakdown_every: 0,
            max_bg_error_resume_count: u32::MAX,
            bg_error_resume_retry_interval: std::time::Duration::from_secs(1),
            wal_recovery: WalRecovery::PointInTime,
            skip_checking_sst_file_sizes_on_db_open: false,
            filter_memory: FilterMemory::Unlimited,
            filter_policy: FilterPolicy::Uniform,
            filter_lifetime: None,
            filter_access_sample: None,
            initial_units: None,
            merge_operator: None,
            prefix_extractor: None,
            compaction_filter: None,
            ttl: None,
            periodic_compaction: None,
            clock: crate::ttl::system_clock(),
        }
    }
}

impl Options {
    /// Starts a builder from the defaults.
    ///
    /// ```
    /// use sievedb::{CompactionStyle, Compression, Options};
    ///
    /// let opts = Options::builder()
    ///     .write_buffer_size(8 << 20)
    ///     .bits_per_key(10.0)
    ///     .compaction_style(CompactionStyle::Leveling)
    ///     .build();
    /// let mut opts = opts;
    /// opts.compression_per_level = vec![Compression::None, Compression::Lz4, Compression::zstd()];
    /// assert!(opts.validate().is_ok());
    /// ```
    #[must_use]
    pub fn builder() -> OptionsBuilder {
        OptionsBuilder(Options::default())
    }

    /// How SSTs are opened for reading: O_DIRECT first, then a map.
    pub(crate) fn sst_access(&self) -> crate::io::Access {
        use crate::io::Access;
        if self.use_direct_reads {
            Access::Direct
        } else if self.use_mmap_reads {
            Access::Mapped
        } else {
            Access::Buffered
        }
    }

    /// Compression for blocks written to `level`.
    pub fn compression_for(&self, level: usize) -> Compression {
        self.compression_per_level
            .get(level)
            .or(self.compression_per_level.last())
            .copied()
            .unwrap_or(Compression::None)
    }

    /// Capacity of `level` in bytes (level >= 1).
    pub fn level_capacity(&self, level: usize) -> u64 {
        let mut cap = self.level1_size;
        for _ in 1..level {
            cap = cap.saturating_mul(self.size_ratio as u64);
        }
        cap
    }

    /// The age (seconds) at which a file is compacted by periodic
    /// compaction, if it is on (see [`Options::periodic_compaction`]).
    pub fn periodic_compaction_secs(&self) -> Option<u64> {
        match self.periodic_compaction {
            Some(d) if d.is_zero() => None,
            Some(d) => Some(crate::ttl::secs(d)),
            None => self.ttl.map(crate::ttl::secs),
        }
    }

    /// The creation time recorded for a file written now: the clock's time
    /// (at least 1) while periodic compaction is on, else 0 (none recorded).
    pub(crate) fn file_creation_time(&self) -> u64 {
        match self.periodic_compaction_secs() {
            Some(_) => self.clock.now_secs().max(1),
            None => 0,
        }
    }

    /// Checks that the options make sense together.
    pub fn validate(&self) -> Result<()> {
        let bad = |m: &str| Err(Error::InvalidArgument(m.to_string()));
        if self.ttl.is_some_and(|d| d.as_secs() == 0) {
            return bad("ttl must be at least 1 second");
        }
        if self.ttl.is_some() && self.merge_operator.is_some() {
            return bad("ttl and merge_operator cannot be combined yet (values carry a write-time stamp that operands do not)");
        }
        if self
            .periodic_compaction
            .is_some_and(|d| !d.is_zero() && d.as_secs() == 0)
        {
            return bad("periodic_compaction must be 0 (off) or at least 1 second");
        }
        if self.write_buffer_size < 4096 {
            return bad("write_buffer_size must be at least 4096 bytes");
        }
        if self.size_ratio < 2 {
            return bad("size_ratio must be at least 2");
        }
        if !(2..=64).contains(&self.max_levels) {
            return bad("max_levels must be between 2 and 64");
        }
        if self.block_size < 64 || self.block_size > (64 << 20) {
            return bad("block_size must be between 64 bytes and 64 MiB");
        }
        if self.block_restart_interval == 0 {
            return bad("block_restart_interval must be at least 1");
        }
        if let Some(b) = self.index_partition_bytes {
            if !(64..=(64 << 20)).contains(&b) {
                return bad(&format!(
                    "index_partition_bytes must be between 64 bytes and 64 MiB (got {b})"
                ));
            }
        }
        if self.target_file_size < 4096 {
            return bad("target_file_size must be at least 4096 bytes");
        }
        if self.level1_size == 0 {
            return bad("level1_size must be positive");
        }
        if self.level0_compaction_trigger == 0
            || self.level0_slowdown_trigger < self.level0_compaction_trigger
            || self.level0_stop_trigger < self.level0_slowdown_trigger
        {
            return bad("need 0 < level0_compaction_trigger <= level0_slowdown_trigger <= level0_stop_trigger");
        }
        if self.delayed_write_rate == 0 {
            return bad("delayed_write_rate must be at least 1 byte per second");
        }
        if self.max_immutable_memtables == 0 {
            return bad("max_immutable_memtables must be at least 1");
        }
        if self.max_open_files < 16 {
            return bad("max_open_files must be at least 16");
        }
        if self.background_threads == 0 {
            return bad("background_threads must be at least 1");
        }
        if self.compression_per_level.is_empty() {
            return bad("compression_per_level must name at least one level");
        }
        for c in &self.compression_per_level {
            c.validate()?;
        }
        self.filter_memory.validate()?;
        if self.filter_lifetime == Some(0) {
            return bad("filter_lifetime must be at least 1 lookup");
        }
        if self.filter_access_sample == Some(0) {
            return bad("filter_access_sample must be at least 1 (every lookup)");
        }
        self.filter.validate()
    }
}

/// Options of one write.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, Options, WriteBatch, WriteOptions};
///
/// let db = Db::open(dir.path(), Options::default())?;
/// let durable = WriteOptions { sync: true }; // fsynced before the call returns
/// db.put_with("balance", "100", &durable)?;
/// let mut batch = WriteBatch::new();
/// batch.put("audit", "balance set");
/// db.write_with(batch, &durable)?;
/// db.put("cache", "x")?; // the default: survives a process crash, not a power loss
/// assert_eq!(db.get("balance")?.as_deref(), Some(&b"100"[..]));
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct WriteOptions {
    /// fsync the WAL before acknowledging (survives power loss). Without it, an
    /// acknowledged write has reached the OS and survives a process crash.
    pub sync: bool,
}
