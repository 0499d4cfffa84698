//! Blocks: sorted entries with restart-point prefix compression.
//!
//! Layout: entries, then `restarts: [u32; n]`, then `n: u32` (little-endian).
//! Each entry is `shared: varint | unshared: varint | value_len: varint |
//! key[shared..] | value`; at a restart point `shared` is 0, so a binary search
//! over restart points needs no earlier entry. Keys are internal keys.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::coding::{get_varint, put_varint, u32_at};
use crate::error::{Error, Result};
use crate::iter::InternalIterator;
use crate::key;

/// Builds one block.
pub struct BlockBuilder {
    buf: Vec<u8>,
    restarts: Vec<u32>,
    restart_interval: usize,
    counter: usize,
    last_key: Vec<u8>,
    entries: usize,
}

impl BlockBuilder {
    /// A builder with a restart point every `restart_interval` entries.
    pub fn new(restart_interval: usize) -> Self {
        BlockBuilder {
            buf: Vec::new(),
            restarts: vec![0],
            restart_interval: restart_interval.max(1),
            counter: 0,
            last_key: Vec::new(),
            entries: 0,
        }
    }

    /// Adds an entry; keys must arrive in increasing order.
    pub fn add(&mut self, key: &[u8], value: &[u8]) {
        let mut shared = 0;
        if self.counter < self.restart_interval {
            shared = self
                .last_key
                .iter()
                .zip(key)
                .take_while(|(a, b)| a == b)
                .count();
        } else {
            self.restarts.push(self.buf.len() as u32);
            self.counter = 0;
        }
        put_varint(&mut self.buf, shared as u64);
        put_varint(&mut self.buf, (key.len() - shared) as u64);
        put_varint(&mut self.buf, value.len() as u64);
        self.buf.extend_from_slice(&key[shared..]);
        self.buf.extend_from_slice(value);
        self.last_key.clear();
        self.last_key.extend_from_slice(key);
        self.counter += 1;
        self.entries += 1;
    }

    /// Estimated size of the finished block.
    pub fn size_estimate(&self) -> usize {
        self.buf.len() + 4 * self.restarts.len() + 4
    }

    /// Whether no entry was added.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// The last key added.
    pub fn last_key(&self) -> &[u8] {
        &self.last_key
    }

    /// Finishes the block and resets the builder.
    pub fn finish(&mut self) -> Vec<u8> {
        let cap = self.buf.capacity();
        let mut out = std::mem::replace(&mut self.buf, Vec::with_capacity(cap));
        out.reserve_exact(4 * self.restarts.len() + 4);
        for r in &self.restarts {
            out.extend_from_slice(&r.to_le_bytes());
        }
        out.extend_from_slice(&(self.restarts.len() as u32).to_le_bytes());
        self.restarts = vec![0];
        self.counter = 0;
        self.entries = 0;
        self.last_key.clear();
        out
    }
}

/// A decoded (uncompressed, checksum-verified) block.
pub struct Block {
    data: Vec<u8>,
    restarts_off: usize,
    num_restarts: usize,
}

impl Block {
    /// Validates the restart array of `data`.
    pub fn new(data: Vec<u8>) -> std::result::Result<Block, String> {
        if data.len() < 4 {
            return Err("block too short".into());
        }
        let n = u32_at(&data, data.len() - 4) as usize;
        let max = (data.len() - 4) / 4;
        if n == 0 || n > max {
            return Err(format!("bad restart count {n}"));
        }
        let restarts_off = data.len() - 4 - 4 * n;
        for i in 0..n {
            if u32_at(&data, restarts_off + 4 * i) as usize >= restarts_off.max(1) {
                return Err("restart point out of range".into());
            }
        }
        Ok(Block {
            data,
            restarts_off,
            num_restarts: n,
        })
    }

    /// Bytes held.
    pub fn size(&self) -> usize {
        self.data.len()
    }

    fn restart(&self, i: usize) -> usize {
        u32_at(&self.data, self.restarts_off + 4 * i) as usize
    }
}

/// One decoded entry header: (shared, unshared, value_len, header bytes).
fn decode_entry(buf: &[u8]) -> Option<(usize, usize, usize, usize)> {
    let (shared, a) = get_varint(buf)?;
    let (unshared, b) = get_varint(&buf[a..])?;
    let (vlen, c) = get_varint(&buf[a + b..])?;
    let n = |v: u64| usize::try_from(v).ok();
    Some((n(shared)?, n(unshared)?, n(vlen)?, a + b + c))
}

/// A cursor over a block; keeps the block alive.
pub struct BlockIter {
    block: Arc<Block>,
    /// Offset of the current entry; `restarts_off` when exhausted.
    current: usize,
    next_off: usize,
    key: Vec<u8>,
    value: (usize, usize),
    err: Option<String>,
}

impl BlockIter {
    /// A cursor over `block`, not yet positioned.
    pub fn new(block: Arc<Block>) -> Self {
        let end = block.restarts_off;
        BlockIter {
            block,
            current: end,
            next_off: end,
            key: Vec::new(),
            value: (0, 0),
            err: None,
        }
    }

    /// A decoding error met while moving, if any (only possible in a block whose
    /// checksum matched but whose contents are malformed).
    pub fn error(&self) -> Option<&str> {
        self.err.as_deref()
    }

    fn corrupt(&mut self, m: &str) {
        self.err = Some(m.to_string());
        self.current = self.block.restarts_off;
        self.next_off = self.current;
    }

    /// Decodes the entry at `next_off` into the cursor; false at the end.
    fn parse_next(&mut self) -> bool {
        let end = self.block.restarts_off;
        self.current = self.next_off;
        if self.current >= end {
            self.current = end;
            return false;
        }
        let data = &self.block.data[..end];
        let Some((shared, unshared, vlen, hl)) = decode_entry(&data[self.current..]) else {
            self.corrupt("bad entry header");
            return false;
        };
        let kstart = self.current + hl;
        let entry_end = kstart
            .checked_add(unshared)
            .and_then(|x| x.checked_add(vlen));
        if shared > self.key.len() || entry_end.is_none_or(|e| e > end) {
            self.corrupt("entry out of range");
            return false;
        }
        self.key.truncate(shared);
        self.key
            .extend_from_slice(&self.block.data[kstart..kstart + unshared]);
        if key::parse(&self.key).is_none() {
            let detail = key::malformed_detail(&self.key);
            self.corrupt(&detail);
            return false;
        }
        self.value = (kstart + unshared, kstart + unshared + vlen);
        self.next_off = self.value.1;
        true
    }

    /// Decodes forward from the current entry to the last entry that starts
    /// before `limit`, without going past it (the entry that ends at
    /// `limit` when `limit` is an entry boundary).
    fn scan_to_last_before(&mut self, limit: usize) {
        while self.next_off < limit {
            if !self.parse_next() {
                return;
            }
        }
    }

    /// Index of the last restart point at an offset `< off` (`None`: the
    /// entry at `off` is the block's first). Restart offsets ascend, so this
    /// is a binary search: stepping back costs O(log restarts) plus a scan
    /// of at most one restart interval.
    fn restart_before(&self, off: usize) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.block.num_restarts);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.block.restart(mid) < off {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo.checked_sub(1)
    }

    fn seek_to_restart(&mut self, i: usize) {
        self.key.clear();
        self.next_off = self.block.restart(i);
    }

    /// Key at restart point `i` (shared is 0 there), or None if malformed.
    fn restart_key(&self, i: usize) -> Option<&[u8]> {
        let off = self.block.restart(i);
        let data = &self.block.data[..self.block.restarts_off];
        let (shared, unshared, _, hl) = decode_entry(&data[off..])?;
        let key_end = (off + hl).checked_add(unshared)?;
        if shared != 0 || key_end > data.len() || unshared < 8 {
            return None;
        }
        Some(&data[off + hl..off + hl + unshared])
    }
}

impl InternalIterator for BlockIter {
    fn valid(&self) -> bool {
        self.current < self.block.restarts_off
    }
    fn seek_to_first(&mut self) -> Result<()> {
        self.seek_to_restart(0);
        self.parse_next();
        Ok(())
    }
    fn seek(&mut self, target: &[u8]) -> Result<()> {
        // Binary search for the last restart point whose key is < target.
        let (mut lo, mut hi) = (0usize, self.block.num_restarts - 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            match self.restart_key(mid) {
                Some(k) if key::compare(k, target) == Ordering::Less => lo = mid,
                Some(_) => hi = mid - 1,
                None => {
                    self.corrupt("bad restart entry");
                    return Ok(());
                }
            }
        }
        self.seek_to_restart(lo);
        while self.parse_next() {
            if key::compare(&self.key, target) != Ordering::Less {
                return Ok(());
            }
        }
        Ok(())
    }
    fn seek_to_last(&mut self) -> Result<()> {
        self.seek_to_restart(self.block.num_restarts - 1);
        self.current = self.block.restarts_off;
        self.scan_to_last_before(self.block.restarts_off);
        Ok(())
    }
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.seek(target)?;
        if self.err.is_some() {
            return Ok(());
        }
        if !self.valid() {
            return self.seek_to_last();
        }
        if key::compare(&self.key, target) != Ordering::Equal {
            self.prev()?;
        }
        Ok(())
    }
    fn next(&mut self) -> Result<()> {
        self.parse_next();
        Ok(())
    }
    fn prev(&mut self) -> Result<()> {
        let original = self.current;
        if original >= self.block.restarts_off {
            return Ok(());
        }
        let Some(r) = self.restart_before(original) else {
            // The first entry: nothing before it.
            self.current = self.block.restarts_off;
            self.next_off = self.current;
            return Ok(());
        };
        self.seek_to_restart(r);
        self.scan_to_last_before(original);
        if self.valid() && self.next_off != original {
            self.corrupt("entries overlap a restart point");
        }
        Ok(())
    }
    fn key(&self) -> &[u8] {
        &self.key
    }
    fn value(&self) -> &[u8] {
        &self.block.data[self.value.0..self.value.1]
    }
}

/// Turns a block decoding error into a [`Error::Corruption`] for `file`.
pub fn corruption(file: &std::path::Path, detail: &str) -> Error {
    Error::corruption(file, format!("malformed block: {detail}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key::{internal_key, Kind};

    #[test]
    fn build_and_seek() {
        let mut b = BlockBuilder::new(4);
        let keys: Vec<Vec<u8>> = (0..100u32)
            .map(|i| internal_key(format!("key{i:04}").as_bytes(), 7, Kind::Put))
            .collect();
        for k in &keys {
            b.add(k, b"v");
        }
        let block = Arc::new(Block::new(b.finish()).unwrap());
        let mut it = BlockIter::new(block.clone());
        it.seek_to_first().unwrap();
        let mut n = 0;
        while it.valid() {
            assert_eq!(it.key(), keys[n].as_slice());
            n += 1;
            it.next().unwrap();
        }
        assert_eq!(n, 100);
        for (i, k) in keys.iter().enumerate() {
            it.seek(k).unwrap();
            assert_eq!(it.key(), keys[i].as_slice());
        }
        it.seek(&internal_key(b"key9999", 7, Kind::Put)).unwrap();
        assert!(!it.valid());
        it.seek(&internal_key(b"a", 7, Kind::Put)).unwrap();
        assert_eq!(it.key(), keys[0].as_slice());
    }

    #[test]
    fn steps_back_across_restart_points() {
        use crate::iter::testing::{check_bidirectional, random_entries};
        for (seed, interval) in [(1u64, 1usize), (2, 2), (3, 3), (4, 16), (5, 1000)] {
            for n in [1usize, 2, 3, 16, 17, 200] {
                let entries = random_entries(seed * 31 + n as u64, n);
                let mut b = BlockBuilder::new(interval);
                for (k, v) in &entries {
                    b.add(k, v);
                }
                let mut it = BlockIter::new(Arc::new(Block::new(b.finish()).unwrap()));
                check_bidirectional(&mut it, &entries, seed);
                assert!(it.error().is_none());
            }
        }
        let mut it = BlockIter::new(Arc::new(Block::new(BlockBuilder::new(4).finish()).unwrap()));
        it.seek_to_last().unwrap();
        assert!(!it.valid());
        it.seek_for_prev(&internal_key(b"k", 1, Kind::Put)).unwrap();
        assert!(!it.valid());
    }

    #[test]
    fn malformed_blocks_do_not_panic() {
        let mut b = BlockBuilder::new(2);
        for i in 0..20u32 {
            b.add(
                &internal_key(format!("k{i}").as_bytes(), 1, Kind::Put),
                b"value",
            );
        }
        let good = b.finish();
        for i in 0..good.len() {
            for bit in [1u8, 0x80] {
                let mut bad = good.clone();
                bad[i] ^= bit;
                if let Ok(block) = Block::new(bad) {
                    let mut it = BlockIter::new(Arc::new(block));
                    it.seek_to_first().unwrap();
                    let mut steps = 0;
                    while it.valid() && steps < 100 {
                        it.next().unwrap();
                        steps += 1;
                    }
                    it.seek(&internal_key(b"k5", 1, Kind::Put)).unwrap();
                    it.seek_to_last().unwrap();
                    while it.valid() && steps < 200 {
                        it.prev().unwrap();
                        steps += 1;
                    }
                    it.seek_for_prev(&internal_key(b"k5", 1, Kind::Put))
                        .unwrap();
                }
            }
        }
    }
}
