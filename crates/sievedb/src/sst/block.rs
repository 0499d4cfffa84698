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
use crate::io::FileMap;
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

/// Where a block's bytes live: its own buffer (read with `pread`, or
/// decompressed), or a range of a mapped file, used in place.
enum Bytes {
    Owned(Vec<u8>),
    /// `map.bytes()[start..start + len]`; the `Arc` keeps the map alive as
    /// long as the block.
    Mapped {
        map: Arc<FileMap>,
        start: usize,
        len: usize,
    },
}

/// A decoded (uncompressed, checksum-verified) block.
pub struct Block {
    bytes: Bytes,
    restarts_off: usize,
    num_restarts: usize,
}

/// The restart array of `data` checked: `(restarts_off, num_restarts)`.
fn parse_restarts(data: &[u8]) -> std::result::Result<(usize, usize), String> {
    if data.len() < 4 {
        return Err("block too short".into());
    }
    let n = u32_at(data, data.len() - 4) as usize;
    let max = (data.len() - 4) / 4;
    if n == 0 || n > max {
        return Err(format!("bad restart count {n}"));
    }
    let restarts_off = data.len() - 4 - 4 * n;
    for i in 0..n {
        if u32_at(data, restarts_off + 4 * i) as usize >= restarts_off.max(1) {
            return Err("restart point out of range".into());
        }
    }
    Ok((restarts_off, n))
}

/// The first entry at or after a target, found by [`Block::seek_entry`].
#[derive(Debug, PartialEq, Eq)]
pub struct Entry<'a> {
    /// Its internal key (well formed: [`key::parse`] accepts it).
    pub key: &'a [u8],
    /// Its value.
    pub value: &'a [u8],
}

impl Block {
    /// Validates the restart array of `data`.
    pub fn new(data: Vec<u8>) -> std::result::Result<Block, String> {
        let (restarts_off, num_restarts) = parse_restarts(&data)?;
        Ok(Block {
            bytes: Bytes::Owned(data),
            restarts_off,
            num_restarts,
        })
    }

    /// The block at `map.bytes()[start..start + len]`, used in place (no
    /// copy), its restart array validated; a range outside the map is an
    /// error, never a fault.
    pub fn mapped(
        map: Arc<FileMap>,
        start: usize,
        len: usize,
    ) -> std::result::Result<Block, String> {
        let data = start
            .checked_add(len)
            .and_then(|end| map.bytes().get(start..end))
            .ok_or("block beyond the end of the mapped file")?;
        let (restarts_off, num_restarts) = parse_restarts(data)?;
        Ok(Block {
            bytes: Bytes::Mapped { map, start, len },
            restarts_off,
            num_restarts,
        })
    }

    /// The block's bytes (entries, restart array, count).
    #[inline]
    fn data(&self) -> &[u8] {
        match &self.bytes {
            Bytes::Owned(v) => v,
            Bytes::Mapped { map, start, len } => &map.bytes()[*start..*start + *len],
        }
    }

    /// Bytes held.
    pub fn size(&self) -> usize {
        self.data().len()
    }

    fn restart(&self, i: usize) -> usize {
        u32_at(self.data(), self.restarts_off + 4 * i) as usize
    }

    /// Key at restart point `i` (shared is 0 there, so it lies in place),
    /// or `None` if malformed.
    fn restart_key(&self, i: usize) -> Option<&[u8]> {
        let off = self.restart(i);
        let data = &self.data()[..self.restarts_off];
        let (shared, unshared, _, hl) = decode_entry(&data[off..])?;
        let key_end = (off + hl).checked_add(unshared)?;
        if shared != 0 || key_end > data.len() || unshared < 8 {
            return None;
        }
        Some(&data[off + hl..key_end])
    }

    /// Restart points (each one entry when [`Block::every_entry_restarts`]).
    pub fn num_restarts(&self) -> usize {
        self.num_restarts
    }

    /// Whether every entry is a restart point (its key stored whole, in
    /// place), as in the index blocks this build writes: each entry then
    /// ends where the next restart point begins.
    pub fn every_entry_restarts(&self) -> bool {
        let data = &self.data()[..self.restarts_off];
        (0..self.num_restarts).all(|i| {
            let off = self.restart(i);
            let next = match i + 1 < self.num_restarts {
                true => self.restart(i + 1),
                false => self.restarts_off,
            };
            match decode_entry(&data[off..]) {
                Some((0, unshared, vlen, hl)) => (off + hl)
                    .checked_add(unshared)
                    .and_then(|e| e.checked_add(vlen))
                    .is_some_and(|end| end == next),
                _ => false,
            }
        })
    }

    /// The entry at restart point `i` (key in place), or `None` if it is
    /// malformed (out of range, or a key [`key::parse`] rejects).
    pub fn restart_entry(&self, i: usize) -> Option<Entry<'_>> {
        if i >= self.num_restarts {
            return None;
        }
        let off = self.restart(i);
        let data = &self.data()[..self.restarts_off];
        let (shared, unshared, vlen, hl) = decode_entry(&data[off..])?;
        let kend = (off + hl).checked_add(unshared)?;
        let vend = kend.checked_add(vlen)?;
        if shared != 0 || vend > data.len() {
            return None;
        }
        let key = &data[off + hl..kend];
        key::parse(key)?;
        Some(Entry {
            key,
            value: &data[kend..vend],
        })
    }

    /// The last restart point whose key is `< target` (0 if none is), by
    /// binary search over the restart keys compared in place.
    fn restart_below(&self, target: &[u8]) -> std::result::Result<usize, String> {
        let (mut lo, mut hi) = (0usize, self.num_restarts - 1);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            match self.restart_key(mid) {
                Some(k) if key::compare(k, target) == Ordering::Less => lo = mid,
                Some(_) => hi = mid - 1,
                None => return Err("bad restart entry".into()),
            }
        }
        Ok(lo)
    }

    /// The first entry whose key is `>= target` (`None`: every key is
    /// smaller), without allocating: restart keys are compared in place and
    /// only an entry that shares a prefix with its predecessor has its key
    /// rebuilt, in `scratch` (reused across calls). A malformed entry is an
    /// error, as [`BlockIter`] reports it.
    pub fn seek_entry<'a>(
        &'a self,
        target: &[u8],
        scratch: &'a mut Vec<u8>,
    ) -> std::result::Result<Option<Entry<'a>>, String> {
        let data = &self.data()[..self.restarts_off];
        let mut off = self.restart(self.restart_below(target)?);
        // The current key: in place at `data[in_place]`, or in `scratch`.
        let mut in_place: Option<(usize, usize)> = None;
        scratch.clear();
        while off < data.len() {
            let (shared, unshared, vlen, hl) =
                decode_entry(&data[off..]).ok_or("bad entry header")?;
            let kstart = off + hl;
            let vstart = kstart.checked_add(unshared).filter(|&e| e <= data.len());
            let vend = vstart
                .and_then(|v| v.checked_add(vlen))
                .filter(|&e| e <= data.len());
            let (Some(vstart), Some(vend)) = (vstart, vend) else {
                return Err("entry out of range".into());
            };
            if shared == 0 {
                in_place = Some((kstart, vstart));
            } else {
                if let Some((s, e)) = in_place.take() {
                    scratch.clear();
                    scratch.extend_from_slice(&data[s..e]);
                }
                if shared > scratch.len() {
                    return Err("entry out of range".into());
                }
                scratch.truncate(shared);
                scratch.extend_from_slice(&data[kstart..vstart]);
            }
            let key = match in_place {
                Some((s, e)) => &data[s..e],
                None => &scratch[..],
            };
            if key::parse(key).is_none() {
                return Err(key::malformed_detail(key));
            }
            if key::compare(key, target) != Ordering::Less {
                let value = &data[vstart..vend];
                let key = match in_place {
                    Some((s, e)) => &data[s..e],
                    None => &scratch[..],
                };
                return Ok(Some(Entry { key, value }));
            }
            off = vend;
        }
        Ok(None)
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
        let data = &self.block.data()[..end];
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
            .extend_from_slice(&self.block.data()[kstart..kstart + unshared]);
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
        let lo = match self.block.restart_below(target) {
            Ok(lo) => lo,
            Err(e) => {
                self.corrupt(&e);
                return Ok(());
            }
        };
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
        &self.block.data()[self.value.0..self.value.1]
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

    /// `seek_entry` (the allocation-free point search) finds what
    /// `BlockIter::seek` finds, for every key in the block, keys between and
    /// around them, and every restart interval.
    #[test]
    fn seek_entry_agrees_with_the_iterator() {
        use crate::iter::testing::random_entries;
        let mut scratch = Vec::new();
        for (seed, interval) in [(1u64, 1usize), (2, 2), (3, 5), (4, 16), (5, 1000)] {
            for n in [1usize, 2, 17, 300] {
                let entries = random_entries(seed * 97 + n as u64, n);
                let mut b = BlockBuilder::new(interval);
                for (k, v) in &entries {
                    b.add(k, v);
                }
                let block = Arc::new(Block::new(b.finish()).unwrap());
                let mut it = BlockIter::new(block.clone());
                let mut targets: Vec<Vec<u8>> = entries.iter().map(|e| e.0.clone()).collect();
                for (k, _) in &entries {
                    let user = key::user_key(k);
                    for seq in [0, key::MAX_SEQ] {
                        targets.push(internal_key(user, seq, Kind::Put));
                    }
                    let mut longer = user.to_vec();
                    longer.push(0);
                    targets.push(internal_key(&longer, 5, Kind::Put));
                }
                targets.push(internal_key(b"", key::MAX_SEQ, Kind::Put));
                targets.push(internal_key(b"\xff\xff\xff\xff", 0, Kind::Put));
                for t in &targets {
                    it.seek(t).unwrap();
                    let want = it.valid().then(|| (it.key().to_vec(), it.value().to_vec()));
                    let got = block
                        .seek_entry(t, &mut scratch)
                        .unwrap()
                        .map(|e| (e.key.to_vec(), e.value.to_vec()));
                    assert_eq!(got, want, "seed {seed} interval {interval} n {n}");
                }
            }
        }
    }

    /// On a damaged block, `seek_entry` returns an error or an entry, never
    /// panics, and agrees with the iterator on whether there is an error.
    #[test]
    fn seek_entry_on_malformed_blocks_errs_like_the_iterator() {
        let mut b = BlockBuilder::new(3);
        for i in 0..20u32 {
            b.add(
                &internal_key(format!("k{i:02}").as_bytes(), 1, Kind::Put),
                b"value",
            );
        }
        let good = b.finish();
        let mut scratch = Vec::new();
        let targets: Vec<Vec<u8>> = (0..22u32)
            .map(|i| internal_key(format!("k{i:02}").as_bytes(), 1, Kind::Put))
            .collect();
        for i in 0..good.len() {
            for bit in [1u8, 0x80] {
                let mut bad = good.clone();
                bad[i] ^= bit;
                let Ok(block) = Block::new(bad) else {
                    continue;
                };
                let block = Arc::new(block);
                for t in &targets {
                    // A fresh cursor: an iterator's error is sticky.
                    let mut it = BlockIter::new(block.clone());
                    it.seek(t).unwrap();
                    let got = block.seek_entry(t, &mut scratch);
                    match (got, it.error()) {
                        (Err(_), Some(_)) => {}
                        (Ok(e), None) => {
                            let want = it.valid().then(|| it.key().to_vec());
                            assert_eq!(e.map(|e| e.key.to_vec()), want, "byte {i}");
                        }
                        (got, err) => panic!("byte {i}: {:?} vs {err:?}", got.map(|_| ())),
                    }
                }
            }
        }
    }

    /// A mapped block is the same block, used in place; a range outside
    /// the map is an error.
    #[test]
    fn mapped_blocks_read_in_place_and_refuse_out_of_range() {
        let mut b = BlockBuilder::new(4);
        let keys: Vec<Vec<u8>> = (0..50u32)
            .map(|i| internal_key(format!("key{i:03}").as_bytes(), 3, Kind::Put))
            .collect();
        for k in &keys {
            b.add(k, b"val");
        }
        let data = b.finish();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("blocks");
        let mut file = b"prefix".to_vec();
        file.extend_from_slice(&data);
        std::fs::write(&path, &file).unwrap();
        let f = crate::io::FileSystem::open_mapped(&crate::io::StdFs, &path).unwrap();
        let map = f.map().expect("the real file system maps").clone();
        let block = Arc::new(Block::mapped(map.clone(), 6, data.len()).unwrap());
        assert_eq!(block.size(), data.len());
        let mut it = BlockIter::new(block.clone());
        it.seek_to_first().unwrap();
        for k in &keys {
            assert_eq!(it.key(), k.as_slice());
            assert_eq!(it.value(), b"val");
            it.next().unwrap();
        }
        assert!(!it.valid());
        let mut scratch = Vec::new();
        let e = block.seek_entry(&keys[17], &mut scratch).unwrap().unwrap();
        assert_eq!((e.key, e.value), (keys[17].as_slice(), &b"val"[..]));
        for (start, len) in [(7, data.len()), (file.len(), 1), (usize::MAX, 2), (0, 3)] {
            assert!(
                Block::mapped(map.clone(), start, len).is_err(),
                "{start}+{len}"
            );
        }
    }
}
