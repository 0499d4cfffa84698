//! Prefix extractors and the prefix filters of SSTs and memtables.
//!
//! A [`PrefixExtractor`] (RocksDB's `SliceTransform`) maps a user key of its
//! *domain* to a prefix of it. With [`crate::Options::prefix_extractor`] set,
//! every SST written gets a *prefix filter*: a filter over the distinct
//! prefixes of its keys, built with the file's hash function, so that a
//! prefix seek (`Db::prefix`, an iterator with
//! [`ReadOptions::prefix_same_as_start`](crate::ReadOptions::prefix_same_as_start),
//! or bounds within one prefix) computes one digest of the prefix, as a
//! point lookup does of its key, and skips every file and memtable whose
//! prefix filter rules the prefix out without reading a block of it.
//!
//! The extractor's [`name`](PrefixExtractor::name) is stored with each
//! file's prefix filter: a file written under another extractor (or none)
//! is never skipped.
//!
//! The block (see `docs/format.md`, "Prefix filter block"):
//! ```text
//! version = 1 | name: varint length + UTF-8 bytes | filter section (version 3)
//! ```

use std::fmt;
use std::sync::Arc;

use super::{Filter, FilterBuilder, FilterLayout, FilterOptions, KeyProbe, MemtableFilter};
use crate::coding::{put_bytes, Reader};

/// Version byte of a prefix filter block.
pub const PREFIX_FILTER_VERSION: u8 = 1;

/// Maps user keys to prefixes (RocksDB's `SliceTransform`).
///
/// `transform` must return a prefix of its key (the engine checks and treats
/// anything else as out of the domain), and must depend on the key alone: the
/// same key always gives the same prefix. Reopen a database with an extractor
/// of another [`name`](Self::name) when its prefixes change: files record
/// the name they were written under and are never skipped under another.
///
/// ```
/// use sievedb::filter::prefix::PrefixExtractor;
///
/// /// The part of a key up to and including its first ':'.
/// #[derive(Debug)]
/// struct UpToColon;
///
/// impl PrefixExtractor for UpToColon {
///     fn name(&self) -> &str {
///         "up-to-colon"
///     }
///     fn in_domain(&self, key: &[u8]) -> bool {
///         key.contains(&b':')
///     }
///     fn transform<'k>(&self, key: &'k [u8]) -> &'k [u8] {
///         let end = key.iter().position(|&b| b == b':').map_or(key.len(), |i| i + 1);
///         &key[..end]
///     }
///     fn same_result_when_appended(&self, prefix: &[u8]) -> bool {
///         // Keys starting with "user:" all have the prefix "user:".
///         prefix.iter().position(|&b| b == b':') == Some(prefix.len() - 1)
///     }
/// }
/// assert_eq!(UpToColon.transform(b"user:42"), b"user:");
/// ```
pub trait PrefixExtractor: Send + Sync + fmt::Debug {
    /// The extractor's name, stored with every prefix filter built under it.
    fn name(&self) -> &str;
    /// Whether `key` has a prefix (keys outside the domain are in no prefix
    /// filter, and seeks to them read every file).
    fn in_domain(&self, key: &[u8]) -> bool;
    /// The prefix of `key` (called only for keys in the domain).
    fn transform<'k>(&self, key: &'k [u8]) -> &'k [u8];
    /// Whether every key starting with `prefix` is in the domain and has
    /// `prefix` as its prefix (RocksDB's `SameResultWhenAppended`). Only
    /// then are the keys of one prefix a contiguous range, which lets
    /// `Db::prefix` and bounded iterators use the prefix filters. Default
    /// false: only `prefix_same_as_start` seeks use them.
    fn same_result_when_appended(&self, prefix: &[u8]) -> bool {
        let _ = prefix;
        false
    }
}

/// The first `len` bytes of every key of at least `len` bytes (RocksDB's
/// `NewFixedPrefixTransform`); shorter keys are out of the domain.
#[derive(Clone, Debug)]
pub struct FixedPrefix {
    len: usize,
    name: String,
}

impl FixedPrefix {
    /// The extractor of the first `len` bytes (named `fixed:<len>`).
    pub fn new(len: usize) -> Self {
        FixedPrefix {
            len,
            name: format!("fixed:{len}"),
        }
    }
}

impl PrefixExtractor for FixedPrefix {
    fn name(&self) -> &str {
        &self.name
    }
    fn in_domain(&self, key: &[u8]) -> bool {
        key.len() >= self.len
    }
    fn transform<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        &key[..self.len.min(key.len())]
    }
    fn same_result_when_appended(&self, prefix: &[u8]) -> bool {
        prefix.len() == self.len
    }
}

/// The first `min(len, key length)` bytes of every key (RocksDB's
/// `NewCappedPrefixTransform`): every key is in the domain.
#[derive(Clone, Debug)]
pub struct CappedPrefix {
    len: usize,
    name: String,
}

impl CappedPrefix {
    /// The extractor of at most the first `len` bytes (named `capped:<len>`).
    pub fn new(len: usize) -> Self {
        CappedPrefix {
            len,
            name: format!("capped:{len}"),
        }
    }
}

impl PrefixExtractor for CappedPrefix {
    fn name(&self) -> &str {
        &self.name
    }
    fn in_domain(&self, _key: &[u8]) -> bool {
        true
    }
    fn transform<'k>(&self, key: &'k [u8]) -> &'k [u8] {
        &key[..self.len.min(key.len())]
    }
    fn same_result_when_appended(&self, prefix: &[u8]) -> bool {
        prefix.len() == self.len
    }
}

/// The prefix of `key` under `x`, if it is in the domain and `transform`
/// kept its contract (a prefix of the key).
pub fn prefix_of<'k>(x: &dyn PrefixExtractor, key: &'k [u8]) -> Option<&'k [u8]> {
    if !x.in_domain(key) {
        return None;
    }
    let p = x.transform(key);
    key.starts_with(p).then_some(&key[..p.len()])
}

/// The options prefix filters are built with: the key filters' hash
/// function (so a prefix digest is a key digest of the prefix) in the
/// blocked layout, one probe line per prefix, at the key filters' bits per
/// key (10 when key filters are off).
pub fn prefix_filter_options(key_filter: &FilterOptions) -> FilterOptions {
    let bits = if key_filter.enabled() && key_filter.bits_per_key.is_finite() {
        key_filter.bits_per_key
    } else {
        10.0
    };
    FilterOptions {
        bits_per_key: bits,
        hash: key_filter.hash,
        layout: FilterLayout::Blocked,
        units: 1,
        num_probes: None,
        ..FilterOptions::default()
    }
}

/// Collects the distinct prefixes of one SST's keys (added in order).
pub struct PrefixFilterBuilder {
    extractor: Arc<dyn PrefixExtractor>,
    builder: FilterBuilder,
    last: Option<Vec<u8>>,
}

impl PrefixFilterBuilder {
    /// A builder of the prefixes `extractor` gives, under the options
    /// [`prefix_filter_options`] derives from the key filter's.
    pub fn new(extractor: Arc<dyn PrefixExtractor>, key_filter: &FilterOptions) -> Self {
        PrefixFilterBuilder {
            extractor,
            builder: FilterBuilder::new(&prefix_filter_options(key_filter)),
            last: None,
        }
    }

    /// Adds the prefix of `user_key` unless it is out of the domain or the
    /// prefix of the key added before.
    pub fn add(&mut self, user_key: &[u8]) {
        let Some(p) = prefix_of(self.extractor.as_ref(), user_key) else {
            return;
        };
        if self.last.as_deref() == Some(p) {
            return;
        }
        self.builder.add(p);
        match &mut self.last {
            Some(l) => {
                l.clear();
                l.extend_from_slice(p);
            }
            None => self.last = Some(p.to_vec()),
        }
    }

    /// Distinct prefixes added (a prefix that recurs after another counts
    /// again, for extractors whose prefixes are not contiguous).
    pub fn len(&self) -> usize {
        self.builder.len()
    }

    /// Whether no prefix was added.
    pub fn is_empty(&self) -> bool {
        self.builder.is_empty()
    }

    /// The encoded prefix filter block.
    pub fn finish(&self) -> Vec<u8> {
        PrefixFilter::encode(self.extractor.name(), &self.builder.build())
    }
}

/// A file's prefix filter: the extractor name it was built under and the
/// filter over its prefixes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrefixFilter {
    name: String,
    filter: Filter,
}

impl PrefixFilter {
    /// Encodes the block of `filter` built under the extractor `name`.
    pub fn encode(name: &str, filter: &Filter) -> Vec<u8> {
        let mut out = vec![PREFIX_FILTER_VERSION];
        put_bytes(&mut out, name.as_bytes());
        out.extend_from_slice(&filter.encode());
        out
    }

    /// Decodes a prefix filter block; the error says what is wrong. Never
    /// panics, whatever the bytes.
    pub fn decode(data: &[u8]) -> std::result::Result<PrefixFilter, String> {
        let mut r = Reader::new(data);
        let bad = || "prefix filter block truncated".to_string();
        let v = r.u8().ok_or_else(bad)?;
        if v != PREFIX_FILTER_VERSION {
            return Err(format!("unknown prefix filter version {v}"));
        }
        let name = std::str::from_utf8(r.bytes().ok_or_else(bad)?)
            .map_err(|_| "prefix extractor name is not UTF-8".to_string())?
            .to_string();
        let rest = r.take(r.remaining()).ok_or_else(bad)?;
        let filter = Filter::decode(rest).map_err(|e| format!("prefix filter: {e}"))?;
        Ok(PrefixFilter { name, filter })
    }

    /// The name of the extractor the filter was built under.
    pub fn extractor_name(&self) -> &str {
        &self.name
    }

    /// The filter over the prefixes.
    pub fn filter(&self) -> &Filter {
        &self.filter
    }

    /// Whether the file may hold a key of the prefix of `probe` under the
    /// extractor `extractor` (false = surely not). A filter built under
    /// another extractor answers "maybe".
    #[inline]
    pub fn may_contain(&self, extractor: &str, probe: &mut KeyProbe<'_>) -> bool {
        self.name != extractor || self.filter.may_contain(probe)
    }

    /// Bytes of memory the filter holds.
    pub fn memory_bytes(&self) -> usize {
        self.filter.memory_bytes() + self.name.len()
    }
}

/// A memtable's prefix filter: the concurrent filter of the prefixes of its
/// keys, under one extractor.
#[derive(Debug)]
pub struct MemtablePrefixFilter {
    extractor: Arc<dyn PrefixExtractor>,
    filter: MemtableFilter,
}

impl MemtablePrefixFilter {
    /// A filter for about `expected_prefixes` prefixes under `extractor`,
    /// with [`prefix_filter_options`] of the key filter's options.
    pub fn new(
        extractor: Arc<dyn PrefixExtractor>,
        expected_prefixes: usize,
        key_filter: &FilterOptions,
    ) -> Self {
        MemtablePrefixFilter {
            extractor,
            filter: MemtableFilter::new(expected_prefixes, &prefix_filter_options(key_filter)),
        }
    }

    /// Adds the prefix of `user_key` (nothing when it is out of the domain).
    /// Inserts are release, probes acquire, as [`MemtableFilter`]'s.
    pub fn insert_key(&self, user_key: &[u8]) {
        if let Some(p) = prefix_of(self.extractor.as_ref(), user_key) {
            self.filter.insert_key(p);
        }
    }

    /// Whether a key of the prefix of `probe` under the extractor named
    /// `extractor` may have been inserted (false = surely not; another
    /// extractor's name answers "maybe").
    #[inline]
    pub fn may_contain(&self, extractor: &str, probe: &mut KeyProbe<'_>) -> bool {
        self.extractor.name() != extractor || self.filter.may_contain(probe)
    }

    /// Bytes of memory the filter holds.
    pub fn memory_bytes(&self) -> usize {
        self.filter.memory_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::HashSharing;

    #[test]
    fn fixed_and_capped_extractors() {
        let f = FixedPrefix::new(3);
        assert_eq!(f.name(), "fixed:3");
        assert_eq!(prefix_of(&f, b"abcdef"), Some(&b"abc"[..]));
        assert_eq!(prefix_of(&f, b"abc"), Some(&b"abc"[..]));
        assert_eq!(prefix_of(&f, b"ab"), None);
        assert!(f.same_result_when_appended(b"abc"));
        assert!(!f.same_result_when_appended(b"ab"));
        let c = CappedPrefix::new(3);
        assert_eq!(c.name(), "capped:3");
        assert_eq!(prefix_of(&c, b"abcdef"), Some(&b"abc"[..]));
        assert_eq!(prefix_of(&c, b"ab"), Some(&b"ab"[..]));
        assert_eq!(prefix_of(&c, b""), Some(&b""[..]));
        assert!(c.same_result_when_appended(b"abc"));
        assert!(!c.same_result_when_appended(b"ab"));
    }

    /// An extractor that breaks the contract: its "prefix" is not one.
    #[derive(Debug)]
    struct Suffix;
    impl PrefixExtractor for Suffix {
        fn name(&self) -> &str {
            "suffix"
        }
        fn in_domain(&self, k: &[u8]) -> bool {
            !k.is_empty()
        }
        fn transform<'k>(&self, k: &'k [u8]) -> &'k [u8] {
            &k[k.len() - 1..]
        }
    }

    #[test]
    fn a_transform_that_is_no_prefix_is_out_of_the_domain() {
        assert_eq!(prefix_of(&Suffix, b"ab"), None);
        assert_eq!(prefix_of(&Suffix, b"aa"), Some(&b"a"[..]));
        assert!(!Suffix.same_result_when_appended(b"a"));
    }

    fn built(n: usize) -> Vec<u8> {
        let mut b =
            PrefixFilterBuilder::new(Arc::new(FixedPrefix::new(4)), &FilterOptions::default());
        for p in 0..n {
            for s in 0..5 {
                b.add(format!("{p:04}{s}").as_bytes());
            }
        }
        b.add(b"xy"); // out of the domain: not added
        assert_eq!(b.len(), n);
        b.finish()
    }

    #[test]
    fn round_trip_no_false_negatives_and_few_false_positives() {
        let f = PrefixFilter::decode(&built(1000)).unwrap();
        assert_eq!(f.extractor_name(), "fixed:4");
        assert_eq!(f.filter().num_keys(), 1000);
        for p in 0..1000 {
            let k = format!("{p:04}");
            let mut probe = KeyProbe::new(k.as_bytes(), HashSharing::Levels);
            assert!(f.may_contain("fixed:4", &mut probe), "{k}");
            assert_eq!(probe.digests_computed, 1);
        }
        let fp = (0..10_000)
            .filter(|i| {
                let k = format!("z{i:03}");
                f.may_contain(
                    "fixed:4",
                    &mut KeyProbe::new(k.as_bytes(), HashSharing::Levels),
                )
            })
            .count();
        assert!(fp < 300, "{fp} false positives of 10000");
        // Under another extractor the filter rules nothing out.
        let mut probe = KeyProbe::new(b"zzzz", HashSharing::Levels);
        assert!((0..100).all(|_| f.may_contain("fixed:5", &mut probe)));
        assert_eq!(probe.digests_computed, 0);
    }

    #[test]
    fn bad_blocks_are_errors() {
        let b = built(50);
        for cut in 0..b.len() {
            assert!(PrefixFilter::decode(&b[..cut]).is_err(), "cut at {cut}");
        }
        let mut v = b.clone();
        v[0] = 9;
        assert!(PrefixFilter::decode(&v).unwrap_err().contains("version"));
        let mut name = b.clone();
        name[2] = 0xFF;
        assert!(PrefixFilter::decode(&name).is_err());
    }

    #[test]
    fn memtable_prefix_filter() {
        let m = MemtablePrefixFilter::new(
            Arc::new(CappedPrefix::new(2)),
            1000,
            &FilterOptions::default(),
        );
        for k in ["aa1", "ab", "b"] {
            m.insert_key(k.as_bytes());
        }
        for p in ["aa", "ab", "b"] {
            assert!(m.may_contain(
                "capped:2",
                &mut KeyProbe::new(p.as_bytes(), HashSharing::Levels)
            ));
        }
        let absent = (0..1000)
            .filter(|i| {
                let k = format!("{i:03}");
                !m.may_contain(
                    "capped:2",
                    &mut KeyProbe::new(k.as_bytes(), HashSharing::Levels),
                )
            })
            .count();
        assert!(absent > 950, "{absent}");
        assert!(m.may_contain("fixed:2", &mut KeyProbe::new(b"zz", HashSharing::Levels)));
        assert!(m.memory_bytes() > 0);
    }
}
