//! Sorted string tables: immutable files of sorted internal keys.
//!
//! File layout (see `docs/format.md`):
//! ```text
//! data block 0 | trailer … data block n | trailer
//! filter section | trailer        (absent when filters are off: zero handle)
//! prefix filter | trailer         (absent without a prefix extractor; its
//!                                  handle is in the properties)
//! properties block | trailer
//! index block | trailer           (one fence pointer per data block)
//! footer (64 bytes)
//! ```
//! A file of format version 2 has a two-level index: index partitions (each
//! an index block over a run of data blocks) follow the data blocks, and the
//! index block at the end is the top-level index over the partitions (see
//! [`Options::index_partition_bytes`](crate::Options::index_partition_bytes)).
//! Every block is followed by a 5-byte trailer `compression: u8 | crc: u32`,
//! the masked CRC32C of the block bytes and the compression byte (0 none,
//! 1 LZ4, 2 zstd).

pub mod block;
pub mod fences;
pub mod meta;
pub mod properties;
pub mod reader;
pub mod writer;

use crate::coding::{u32_at, u64_at};
pub use properties::Properties;
pub use reader::TableReader;
pub use writer::TableWriter;

/// Magic number closing every SST ("SIEVEDB\x01" little-endian).
pub const MAGIC: u64 = u64::from_le_bytes(*b"SIEVEDB\x01");
/// The SST format version of a file with a one-level index (every build
/// writes and reads it).
pub const FORMAT_VERSION: u32 = 1;
/// The SST format version of a file with a two-level index: its index block
/// lists index partitions, which list the data blocks. Builds before it
/// refuse such a file by its version, never misread it.
pub const FORMAT_VERSION_TWO_LEVEL: u32 = 2;
/// Bytes of the footer.
pub const FOOTER_LEN: usize = 64;
/// Bytes of a block trailer.
pub const TRAILER_LEN: usize = 5;

/// Compression byte of an uncompressed block.
pub const COMPRESSION_NONE: u8 = 0;
/// Compression byte of an LZ4 block (size-prefixed LZ4 block format).
pub const COMPRESSION_LZ4: u8 = 1;
/// Compression byte of a zstd block (one zstd frame that records its
/// uncompressed size).
pub const COMPRESSION_ZSTD: u8 = 2;
/// The largest uncompressed block a zstd frame may claim (a corrupt size
/// field must not make the reader allocate gigabytes).
pub const MAX_BLOCK_LEN: usize = 256 << 20;

/// Where a block lives in its file (the size excludes the trailer).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BlockHandle {
    /// Offset of the block's first byte.
    pub offset: u64,
    /// Size of the block, without its trailer.
    pub size: u64,
}

impl BlockHandle {
    /// Decodes a handle stored as `offset: varint | size: varint` (an
    /// index entry's value); `None` if malformed.
    pub fn decode(v: &[u8]) -> Option<BlockHandle> {
        let mut r = crate::coding::Reader::new(v);
        Some(BlockHandle {
            offset: r.varint()?,
            size: r.varint()?,
        })
    }

    /// Appends the handle as an index entry's value stores it (the inverse
    /// of [`BlockHandle::decode`]).
    pub fn encode_to(&self, out: &mut Vec<u8>) {
        crate::coding::put_varint(out, self.offset);
        crate::coding::put_varint(out, self.size);
    }

    /// Whether the block and its trailer lie within the first `limit` bytes.
    pub fn fits(&self, limit: u64) -> bool {
        self.offset
            .checked_add(self.size)
            .and_then(|e| e.checked_add(TRAILER_LEN as u64))
            .is_some_and(|e| e <= limit)
    }
}

/// The fixed-size end of an SST:
/// `index, filter, properties: BlockHandle (2 × u64 each) | format_version: u32 |
/// crc: u32 (masked CRC32C of the preceding 52 bytes) | magic: u64`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footer {
    /// The index block.
    pub index: BlockHandle,
    /// The filter section (size 0 = no filter).
    pub filter: BlockHandle,
    /// The properties block.
    pub properties: BlockHandle,
    /// Format version of the file.
    pub format_version: u32,
}

impl Footer {
    /// Whether the index is two-level (format version 2).
    pub fn two_level(&self) -> bool {
        self.format_version == FORMAT_VERSION_TWO_LEVEL
    }
}

impl Footer {
    /// Encodes the footer.
    pub fn encode(&self) -> [u8; FOOTER_LEN] {
        let mut b = [0u8; FOOTER_LEN];
        for (i, h) in [self.index, self.filter, self.properties]
            .iter()
            .enumerate()
        {
            b[16 * i..16 * i + 8].copy_from_slice(&h.offset.to_le_bytes());
            b[16 * i + 8..16 * i + 16].copy_from_slice(&h.size.to_le_bytes());
        }
        b[48..52].copy_from_slice(&self.format_version.to_le_bytes());
        let crc = crate::wal::mask_crc(crc32c::crc32c(&b[..52]));
        b[52..56].copy_from_slice(&crc.to_le_bytes());
        b[56..64].copy_from_slice(&MAGIC.to_le_bytes());
        b
    }

    /// Decodes and checks a footer; the error says what is wrong.
    pub fn decode(b: &[u8]) -> Result<Footer, String> {
        if b.len() != FOOTER_LEN {
            return Err("footer has the wrong size".into());
        }
        if u64_at(b, 56) != MAGIC {
            return Err("bad magic number (not an sievedb SST)".into());
        }
        if crate::wal::mask_crc(crc32c::crc32c(&b[..52])) != u32_at(b, 52) {
            return Err("footer checksum mismatch".into());
        }
        let h = |i: usize| BlockHandle {
            offset: u64_at(b, 16 * i),
            size: u64_at(b, 16 * i + 8),
        };
        let format_version = u32_at(b, 48);
        if format_version != FORMAT_VERSION && format_version != FORMAT_VERSION_TWO_LEVEL {
            return Err(format!(
                "SST format version {format_version} is not supported by this build (it reads versions {FORMAT_VERSION} and {FORMAT_VERSION_TWO_LEVEL})"
            ));
        }
        Ok(Footer {
            index: h(0),
            filter: h(1),
            properties: h(2),
            format_version,
        })
    }
}

/// Checksum stored in a block trailer.
pub fn block_crc(block: &[u8], compression: u8) -> u32 {
    let c = crc32c::crc32c(block);
    crate::wal::mask_crc(crc32c::crc32c_append(c, &[compression]))
}
