//! Little-endian fixed-width and LEB128 varint encodings used by every on-disk format.

/// Appends `v` as a LEB128 varint.
pub fn put_varint(dst: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        dst.push((v as u8) | 0x80);
        v >>= 7;
    }
    dst.push(v as u8);
}

/// Decodes a varint from the front of `src`; returns the value and the bytes used,
/// or `None` if `src` ends early or the varint is longer than 10 bytes.
#[inline]
pub fn get_varint(src: &[u8]) -> Option<(u64, usize)> {
    let mut v = 0u64;
    for (i, &b) in src.iter().enumerate().take(10) {
        v |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            return Some((v, i + 1));
        }
    }
    None
}

/// Appends a length-prefixed byte string.
pub fn put_bytes(dst: &mut Vec<u8>, b: &[u8]) {
    put_varint(dst, b.len() as u64);
    dst.extend_from_slice(b);
}

/// A cursor over an encoded buffer; every getter returns `None` when the buffer ends early.
pub struct Reader<'a> {
    buf: &'a [u8],
}

impl<'a> Reader<'a> {
    /// Starts reading `buf`.
    pub fn new(buf: &'a [u8]) -> Self {
        Reader { buf }
    }
    /// Bytes not yet read.
    pub fn remaining(&self) -> usize {
        self.buf.len()
    }
    /// Reads a varint.
    pub fn varint(&mut self) -> Option<u64> {
        let (v, n) = get_varint(self.buf)?;
        self.buf = &self.buf[n..];
        Some(v)
    }
    /// Reads one byte.
    pub fn u8(&mut self) -> Option<u8> {
        let (&b, rest) = self.buf.split_first()?;
        self.buf = rest;
        Some(b)
    }
    /// Reads a little-endian u32.
    pub fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    /// Reads a little-endian u64.
    pub fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
    /// Reads `n` raw bytes.
    pub fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.buf.len() < n {
            return None;
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Some(a)
    }
    /// Reads a length-prefixed byte string.
    pub fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.varint()?).ok()?;
        self.take(n)
    }
}

/// Reads a little-endian u32 at `off` (caller guarantees bounds).
#[inline]
#[expect(
    clippy::expect_used,
    reason = "a 4-byte range converts to [u8; 4] (an out-of-bounds range panics first, the caller's contract)"
)]
pub fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

/// Reads a little-endian u64 at `off` (caller guarantees bounds).
#[inline]
#[expect(
    clippy::expect_used,
    reason = "an 8-byte range converts to [u8; 8] (an out-of-bounds range panics first, the caller's contract)"
)]
pub fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varint_roundtrip() {
        for v in [0u64, 1, 127, 128, 300, 1 << 35, u64::MAX] {
            let mut b = Vec::new();
            put_varint(&mut b, v);
            assert_eq!(get_varint(&b), Some((v, b.len())));
            assert_eq!(get_varint(&b[..b.len() - 1]), None);
        }
    }
}
