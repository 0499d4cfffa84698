//! Filters: the digest a lookup computes once, and the filters that consume it.
//!
//! The filter section of an SST is self-describing (see `docs/format.md`), so
//! files written under different filter settings coexist in one database.

pub mod bloom;
pub mod digest;

use crate::coding::Reader;
use crate::error::{Error, Result};
pub use digest::KeyDigest;

/// Hash function used to build (and therefore probe) a filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum HashFn {
    /// MurmurHash64A (default, as in the paper).
    Murmur64A,
    /// XXH3-64.
    Xxh3,
    /// XXH64.
    Xxh64,
}

impl HashFn {
    fn id(self) -> u8 {
        match self {
            HashFn::Murmur64A => 1,
            HashFn::Xxh3 => 2,
            HashFn::Xxh64 => 3,
        }
    }
    fn from_id(id: u8) -> Option<Self> {
        match id {
            1 => Some(HashFn::Murmur64A),
            2 => Some(HashFn::Xxh3),
            3 => Some(HashFn::Xxh64),
            _ => None,
        }
    }
}

/// How a filter turns a digest into bit positions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum IndexScheme {
    /// `g_i = h + i·δ` with `δ = rotl(h, 17)`.
    Rotation,
}

/// How much hashing a lookup shares between filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum HashSharing {
    /// One hash per filter probed.
    Filter,
    /// One digest per lookup for the whole tree (default).
    Levels,
}

/// Filter settings of a database.
#[derive(Clone, Debug)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct FilterOptions {
    /// Bits per key; 0 disables filters. Default 10.
    pub bits_per_key: f64,
    /// Hash function. Default MurmurHash64A.
    pub hash: HashFn,
    /// Index scheme. Default rotation.
    pub scheme: IndexScheme,
    /// Number of probes; `None` = round(bits_per_key · ln 2).
    pub num_probes: Option<u32>,
    /// Digest sharing across filters. Default levels.
    pub sharing: HashSharing,
}

impl Default for FilterOptions {
    fn default() -> Self {
        FilterOptions {
            bits_per_key: 10.0,
            hash: HashFn::Murmur64A,
            scheme: IndexScheme::Rotation,
            num_probes: None,
            sharing: HashSharing::Levels,
        }
    }
}

impl FilterOptions {
    /// Whether filters are built at all.
    pub fn enabled(&self) -> bool {
        self.bits_per_key > 0.0
    }

    /// Checks the settings.
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=10_000.0).contains(&self.bits_per_key) || self.bits_per_key.is_nan() {
            return Err(Error::InvalidArgument(
                "bits_per_key must be between 0 and 10000".into(),
            ));
        }
        if let Some(k) = self.num_probes {
            if !(1..=64).contains(&k) {
                return Err(Error::InvalidArgument(
                    "num_probes must be between 1 and 64".into(),
                ));
            }
        }
        Ok(())
    }

    fn probes(&self) -> u32 {
        self.num_probes
            .unwrap_or_else(|| bloom::optimal_probes(self.bits_per_key))
    }
}

/// Maps a 64-bit hash onto `[0, n)` without division (Lemire's multiply-shift).
#[inline]
pub fn fast_range(h: u64, n: u64) -> u64 {
    ((u128::from(h) * u128::from(n)) >> 64) as u64
}

/// The hashing state of one lookup: the key and, once computed, its digest.
pub struct KeyProbe<'a> {
    key: &'a [u8],
    sharing: HashSharing,
    digest: Option<KeyDigest>,
    /// Digests computed so far for this lookup.
    pub digests_computed: u32,
}

impl<'a> KeyProbe<'a> {
    /// Starts a lookup of `key`; nothing is hashed yet.
    pub fn new(key: &'a [u8], sharing: HashSharing) -> Self {
        KeyProbe {
            key,
            sharing,
            digest: None,
            digests_computed: 0,
        }
    }

    /// The key being looked up.
    pub fn key(&self) -> &'a [u8] {
        self.key
    }

    /// The digest under `f`: computed on first use; recomputed for every filter
    /// unless sharing across levels.
    #[inline]
    pub fn digest(&mut self, f: HashFn) -> KeyDigest {
        if self.sharing == HashSharing::Levels {
            if let Some(d) = self.digest {
                if d.hash_fn == f {
                    return d;
                }
            }
        }
        let d = KeyDigest::compute(f, self.key);
        self.digests_computed += 1;
        self.digest = Some(d);
        d
    }
}

const FILTER_FORMAT_VERSION: u8 = 1;
const LAYOUT_BLOOM: u8 = 1;

/// Accumulates the keys of one SST and serialises its filter section.
pub struct FilterBuilder {
    opts: FilterOptions,
    hashes: Vec<u64>,
}

impl FilterBuilder {
    /// A builder for `opts`.
    pub fn new(opts: &FilterOptions) -> Self {
        FilterBuilder {
            opts: opts.clone(),
            hashes: Vec::new(),
        }
    }

    /// Adds a user key (callers add each distinct key once).
    pub fn add(&mut self, user_key: &[u8]) {
        self.hashes
            .push(KeyDigest::compute(self.opts.hash, user_key).h1);
    }

    /// Number of keys added.
    pub fn len(&self) -> usize {
        self.hashes.len()
    }

    /// Whether no key was added.
    pub fn is_empty(&self) -> bool {
        self.hashes.is_empty()
    }

    /// Serialises the filter section.
    pub fn finish(&self) -> Vec<u8> {
        let k = self.opts.probes();
        let nbits = ((self.hashes.len() as f64 * self.opts.bits_per_key).ceil() as u64).max(64);
        let nbytes = nbits.div_ceil(8) as usize;
        let nbits = nbytes as u64 * 8;
        let mut out = Vec::with_capacity(nbytes + 16);
        out.push(FILTER_FORMAT_VERSION);
        out.push(LAYOUT_BLOOM);
        out.push(self.opts.hash.id());
        out.push(0); // scheme: rotation
        out.extend_from_slice(&k.to_le_bytes());
        out.extend_from_slice(&nbits.to_le_bytes());
        let start = out.len();
        out.resize(start + nbytes, 0);
        for &h in &self.hashes {
            bloom::insert(&mut out[start..], nbits, k, self.opts.scheme, h);
        }
        out
    }
}

/// A decoded filter section, parsed once when its file is opened.
pub struct Filter {
    hash: HashFn,
    scheme: IndexScheme,
    k: u32,
    nbits: u64,
    bits: Box<[u8]>,
}

impl Filter {
    /// Parses a filter section; the error string says what is wrong.
    pub fn decode(data: &[u8]) -> std::result::Result<Filter, String> {
        let mut r = Reader::new(data);
        let version = r.u8().ok_or("filter header truncated")?;
        if version != FILTER_FORMAT_VERSION {
            return Err(format!("unknown filter format version {version}"));
        }
        let layout = r.u8().ok_or("filter header truncated")?;
        if layout != LAYOUT_BLOOM {
            return Err(format!("unknown filter layout {layout}"));
        }
        let hash = HashFn::from_id(r.u8().ok_or("filter header truncated")?)
            .ok_or("unknown filter hash function")?;
        let scheme = match r.u8().ok_or("filter header truncated")? {
            0 => IndexScheme::Rotation,
            s => return Err(format!("unknown filter index scheme {s}")),
        };
        let k = r.u32().ok_or("filter header truncated")?;
        let nbits = r.u64().ok_or("filter header truncated")?;
        if k == 0 || k > 64 {
            return Err(format!("bad probe count {k}"));
        }
        if nbits == 0 || nbits % 8 != 0 || nbits / 8 != r.remaining() as u64 {
            return Err(format!("filter bit count {nbits} does not match its size"));
        }
        let bits = r.take(r.remaining()).unwrap_or_default().into();
        Ok(Filter {
            hash,
            scheme,
            k,
            nbits,
            bits,
        })
    }

    /// Whether the key of `probe` may be in the file (false = surely not).
    #[inline]
    pub fn may_contain(&self, probe: &mut KeyProbe<'_>) -> bool {
        let d = probe.digest(self.hash);
        bloom::contains(&self.bits, self.nbits, self.k, self.scheme, d.h1)
    }

    /// Bytes of memory the filter holds.
    pub fn memory_bytes(&self) -> usize {
        self.bits.len() + std::mem::size_of::<Self>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_false_negatives_and_low_fpr() {
        let opts = FilterOptions::default();
        let mut b = FilterBuilder::new(&opts);
        for i in 0..10_000u32 {
            b.add(format!("key{i}").as_bytes());
        }
        let f = Filter::decode(&b.finish()).unwrap();
        for i in 0..10_000u32 {
            let k = format!("key{i}");
            assert!(f.may_contain(&mut KeyProbe::new(k.as_bytes(), HashSharing::Levels)));
        }
        let fp = (0..100_000u32)
            .filter(|i| {
                let k = format!("miss{i}");
                f.may_contain(&mut KeyProbe::new(k.as_bytes(), HashSharing::Levels))
            })
            .count();
        assert!(fp < 1500, "fpr too high: {fp}/100000");
    }
}
