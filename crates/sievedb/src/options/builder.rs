//! [`OptionsBuilder`]: the consuming builder of [`Options`].

use std::sync::Arc;
use std::time::Duration;

use super::{CompactionStyle, Compression, Options, WalRecovery};
use crate::compaction_filter::CompactionFilter;
use crate::filter::{FilterMemory, FilterOptions, FilterPolicy};
use crate::ttl::Clock;

/// Consuming builder for [`Options`].
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use std::time::Duration;
/// use sievedb::{Db, Options};
///
/// let opts = Options::builder()
///     .write_buffer_size(1 << 20)
///     .bits_per_key(12.0)
///     .ttl(Duration::from_secs(24 * 3600))
///     .build();
/// let db = Db::open(dir.path(), opts)?;
/// assert_eq!(db.options().filter.bits_per_key, 12.0);
/// assert_eq!(db.options().ttl, Some(Duration::from_secs(86_400)));
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct OptionsBuilder(pub(super) Options);

macro_rules! setter {
    ($(#[$doc:meta])* $name:ident: $ty:ty) => {
        $(#[$doc])*
        #[must_use]
        pub fn $name(mut self, v: $ty) -> Self {
            self.0.$name = v;
            self
        }
    };
}

impl OptionsBuilder {
    setter!(/// See [`Options::create_if_missing`].
        create_if_missing: bool);
    setter!(/// See [`Options::error_if_exists`].
        error_if_exists: bool);
    setter!(/// See [`Options::write_buffer_size`].
        write_buffer_size: usize);
    setter!(/// See [`Options::max_immutable_memtables`].
        max_immutable_memtables: usize);
    setter!(/// See [`Options::level0_compaction_trigger`].
        level0_compaction_trigger: usize);
    setter!(/// See [`Options::level0_slowdown_trigger`].
        level0_slowdown_trigger: usize);
    setter!(/// See [`Options::level0_stop_trigger`].
        level0_stop_trigger: usize);
    setter!(/// See [`Options::delayed_write_rate`].
        delayed_write_rate: u64);
    setter!(/// See [`Options::size_ratio`].
        size_ratio: usize);
    setter!(/// See [`Options::level1_size`].
        level1_size: u64);
    setter!(/// See [`Options::target_file_size`].
        target_file_size: u64);
    setter!(/// See [`Options::max_levels`].
        max_levels: usize);
    setter!(/// See [`Options::block_size`].
        block_size: usize);
    setter!(/// See [`Options::block_restart_interval`].
        block_restart_interval: usize);
    setter!(/// See [`Options::block_cache_capacity`].
        block_cache_capacity: u64);
    setter!(/// See [`Options::max_open_files`].
        max_open_files: usize);
    setter!(/// See [`Options::table_meta_cache_capacity`].
        table_meta_cache_capacity: u64);
    setter!(/// See [`Options::filter`].
        filter: FilterOptions);
    setter!(/// See [`Options::compaction_style`].
        compaction_style: CompactionStyle);
    setter!(/// See [`Options::background_threads`].
        background_threads: usize);
    setter!(/// See [`Options::use_direct_reads`].
        use_direct_reads: bool);
    setter!(/// See [`Options::use_mmap_reads`].
        use_mmap_reads: bool);
    setter!(/// See [`Options::io_delay_ns`].
        io_delay_ns: u64);
    setter!(/// See [`Options::compression_per_level`].
        compression_per_level: Vec<Compression>);
    setter!(/// See [`Options::verify_checksums`].
        verify_checksums: bool);
    setter!(/// See [`Options::lookup_breakdown_every`].
        lookup_breakdown_every: u32);
    setter!(/// See [`Options::max_bg_error_resume_count`].
        max_bg_error_resume_count: u32);
    setter!(/// See [`Options::bg_error_resume_retry_interval`].
        bg_error_resume_retry_interval: std::time::Duration);
    setter!(/// See [`Options::wal_recovery`].
        wal_recovery: WalRecovery);
    setter!(/// See [`Options::skip_checking_sst_file_sizes_on_db_open`].
        skip_checking_sst_file_sizes_on_db_open: bool);
    setter!(/// See [`Options::filter_memory`].
        filter_memory: FilterMemory);
    setter!(/// See [`Options::filter_policy`].
        filter_policy: FilterPolicy);
    setter!(/// See [`Options::filter_lifetime`].
        filter_lifetime: Option<u64>);
    setter!(/// See [`Options::filter_access_sample`].
        filter_access_sample: Option<u32>);
    setter!(/// See [`Options::initial_units`].
        initial_units: Option<u32>);

    /// See [`Options::merge_operator`].
    #[must_use]
    pub fn merge_operator(mut self, op: std::sync::Arc<dyn crate::merge::MergeOperator>) -> Self {
        self.0.merge_operator = Some(op);
        self
    }

    /// Sets [`Options::index_partition_bytes`]: a two-level index of
    /// partitions of about `bytes`.
    #[must_use]
    pub fn index_partition_bytes(mut self, bytes: u64) -> Self {
        self.0.index_partition_bytes = Some(bytes);
        self
    }

    /// Sets [`Options::prefix_extractor`].
    #[must_use]
    pub fn prefix_extractor(mut self, x: Arc<dyn crate::filter::prefix::PrefixExtractor>) -> Self {
        self.0.prefix_extractor = Some(x);
        self
    }

    /// Bits per key of the Bloom filters (0 = no filters). Default 10.
    #[must_use]
    pub fn bits_per_key(mut self, bits: f64) -> Self {
        self.0.filter.bits_per_key = bits;
        self
    }

    /// Installs a compaction filter (see [`Options::compaction_filter`]).
    #[must_use]
    pub fn compaction_filter(mut self, f: Arc<dyn CompactionFilter>) -> Self {
        self.0.compaction_filter = Some(f);
        self
    }

    /// Sets the time to live of every value (see [`Options::ttl`]).
    #[must_use]
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.0.ttl = Some(ttl);
        self
    }

    /// Sets the age at which files are compacted (see
    /// [`Options::periodic_compaction`]; `Duration::ZERO` turns it off).
    #[must_use]
    pub fn periodic_compaction(mut self, age: Duration) -> Self {
        self.0.periodic_compaction = Some(age);
        self
    }

    /// Sets the wall clock (see [`Options::clock`]).
    #[must_use]
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.0.clock = clock;
        self
    }

    /// Finishes the builder.
    #[must_use]
    pub fn build(self) -> Options {
        self.0
    }
}
