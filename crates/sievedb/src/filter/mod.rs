//! Filters: the digest a lookup computes once, and the filters that consume it.
//!
//! * [`hash`]: the hash functions ([`HashFn`]), all behind one seeded signature;
//! * [`digest`]: [`KeyDigest`] and the per-lookup hashing state [`KeyProbe`],
//!   whose [`HashSharing`] mode decides how often a key is hashed;
//! * [`scheme`]: index schemes turning hashes into bit positions;
//! * [`bloom`], [`blocked`], [`units`], [`ribbon`], [`ribbon_units`]: the
//!   layouts ([`FilterLayout`]);
//! * [`family`]: what the budget needs from a filter kind (rates, probe cost);
//! * [`theory`]: theoretical false-positive rates;
//! * `builder`: [`FilterBuilder`], which builds and serialises a file's filter;
//! * `header`: the filter header's fields parsed into a filter's parameters;
//! * `memtable`: a concurrent Bloom filter for memtables;
//! * [`prefix`]: prefix extractors and the prefix filters of SSTs and
//!   memtables;
//! * [`partitioned`]: a file's filter cut by key range, with its top-level
//!   index.
//!
//! The filter section of an SST is self-describing (see
//! `docs/format.md`): a file is always probed with the parameters it was
//! built with, so files written under different filter settings coexist in one
//! database, and version-1 to 3 sections (older files) still decode. From
//! version 4 (`section`) every unit is its own block, so that a [`Filter`]
//! in memory may hold only a prefix of its units (the *resident* ones).

internal_mods!(budget, elastic, memtable, resident, section);

pub mod blocked;
pub mod bloom;
mod builder;
pub mod digest;
pub mod family;
pub mod hash;
mod header;
pub mod options;
pub mod partitioned;
pub mod prefix;
pub mod ribbon;
pub mod ribbon_units;
pub mod scheme;
pub mod theory;
pub mod units;

#[cfg(test)]
mod tests;

use std::sync::Arc;

use crate::coding::Reader;
use blocked::Line;
use digest::{DigestSource, HashSource, ProbeSource};
pub(crate) use header::parse_header;

pub use builder::FilterBuilder;
pub use digest::{KeyDigest, KeyProbe};
pub use elastic::FilterPolicy;
pub use memtable::MemtableFilter;
pub use options::{
    FilterLayout, FilterMemory, FilterOptions, HashFn, HashSharing, IndexScheme, UnitHashing,
    DEFAULT_FALSE_POSITIVE_COST, MAX_PROBES, MAX_UNITS,
};
pub use scheme::fast_range;
pub use section::{FilterIndex, FILTER_INDEX_VERSION};
pub use theory::theoretical_fpr;
pub use units::ALL_UNITS;

/// Filter format version written by [`FilterBuilder`]. Version 3 has version
/// 2's header and bits; only the blocked layout's in-line positions differ.
pub const FILTER_FORMAT_VERSION: u8 = 3;
/// Bytes of the version-2 (and 3) header; unit `j`'s bits start at
/// `FILTER_V2_HEADER_LEN + j · unit_bits / 8` in the section.
pub const FILTER_V2_HEADER_LEN: usize = 24;

/// Everything a filter's probe path needs, parsed once from its header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Params {
    pub layout: FilterLayout,
    pub scheme: IndexScheme,
    pub unit_hashing: UnitHashing,
    pub hash: HashFn,
    /// Secondary function (double hashing only; otherwise unused).
    pub secondary: HashFn,
    /// Probes per unit (per filter outside the units layout).
    pub k: u32,
    /// Units (1 outside the units layout).
    pub units: u32,
    /// Bits per unit (per filter outside the units layout; `lines · 512` for
    /// the blocked layout).
    pub unit_bits: u64,
    /// Words per unit.
    pub wpu: usize,
    /// Lines (blocked layout).
    pub lines: u64,
    /// In-line positions taken from each mixed scheme value (blocked layout):
    /// 1 in format version 2, [`blocked::V3_FIELDS_PER_VALUE`] from version 3.
    pub line_fields: u32,
    /// Seed the digests are remixed with (Ribbon layout; its `k` is the
    /// result bits `r`, its `unit_bits` are `slots · r`).
    pub seed: u8,
    /// Slots of the band (Ribbon layouts).
    pub slots: u64,
    /// The wide Ribbon's fraction `q` of a result bit per slot, in 256ths
    /// (its first [`Params::upper`] blocks keep `r + 1` columns).
    pub frac: u8,
    /// Blocks of `r + 1` columns (wide Ribbon layout).
    pub upper: u64,
    /// Whether a wide Ribbon is homogeneous (layout id 7: every key's
    /// fingerprint is 0) rather than standard (layout id 5).
    pub homogeneous: bool,
}

impl Params {
    /// Primary hashes per key: seed indices `0..primaries()`.
    fn primaries(&self) -> usize {
        if self.layout.is_ribbon_family() {
            1
        } else if self.scheme == IndexScheme::Independent {
            (self.k * self.units) as usize
        } else if self.unit_hashing == UnitHashing::Separate {
            self.units as usize
        } else {
            1
        }
    }

    /// Secondary hashes per key.
    fn secondaries(&self) -> usize {
        if self.layout.is_ribbon_family() {
            return 0;
        }
        match (self.scheme, self.unit_hashing) {
            (IndexScheme::Double, UnitHashing::Separate) => self.units as usize,
            (IndexScheme::Double, _) => 1,
            _ => 0,
        }
    }

    /// Whether a [`KeyDigest`] (seed index 0 only) suffices to probe.
    fn digest_suffices(&self) -> bool {
        self.primaries() == 1 && self.secondaries() <= 1
    }

    /// Runs `op` for the key behind `src`.
    #[inline(always)]
    fn run<S: HashSource>(&self, bits: &Bits, src: &mut S, mask: u64) -> bool {
        match bits {
            Bits::Words(w) if self.layout == FilterLayout::RibbonUnits => {
                ribbon_units::run(self, w, src.primary(0), mask)
            }
            Bits::Words(w) => units::run(
                self,
                src,
                &mut bloom::Check {
                    words: w,
                    wpu: self.wpu,
                },
                mask,
            ),
            Bits::Lines(l) => blocked::run(self, src, &mut blocked::Check { lines: l }),
            Bits::Solution(w) if self.layout == FilterLayout::Ribbon64 => {
                ribbon::query::may_contain(w, self.seed, self.slots, self.k, src.primary(0))
            }
            Bits::Solution(w) => ribbon::wide::query::may_contain(
                w,
                self.seed,
                self.slots,
                self.k,
                self.upper,
                self.homogeneous,
                src.primary(0),
            ),
            // Probed by key (`Filter::try_may_contain`), never from a source.
            Bits::Parts(_) => true,
        }
    }
}

/// A filter's bits in memory.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Bits {
    /// Standard Bloom / units: `units × wpu` words.
    Words(Box<[u64]>),
    /// Blocked Bloom: cache-aligned lines.
    Lines(Box<[Line]>),
    /// Ribbon: the solution, interleaved column-major (`slots / 64 · r`
    /// words; the wide layout's first `upper` blocks one word more).
    Solution(Box<[u64]>),
    /// A partitioned filter: its resident partitions.
    Parts(partitioned::Parts),
}

impl Bits {
    fn bytes(&self) -> usize {
        match self {
            Bits::Words(w) | Bits::Solution(w) => w.len() * 8,
            Bits::Lines(l) => l.len() * 64,
            Bits::Parts(p) => p.bytes(),
        }
    }

    /// No bits, of the kind `layout` uses.
    fn empty(layout: FilterLayout) -> Bits {
        match layout {
            FilterLayout::Blocked => Bits::Lines(Box::new([])),
            l if l.is_ribbon() => Bits::Solution(Box::new([])),
            _ => Bits::Words(Box::new([])),
        }
    }
}

/// A filter in memory: the parameters of a file's filter and the bits of its
/// first [`Filter::resident`] units (all of them for a filter just built or
/// decoded from a whole section). A probe uses the resident units only; a
/// filter with none answers "maybe".
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Filter {
    version: u8,
    p: Params,
    num_keys: u64,
    /// Units whose bits `bits` holds: units `0..resident`, in order.
    resident: u32,
    bits: Bits,
}

/// Shorthand for decode errors.
fn truncated() -> String {
    "filter header truncated".to_string()
}

impl Filter {
    /// Parses a filter section (format version 1, 2 or 3); the error string says
    /// what is wrong. Never panics, whatever the bytes.
    pub fn decode(data: &[u8]) -> std::result::Result<Filter, String> {
        let mut r = Reader::new(data);
        match r.u8().ok_or_else(truncated)? {
            1 => Self::decode_v1(r),
            v @ (2 | 3) => Self::decode_v2(r, v),
            v => Err(format!("unknown filter format version {v}")),
        }
    }

    /// Version 1: `layout = 1 | hash | scheme = 0 | k: u32 | nbits: u64 | bits`.
    fn decode_v1(mut r: Reader<'_>) -> std::result::Result<Filter, String> {
        let layout = r.u8().ok_or_else(truncated)?;
        if layout != 1 {
            return Err(format!("unknown filter layout {layout}"));
        }
        let hash_id = r.u8().ok_or_else(truncated)?;
        let hash = match hash_id {
            1..=3 => HashFn::from_id(hash_id),
            _ => None,
        }
        .ok_or_else(|| format!("unknown filter hash function {hash_id}"))?;
        let scheme = r.u8().ok_or_else(truncated)?;
        if scheme != 0 {
            return Err(format!("unknown filter index scheme {scheme}"));
        }
        let k = r.u32().ok_or_else(truncated)?;
        let nbits = r.u64().ok_or_else(truncated)?;
        if k == 0 || k > MAX_PROBES {
            return Err(format!("bad probe count {k}"));
        }
        if nbits == 0 || !nbits.is_multiple_of(8) || nbits / 8 != r.remaining() as u64 {
            return Err(format!("filter bit count {nbits} does not match its size"));
        }
        let bytes = r.take(r.remaining()).ok_or_else(truncated)?;
        let words = words_from_le(bytes);
        Ok(Filter {
            version: 1,
            resident: 1,
            p: Params {
                layout: FilterLayout::Bloom,
                scheme: IndexScheme::Rotation,
                unit_hashing: UnitHashing::Shared,
                hash,
                secondary: hash,
                k,
                units: 1,
                unit_bits: nbits,
                wpu: words.len(),
                lines: 0,
                line_fields: 1,
                seed: 0,
                slots: 0,
                frac: 0,
                upper: 0,
                homogeneous: false,
            },
            num_keys: 0,
            bits: Bits::Words(words),
        })
    }

    /// Versions 2 and 3 (`version`): see `docs/format.md`.
    fn decode_v2(mut r: Reader<'_>, version: u8) -> std::result::Result<Filter, String> {
        let (p, num_keys) = parse_header(&mut r, version)?;
        let unit_bytes = p.unit_bits / 8;
        let units = p.units;
        if unit_bytes.checked_mul(u64::from(units)) != Some(r.remaining() as u64) {
            return Err(format!(
                "filter of {units} × {} bits does not match its size {}",
                p.unit_bits,
                r.remaining()
            ));
        }
        let bytes = r.take(r.remaining()).ok_or_else(truncated)?;
        let bits = Bits::from_le(&p, bytes);
        if let Bits::Words(w) = &bits {
            if p.layout == FilterLayout::RibbonUnits {
                ribbon_units::check_seeds(w, p.wpu)?;
            }
        }
        Ok(Filter {
            version,
            resident: units,
            p,
            num_keys,
            bits,
        })
    }

    /// Serialises the filter as one section in the format version it has
    /// (a decoded version-1 section re-encodes to the same bytes; a filter
    /// loaded unit by unit from version 4 encodes as version 3). Every unit
    /// must be resident.
    pub fn encode(&self) -> Vec<u8> {
        assert_eq!(
            self.resident, self.p.units,
            "encoding a partly resident filter"
        );
        let p = &self.p;
        let mut out = Vec::with_capacity(FILTER_V2_HEADER_LEN + self.bits.bytes());
        if self.version == 1 {
            out.extend_from_slice(&[1, 1, p.hash.id(), 0]);
            out.extend_from_slice(&p.k.to_le_bytes());
            out.extend_from_slice(&p.unit_bits.to_le_bytes());
        } else {
            // A version-4 filter (units read from their own blocks) has
            // version 3's bits: as one section it is a version-3 section.
            self.encode_header(self.version.min(FILTER_FORMAT_VERSION), &mut out);
        }
        for j in 0..p.units {
            self.unit_le(j, &mut out);
        }
        out
    }

    /// Appends the version-2-style header (with `version` as its first byte).
    pub(crate) fn encode_header(&self, version: u8, out: &mut Vec<u8>) {
        let p = &self.p;
        out.push(version);
        out.push(if p.layout == FilterLayout::Ribbon && !p.homogeneous {
            5
        } else {
            p.layout.id()
        });
        out.push(p.hash.id());
        out.push(if p.layout.is_ribbon() {
            p.seed
        } else if p.scheme == IndexScheme::Double {
            p.secondary.id()
        } else {
            0
        });
        out.push(p.scheme.id());
        // The wide Ribbon's unit-hashing byte holds its fraction `q`.
        out.push(if p.layout == FilterLayout::Ribbon {
            p.frac
        } else {
            p.unit_hashing.id()
        });
        out.push(p.k as u8);
        out.push(p.units as u8);
        out.extend_from_slice(&self.num_keys.to_le_bytes());
        out.extend_from_slice(&p.unit_bits.to_le_bytes());
    }

    /// Appends the little-endian bytes of resident unit `j`.
    pub(crate) fn unit_le(&self, j: u32, out: &mut Vec<u8>) {
        assert!(j < self.resident, "unit {j} is not resident");
        let unit_bytes = (self.p.unit_bits / 8) as usize;
        let start = out.len();
        match &self.bits {
            Bits::Solution(w) => {
                for x in w.iter() {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
            Bits::Words(w) => {
                let wpu = self.p.wpu;
                for x in &w[j as usize * wpu..(j as usize + 1) * wpu] {
                    out.extend_from_slice(&x.to_le_bytes());
                }
            }
            Bits::Lines(l) => {
                for line in l.iter() {
                    for x in line.0 {
                        out.extend_from_slice(&x.to_le_bytes());
                    }
                }
            }
            // A partitioned filter's partitions are whole filters, written
            // by `Filter::encode` (see `partitioned`), never as units.
            Bits::Parts(_) => unreachable!("a partitioned filter has no unit bytes"),
        }
        out.truncate(start + unit_bytes);
    }

    /// The same filter with only its first `n` units resident (`n` at most
    /// the resident units).
    #[must_use]
    pub fn truncated(&self, n: u32) -> Filter {
        let n = n.min(self.resident);
        let bits = match &self.bits {
            Bits::Words(w) => Bits::Words(w[..n as usize * self.p.wpu].into()),
            Bits::Lines(l) => Bits::Lines(if n == 0 { Box::new([]) } else { l.clone() }),
            Bits::Solution(w) => Bits::Solution(if n == 0 { Box::new([]) } else { w.clone() }),
            Bits::Parts(p) => {
                // The hottest resident partitions that fit in `n` shares.
                let allowance = u64::from(n) * self.unit_memory_bytes() as u64;
                let keep = p.index.hottest(allowance, |i| p.filters[i].is_some());
                Bits::Parts(p.kept(&keep))
            }
        };
        Filter {
            resident: n,
            bits,
            ..self.clone_header()
        }
    }

    /// The same filter with one more unit resident: unit
    /// [`resident`](Filter::resident), given as its little-endian bytes (the
    /// payload of its block). The error says what is wrong with the bytes.
    pub fn with_unit(&self, unit: &[u8]) -> std::result::Result<Filter, String> {
        if matches!(self.bits, Bits::Parts(_)) {
            return Err("a partitioned filter loads partitions, not units".into());
        }
        if self.resident >= self.p.units {
            return Err(format!("all {} units are resident already", self.p.units));
        }
        if unit.len() as u64 != self.p.unit_bits / 8 {
            return Err(format!(
                "filter unit of {} bytes, expected {}",
                unit.len(),
                self.p.unit_bits / 8
            ));
        }
        let unit_bits = Bits::from_le(&self.p, unit);
        if let Bits::Words(w) = &unit_bits {
            if self.p.layout == FilterLayout::RibbonUnits {
                ribbon_units::check_seeds(w, self.p.wpu)?;
            }
        }
        let bits = match (&self.bits, unit_bits) {
            (Bits::Words(w), Bits::Words(u)) => {
                Bits::Words(w.iter().chain(u.iter()).copied().collect())
            }
            (Bits::Lines(_), lines @ Bits::Lines(_)) => lines,
            (Bits::Solution(_), solution @ Bits::Solution(_)) => solution,
            _ => unreachable!("one layout per filter"),
        };
        Ok(Filter {
            resident: self.resident + 1,
            bits,
            ..self.clone_header()
        })
    }

    /// The filter's parameters without bits.
    fn clone_header(&self) -> Filter {
        let bits = match &self.bits {
            Bits::Parts(p) => Bits::Parts(partitioned::Parts::none(p.index.clone())),
            _ => Bits::empty(self.p.layout),
        };
        Filter {
            version: self.version,
            p: self.p,
            num_keys: self.num_keys,
            resident: 0,
            bits,
        }
    }

    /// The partitioned filter of parameters `p` (partition 0's, with
    /// `units` shares), `num_keys` keys in all, with no partition resident.
    pub(crate) fn partitioned(
        p: Params,
        units: u32,
        num_keys: u64,
        index: Arc<partitioned::PartitionIndex>,
    ) -> Filter {
        let share = index.total_bytes().div_ceil(u64::from(units));
        let p = Params {
            units,
            unit_bits: share * 8,
            wpu: 0,
            ..p
        };
        Filter {
            version: partitioned::PARTITIONED_INDEX_VERSION,
            p,
            num_keys,
            resident: 0,
            bits: Bits::Parts(partitioned::Parts::none(index)),
        }
    }

    /// The partition index, for a partitioned filter.
    pub fn partition_index(&self) -> Option<&Arc<partitioned::PartitionIndex>> {
        match &self.bits {
            Bits::Parts(p) => Some(&p.index),
            _ => None,
        }
    }

    /// This partitioned filter with `units` shares and partition `i`'s
    /// filter resident where `filters[i]` is `Some` (the caller keeps them
    /// within the shares).
    pub(crate) fn with_partitions(&self, units: u32, filters: Vec<Option<Arc<Filter>>>) -> Filter {
        let Bits::Parts(p) = &self.bits else {
            unreachable!("with_partitions on a filter that is not partitioned");
        };
        Filter {
            resident: units.min(self.p.units),
            bits: Bits::Parts(partitioned::Parts {
                index: p.index.clone(),
                filters: filters.into(),
            }),
            ..self.clone_header()
        }
    }

    /// Partition `i`'s filter, when this partitioned filter holds it.
    pub(crate) fn partition(&self, i: usize) -> Option<&Arc<Filter>> {
        match &self.bits {
            Bits::Parts(p) => p.filters.get(i).and_then(Option::as_ref),
            _ => None,
        }
    }

    /// Units resident (probed): units `0..resident()`.
    pub fn resident(&self) -> u32 {
        self.resident
    }

    /// Bits of the resident units mask (bit `j` = unit `j`).
    #[inline]
    fn resident_mask(&self) -> u64 {
        if self.resident >= 64 {
            ALL_UNITS
        } else {
            (1u64 << self.resident) - 1
        }
    }

    /// Whether the resident bits rule on the key of `probe`: `None` when
    /// none covers it (no unit resident, or its partition is not), else
    /// whether the key may be in the file.
    #[inline]
    pub fn try_may_contain(&self, probe: &mut KeyProbe<'_>) -> Option<bool> {
        if self.resident == 0 {
            return None;
        }
        if let Bits::Parts(p) = &self.bits {
            return p.may_contain(probe);
        }
        Some(self.may_contain_units(probe, ALL_UNITS))
    }

    /// Whether the key of `probe` may be in the file (false = surely not).
    #[inline]
    pub fn may_contain(&self, probe: &mut KeyProbe<'_>) -> bool {
        self.may_contain_units(probe, ALL_UNITS)
    }

    /// Like [`Filter::may_contain`], probing only the units whose bit is set in
    /// `enabled` (bit `j` = unit `j`; layouts other than units have one unit,
    /// bit 0). A mask without any unit bit answers "maybe".
    #[inline]
    pub fn may_contain_units(&self, probe: &mut KeyProbe<'_>, enabled: u64) -> bool {
        let enabled = enabled & self.resident_mask();
        if enabled == 0 {
            return true;
        }
        if let Bits::Parts(p) = &self.bits {
            return p.may_contain(probe).unwrap_or(true);
        }
        probe.begin_filter();
        let mut src = ProbeSource {
            probe,
            f: self.p.hash,
            f2: self.p.secondary,
        };
        self.p.run(&self.bits, &mut src, enabled)
    }

    /// Probes with a precomputed digest, without touching any [`KeyProbe`].
    /// `None` when the digest does not suffice: it was made with another hash
    /// function, lacks the secondary hash double hashing needs, or the filter
    /// needs further seeded hashes (independent scheme, separate unit hashing).
    #[inline]
    pub fn may_contain_digest(&self, d: &KeyDigest) -> Option<bool> {
        // A partition is found by the key, which a digest does not carry.
        if d.hash_fn != self.p.hash
            || !self.p.digest_suffices()
            || matches!(self.bits, Bits::Parts(_))
        {
            return None;
        }
        if self.p.scheme == IndexScheme::Double
            && d.secondary.map(|(f, _)| f) != Some(self.p.secondary)
        {
            return None;
        }
        let mask = self.resident_mask();
        if mask == 0 {
            return Some(true);
        }
        Some(self.p.run(&self.bits, &mut DigestSource(d), mask))
    }

    /// Bytes of memory the filter holds.
    pub fn memory_bytes(&self) -> usize {
        self.bits.bytes() + std::mem::size_of::<Self>()
    }

    /// Bytes of the resident units' bits (what a filter memory budget counts).
    pub fn resident_bytes(&self) -> u64 {
        self.bits.bytes() as u64
    }

    /// Format version the section was written in (1 to 4).
    pub fn version(&self) -> u8 {
        self.version
    }

    /// Layout.
    pub fn layout(&self) -> FilterLayout {
        self.p.layout
    }

    /// Index scheme.
    pub fn scheme(&self) -> IndexScheme {
        self.p.scheme
    }

    /// Primary hash function.
    pub fn hash_fn(&self) -> HashFn {
        self.p.hash
    }

    /// Secondary hash function (double hashing only).
    pub fn secondary_hash(&self) -> Option<HashFn> {
        (self.p.scheme == IndexScheme::Double).then_some(self.p.secondary)
    }

    /// Unit hashing mode.
    pub fn unit_hashing(&self) -> UnitHashing {
        self.p.unit_hashing
    }

    /// Probes per unit (per filter outside the units layout).
    pub fn probes_per_unit(&self) -> u32 {
        self.p.k
    }

    /// Number of filter units (1 outside the units layout).
    pub fn units(&self) -> u32 {
        self.p.units
    }

    /// Bits per unit (all bits outside the units layout).
    pub fn unit_bits(&self) -> u64 {
        self.p.unit_bits
    }

    /// Bytes of filter bits per unit.
    pub fn unit_memory_bytes(&self) -> usize {
        self.p.unit_bits.div_ceil(8) as usize
    }

    /// Total filter bits.
    pub fn total_bits(&self) -> u64 {
        self.p.unit_bits * u64::from(self.p.units)
    }

    /// Keys the filter was built for (0 if unknown: version 1).
    pub fn num_keys(&self) -> u64 {
        self.num_keys
    }

    /// Actual bits per key (0 if the key count is unknown).
    pub fn bits_per_key(&self) -> f64 {
        if self.num_keys == 0 {
            0.0
        } else {
            self.total_bits() as f64 / self.num_keys as f64
        }
    }

    /// Theoretical FPR of this filter at its actual bits per key with `enabled`
    /// units probed (1.0 if the key count is unknown).
    pub fn theoretical_fpr_units(&self, enabled: u32) -> f64 {
        family::fpr(self, enabled)
    }

    /// Theoretical FPR of this filter at its actual bits per key.
    pub fn theoretical_fpr(&self) -> f64 {
        self.theoretical_fpr_units(self.p.units)
    }
}

impl Bits {
    /// Bits from little-endian bytes (whole units of `p`'s layout).
    fn from_le(p: &Params, bytes: &[u8]) -> Bits {
        let words = words_from_le(bytes);
        if p.layout.is_ribbon() {
            return Bits::Solution(words);
        }
        if p.layout == FilterLayout::Blocked {
            let lines: Vec<Line> = words
                .chunks_exact(8)
                .map(|c| {
                    let mut l = Line::default();
                    l.0.copy_from_slice(c);
                    l
                })
                .collect();
            Bits::Lines(lines.into())
        } else {
            Bits::Words(words)
        }
    }
}

/// Little-endian bytes to words, the last word zero-padded.
fn words_from_le(bytes: &[u8]) -> Box<[u64]> {
    bytes
        .chunks(8)
        .map(|c| {
            let mut b = [0u8; 8];
            b[..c.len()].copy_from_slice(c);
            u64::from_le_bytes(b)
        })
        .collect()
}
