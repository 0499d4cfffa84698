//! Write batches: several puts and deletes applied atomically.
//!
//! Encoding (also the WAL record payload): `seq: u64 | count: u32 | entries`,
//! each entry `kind: u8 | key (varint len + bytes) | value (varint len + bytes)`
//! where the value is present for kinds 1, 2 and 4 only:
//! - 0 delete `key`; 1 put `key` = `value`;
//! - 2 range delete `[key, value)` (`value` is the exclusive end);
//! - 3 range delete `[key, +infinity)`;
//! - 4 merge operand `value` into `key`;
//! - 5 to 9: kinds 0 to 4 of keyspace `keyspace` (a varint > 0 right after
//!   the kind byte, before the key). The default keyspace (0) keeps kinds
//!   0 to 4, so a batch that names no other keyspace is encoded as older
//!   builds wrote it, and older builds refuse (bad kind) one that does.
//!
//! Every entry, range deletes included, takes one sequence number.

use crate::coding::{put_bytes, put_varint, Reader};
use crate::error::{Error, Result};
use crate::key::{self, Kind, SeqNo, MAX_VALUE_LEN};
use crate::range_del::RangeTombstone;
use std::ops::{Bound, RangeBounds};

/// Entry kind byte of a bounded range delete.
const RANGE_DELETE: u8 = 2;
/// Entry kind byte of a range delete to +infinity.
const RANGE_DELETE_TO_END: u8 = 3;
/// Entry kind byte of a merge operand (the internal key kind differs: see
/// [`Kind::Merge`]).
const MERGE: u8 = 4;
/// What an entry of a keyspace other than the default adds to its kind.
const KEYSPACE_KIND: u8 = 5;

const HEADER: usize = 12;
/// Most bytes an entry adds besides its key and value: its tag and two
/// length varints (keys and values are far below 2^35 bytes).
pub(crate) const ENTRY_OVERHEAD: usize = 11;

/// A set of updates applied atomically by [`Db::write`](crate::Db::write).
///
/// ```
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// # let db = sievedb::Db::open(dir.path(), sievedb::Options::default())?;
/// let mut batch = sievedb::WriteBatch::new();
/// batch.put("a", "1");
/// batch.delete("b");
/// batch.delete_range(b"x".as_slice()..);
/// db.write(batch)?; // all or nothing
/// # Ok(()) }
/// ```
#[derive(Clone, Debug)]
pub struct WriteBatch {
    rep: Vec<u8>,
    count: u32,
    invalid: Option<String>,
    /// The batch holds a merge: its keyspaces' merge operators are checked
    /// when it is written.
    has_merge: bool,
    /// The keyspaces other than the default one the batch writes to (boxed:
    /// a batch of the default keyspace stays small to move).
    keyspaces: Option<Box<Keyspaces>>,
}

/// The keyspaces besides the default one a batch writes to.
#[derive(Clone, Debug)]
struct Keyspaces {
    /// Their ids.
    ids: Vec<u32>,
    /// The database they belong to: a keyspace id means nothing in another.
    owner: usize,
}

impl Default for WriteBatch {
    fn default() -> Self {
        Self::new()
    }
}

impl WriteBatch {
    /// An empty batch.
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty batch with room for `bytes` of keys and values.
    pub fn with_capacity(bytes: usize) -> Self {
        let mut rep = Vec::with_capacity(HEADER + bytes);
        rep.resize(HEADER, 0);
        WriteBatch {
            rep,
            count: 0,
            invalid: None,
            has_merge: false,
            keyspaces: None,
        }
    }

    /// Adds a put of `key` to `value`.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        let (key, value) = (key.as_ref(), value.as_ref());
        self.check(key, Some(value));
        // One growth for the whole entry (tag, two varints of at most 5
        // bytes each, the bytes), not one per piece.
        self.rep.reserve(ENTRY_OVERHEAD + key.len() + value.len());
        self.rep.push(Kind::Put as u8);
        put_bytes(&mut self.rep, key);
        put_bytes(&mut self.rep, value);
        self.count += 1;
    }

    /// Adds a merge of `operand` into `key`: the database's
    /// [`MergeOperator`](crate::merge::MergeOperator) combines it with the
    /// key's older value and operands when the key is read or compacted.
    /// Writing the batch into a keyspace without a merge operator is refused
    /// with [`Error::InvalidArgument`] (nothing of the batch is applied).
    pub fn merge(&mut self, key: impl AsRef<[u8]>, operand: impl AsRef<[u8]>) {
        let (key, operand) = (key.as_ref(), operand.as_ref());
        self.check(key, Some(operand));
        self.rep.reserve(ENTRY_OVERHEAD + key.len() + operand.len());
        self.rep.push(MERGE);
        put_bytes(&mut self.rep, key);
        put_bytes(&mut self.rep, operand);
        self.count += 1;
        self.has_merge = true;
    }

    /// Adds an entry of kind `kind` (0 to 4) to keyspace `keyspace` of the
    /// database `owner` (see [`WriteBatch::owner`]): `value` is the value, the
    /// operand or the range end, for the kinds that have one.
    pub(crate) fn push_in(
        &mut self,
        owner: usize,
        keyspace: u32,
        kind: u8,
        key: &[u8],
        value: Option<&[u8]>,
    ) {
        if keyspace == 0 {
            match (kind, value) {
                (1, Some(v)) => self.put(key, v),
                (4, Some(v)) => self.merge(key, v),
                (0, None) => self.delete(key),
                _ => unreachable!("kinds of the keyspace handle"),
            }
            return;
        }
        self.check(key, value);
        self.rep.push(kind + KEYSPACE_KIND);
        put_varint(&mut self.rep, u64::from(keyspace));
        put_bytes(&mut self.rep, key);
        if let Some(v) = value {
            put_bytes(&mut self.rep, v);
        }
        self.claim(owner, keyspace);
        self.count += 1;
        self.has_merge |= kind == 4;
    }

    /// Adds a delete of `range` in keyspace `keyspace` of the database
    /// `owner` (as [`WriteBatch::delete_range`]).
    pub(crate) fn delete_range_in<K: AsRef<[u8]>, R: RangeBounds<K>>(
        &mut self,
        owner: usize,
        keyspace: u32,
        range: R,
    ) {
        if keyspace == 0 {
            return self.delete_range(range);
        }
        let Some(t) = self.normalise(&range) else {
            return;
        };
        let kind = if t.end.is_some() {
            RANGE_DELETE
        } else {
            RANGE_DELETE_TO_END
        };
        self.rep.push(kind + KEYSPACE_KIND);
        put_varint(&mut self.rep, u64::from(keyspace));
        put_bytes(&mut self.rep, &t.start);
        if let Some(end) = &t.end {
            put_bytes(&mut self.rep, end);
        }
        self.claim(owner, keyspace);
        self.count += 1;
    }

    /// Records that the batch writes to keyspace `id` of database `owner`;
    /// a batch mixing two databases' keyspaces is invalid.
    fn claim(&mut self, owner: usize, id: u32) {
        let ks = self.keyspaces.get_or_insert_with(|| {
            Box::new(Keyspaces {
                ids: Vec::new(),
                owner,
            })
        });
        if ks.owner != owner && self.invalid.is_none() {
            self.invalid = Some("a write batch names keyspaces of two databases".into());
        }
        if !ks.ids.contains(&id) {
            ks.ids.push(id);
        }
    }

    /// The database whose keyspaces the batch writes to (0: only the
    /// default keyspace, which every database has).
    pub(crate) fn owner(&self) -> usize {
        self.keyspaces.as_ref().map_or(0, |k| k.owner)
    }

    /// The keyspaces the batch merges into (the default one is 0), each
    /// once; empty without a merge (nothing is decoded then).
    pub(crate) fn merge_keyspaces(&mut self) -> Result<Vec<u32>> {
        let mut ids = Vec::new();
        if self.has_merge {
            self.for_each(|e| {
                if e.kind == EntryKind::Merge && !ids.contains(&e.keyspace) {
                    ids.push(e.keyspace);
                }
            })
            .map_err(|d| Error::InvalidArgument(format!("write batch does not decode: {d}")))?;
        }
        Ok(ids)
    }

    /// The keyspaces other than the default one the batch writes to.
    pub(crate) fn keyspaces(&self) -> &[u32] {
        self.keyspaces.as_ref().map_or(&[], |k| &k.ids)
    }

    /// Adds a delete of `key`.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        self.check(key, None);
        self.rep.reserve(ENTRY_OVERHEAD + key.len());
        self.rep.push(Kind::Delete as u8);
        put_bytes(&mut self.rep, key);
        self.count += 1;
    }

    /// Adds a delete of every key in `range` (one record, whatever the range
    /// holds). Bounds are normalised to `[start, end)`: an excluded start or an
    /// included end becomes its successor (`key ++ [0]`), an unbounded start
    /// the empty key, an unbounded end +infinity. An empty range adds nothing.
    pub fn delete_range<K: AsRef<[u8]>, R: RangeBounds<K>>(&mut self, range: R) {
        let Some(t) = self.normalise(&range) else {
            return;
        };
        match &t.end {
            Some(end) => {
                self.rep.push(RANGE_DELETE);
                put_bytes(&mut self.rep, &t.start);
                put_bytes(&mut self.rep, end);
            }
            None => {
                self.rep.push(RANGE_DELETE_TO_END);
                put_bytes(&mut self.rep, &t.start);
            }
        }
        self.count += 1;
    }

    /// `range` as a half-open tombstone (sequence 0), or `None` when it is
    /// empty or a bound is too long (which marks the batch invalid).
    fn normalise<K: AsRef<[u8]>, R: RangeBounds<K>>(
        &mut self,
        range: &R,
    ) -> Option<RangeTombstone> {
        for k in [range.start_bound(), range.end_bound()] {
            if let Bound::Included(k) | Bound::Excluded(k) = k {
                self.check(k.as_ref(), None);
            }
        }
        if self.invalid.is_some() {
            return None;
        }
        let successor = |k: &[u8]| [k, &[0]].concat();
        let start = match range.start_bound() {
            Bound::Included(k) => k.as_ref().to_vec(),
            Bound::Excluded(k) => successor(k.as_ref()),
            Bound::Unbounded => Vec::new(),
        };
        let end = match range.end_bound() {
            Bound::Included(k) => Some(successor(k.as_ref())),
            Bound::Excluded(k) => Some(k.as_ref().to_vec()),
            Bound::Unbounded => None,
        };
        let t = RangeTombstone { start, end, seq: 0 };
        (!t.is_empty()).then_some(t)
    }

    fn check(&mut self, key: &[u8], value: Option<&[u8]>) {
        if self.invalid.is_some() {
            return;
        }
        if let Err(m) = key::check_len(key) {
            self.invalid = Some(m);
        } else if let Some(v) = value.filter(|v| v.len() > MAX_VALUE_LEN) {
            self.invalid = Some(format!(
                "value of {} bytes exceeds the limit of {MAX_VALUE_LEN}",
                v.len()
            ));
        }
    }

    /// Number of updates.
    pub fn len(&self) -> usize {
        self.count as usize
    }

    /// Whether the batch holds no update.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Removes all updates.
    pub fn clear(&mut self) {
        *self = WriteBatch::new();
    }

    /// Bytes of the encoded batch.
    pub fn size_in_bytes(&self) -> usize {
        self.rep.len()
    }

    /// The reason the batch cannot be written, if any update was out of limits.
    pub(crate) fn validate(&self) -> Result<()> {
        match &self.invalid {
            Some(m) => Err(Error::InvalidArgument(m.clone())),
            None => Ok(()),
        }
    }

    /// Walks the batch's updates in order (what a commit check of a later
    /// batch of the same group must see, `db/conflicts.rs`); the error of
    /// a record that does not decode, which a batch built here never is.
    pub(crate) fn for_each(
        &mut self,
        f: impl FnMut(BatchEntry<'_>),
    ) -> std::result::Result<(), String> {
        for_each_entry(self.encode(0), f).map(|_| ())
    }

    /// Stamps the first sequence number and returns the encoded record.
    pub(crate) fn encode(&mut self, seq: SeqNo) -> &[u8] {
        self.rep[0..8].copy_from_slice(&seq.to_le_bytes());
        self.rep[8..12].copy_from_slice(&self.count.to_le_bytes());
        &self.rep
    }
}

/// What one decoded update does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EntryKind {
    /// Sets `key` to `value`.
    Put,
    /// Deletes `key`.
    Delete,
    /// Deletes every key in `[key, value)`.
    DeleteRange,
    /// Deletes every key from `key` on.
    DeleteRangeToEnd,
    /// Merges operand `value` into `key`.
    Merge,
}

/// One decoded update.
pub struct BatchEntry<'a> {
    /// The keyspace it writes to (0: the default one).
    pub keyspace: u32,
    /// What the update does.
    pub kind: EntryKind,
    /// The key (the start of a range delete).
    pub key: &'a [u8],
    /// The value of a put, the exclusive end of a bounded range delete, else empty.
    pub value: &'a [u8],
}

impl BatchEntry<'_> {
    /// The range tombstone of a range delete written at `seq`, else `None`.
    pub fn range_tombstone(&self, seq: SeqNo) -> Option<RangeTombstone> {
        let end = match self.kind {
            EntryKind::DeleteRange => Some(self.value.to_vec()),
            EntryKind::DeleteRangeToEnd => None,
            EntryKind::Put | EntryKind::Delete | EntryKind::Merge => return None,
        };
        Some(RangeTombstone {
            start: self.key.to_vec(),
            end,
            seq,
        })
    }
}

/// Decodes a batch record: the first sequence number and the updates in order.
pub fn decode(rec: &[u8]) -> std::result::Result<(SeqNo, Vec<BatchEntry<'_>>), String> {
    let mut out = Vec::new();
    let seq = for_each_entry(rec, |e| out.push(e))?;
    Ok((seq, out))
}

/// Walks the updates of a batch record in order without allocating; returns
/// the first sequence number.
pub fn for_each_entry<'a>(
    rec: &'a [u8],
    mut f: impl FnMut(BatchEntry<'a>),
) -> std::result::Result<SeqNo, String> {
    let mut r = Reader::new(rec);
    let seq = r.u64().ok_or("batch header truncated")?;
    let count = r.u32().ok_or("batch header truncated")?;
    for _ in 0..count {
        let mut byte = r.u8().ok_or("batch entry truncated")?;
        let mut keyspace = 0;
        if (KEYSPACE_KIND..KEYSPACE_KIND + 5).contains(&byte) {
            byte -= KEYSPACE_KIND;
            let id = r.varint().ok_or("batch keyspace truncated")?;
            keyspace = match u32::try_from(id) {
                Ok(id) if id > 0 => id,
                _ => return Err(format!("bad keyspace id {id}")),
            };
        }
        let kind = match byte {
            b if b == Kind::Delete as u8 => EntryKind::Delete,
            b if b == Kind::Put as u8 => EntryKind::Put,
            RANGE_DELETE => EntryKind::DeleteRange,
            RANGE_DELETE_TO_END => EntryKind::DeleteRangeToEnd,
            MERGE => EntryKind::Merge,
            _ => return Err("bad entry kind".into()),
        };
        let key = r.bytes().ok_or("batch key truncated")?;
        let value = match kind {
            EntryKind::Put | EntryKind::DeleteRange | EntryKind::Merge => {
                r.bytes().ok_or("batch value truncated")?
            }
            EntryKind::Delete | EntryKind::DeleteRangeToEnd => &[][..],
        };
        if kind == EntryKind::DeleteRange && value <= key {
            return Err("empty range delete".into());
        }
        f(BatchEntry {
            keyspace,
            kind,
            key,
            value,
        });
    }
    if r.remaining() != 0 {
        return Err("trailing bytes after batch".into());
    }
    Ok(seq)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(b: &mut WriteBatch) -> Vec<(EntryKind, Vec<u8>, Vec<u8>)> {
        let (seq, es) = decode(b.encode(7)).unwrap();
        assert_eq!(seq, 7);
        es.into_iter()
            .map(|e| (e.kind, e.key.to_vec(), e.value.to_vec()))
            .collect()
    }

    #[test]
    fn range_deletes_round_trip_normalised() {
        let mut b = WriteBatch::new();
        b.put(b"k", b"v");
        b.delete_range(b"a".as_slice()..b"c".as_slice());
        b.delete_range(b"a".as_slice()..=b"c".as_slice());
        b.delete_range::<&[u8], _>((Bound::Excluded(b"a".as_slice()), Bound::Unbounded));
        b.delete_range::<&[u8], _>(..);
        b.delete(b"d");
        b.merge(b"m", b"+1");
        b.delete_range(b"c".as_slice()..b"c".as_slice()); // empty: not added
        b.delete_range(b"d".as_slice()..b"c".as_slice()); // empty: not added
        assert_eq!(b.len(), 7);
        use EntryKind::*;
        let v = |s: &[u8]| s.to_vec();
        assert_eq!(
            entries(&mut b),
            vec![
                (Put, v(b"k"), v(b"v")),
                (DeleteRange, v(b"a"), v(b"c")),
                (DeleteRange, v(b"a"), v(b"c\0")),
                (DeleteRangeToEnd, v(b"a\0"), v(b"")),
                (DeleteRangeToEnd, v(b""), v(b"")),
                (Delete, v(b"d"), v(b"")),
                (Merge, v(b"m"), v(b"+1")),
            ]
        );
        let (_, es) = decode(b.encode(7)).unwrap();
        let t = es[1].range_tombstone(8).unwrap();
        assert_eq!((t.start, t.end, t.seq), (v(b"a"), Some(v(b"c")), 8));
        assert!(es[0].range_tombstone(7).is_none());
    }

    #[test]
    fn keyspace_entries_round_trip_with_their_ids() {
        let mut b = WriteBatch::new();
        b.put(b"d", b"0");
        b.push_in(7, 3, 1, b"k", Some(b"v"));
        b.push_in(7, 3, 0, b"x", None);
        b.push_in(7, 200, 4, b"m", Some(b"+1"));
        b.delete_range_in(7, 3, b"a".as_slice()..b"c".as_slice());
        b.delete_range_in(7, 3, b"q".as_slice()..);
        b.push_in(7, 0, 1, b"z", Some(b"default"));
        assert_eq!((b.owner(), b.keyspaces()), (7, &[3, 200][..]));
        let (_, es) = decode(b.encode(1)).unwrap();
        let got: Vec<_> = es
            .iter()
            .map(|e| (e.keyspace, e.kind, e.key, e.value))
            .collect();
        use EntryKind::*;
        assert_eq!(
            got,
            [
                (0, Put, &b"d"[..], &b"0"[..]),
                (3, Put, b"k", b"v"),
                (3, Delete, b"x", b""),
                (200, Merge, b"m", b"+1"),
                (3, DeleteRange, b"a", b"c"),
                (3, DeleteRangeToEnd, b"q", b""),
                (0, Put, b"z", b"default"),
            ]
        );
        // Keyspaces of two databases in one batch: refused.
        b.push_in(8, 3, 1, b"k", Some(b"v"));
        assert!(b.validate().is_err());
        // Keyspace id 0 in the keyspace kinds is damage.
        let mut rec = vec![0u8; 8];
        rec.extend_from_slice(&1u32.to_le_bytes());
        rec.extend_from_slice(&[KEYSPACE_KIND, 0]);
        put_bytes(&mut rec, b"k");
        assert!(decode(&rec).is_err());
    }

    #[test]
    fn bad_range_deletes_are_refused() {
        let mut b = WriteBatch::new();
        b.delete_range(vec![0u8; key::MAX_KEY_LEN + 1]..vec![1u8]);
        assert!(b.validate().is_err());
        // An empty bounded range in a record is damage.
        let mut rec = vec![0u8; 8];
        rec.extend_from_slice(&1u32.to_le_bytes());
        rec.push(RANGE_DELETE);
        put_bytes(&mut rec, b"b");
        put_bytes(&mut rec, b"a");
        assert!(decode(&rec).is_err());
        // Truncated entries are damage.
        let mut b = WriteBatch::new();
        b.delete_range(b"a".as_slice()..b"b".as_slice());
        let full = b.encode(1).to_vec();
        for cut in HEADER..full.len() {
            assert!(decode(&full[..cut]).is_err(), "cut at {cut}");
        }
    }
}
