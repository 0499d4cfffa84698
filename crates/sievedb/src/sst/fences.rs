//! Fences: an in-memory search structure over a table's index block, so a
//! point lookup finds its data block with a binary search over a dense array
//! of 8-byte integers (a few cache lines) instead of over the index entries
//! (two dependent cache misses per step: the restart offset, then the key).
//!
//! Built at open from an index whose every entry is a restart point (as this
//! build writes them); nothing is stored in the file. Each entry's block
//! handle is kept decoded beside its fence, so a lookup whose fence is
//! unique reads no index entry at all. Invariant: the user
//! keys of the index entries all start with `common`, and `fences[i]` is the
//! big-endian integer of the 8 bytes of entry `i`'s user key after `common`
//! (zero-padded). Padding with zeros keeps the order: for user keys `a <= b`
//! sharing `common`, `word_at(a, l) <= word_at(b, l)` (l = `common.len()`); so `<` there
//! implies `a < b`, and only equal fences need a full key comparison.

use std::cmp::Ordering;

use super::block::Block;
use super::BlockHandle;
use crate::fence::word_at;
use crate::key;

/// The fences of one index block (24 bytes per data block).
pub struct IndexFences {
    /// The longest prefix shared by every index entry's user key.
    common: Vec<u8>,
    /// Per index entry, the 8 bytes of its user key after `common`.
    fences: Vec<u64>,
    /// Per index entry, its value: the handle of its data block.
    handles: Vec<BlockHandle>,
}

impl IndexFences {
    /// Bytes held: the common prefix, and 24 per data block.
    pub fn memory_bytes(&self) -> usize {
        self.common.len() + self.fences.len() * 8 + self.handles.len() * 16
    }

    /// The fences of `index`, or `None` when it does not qualify (an entry
    /// that is not a restart point, or a malformed one: lookups then search
    /// the block itself and report what is wrong).
    pub fn build(index: &Block) -> Option<IndexFences> {
        if !index.every_entry_restarts() {
            return None;
        }
        let n = index.num_restarts();
        let user = |i| index.restart_entry(i).map(|e| key::user_key(e.key));
        let (first, last) = (user(0)?, user(n - 1)?);
        let l = first.iter().zip(last).take_while(|(a, b)| a == b).count();
        let mut fences = Vec::with_capacity(n);
        let mut handles = Vec::with_capacity(n);
        let mut prev: Option<&[u8]> = None;
        for i in 0..n {
            let e = index.restart_entry(i)?;
            if prev.is_some_and(|p| key::compare(p, e.key) != Ordering::Less) {
                return None; // Out of order: not a well-formed index.
            }
            let u = key::user_key(e.key);
            if u.get(..l) != Some(&first[..l]) {
                return None;
            }
            fences.push(word_at(u, l));
            handles.push(BlockHandle::decode(e.value)?);
            prev = Some(e.key);
        }
        Some(IndexFences {
            common: first[..l].to_vec(),
            fences,
            handles,
        })
    }

    /// The block handle of the first entry of `index` (the block these
    /// fences were built from) whose internal key is `>= target`; `None`
    /// when every key is smaller.
    pub fn seek(
        &self,
        index: &Block,
        target: &[u8],
    ) -> std::result::Result<Option<BlockHandle>, String> {
        if target.len() < 8 {
            return Err("lookup key shorter than an internal key".into());
        }
        let u = key::user_key(target);
        let l = self.common.len();
        if u.get(..l) != Some(&self.common[..]) {
            // Every entry's user key starts with `common`: all compare to
            // `u` as `common` does.
            return match u.cmp(&self.common) {
                Ordering::Less => Ok(self.handles.first().copied()),
                _ => Ok(None),
            };
        }
        let t = word_at(u, l);
        let lo = self.fences.partition_point(|&f| f < t);
        // Usually no fence equals `t`: check that before searching the run
        // (a second binary search over the rest would touch other lines).
        let hi = match self.fences.get(lo) {
            Some(&f) if f == t => lo + self.fences[lo..].partition_point(|&f| f == t),
            _ => lo,
        };
        // Entries before `lo` are smaller, from `hi` on larger: compare the
        // keys of the (usually empty) run of equal fences.
        let (mut a, mut b) = (lo, hi);
        while a < b {
            let mid = (a + b) / 2;
            let k = index.restart_entry(mid).ok_or("bad index entry")?.key;
            match key::compare(k, target) {
                Ordering::Less => a = mid + 1,
                _ => b = mid,
            }
        }
        Ok(self.handles.get(a).copied())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::iter::testing::random_entries;
    use crate::key::{internal_key, Kind, MAX_SEQ};
    use crate::sst::block::BlockBuilder;

    fn index_of(keys: &[Vec<u8>]) -> Block {
        let mut b = BlockBuilder::new(1);
        for (i, k) in keys.iter().enumerate() {
            let mut h = Vec::new();
            crate::coding::put_varint(&mut h, 4096 * i as u64);
            crate::coding::put_varint(&mut h, 100 + i as u64);
            b.add(k, &h);
        }
        Block::new(b.finish()).unwrap()
    }

    /// The fences find what the block's own search finds, for keys with a
    /// long shared prefix, short keys, keys differing past 8 bytes, and
    /// targets inside, between, before and after them.
    #[test]
    fn fences_agree_with_the_block_search() {
        let mut sets: Vec<Vec<Vec<u8>>> = Vec::new();
        for seed in 1..6u64 {
            sets.push(
                random_entries(seed, 1 + 40 * seed as usize)
                    .into_iter()
                    .map(|e| e.0)
                    .collect(),
            );
        }
        let digits: Vec<Vec<u8>> = (0..500u64)
            .map(|i| {
                internal_key(
                    format!("{:016}", 1_000_000 + i * 7).as_bytes(),
                    9,
                    Kind::Put,
                )
            })
            .collect();
        sets.push(digits);
        let long: Vec<Vec<u8>> = (0..300u64)
            .map(|i| {
                let mut u = b"same-prefix-".to_vec();
                u.extend_from_slice(&[b'x'; 9]);
                u.extend_from_slice(format!("{i:05}").as_bytes());
                internal_key(&u, 3, Kind::Put)
            })
            .collect();
        sets.push(long);
        let mut scratch = Vec::new();
        for keys in &sets {
            let mut keys = keys.clone();
            keys.dedup_by(|a, b| key::compare(a, b) == Ordering::Equal);
            let block = index_of(&keys);
            let f = IndexFences::build(&block).expect("an index of restarts");
            let mut targets = keys.clone();
            for k in &keys {
                let u = key::user_key(k);
                for seq in [0, MAX_SEQ] {
                    targets.push(internal_key(u, seq, Kind::Put));
                }
                let mut longer = u.to_vec();
                longer.push(0);
                targets.push(internal_key(&longer, 1, Kind::Put));
                targets.push(internal_key(&u[..u.len() / 2], 1, Kind::Put));
            }
            for u in [&b""[..], b"\x00", b"\xff\xff", b"same", b"zzzz"] {
                targets.push(internal_key(u, 1, Kind::Put));
            }
            for t in &targets {
                let want = block
                    .seek_entry(t, &mut scratch)
                    .unwrap()
                    .map(|e| BlockHandle::decode(e.value).unwrap());
                let got = f.seek(&block, t).unwrap();
                assert_eq!(got, want, "target {t:?}");
            }
        }
    }

    /// An index that is not all restart points, or not in order, gets no
    /// fences.
    #[test]
    fn prefix_compressed_or_unordered_indexes_get_no_fences() {
        let k = |s: &str| internal_key(s.as_bytes(), 1, Kind::Put);
        assert!(IndexFences::build(&index_of(&[k("b"), k("a")])).is_none());
        assert!(IndexFences::build(&index_of(&[k("a"), k("a")])).is_none());
        assert!(IndexFences::build(&index_of(&[k("a"), k("b")])).is_some());
        let mut b = BlockBuilder::new(4);
        for i in 0..10u32 {
            b.add(
                &internal_key(format!("k{i}").as_bytes(), 1, Kind::Put),
                b"h",
            );
        }
        assert!(IndexFences::build(&Block::new(b.finish()).unwrap()).is_none());
    }
}
