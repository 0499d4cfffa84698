//! The filter flags shared by `sievedb bench` and `sievedb bulkload`.
//!
//! Both commands `#[command(flatten)]` one [`FilterArgs`], so they accept the
//! same filter flags with the same names, defaults and checks. Everything the
//! flags mean for sievedb goes through [`FilterArgs::apply`], the one place
//! that writes them into [`Options`].
//!
//! Adding a flag: add the field here with its `#[arg]`, its value in
//! [`Default`], its line in [`FilterArgs::apply`] (and a check in
//! [`FilterArgs::validate`] if it needs one). `bench`, `bulkload`, the
//! engine configuration and the bulk-load configuration all carry a whole
//! `FilterArgs`, so nothing else changes.

use sievedb::{
    FilterLayout, FilterMemory, FilterOptions, FilterPolicy, HashFn, HashSharing, IndexScheme,
    Options, UnitHashing,
};

use crate::DEFAULT_BITS_PER_KEY;

/// Largest `--filter-memory-bits-per-key` (the engine's own limit).
pub const MAX_FILTER_MEMORY_BITS_PER_KEY: f64 = 10_000.0;

/// Parses a sievedb filter setting by its name (`murmur64a`, `rotation`, …).
pub(crate) fn parse_named<T: std::str::FromStr<Err = sievedb::Error>>(
    s: &str,
) -> Result<T, String> {
    s.parse().map_err(|e: sievedb::Error| e.to_string())
}

/// Checks a filter-memory budget in bits per key: finite, 0..=10000.
fn check_memory_bits_per_key(b: f64) -> Result<f64, String> {
    if b.is_nan() || !(0.0..=MAX_FILTER_MEMORY_BITS_PER_KEY).contains(&b) {
        return Err(format!(
            "--filter-memory-bits-per-key must be a number between 0 and \
             {MAX_FILTER_MEMORY_BITS_PER_KEY}, not {b}"
        ));
    }
    Ok(b)
}

/// clap value parser of `--filter-memory-bits-per-key`.
fn parse_memory_bits_per_key(s: &str) -> Result<f64, String> {
    let b: f64 = s
        .trim()
        .parse()
        .map_err(|_| format!("{s:?} is not a number of bits per key"))?;
    check_memory_bits_per_key(b)
}

/// The filter flags of `sievedb bench` and `sievedb bulkload`.
#[derive(clap::Args, Clone, Debug, PartialEq)]
pub struct FilterArgs {
    /// Bloom filter bits per key (0 = no filters; LevelDB rounds to a whole number)
    #[arg(long, value_name = "B", default_value_t = DEFAULT_BITS_PER_KEY,
          allow_negative_numbers = true)]
    pub bits_per_key: f64,
    /// Filter hash function (sievedb): murmur64a, murmur3, xxh64, xxh3, crc32c,
    /// city64, md5, sha256; the paper's table names are aliases: mm64 = murmur64a,
    /// xx = xxh64, crc = crc32c, city = city64
    #[arg(long, value_name = "FN", default_value = "murmur64a", value_parser = parse_named::<HashFn>)]
    pub hash: HashFn,
    /// How a filter derives its k positions (sievedb): independent, rotation,
    /// double, enhanced-double
    #[arg(long, value_name = "S", default_value = "rotation", value_parser = parse_named::<IndexScheme>)]
    pub index_scheme: IndexScheme,
    /// Second hash function of the double scheme (sievedb); same names and
    /// aliases as --hash
    #[arg(long, value_name = "FN", default_value = "xxh3", value_parser = parse_named::<HashFn>)]
    pub secondary_hash: HashFn,
    /// Filter layout (sievedb): bloom, blocked (one cache line per key), units
    /// (ElasticBF), ribbon (128-bit rows, b bits per key spent exactly, ε
    /// 1.5% to 3.5%), ribbon64 (64-bit rows, r = ⌊b/(1+ε)⌋ result bits, ε 4%
    /// to 10%) or ribbon-units (ElasticBF units of 64-bit-row Ribbon filters)
    #[arg(long, value_name = "L", default_value = "bloom", value_parser = parse_named::<FilterLayout>)]
    pub filter: FilterLayout,
    /// Filter units per file with --filter units or ribbon-units
    #[arg(long, value_name = "N", default_value_t = 7)]
    pub filter_units: u32,
    /// The hybrid tree (sievedb): Bloom filters above level N, Ribbon filters
    /// from level N down, of --filter's shape (bloom/blocked become ribbon,
    /// units become ribbon-units, ribbon64 stays; RocksDB's bloom_before_level)
    #[arg(long, value_name = "N", conflicts_with = "choose_family")]
    pub ribbon_from_level: Option<u32>,
    /// The filter budget picks each new file's family (sievedb): Bloom or
    /// Ribbon of --filter's shape, whichever costs a lookup least under the
    /// bits per key the budget is expected to give the file (flushes,
    /// compactions and bulk loads; see the guide's filter-budget chapter)
    #[arg(long)]
    pub choose_family: bool,
    /// What a false positive costs in Bloom unit probes, for --choose-family
    #[arg(long, value_name = "C", default_value_t = sievedb::DEFAULT_FALSE_POSITIVE_COST)]
    pub false_positive_cost: f64,
    /// Partitioned filters (sievedb): each file's filter cut by key range
    /// into partitions of about N bytes, only a top-level index held while
    /// the file is open (RocksDB's partition_filters + metadata_block_size)
    #[arg(long, value_name = "N")]
    pub filter_partition_bytes: Option<u64>,
    /// Two-level indexes (sievedb): each file's index cut into partitions of
    /// about N bytes, only its top level held while the file is open
    /// (RocksDB's kTwoLevelIndexSearch + metadata_block_size)
    #[arg(long, value_name = "N")]
    pub index_partition_bytes: Option<u64>,
    /// Hash source of filter units: shared (one digest) or separate (seeded per unit,
    /// ElasticBF's original)
    #[arg(long, value_name = "M", default_value = "shared", value_parser = parse_named::<UnitHashing>)]
    pub unit_hashing: UnitHashing,
    /// Probes per filter (per unit); default round(b·ln 2)
    #[arg(long, value_name = "K")]
    pub num_probes: Option<u32>,
    /// Derive the probe count as LevelDB does, floor(0.69·b)
    #[arg(long)]
    pub leveldb_probes: bool,
    /// Keep a filter over each memtable, probed with the lookup's digest (sievedb)
    #[arg(long)]
    pub memtable_filter: bool,
    /// Digest sharing of a lookup (sievedb): none (k hashes per filter), filter
    /// (one per filter), levels (one per lookup)
    #[arg(long, value_name = "M", default_value = "levels", value_parser = parse_named::<HashSharing>)]
    pub hash_sharing: HashSharing,
    /// Filter memory budget of all table files together, in bits per live
    /// entry (sievedb; default: unlimited). Excludes --filter-memory-bytes
    #[arg(long, value_name = "B", value_parser = parse_memory_bits_per_key,
          conflicts_with = "filter_memory_bytes", allow_negative_numbers = true)]
    pub filter_memory_bits_per_key: Option<f64>,
    /// Filter memory budget of all table files together, in bytes (sievedb;
    /// default: unlimited). Excludes --filter-memory-bits-per-key
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub filter_memory_bytes: Option<u64>,
    /// How a filter memory budget is divided among files (sievedb): uniform,
    /// monkey, elastic (ElasticBF's multi-queue from Monkey's plan),
    /// elastic-uniform (ElasticBF's own start), skew-at-write
    #[arg(long, value_name = "P", default_value = "uniform", value_parser = parse_named::<FilterPolicy>)]
    pub filter_policy: FilterPolicy,
    /// ElasticBF's lifeTime in lookups (sievedb, elastic policies; default:
    /// the order of the number of files)
    #[arg(long, value_name = "N")]
    pub filter_lifetime: Option<u64>,
    /// One lookup in N records the files it probes, counted N times, under a
    /// filter memory budget (sievedb; default 4; 1: exact counts)
    #[arg(long, value_name = "N")]
    pub filter_access_sample: Option<u32>,
    /// Filter units a new file starts with under --filter-policy
    /// elastic-uniform (sievedb; default 2, the ElasticBF prototype's)
    #[arg(long, value_name = "N")]
    pub initial_units: Option<u32>,
}

impl Default for FilterArgs {
    fn default() -> Self {
        FilterArgs {
            bits_per_key: DEFAULT_BITS_PER_KEY,
            hash: HashFn::Murmur64A,
            index_scheme: IndexScheme::Rotation,
            secondary_hash: HashFn::Xxh3,
            filter: FilterLayout::Bloom,
            filter_units: 7,
            ribbon_from_level: None,
            choose_family: false,
            false_positive_cost: sievedb::DEFAULT_FALSE_POSITIVE_COST,
            filter_partition_bytes: None,
            index_partition_bytes: None,
            unit_hashing: UnitHashing::Shared,
            num_probes: None,
            leveldb_probes: false,
            memtable_filter: false,
            hash_sharing: HashSharing::Levels,
            filter_memory_bits_per_key: None,
            filter_memory_bytes: None,
            filter_policy: FilterPolicy::Uniform,
            filter_lifetime: None,
            filter_access_sample: None,
            initial_units: None,
        }
    }
}

impl FilterArgs {
    /// The sievedb filter settings these flags ask for.
    pub fn filter_options(&self) -> FilterOptions {
        FilterOptions {
            bits_per_key: self.bits_per_key,
            hash: self.hash,
            secondary_hash: self.secondary_hash,
            scheme: self.index_scheme,
            layout: self.filter,
            num_probes: self.num_probes,
            leveldb_probes: self.leveldb_probes,
            units: self.filter_units,
            unit_hashing: self.unit_hashing,
            sharing: self.hash_sharing,
            memtable_filter: self.memtable_filter,
            ribbon_from_level: self.ribbon_from_level,
            partition_bytes: self.filter_partition_bytes,
            choose_family: self.choose_family,
            false_positive_cost: self.false_positive_cost,
        }
    }

    /// The filter memory budget these flags ask for (unlimited without one).
    /// When both flags are set (only possible outside clap), bits per key wins;
    /// [`FilterArgs::validate`] refuses that combination.
    pub fn filter_memory(&self) -> FilterMemory {
        match (self.filter_memory_bits_per_key, self.filter_memory_bytes) {
            (Some(b), _) => FilterMemory::BitsPerKey(b),
            (None, Some(n)) => FilterMemory::Bytes(n),
            (None, None) => FilterMemory::Unlimited,
        }
    }

    /// Writes every filter setting of these flags into `opts` (and the
    /// index partitions, which go with partitioned filters).
    pub fn apply(&self, opts: &mut Options) {
        opts.filter = self.filter_options();
        opts.filter_memory = self.filter_memory();
        opts.filter_policy = self.filter_policy;
        opts.filter_lifetime = self.filter_lifetime;
        opts.filter_access_sample = self.filter_access_sample;
        opts.initial_units = self.initial_units;
        opts.index_partition_bytes = self.index_partition_bytes;
    }

    /// Checks the flags together; the message names the flag at fault.
    pub fn validate(&self) -> Result<(), String> {
        if self.bits_per_key.is_nan() || !(0.0..=10_000.0).contains(&self.bits_per_key) {
            return Err(format!(
                "--bits-per-key must be a number between 0 and 10000, not {}",
                self.bits_per_key
            ));
        }
        if self.filter_memory_bits_per_key.is_some() && self.filter_memory_bytes.is_some() {
            return Err(
                "--filter-memory-bits-per-key and --filter-memory-bytes exclude each other".into(),
            );
        }
        if let Some(b) = self.filter_memory_bits_per_key {
            check_memory_bits_per_key(b)?;
        }
        if self.filter_lifetime == Some(0) {
            return Err("--filter-lifetime must be at least 1".into());
        }
        if self.filter_access_sample == Some(0) {
            return Err("--filter-access-sample must be at least 1 (every lookup)".into());
        }
        self.filter_options()
            .validate()
            .map_err(|e| format!("filter flags: {e}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Cli {
        #[command(flatten)]
        f: FilterArgs,
    }

    fn parse(args: &[&str]) -> Result<FilterArgs, String> {
        let mut v = vec!["x"];
        v.extend_from_slice(args);
        Cli::try_parse_from(v)
            .map(|c| c.f)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_match_clap_and_the_engine() {
        let d = parse(&[]).unwrap();
        assert_eq!(d, FilterArgs::default());
        assert_eq!(d.filter_options(), FilterOptions::default());
        assert_eq!(d.filter_memory(), FilterMemory::Unlimited);
        assert_eq!(d.bits_per_key, 10.0);
        let mut o = Options::default();
        d.apply(&mut o);
        assert_eq!(o.filter, FilterOptions::default());
        assert_eq!(o.filter_memory, FilterMemory::Unlimited);
        d.validate().unwrap();
    }

    #[test]
    fn memory_flags_map_to_options() {
        let a = parse(&["--filter-memory-bits-per-key", "4.5"]).unwrap();
        assert_eq!(a.filter_memory(), FilterMemory::BitsPerKey(4.5));
        let a = parse(&["--filter-memory-bytes", "1048576"]).unwrap();
        assert_eq!(a.filter_memory(), FilterMemory::Bytes(1 << 20));
        let mut o = Options::default();
        a.apply(&mut o);
        assert_eq!(o.filter_memory, FilterMemory::Bytes(1 << 20));
        assert_eq!(
            parse(&["--filter-memory-bits-per-key", "0"])
                .unwrap()
                .filter_memory(),
            FilterMemory::BitsPerKey(0.0)
        );
    }

    #[test]
    fn memory_flags_exclude_each_other() {
        let e = parse(&[
            "--filter-memory-bits-per-key",
            "4",
            "--filter-memory-bytes",
            "100",
        ])
        .unwrap_err();
        assert!(e.contains("cannot be used with"), "{e}");
        let both = FilterArgs {
            filter_memory_bits_per_key: Some(4.0),
            filter_memory_bytes: Some(100),
            ..FilterArgs::default()
        };
        assert!(both.validate().unwrap_err().contains("exclude each other"));
    }

    #[test]
    fn bad_values_are_clear_errors() {
        for bad in ["-1", "NaN", "nan", "inf", "20000", "lots"] {
            let e = parse(&["--filter-memory-bits-per-key", bad]).unwrap_err();
            assert!(e.contains("--filter-memory-bits-per-key"), "{bad}: {e}");
        }
        for bad in ["-1", "1.5", "x"] {
            assert!(parse(&["--filter-memory-bytes", bad]).is_err(), "{bad}");
        }
        // Built outside clap: validate() catches the same values.
        for b in [-1.0, f64::NAN, f64::INFINITY] {
            let a = FilterArgs {
                filter_memory_bits_per_key: Some(b),
                ..FilterArgs::default()
            };
            let e = a.validate().unwrap_err();
            assert!(e.contains("--filter-memory-bits-per-key"), "{e}");
            let a = FilterArgs {
                bits_per_key: b,
                ..FilterArgs::default()
            };
            assert!(a.validate().unwrap_err().contains("--bits-per-key"));
        }
        let a = FilterArgs {
            filter_units: 0,
            ..FilterArgs::default()
        };
        assert!(a.validate().unwrap_err().contains("units"));
        assert!(parse(&["--filter", "cuckoo"]).is_err());
        assert!(parse(&["--hash", "blake3"]).is_err());
    }

    #[test]
    fn hash_flags_take_the_papers_aliases_and_list_them() {
        use clap::CommandFactory;
        let cmd = Cli::command();
        let help = |long: &str| {
            cmd.get_arguments()
                .find(|a| a.get_long() == Some(long))
                .and_then(|a| a.get_help())
                .map(|h| h.to_string())
                .unwrap_or_default()
        };
        let hash_help = help("hash");
        for f in HashFn::ALL {
            assert!(hash_help.contains(f.name()), "{hash_help}");
        }
        for (alias, f) in HashFn::ALIASES {
            assert!(
                hash_help.contains(&format!("{alias} = {}", f.name())),
                "{hash_help}"
            );
            let a = parse(&["--hash", alias, "--secondary-hash", alias]).unwrap();
            assert_eq!((a.hash, a.secondary_hash), (*f, *f));
        }
        assert!(help("secondary-hash").contains("aliases"));
    }

    #[test]
    fn unit_filter_flags() {
        let a = parse(&[
            "--filter",
            "units",
            "--filter-units",
            "6",
            "--bits-per-key",
            "12",
            "--unit-hashing",
            "separate",
            "--num-probes",
            "2",
        ])
        .unwrap();
        let f = a.filter_options();
        assert_eq!(f.layout, FilterLayout::Units);
        assert_eq!((f.units, f.bits_per_key), (6, 12.0));
        assert_eq!(f.unit_hashing, UnitHashing::Separate);
        assert_eq!(f.num_probes, Some(2));
        a.validate().unwrap();
    }
}
