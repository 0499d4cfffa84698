//! Write batches: several puts and deletes applied atomically.
//!
//! Encoding (also the WAL record payload): `seq: u64 | count: u32 | entries`,
//! each entry `kind: u8 | key (varint len + bytes) | value (varint len + bytes, puts only)`.

use crate::coding::{put_bytes, Reader};
use crate::error::{Error, Result};
use crate::key::{self, Kind, SeqNo, MAX_VALUE_LEN};

const HEADER: usize = 12;

/// A set of updates applied atomically by [`Db::write`](crate::Db::write).
#[derive(Clone, Debug)]
pub struct WriteBatch {
    rep: Vec<u8>,
    count: u32,
    invalid: Option<String>,
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
        }
    }

    /// Adds a put of `key` to `value`.
    pub fn put(&mut self, key: impl AsRef<[u8]>, value: impl AsRef<[u8]>) {
        let (key, value) = (key.as_ref(), value.as_ref());
        self.check(key, Some(value));
        self.rep.push(Kind::Put as u8);
        put_bytes(&mut self.rep, key);
        put_bytes(&mut self.rep, value);
        self.count += 1;
    }

    /// Adds a delete of `key`.
    pub fn delete(&mut self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        self.check(key, None);
        self.rep.push(Kind::Delete as u8);
        put_bytes(&mut self.rep, key);
        self.count += 1;
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

    /// Stamps the first sequence number and returns the encoded record.
    pub(crate) fn encode(&mut self, seq: SeqNo) -> &[u8] {
        self.rep[0..8].copy_from_slice(&seq.to_le_bytes());
        self.rep[8..12].copy_from_slice(&self.count.to_le_bytes());
        &self.rep
    }
}

/// One decoded update.
pub struct BatchEntry<'a> {
    /// Put or delete.
    pub kind: Kind,
    /// The key.
    pub key: &'a [u8],
    /// The value (empty for deletes).
    pub value: &'a [u8],
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
        let kind = Kind::from_u8(r.u8().ok_or("batch entry truncated")?).ok_or("bad entry kind")?;
        let key = r.bytes().ok_or("batch key truncated")?;
        let value = match kind {
            Kind::Put => r.bytes().ok_or("batch value truncated")?,
            Kind::Delete => &[][..],
        };
        f(BatchEntry { kind, key, value });
    }
    if r.remaining() != 0 {
        return Err("trailing bytes after batch".into());
    }
    Ok(seq)
}
