//! The properties block: facts about an SST recorded when it was written.
//!
//! Encoding: `version: u8 (=1)` then, in order, varints `entries, deletions,
//! data_blocks, raw_key_bytes, raw_value_bytes, level`, the length-prefixed
//! smallest and largest internal keys, `bits_per_key: f64 (LE bits)` and
//! `filter_keys: varint`, then (optional: absent in files written before
//! range deletes, read as zero) varints `range_dels, range_del_offset,
//! range_del_size`: the number of range tombstones and the handle of the
//! range-tombstone block (see [`crate::range_del::encode_block`]), then
//! (optional: absent in files of the default keyspace and in files written
//! before keyspaces, read as the default keyspace) `keyspace: varint` and the
//! keyspace's length-prefixed UTF-8 name, which repair rebuilds keyspaces from
//! (written with id 0 and an empty name when a prefix filter follows), then
//! (optional: absent in files without a prefix filter) varints
//! `prefix_filter_offset, prefix_filter_size`, the handle of the prefix
//! filter block (see [`crate::filter::prefix`]).

use crate::coding::{put_bytes, put_varint, Reader};

/// Facts about one SST.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Properties {
    /// Number of entries (values and tombstones).
    pub entries: u64,
    /// Number of tombstones.
    pub deletions: u64,
    /// Number of data blocks.
    pub data_blocks: u64,
    /// Sum of internal key lengths.
    pub raw_key_bytes: u64,
    /// Sum of value lengths.
    pub raw_value_bytes: u64,
    /// Level the file was written for.
    pub level: u32,
    /// Smallest internal key.
    pub smallest: Vec<u8>,
    /// Largest internal key.
    pub largest: Vec<u8>,
    /// Filter bits per key it was built with (0 = no filter).
    pub bits_per_key: f64,
    /// Distinct user keys in the filter.
    pub filter_keys: u64,
    /// Range tombstones in the file (0: no range-tombstone block).
    pub range_dels: u64,
    /// The range-tombstone block (zero handle when `range_dels` is 0).
    pub range_del_block: super::BlockHandle,
    /// The keyspace the file belongs to (0: the default one).
    pub keyspace: u32,
    /// That keyspace's name (empty for the default one).
    pub keyspace_name: String,
    /// The prefix filter block (zero handle: the file has none).
    pub prefix_filter_block: super::BlockHandle,
}

impl Properties {
    /// Encodes the block.
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![1u8];
        for v in [
            self.entries,
            self.deletions,
            self.data_blocks,
            self.raw_key_bytes,
            self.raw_value_bytes,
            u64::from(self.level),
        ] {
            put_varint(&mut b, v);
        }
        put_bytes(&mut b, &self.smallest);
        put_bytes(&mut b, &self.largest);
        b.extend_from_slice(&self.bits_per_key.to_bits().to_le_bytes());
        put_varint(&mut b, self.filter_keys);
        for v in [
            self.range_dels,
            self.range_del_block.offset,
            self.range_del_block.size,
        ] {
            put_varint(&mut b, v);
        }
        let prefix = self.prefix_filter_block;
        if self.keyspace != 0 || prefix.size != 0 {
            put_varint(&mut b, u64::from(self.keyspace));
            put_bytes(&mut b, self.keyspace_name.as_bytes());
        }
        if prefix.size != 0 {
            put_varint(&mut b, prefix.offset);
            put_varint(&mut b, prefix.size);
        }
        b
    }

    /// Decodes the block.
    pub fn decode(b: &[u8]) -> Result<Properties, String> {
        let mut r = Reader::new(b);
        let bad = || "properties block truncated".to_string();
        if r.u8().ok_or_else(bad)? != 1 {
            return Err("unknown properties version".into());
        }
        let mut p = Properties {
            entries: r.varint().ok_or_else(bad)?,
            deletions: r.varint().ok_or_else(bad)?,
            data_blocks: r.varint().ok_or_else(bad)?,
            raw_key_bytes: r.varint().ok_or_else(bad)?,
            raw_value_bytes: r.varint().ok_or_else(bad)?,
            level: r.varint().ok_or_else(bad)? as u32,
            ..Properties::default()
        };
        p.smallest = r.bytes().ok_or_else(bad)?.to_vec();
        p.largest = r.bytes().ok_or_else(bad)?.to_vec();
        p.bits_per_key = f64::from_bits(r.u64().ok_or_else(bad)?);
        p.filter_keys = r.varint().ok_or_else(bad)?;
        if r.remaining() > 0 {
            p.range_dels = r.varint().ok_or_else(bad)?;
            p.range_del_block.offset = r.varint().ok_or_else(bad)?;
            p.range_del_block.size = r.varint().ok_or_else(bad)?;
        }
        if r.remaining() > 0 {
            let id = r.varint().ok_or_else(bad)?;
            p.keyspace = u32::try_from(id).map_err(|_| format!("bad keyspace id {id}"))?;
            p.keyspace_name = std::str::from_utf8(r.bytes().ok_or_else(bad)?)
                .map_err(|_| "keyspace name is not UTF-8".to_string())?
                .to_string();
            if p.keyspace == 0 && !p.keyspace_name.is_empty() {
                return Err("the default keyspace has a name".into());
            }
        }
        if r.remaining() > 0 {
            p.prefix_filter_block.offset = r.varint().ok_or_else(bad)?;
            p.prefix_filter_block.size = r.varint().ok_or_else(bad)?;
            if p.prefix_filter_block.size == 0 {
                return Err("empty prefix filter block".into());
            }
        }
        if r.remaining() > 0 {
            return Err(format!(
                "{} stray bytes in the properties block",
                r.remaining()
            ));
        }
        if p.entries > 0 && (p.smallest.len() < 8 || p.largest.len() < 8) {
            return Err("properties key range malformed".into());
        }
        Ok(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sst::BlockHandle;

    #[test]
    fn range_tombstone_fields_round_trip_and_default_to_zero() {
        let p = Properties {
            entries: 3,
            smallest: vec![b'a'; 9],
            largest: vec![b'z'; 9],
            filter_keys: 3,
            range_dels: 2,
            range_del_block: BlockHandle {
                offset: 4096,
                size: 40,
            },
            ..Properties::default()
        };
        let b = p.encode();
        assert_eq!(Properties::decode(&b).unwrap(), p);
        // A block written before range deletes ends after `filter_keys`.
        let old = Properties {
            range_dels: 0,
            range_del_block: BlockHandle::default(),
            ..p.clone()
        };
        let ob = old.encode();
        // Its three trailing fields are one-byte zero varints.
        assert_eq!(Properties::decode(&ob[..ob.len() - 3]).unwrap(), old);
        assert_eq!(&ob[..ob.len() - 3], &b[..b.len() - 4]);
        assert!(Properties::decode(&b[..b.len() - 1]).is_err());
    }

    #[test]
    fn prefix_filter_handle_round_trips_in_either_keyspace() {
        for (keyspace, name) in [(0, ""), (3, "ks")] {
            let p = Properties {
                entries: 1,
                smallest: vec![b'a'; 9],
                largest: vec![b'z'; 9],
                keyspace,
                keyspace_name: name.to_string(),
                prefix_filter_block: BlockHandle {
                    offset: 300,
                    size: 70,
                },
                ..Properties::default()
            };
            let b = p.encode();
            assert_eq!(Properties::decode(&b).unwrap(), p);
            // Without it the block ends where it did before prefix filters.
            let none = Properties {
                prefix_filter_block: BlockHandle::default(),
                ..p.clone()
            };
            assert_eq!(Properties::decode(&none.encode()).unwrap(), none);
            assert!(Properties::decode(&b[..b.len() - 1]).is_err());
        }
    }
}
