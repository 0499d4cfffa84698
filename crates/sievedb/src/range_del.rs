//! Range tombstones: one record `(start, end, seq)` deletes every entry of a
//! user key in `[start, end)` whose sequence number is below `seq`.
//!
//! Invariant: a key `k` written at `s` is hidden from a read at `r` iff some
//! tombstone `[start, end)` with `start <= k < end` has `s < seq <= r`.
//! `end == None` stands for +infinity (an unbounded `delete_range(a..)`).
//!
//! This module holds the tombstone type, the codec of the SST meta block (see
//! `docs/format.md`), the linear covering check of a memtable's few
//! tombstones ([`max_covering`]) and the fragmented form ([`Fragments`]) that
//! tables (for point lookups), iterators and compactions query per key.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::coding::{put_bytes, put_varint, Reader};
use crate::key::{self, Kind, SeqNo, MAX_KEY_LEN, MAX_SEQ};

/// One range tombstone.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RangeTombstone {
    /// First user key deleted (inclusive).
    pub start: Vec<u8>,
    /// First user key past the range (exclusive); `None` = +infinity.
    pub end: Option<Vec<u8>>,
    /// Sequence number of the delete.
    pub seq: SeqNo,
}

impl RangeTombstone {
    /// Whether `user_key` lies in `[start, end)`.
    #[inline]
    pub fn contains(&self, user_key: &[u8]) -> bool {
        self.start.as_slice() <= user_key && self.end.as_deref().is_none_or(|e| user_key < e)
    }

    /// Whether the range holds no key (`start >= end`).
    pub fn is_empty(&self) -> bool {
        self.end
            .as_deref()
            .is_some_and(|e| e <= self.start.as_slice())
    }

    /// Whether `[start, end)` meets the closed user-key range `[lo, hi]`.
    pub fn meets(&self, lo: &[u8], hi: &[u8]) -> bool {
        self.start.as_slice() <= hi && self.end.as_deref().is_none_or(|e| e > lo)
    }

    /// The smallest internal key a file holding this tombstone must start at
    /// or before: `(start, seq, KIND_FOR_SEEK)`.
    pub fn smallest_key(&self) -> Vec<u8> {
        let mut k = Vec::with_capacity(self.start.len() + 8);
        key::append_internal_key(&mut k, &self.start, self.seq, key::KIND_FOR_SEEK);
        k
    }

    /// The largest internal key a file holding this tombstone must reach.
    ///
    /// For a bounded end `e`: the sentinel `(e, MAX_SEQ, Put)`, which sorts
    /// before every real entry of `e` (real entries never carry `MAX_SEQ`),
    /// so the next file of a run may start at user key `e`. For +infinity:
    /// `(0xFF × MAX_KEY_LEN, 0, Delete)`, which sorts after every valid key
    /// (no user key is longer than [`MAX_KEY_LEN`]).
    pub fn largest_key(&self) -> Vec<u8> {
        match &self.end {
            Some(e) => {
                let mut k = Vec::with_capacity(e.len() + 8);
                key::append_internal_key(&mut k, e, MAX_SEQ, Kind::Put as u8);
                k
            }
            None => {
                let mut k = vec![0xFF; MAX_KEY_LEN];
                key::append_internal_key(&mut k, &[], 0, Kind::Delete as u8);
                k
            }
        }
    }
}

/// Whether `ikey` is a file bound made by [`RangeTombstone::largest_key`]
/// for a bounded end: no entry of its user key lies at or before it.
#[inline]
pub fn is_end_sentinel(ikey: &[u8]) -> bool {
    key::seq_of(ikey) == MAX_SEQ
}

/// Orders tombstones by start, then newest first (the order stored).
pub fn sort(ts: &mut [RangeTombstone]) {
    ts.sort_by(|a, b| a.start.cmp(&b.start).then(b.seq.cmp(&a.seq)));
}

/// Encodes tombstones as the SST range-tombstone block:
/// `count: varint`, then per tombstone `seq: varint | start: bytes |
/// has_end: u8 (0 = +infinity, 1 = bounded) | end: bytes (if has_end)`,
/// where `bytes` is a varint length then the bytes.
pub fn encode_block(ts: &[RangeTombstone]) -> Vec<u8> {
    let mut b = Vec::new();
    put_varint(&mut b, ts.len() as u64);
    for t in ts {
        put_varint(&mut b, t.seq);
        put_bytes(&mut b, &t.start);
        match &t.end {
            Some(e) => {
                b.push(1);
                put_bytes(&mut b, e);
            }
            None => b.push(0),
        }
    }
    b
}

/// The fewest bytes a tombstone takes in the block.
const MIN_TOMBSTONE_BYTES: u64 = 3;

/// Decodes [`encode_block`]'s output; the error says what is wrong.
pub fn decode_block(b: &[u8]) -> Result<Vec<RangeTombstone>, String> {
    let mut r = Reader::new(b);
    let bad = || "range tombstone block truncated".to_string();
    let n = r.varint().ok_or_else(bad)?;
    // Each tombstone takes at least 3 bytes (a one-byte sequence, the empty
    // start's length, the end flag of an unbounded one): never trust a count
    // beyond that. (4 here refused the tables of two `delete_range(..)`.)
    if n > b.len() as u64 / MIN_TOMBSTONE_BYTES {
        return Err("range tombstone count exceeds the block".into());
    }
    let mut out = Vec::with_capacity(n as usize);
    for _ in 0..n {
        let seq = r.varint().ok_or_else(bad)?;
        let start = r.bytes().ok_or_else(bad)?.to_vec();
        let end = match r.u8().ok_or_else(bad)? {
            0 => None,
            1 => Some(r.bytes().ok_or_else(bad)?.to_vec()),
            x => return Err(format!("range tombstone end flag {x} is neither 0 nor 1")),
        };
        let t = RangeTombstone { start, end, seq };
        if seq > MAX_SEQ || t.is_empty() {
            return Err("range tombstone is empty or its sequence is out of range".into());
        }
        out.push(t);
    }
    if r.remaining() != 0 {
        return Err("trailing bytes after range tombstones".into());
    }
    Ok(out)
}

/// The newest sequence `<= read_seq` of the tombstones in `ts` (sorted by
/// start, see [`sort`]) that cover `user_key`; 0 if none does. Linear in the
/// tombstones starting at or before the key: a memtable or one file holds few.
pub fn max_covering(ts: &[RangeTombstone], user_key: &[u8], read_seq: SeqNo) -> SeqNo {
    let upto = ts.partition_point(|t| t.start.as_slice() <= user_key);
    ts[..upto]
        .iter()
        .filter(|t| t.seq <= read_seq && t.contains(user_key))
        .map(|t| t.seq)
        .max()
        .unwrap_or(0)
}

/// One piece of a fragmented set: `[start, end)` and the sequences of the
/// tombstones covering all of it, newest first (never empty).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Fragment {
    start: Vec<u8>,
    end: Option<Vec<u8>>,
    seqs: Vec<SeqNo>,
}

/// Tombstones cut at every boundary into disjoint sorted fragments, each
/// keeping the sequences covering it, newest first. Built once (`O(n log n)`
/// plus the overlap), queried in `O(log n)`: the aggregate of everything one
/// iterator sees (built at its read sequence, so [`covers`](Self::covers)
/// needs no sequence bound) and the tombstones of one table (built
/// unbounded, queried with [`max_seq_at`](Self::max_seq_at)).
#[derive(Clone, Debug, Default)]
pub struct Fragments {
    frags: Vec<Fragment>,
}

/// A boundary of the sweep: user key (None = +infinity), opens?, sequence.
type Event = (Option<Vec<u8>>, bool, SeqNo);

impl Fragments {
    /// Fragments `ts`, keeping only tombstones with `seq <= read_seq` (the
    /// ones a read at `read_seq` sees).
    pub fn new<'a>(ts: impl IntoIterator<Item = &'a RangeTombstone>, read_seq: SeqNo) -> Self {
        let mut events: Vec<Event> = Vec::new();
        for t in ts
            .into_iter()
            .filter(|t| t.seq <= read_seq && !t.is_empty())
        {
            events.push((Some(t.start.clone()), true, t.seq));
            events.push((t.end.clone(), false, t.seq));
        }
        // +infinity (None) sorts last; at one key, closes before opens.
        events.sort_by(|a, b| cmp_bound(&a.0, &b.0).then(a.1.cmp(&b.1)));
        let mut active: BTreeMap<SeqNo, usize> = BTreeMap::new();
        let mut frags: Vec<Fragment> = Vec::new();
        let mut i = 0;
        while i < events.len() {
            let at = events[i].0.clone();
            while i < events.len() && events[i].0 == at {
                let (_, open, seq) = events[i];
                if open {
                    *active.entry(seq).or_insert(0) += 1;
                } else if let Some(n) = active.get_mut(&seq) {
                    *n -= 1;
                    if *n == 0 {
                        active.remove(&seq);
                    }
                }
                i += 1;
            }
            let Some(from) = at.filter(|_| !active.is_empty()) else {
                continue;
            };
            let to = events.get(i).and_then(|e| e.0.clone());
            frags.push(Fragment {
                start: from,
                end: to,
                seqs: active.keys().rev().copied().collect(),
            });
        }
        Fragments { frags }
    }

    /// Whether no tombstone is in the set.
    pub fn is_empty(&self) -> bool {
        self.frags.is_empty()
    }

    /// Whether an entry of `user_key` written at `entry_seq` is hidden: some
    /// tombstone in the set covers the key with a newer sequence.
    #[inline]
    pub fn covers(&self, user_key: &[u8], entry_seq: SeqNo) -> bool {
        self.max_seq(user_key) > entry_seq
    }

    /// The newest sequence of the tombstones covering `user_key` (0: none).
    #[inline]
    pub fn max_seq(&self, user_key: &[u8]) -> SeqNo {
        self.fragment(user_key).map_or(0, |f| f.seqs[0])
    }

    /// The newest sequence `<= read_seq` of the tombstones covering
    /// `user_key` (0: none).
    pub fn max_seq_at(&self, user_key: &[u8], read_seq: SeqNo) -> SeqNo {
        let Some(f) = self.fragment(user_key) else {
            return 0;
        };
        let i = f.seqs.partition_point(|&s| s > read_seq);
        f.seqs.get(i).copied().unwrap_or(0)
    }

    /// The fragment holding `user_key`, if any.
    fn fragment(&self, user_key: &[u8]) -> Option<&Fragment> {
        let i = self
            .frags
            .partition_point(|f| f.start.as_slice() <= user_key);
        let f = &self.frags[i.checked_sub(1)?];
        f.end.as_deref().is_none_or(|e| user_key < e).then_some(f)
    }
}

/// Orders optional user keys with `None` as +infinity.
fn cmp_bound(a: &Option<Vec<u8>>, b: &Option<Vec<u8>>) -> Ordering {
    match (a, b) {
        (Some(a), Some(b)) => a.cmp(b),
        (Some(_), None) => Ordering::Less,
        (None, Some(_)) => Ordering::Greater,
        (None, None) => Ordering::Equal,
    }
}

/// A tombstone over `[s, e)` (`None`: unbounded) at `seq`, for unit tests.
#[cfg(test)]
pub(crate) fn test_tombstone(s: &str, e: Option<&str>, seq: SeqNo) -> RangeTombstone {
    RangeTombstone {
        start: s.as_bytes().to_vec(),
        end: e.map(|e| e.as_bytes().to_vec()),
        seq,
    }
}

#[cfg(test)]
mod tests {
    use super::test_tombstone as t;
    use super::*;

    #[test]
    fn block_round_trips_and_rejects_damage() {
        let ts = vec![t("a", Some("c"), 5), t("b", None, 7), t("", Some("z"), 1)];
        let b = encode_block(&ts);
        assert_eq!(decode_block(&b).unwrap(), ts);
        for cut in 0..b.len() {
            assert!(decode_block(&b[..cut]).is_err(), "cut at {cut} accepted");
        }
        let mut bad = b.clone();
        bad.push(0);
        assert!(decode_block(&bad).is_err());
        assert!(decode_block(&encode_block(&[t("b", Some("a"), 1)])).is_err());
        assert!(decode_block(&encode_block(&[t("a", Some("b"), MAX_SEQ + 1)])).is_err());
    }

    #[test]
    fn blocks_of_the_smallest_tombstones_decode() {
        // Unbounded on both sides with one-byte sequences: 3 bytes each.
        for n in 1..=40 {
            let ts: Vec<_> = (1..=n).rev().map(|s| t("", None, s)).collect();
            let b = encode_block(&ts);
            assert_eq!(decode_block(&b).unwrap(), ts, "{n} tombstones");
        }
    }

    #[test]
    fn fragments_keep_the_newest_covering_sequence() {
        let ts = [
            t("b", Some("f"), 4),
            t("d", Some("h"), 9),
            t("a", Some("c"), 2),
            t("x", None, 3),
            t("m", Some("n"), 20),
        ];
        let f = Fragments::new(&ts, 10);
        let cases: &[(&str, SeqNo)] = &[
            ("", 0),
            ("a", 2),
            ("b", 4),
            ("c", 4),
            ("d", 9),
            ("f", 9),
            ("g", 9),
            ("h", 0),
            ("m", 0), // seq 20 is beyond the read
            ("x", 3),
            ("zzzz", 3),
        ];
        for &(k, want) in cases {
            assert_eq!(f.max_seq(k.as_bytes()), want, "key {k}");
            assert_eq!(
                max_covering(&sorted(&ts), k.as_bytes(), 10),
                want,
                "key {k}"
            );
        }
        assert!(f.covers(b"e", 8));
        assert!(!f.covers(b"e", 9));
        assert!(Fragments::new(&ts, 1).is_empty());
    }

    fn sorted(ts: &[RangeTombstone]) -> Vec<RangeTombstone> {
        let mut v = ts.to_vec();
        sort(&mut v);
        v
    }

    /// Fragments agree with a direct scan on random tombstones.
    #[test]
    fn fragments_match_a_scan() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for _ in 0..50 {
            let ts: Vec<_> = (0..rnd(12))
                .map(|i| {
                    let a = rnd(20) as u8;
                    let b = a + 1 + rnd(6) as u8;
                    RangeTombstone {
                        start: vec![a],
                        end: (rnd(5) > 0).then(|| vec![b]),
                        seq: i + 1,
                    }
                })
                .collect();
            let read = rnd(14);
            let f = Fragments::new(&ts, read);
            let all = Fragments::new(&ts, MAX_SEQ);
            let s = sorted(&ts);
            for k in 0..30u8 {
                let want = max_covering(&s, &[k], read);
                assert_eq!(f.max_seq(&[k]), want, "{ts:?} {k}");
                assert_eq!(all.max_seq_at(&[k], read), want, "{ts:?} {k} at {read}");
            }
        }
    }

    #[test]
    fn file_bounds_bracket_the_range() {
        let a = t("k", Some("p"), 7);
        let real = key::internal_key(b"p", MAX_SEQ - 1, Kind::Put);
        assert!(key::compare(&a.largest_key(), &real).is_lt());
        assert!(is_end_sentinel(&a.largest_key()));
        let inf = t("k", None, 7).largest_key();
        let max = key::internal_key(&vec![0xFF; MAX_KEY_LEN], 1, Kind::Delete);
        assert!(key::compare(&max, &inf).is_lt());
        let first = key::internal_key(b"k", 6, Kind::Put);
        assert!(key::compare(&a.smallest_key(), &first).is_lt());
    }
}
