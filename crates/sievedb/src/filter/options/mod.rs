//! Filter settings: hash function, index scheme, layout, sharing mode.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// Defines `Display`/`FromStr` (case-insensitive), `ALL` and `ALIASES` for a
/// unit enum from a table of `(variant, name)` and an optional table of
/// `(alias, variant)`: extra names `FromStr` accepts (never printed).
macro_rules! named_enum {
    ($ty:ident, $what:literal, [$(($v:ident, $name:literal)),+ $(,)?]) => {
        named_enum!($ty, $what, [$(($v, $name)),+], aliases []);
    };
    ($ty:ident, $what:literal, [$(($v:ident, $name:literal)),+ $(,)?],
     aliases [$(($alias:literal, $av:ident)),* $(,)?]) => {
        impl $ty {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$v),+];

            /// Other names `FromStr` accepts, with the variant each one means.
            pub const ALIASES: &'static [(&'static str, $ty)] = &[$(($alias, $ty::$av)),*];

            /// The name used by `Display` and `FromStr`.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$v => $name),+
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.name())
            }
        }

        impl FromStr for $ty {
            type Err = Error;
            fn from_str(s: &str) -> Result<Self> {
                $(if s.eq_ignore_ascii_case($name) {
                    return Ok($ty::$v);
                })+
                if let Some((_, v)) = Self::ALIASES.iter().find(|(a, _)| s.eq_ignore_ascii_case(a)) {
                    return Ok(*v);
                }
                let names: &[&str] = &[$($name),+];
                let aliases: Vec<String> = Self::ALIASES
                    .iter()
                    .map(|(a, v)| format!("{a} = {}", v.name()))
                    .collect();
                let aliases = if aliases.is_empty() {
                    String::new()
                } else {
                    format!("; aliases: {}", aliases.join(", "))
                };
                Err(Error::InvalidArgument(format!(
                    concat!("unknown ", $what, " '{}' (expected one of: {}{})"),
                    s,
                    names.join(", "),
                    aliases
                )))
            }
        }
    };
}

/// Hash function used to build (and therefore probe) a filter. Its id byte is
/// stored in the filter header, so a file is always probed with the function
/// it was built with.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, FilterOptions, HashFn, Options};
///
/// let hash: HashFn = "xxh3".parse()?;
/// assert_eq!((hash, hash.id()), (HashFn::Xxh3, 2));
/// assert_eq!("mm64".parse::<HashFn>()?, HashFn::Murmur64A); // the paper's table names
/// let filter = FilterOptions { hash, ..FilterOptions::default() };
/// let db = Db::open(dir.path(), Options::builder().filter(filter).build())?;
/// db.put("k", "v")?;
/// db.flush()?;
/// db.close()?;
/// // Reopened with the default function, the file is still probed with XXH3.
/// let db = Db::open(dir.path(), Options::default())?;
/// assert_eq!(db.get("k")?.as_deref(), Some(&b"v"[..]));
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum HashFn {
    /// MurmurHash64A (default, as in the paper). Id 1.
    #[default]
    Murmur64A,
    /// XXH3-64. Id 2.
    Xxh3,
    /// XXH64. Id 3.
    Xxh64,
    /// MurmurHash3 x64_128, truncated to its first 64 bits (`h1`). Id 4.
    Murmur3,
    /// Two CRC32C lanes with different inits, concatenated and finalised with
    /// `fmix64` (see [`crate::filter::hash::crc32c_64`]). Id 5.
    Crc32c,
    /// CityHash64 v1.1. Id 6.
    City64,
    /// MD5, first 8 bytes (little-endian). Id 7.
    Md5,
    /// SHA-256, first 8 bytes (little-endian). Id 8.
    Sha256,
}

named_enum!(
    HashFn,
    "hash function",
    [
        (Murmur64A, "murmur64a"),
        (Xxh3, "xxh3"),
        (Xxh64, "xxh64"),
        (Murmur3, "murmur3"),
        (Crc32c, "crc32c"),
        (City64, "city64"),
        (Md5, "md5"),
        (Sha256, "sha256"),
    ],
    // The names of the hash tables of paper 000 (Tables 1-3): MM64, XX (the
    // 64-bit XXHash of its time, XXH64; XXH3 is newer), CRC and CITY.
    aliases [
        ("mm64", Murmur64A),
        ("xx", Xxh64),
        ("crc", Crc32c),
        ("city", City64),
    ]
);

impl HashFn {
    /// The stable id byte stored in filter headers.
    pub fn id(self) -> u8 {
        match self {
            HashFn::Murmur64A => 1,
            HashFn::Xxh3 => 2,
            HashFn::Xxh64 => 3,
            HashFn::Murmur3 => 4,
            HashFn::Crc32c => 5,
            HashFn::City64 => 6,
            HashFn::Md5 => 7,
            HashFn::Sha256 => 8,
        }
    }

    /// The function with id byte `id`.
    pub fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            1 => HashFn::Murmur64A,
            2 => HashFn::Xxh3,
            3 => HashFn::Xxh64,
            4 => HashFn::Murmur3,
            5 => HashFn::Crc32c,
            6 => HashFn::City64,
            7 => HashFn::Md5,
            8 => HashFn::Sha256,
            _ => return None,
        })
    }
}

/// How a filter turns a key's hash(es) into its `k` bit positions.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, FilterOptions, HashFn, HashSharing, IndexScheme, Options};
///
/// let scheme: IndexScheme = "double".parse()?;
/// let filter = FilterOptions { scheme, secondary_hash: HashFn::Xxh64, ..Default::default() };
/// assert_eq!(filter.effective_scheme(), IndexScheme::Double);
/// // Without hash sharing, filters are built with `k` independent hashes instead.
/// let unshared = FilterOptions { sharing: HashSharing::None, ..filter.clone() };
/// assert_eq!(unshared.effective_scheme(), IndexScheme::Independent);
/// let db = Db::open(dir.path(), Options::builder().filter(filter).build())?;
/// db.put("k", "v")?;
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum IndexScheme {
    /// `k` independently seeded hashes of the key, one per position ("All k").
    Independent,
    /// One digest `h`; `δ = rotl64(h, 17)`, `g_i = h + i·δ` (64-bit analogue of
    /// LevelDB's 32-bit `h>>17 | h<<15`; the version-1 scheme). Default.
    #[default]
    Rotation,
    /// Two hashes: `g_i = h1 + i·h2` (Kirsch–Mitzenmacher double hashing; `h2`
    /// from [`FilterOptions::secondary_hash`]).
    Double,
    /// One digest split into 32-bit halves `a`, `b`; Dillinger–Manolios
    /// enhanced double hashing modulo the filter size:
    /// `x ← a, y ← b; x ← x + y; y ← y + i`.
    EnhancedDouble,
}

named_enum!(
    IndexScheme,
    "index scheme",
    [
        (Independent, "independent"),
        (Rotation, "rotation"),
        (Double, "double"),
        (EnhancedDouble, "enhanced-double"),
    ]
);

impl IndexScheme {
    /// The id byte stored in filter headers.
    pub fn id(self) -> u8 {
        match self {
            IndexScheme::Rotation => 0,
            IndexScheme::Independent => 1,
            IndexScheme::Double => 2,
            IndexScheme::EnhancedDouble => 3,
        }
    }

    /// The scheme with id byte `id`.
    pub fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            0 => IndexScheme::Rotation,
            1 => IndexScheme::Independent,
            2 => IndexScheme::Double,
            3 => IndexScheme::EnhancedDouble,
            _ => return None,
        })
    }
}

/// How much hashing a lookup shares between filters.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use sievedb::{Db, FilterOptions, HashSharing, Options};
///
/// for (sharing, digests) in [(HashSharing::Levels, 1), (HashSharing::Filter, 2)] {
///     # let dir = tempfile::tempdir()?;
///     let filter = FilterOptions { sharing, ..FilterOptions::default() };
///     let db = Db::open(dir.path(), Options::builder().filter(filter).build())?;
///     for v in ["1", "2"] {
///         db.put("a", v)?;
///         db.put("z", v)?;
///         db.flush()?; // two L0 files, each spanning a..z
///     }
///     let before = db.stats();
///     db.get("m")?; // in neither: both filters are probed
///     assert_eq!(db.stats().delta_since(&before).digests_computed, digests);
/// }
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum HashSharing {
    /// No sharing at all: filters are built with the
    /// [`IndexScheme::Independent`] scheme whatever [`FilterOptions::scheme`]
    /// says, and every probe of every filter computes its own `k` seeded hashes
    /// (the paper's "All k" baseline).
    None,
    /// One digest per filter probed (the state of the art the paper compares
    /// against).
    Filter,
    /// One digest per lookup, reused by every filter of every level (default).
    #[default]
    Levels,
}

named_enum!(
    HashSharing,
    "hash sharing mode",
    [(None, "none"), (Filter, "filter"), (Levels, "levels")]
);

/// How a filter's bits are organised.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, FilterLayout, FilterOptions, Options};
///
/// // ElasticBF units: 4 Bloom filters of 10/4 bits per key each.
/// let filter = FilterOptions { layout: FilterLayout::Units, units: 4, ..Default::default() };
/// assert_eq!(filter.effective_units(), 4);
/// assert_eq!(filter.probes_per_unit(), 2); // round(2.5 ln 2)
/// let blocked = FilterOptions { layout: "blocked".parse()?, ..filter.clone() };
/// assert_eq!(blocked.effective_units(), 1); // the other layouts are one unit
/// let db = Db::open(dir.path(), Options::builder().filter(filter).build())?;
/// db.put("k", "v")?;
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum FilterLayout {
    /// One standard Bloom filter over the whole bit array (default).
    #[default]
    Bloom,
    /// Cache-blocked Bloom filter: all `k` probes fall in one 64-byte line
    /// chosen from the digest's high bits.
    Blocked,
    /// ElasticBF filter units: [`FilterOptions::units`] small Bloom filters of
    /// `b/units` bits per key each; a probe stops at the first unit saying no.
    Units,
    /// Homogeneous Ribbon filter (Dillinger & Walzer 2021) with 128-bit
    /// coefficient rows and fractional result bits (layout id 7), built from
    /// the stored digests in one pass (it never needs a new seed) and probed
    /// with the lookup's one digest: `b` bits per key spent exactly (any
    /// fraction) over `n (1 + ε)` slots, ε from 1.5% (10K keys) to 3.5% (1M
    /// keys), FPR ≈ 2^-(b / (1 + ε)) (see [`crate::filter::ribbon::wide`]).
    /// Files of the standard wide Ribbon (layout id 5, written before) decode
    /// as this layout and answer unchanged. Index scheme, probe count and
    /// units do not apply.
    Ribbon,
    /// The first Ribbon layout (id 4): 64-bit coefficient rows, `r = ⌊b /
    /// (1 + ε)⌋` whole result bits per slot, ε from 4% (10K keys) to 10% (1M
    /// keys), FPR ≈ 2^-r (see [`crate::filter::ribbon`]). Files written with
    /// it decode and answer as before; kept to be chosen for comparison.
    Ribbon64,
    /// ElasticBF units made of Ribbon filters (layout id 6):
    /// [`FilterOptions::units`] 64-bit-row Ribbon filters (as
    /// [`FilterLayout::Ribbon64`]'s) of `b / units` bits per key each, every
    /// one with its own seed and `r = ⌊(b / units) / (1 + ε)⌋` result bits
    /// (rate `2^-r` per unit, the product over the resident ones), loaded,
    /// dropped and counted as Bloom units (see
    /// [`crate::filter::ribbon_units`]).
    RibbonUnits,
}

named_enum!(
    FilterLayout,
    "filter layout",
    [
        (Bloom, "bloom"),
        (Blocked, "blocked"),
        (Units, "units"),
        (Ribbon, "ribbon"),
        (Ribbon64, "ribbon64"),
        (RibbonUnits, "ribbon-units")
    ]
);

impl FilterLayout {
    /// The id byte stored in filter headers.
    pub fn id(self) -> u8 {
        match self {
            FilterLayout::Bloom => 1,
            FilterLayout::Blocked => 2,
            FilterLayout::Units => 3,
            FilterLayout::Ribbon64 => 4,
            FilterLayout::RibbonUnits => 6,
            FilterLayout::Ribbon => 7,
        }
    }

    /// Whether the layout is a whole Ribbon filter (either width): one
    /// digest per probe, no index scheme, probe count or units.
    pub fn is_ribbon(self) -> bool {
        matches!(self, FilterLayout::Ribbon | FilterLayout::Ribbon64)
    }

    /// Whether filters of this layout are made of Ribbon filters, whole
    /// ([`is_ribbon`](Self::is_ribbon)) or units
    /// ([`FilterLayout::RibbonUnits`]): one digest per probe, no index
    /// scheme or probe count.
    pub fn is_ribbon_family(self) -> bool {
        self.is_ribbon() || self == FilterLayout::RibbonUnits
    }

    /// Whether filters of this layout are made of units (Bloom or Ribbon).
    pub fn is_units(self) -> bool {
        matches!(self, FilterLayout::Units | FilterLayout::RibbonUnits)
    }

    /// The layout with id byte `id`.
    pub fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            1 => FilterLayout::Bloom,
            2 => FilterLayout::Blocked,
            3 => FilterLayout::Units,
            4 => FilterLayout::Ribbon64,
            // 5: the standard wide Ribbon, read as its homogeneous successor.
            5 | 7 => FilterLayout::Ribbon,
            6 => FilterLayout::RibbonUnits,
            _ => return None,
        })
    }
}

/// Where the filter units of the [`FilterLayout::Units`] layout get their
/// hashes from.
///
/// ```
/// use sievedb::{FilterLayout, FilterOptions, UnitHashing};
///
/// let filter = FilterOptions {
///     layout: FilterLayout::Units,
///     unit_hashing: UnitHashing::Separate, // ElasticBF's original design
///     ..FilterOptions::default()
/// };
/// assert_eq!(filter.effective_unit_hashing(), UnitHashing::Separate);
/// // Outside the units layout, hashing is always shared.
/// let bloom = FilterOptions { layout: FilterLayout::Bloom, ..filter.clone() };
/// assert_eq!(bloom.effective_unit_hashing(), UnitHashing::Shared);
/// assert_eq!("separate".parse::<UnitHashing>().ok(), Some(UnitHashing::Separate));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum UnitHashing {
    /// All units share one digest: unit `j` uses probes `j·k_u … (j+1)·k_u − 1`
    /// of the index scheme (the paper's hash sharing; default).
    #[default]
    Shared,
    /// Unit `j` hashes the key itself with its own seed (ElasticBF's original
    /// design, `units` hash computations per filter probe).
    Separate,
}

named_enum!(
    UnitHashing,
    "unit hashing mode",
    [(Shared, "shared"), (Separate, "separate")]
);

impl UnitHashing {
    /// The id byte stored in filter headers.
    pub fn id(self) -> u8 {
        match self {
            UnitHashing::Shared => 0,
            UnitHashing::Separate => 1,
        }
    }

    /// The mode with id byte `id`.
    pub fn from_id(id: u8) -> Option<Self> {
        Some(match id {
            0 => UnitHashing::Shared,
            1 => UnitHashing::Separate,
            _ => return None,
        })
    }
}

/// How much memory the filters of all SST files may hold together
/// ([`crate::Options::filter_memory`]). Filters are stored on disk as units (see
/// [`crate::FilterLayout::Units`]; the other layouts are one unit), and only
/// the resident units are probed: a file with none answers "maybe" and its
/// lookup reads a data block. Which units are resident under a budget is the
/// [`crate::Options::filter_policy`]'s choice.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, FilterMemory, Options};
///
/// // 4 bits per live entry: 500 000 bytes for a million entries.
/// assert_eq!(FilterMemory::BitsPerKey(4.0).budget_bytes(1_000_000), Some(500_000));
/// assert_eq!(FilterMemory::Unlimited.budget_bytes(1_000_000), None);
/// let budget = FilterMemory::Bytes(64 << 10);
/// let db = Db::open(dir.path(), Options::builder().filter_memory(budget).build())?;
/// db.put("k", "v")?;
/// db.flush()?;
/// let stats = db.stats();
/// assert_eq!(stats.filter_memory_budget_bytes, Some(64 << 10));
/// assert!(stats.filter_memory_bytes <= 64 << 10); // the resident units fit the budget
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum FilterMemory {
    /// Every unit of every file is resident (the default; filter memory
    /// grows with the data).
    #[default]
    Unlimited,
    /// At most this many bytes of filter units are resident.
    Bytes(u64),
    /// At most `b × live entries` bits (entries of every live SST), following
    /// the tree as it grows and shrinks.
    BitsPerKey(f64),
}

impl FilterMemory {
    /// The budget in bytes for a tree of `entries` live entries (`None` = unlimited).
    pub fn budget_bytes(&self, entries: u64) -> Option<u64> {
        match *self {
            FilterMemory::Unlimited => None,
            FilterMemory::Bytes(n) => Some(n),
            #[expect(clippy::cast_sign_loss, reason = "clamped at zero before the cast")]
            FilterMemory::BitsPerKey(b) => Some((b.max(0.0) * entries as f64 / 8.0) as u64),
        }
    }

    /// Checks the setting.
    pub fn validate(&self) -> Result<()> {
        match *self {
            FilterMemory::BitsPerKey(b) if !(0.0..=10_000.0).contains(&b) => {
                Err(Error::InvalidArgument(format!(
                    "filter_memory bits per key must be between 0 and 10000, not {b}"
                )))
            }
            _ => Ok(()),
        }
    }
}

/// Most probes (over all units) a filter may use.
pub const MAX_PROBES: u32 = 64;
/// Most filter units per filter.
pub const MAX_UNITS: u32 = 64;

/// Filter settings of a database. Only what is stored in a filter's header
/// (layout, hash functions, scheme, probes, units) affects how an existing
/// file is probed; `sharing` is a lookup-time setting.
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// use sievedb::{Db, FilterLayout, FilterOptions, HashFn, Options};
///
/// let filter = FilterOptions {
///     bits_per_key: 16.0,
///     hash: HashFn::Xxh3,
///     layout: FilterLayout::Blocked,
///     ..FilterOptions::default()
/// };
/// filter.validate()?;
/// assert_eq!(filter.probes_per_unit(), 11); // round(16 ln 2)
/// let db = Db::open(dir.path(), Options::builder().filter(filter).build())?;
/// assert_eq!(db.options().filter.layout, FilterLayout::Blocked);
/// # Ok(()) }
/// ```
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct FilterOptions {
    /// Bits per key; 0 disables filters. Default 10.
    pub bits_per_key: f64,
    /// Primary hash function. Default MurmurHash64A.
    pub hash: HashFn,
    /// Second hash function of the [`IndexScheme::Double`] scheme (ignored by
    /// the others). Default XXH3.
    pub secondary_hash: HashFn,
    /// Index scheme. Default rotation. Overridden by `sharing = none`.
    pub scheme: IndexScheme,
    /// Layout of the filter bits. Default standard Bloom.
    pub layout: FilterLayout,
    /// Probes per filter (per unit for the units layout); `None` = derived from
    /// the bits per key (of one unit), see `leveldb_probes`.
    pub num_probes: Option<u32>,
    /// Derive the probe count as LevelDB does, `⌊0.69·b⌋` clamped to [1, 30],
    /// instead of `round(b·ln 2)`. Default false.
    pub leveldb_probes: bool,
    /// Number of filter units of the units layout (ignored by the others).
    /// Default 7 (the paper's Table 3 setting).
    pub units: u32,
    /// Hash source of the filter units. Default shared.
    pub unit_hashing: UnitHashing,
    /// Digest sharing across filters during a lookup. Default levels.
    pub sharing: HashSharing,
    /// Keep a filter over each memtable's keys, probed with the lookup's
    /// digest, so a lookup of a key the memtable lacks skips the skiplist
    /// walk. Writes then hash each key once more. Default false.
    pub memtable_filter: bool,
    /// The hybrid tree (RocksDB's `bloom_before_level`): files written to
    /// levels `0..n` get Bloom filters, files of level `n` and below Ribbon
    /// filters, of the shape of [`layout`](Self::layout) (whole filters stay
    /// whole, units stay units; see [`FilterOptions::for_level`]). `None`
    /// (default): every level gets `layout`.
    pub ribbon_from_level: Option<u32>,
    /// Cut each file's filter by key range into partitions of about this
    /// many bytes (RocksDB's `partition_filters` with `metadata_block_size`;
    /// see [`crate::filter::partitioned`]): only a small top-level index is
    /// held while the file is open, and a filter memory budget keeps the
    /// hot partitions of a file resident, not all or none of it. Needs a
    /// one-unit layout (Bloom, blocked, Ribbon); 64 B to 64 MiB. `None`
    /// (default): whole filters.
    pub partition_bytes: Option<u64>,
    /// The filter budget picks each new file's family (Bloom or Ribbon of
    /// the shape of [`layout`](Self::layout)) at flushes, compactions and
    /// bulk loads: the cheaper per lookup under the bits the file is
    /// expected to hold resident, a false positive priced at
    /// [`false_positive_cost`](Self::false_positive_cost) (see
    /// `filter/budget/choice.rs`). Not with
    /// [`ribbon_from_level`](Self::ribbon_from_level). Default false.
    pub choose_family: bool,
    /// What a false positive (a data block read) costs in Bloom unit probes
    /// for [`choose_family`](Self::choose_family). Default 1000.
    pub false_positive_cost: f64,
}

/// [`FilterOptions::false_positive_cost`]'s default.
pub const DEFAULT_FALSE_POSITIVE_COST: f64 = 1000.0;

impl Default for FilterOptions {
    fn default() -> Self {
        FilterOptions {
            bits_per_key: 10.0,
            hash: HashFn::Murmur64A,
            secondary_hash: HashFn::Xxh3,
            scheme: IndexScheme::Rotation,
            layout: FilterLayout::Bloom,
            num_probes: None,
            leveldb_probes: false,
            units: 7,
            unit_hashing: UnitHashing::Shared,
            sharing: HashSharing::Levels,
            memtable_filter: false,
            ribbon_from_level: None,
            partition_bytes: None,
            choose_family: false,
            false_positive_cost: DEFAULT_FALSE_POSITIVE_COST,
        }
    }
}

/// Probes for `bits_per_key` (of one unit): round(b·ln 2), clamped to [1, 30].
#[expect(
    clippy::cast_sign_loss,
    reason = "`as` saturates a negative count to 0, which the clamp raises to 1"
)]
pub fn optimal_probes(bits_per_key: f64) -> u32 {
    ((bits_per_key * std::f64::consts::LN_2).round() as u32).clamp(1, 30)
}

/// LevelDB's probe count for `bits_per_key`: ⌊0.69·b⌋ clamped to [1, 30].
#[expect(
    clippy::cast_sign_loss,
    reason = "`as` saturates a negative count to 0, which the clamp raises to 1"
)]
pub fn leveldb_probes(bits_per_key: f64) -> u32 {
    ((bits_per_key * 0.69) as u32).clamp(1, 30)
}

impl FilterOptions {
    /// Whether filters are built at all.
    pub fn enabled(&self) -> bool {
        self.bits_per_key > 0.0
    }

    /// The options a file written to `level` is built with: those of
    /// [`ribbon_from_level`](Self::ribbon_from_level)'s family for the
    /// level (the layout only changes), or these options unchanged.
    ///
    /// ```
    /// use sievedb::{FilterLayout, FilterOptions};
    ///
    /// let o = FilterOptions { layout: FilterLayout::Units, ribbon_from_level: Some(1), ..Default::default() };
    /// assert_eq!(o.for_level(0).layout, FilterLayout::Units);
    /// assert_eq!(o.for_level(3).layout, FilterLayout::RibbonUnits);
    /// ```
    #[must_use]
    pub fn for_level(&self, level: usize) -> FilterOptions {
        let Some(n) = self.ribbon_from_level else {
            return self.clone();
        };
        let family = if level >= n as usize {
            super::family::Family::Ribbon
        } else {
            super::family::Family::Bloom
        };
        FilterOptions {
            layout: family.layout_like(self.layout),
            ..self.clone()
        }
    }

    /// Units the filter budget sees in a file's filter: the filter's units,
    /// or a partitioned filter's [`PARTITION_UNITS`](crate::filter::partitioned::PARTITION_UNITS)
    /// shares of its bytes.
    pub fn budget_units(&self) -> u32 {
        if self.partition_bytes.is_some() && !self.layout.is_units() {
            crate::filter::partitioned::PARTITION_UNITS
        } else {
            self.effective_units()
        }
    }

    /// Units the built filters have: `units` for the units layouts, else 1.
    pub fn effective_units(&self) -> u32 {
        if self.layout.is_units() {
            self.units.clamp(1, MAX_UNITS)
        } else {
            1
        }
    }

    /// The scheme the built filters use: independent when `sharing = none`,
    /// else `scheme` (rotation, stored but unused, for the Ribbon layouts,
    /// which take one digest whatever the sharing).
    pub fn effective_scheme(&self) -> IndexScheme {
        if self.layout.is_ribbon_family() {
            IndexScheme::Rotation
        } else if self.sharing == HashSharing::None {
            IndexScheme::Independent
        } else {
            self.scheme
        }
    }

    /// Unit hashing the built filters use (always shared outside the units
    /// layout).
    pub fn effective_unit_hashing(&self) -> UnitHashing {
        if self.layout == FilterLayout::Units {
            self.unit_hashing
        } else {
            UnitHashing::Shared
        }
    }

    /// Probes per unit (per filter outside the units layout) of the built
    /// filters, so that `probes × units ≤ 64`; for the Ribbon layouts, the
    /// (base) result bits `r` of a file of [`super::ribbon::NOMINAL_KEYS`]
    /// keys (each file's own depend on its key count; `num_probes` does not
    /// apply), and for the Ribbon-units layout each unit's.
    pub fn probes_per_unit(&self) -> u32 {
        let n = super::ribbon::NOMINAL_KEYS;
        match self.layout {
            FilterLayout::Ribbon64 => {
                return super::ribbon::result_bits_for(self.bits_per_key, n);
            }
            FilterLayout::Ribbon => {
                use super::ribbon::wide;
                let slots = wide::slots_for(n, wide::epsilon_for(n));
                return wide::result_bits_for(self.bits_per_key, n, slots).0;
            }
            FilterLayout::RibbonUnits => {
                return super::ribbon_units::result_bits(
                    self.bits_per_key,
                    self.effective_units(),
                    n,
                );
            }
            _ => {}
        }
        let units = self.effective_units();
        let b = self.bits_per_key / f64::from(units);
        let k = self.num_probes.unwrap_or_else(|| {
            if self.leveldb_probes {
                leveldb_probes(b)
            } else {
                optimal_probes(b)
            }
        });
        k.clamp(1, MAX_PROBES / units)
    }
}

mod validate;

#[cfg(test)]
mod tests;
