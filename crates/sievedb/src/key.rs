//! Internal keys: a user key plus an 8-byte trailer `(sequence << 8) | kind`.
//!
//! Invariant: internal keys sort by user key ascending, then by sequence number
//! descending, so the newest version of a key comes first. The trailer is stored
//! little-endian after the user key (see `docs/format.md`).

use std::cmp::Ordering;

/// Sequence numbers order every write; they fit in 56 bits.
pub type SeqNo = u64;

/// The largest sequence number an internal key can carry.
pub const MAX_SEQ: SeqNo = (1 << 56) - 1;

/// Largest user key accepted (64 KiB).
pub const MAX_KEY_LEN: usize = 64 * 1024;
/// Largest value accepted (256 MiB).
pub const MAX_VALUE_LEN: usize = 256 * 1024 * 1024;

/// Why `key` cannot be a user key (longer than [`MAX_KEY_LEN`]), if it cannot.
/// Every entry point that takes a key checks it, reads included: no stored key
/// can be that long, so answering "not found" would hide a caller's bug.
pub(crate) fn check_len(key: &[u8]) -> Result<(), String> {
    if key.len() > MAX_KEY_LEN {
        return Err(format!(
            "key of {} bytes exceeds the limit of {MAX_KEY_LEN}",
            key.len()
        ));
    }
    Ok(())
}

/// What an internal key records.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Kind {
    /// The key was deleted (a tombstone).
    Delete = 0,
    /// The key was set to a value.
    Put = 1,
    /// A merge operand: combined with the older entries of the key by the
    /// database's [`MergeOperator`](crate::merge::MergeOperator).
    Merge = 2,
}

impl Kind {
    /// Decodes a kind byte.
    pub fn from_u8(b: u8) -> Option<Kind> {
        match b {
            0 => Some(Kind::Delete),
            1 => Some(Kind::Put),
            2 => Some(Kind::Merge),
            _ => None,
        }
    }
}

/// The kind used in seek keys: the highest ([`Kind::Merge`]), so a seek for
/// `(key, seq)` lands on the first entry with sequence `<= seq` whatever its kind.
pub const KIND_FOR_SEEK: u8 = Kind::Merge as u8;

/// Packs a trailer.
#[inline]
pub fn trailer(seq: SeqNo, kind: u8) -> u64 {
    (seq << 8) | u64::from(kind)
}

/// Appends `user_key ++ trailer` to `dst`.
#[inline]
pub fn append_internal_key(dst: &mut Vec<u8>, user_key: &[u8], seq: SeqNo, kind: u8) {
    dst.extend_from_slice(user_key);
    dst.extend_from_slice(&trailer(seq, kind).to_le_bytes());
}

/// The seek key of a point lookup (its user key at `seq`), built on first
/// use: a lookup that every filter rejects never copies its key.
pub struct LazySeek<'a> {
    buf: &'a mut Vec<u8>,
    seq: SeqNo,
    built: bool,
}

impl<'a> LazySeek<'a> {
    /// A seek key at `seq`, to be built in `buf`.
    pub fn new(buf: &'a mut Vec<u8>, seq: SeqNo) -> Self {
        LazySeek {
            buf,
            seq,
            built: false,
        }
    }

    /// The sequence number the lookup reads at.
    #[inline]
    pub fn seq(&self) -> SeqNo {
        self.seq
    }

    /// The seek key of `user_key` (the same user key on every call).
    #[inline]
    pub fn get(&mut self, user_key: &[u8]) -> &[u8] {
        if !self.built {
            self.buf.clear();
            append_internal_key(self.buf, user_key, self.seq, KIND_FOR_SEEK);
            self.built = true;
        }
        self.buf
    }
}

#[cfg(any(test, feature = "internals"))]
/// Builds an internal key.
pub fn internal_key(user_key: &[u8], seq: SeqNo, kind: Kind) -> Vec<u8> {
    let mut v = Vec::with_capacity(user_key.len() + 8);
    append_internal_key(&mut v, user_key, seq, kind as u8);
    v
}

/// The user-key part of an internal key. Internal keys are at least 8 bytes by
/// construction (every decoder checks this before handing keys out).
#[inline]
pub fn user_key(ikey: &[u8]) -> &[u8] {
    &ikey[..ikey.len() - 8]
}

/// The trailer of an internal key.
#[inline]
#[expect(
    clippy::expect_used,
    reason = "an 8-byte range converts to [u8; 8]; every internal key ends in an 8-byte trailer"
)]
pub fn trailer_of(ikey: &[u8]) -> u64 {
    u64::from_le_bytes(ikey[ikey.len() - 8..].try_into().expect("8-byte trailer"))
}

/// The sequence number of an internal key.
#[inline]
pub fn seq_of(ikey: &[u8]) -> SeqNo {
    trailer_of(ikey) >> 8
}

/// The kind byte of an internal key.
#[inline]
pub fn kind_of(ikey: &[u8]) -> u8 {
    trailer_of(ikey) as u8
}

/// Orders internal keys: user key ascending, trailer descending.
#[inline]
pub fn compare(a: &[u8], b: &[u8]) -> Ordering {
    match user_key(a).cmp(user_key(b)) {
        Ordering::Equal => trailer_of(b).cmp(&trailer_of(a)),
        o => o,
    }
}

/// Writes to `out` a short internal key `s` with `last <= s < next` (both
/// internal keys, `last < next`): the key of an index entry between two data
/// blocks. When the user keys differ at byte `p` and a byte of `last`'s user
/// key from `p` on can be raised while staying below `next`'s, `s` is that
/// user key cut just after the raised byte, with the trailer that sorts
/// first for it (`MAX_SEQ`, [`KIND_FOR_SEEK`]); otherwise `s` is `last`
/// itself. Long keys that differ early (a decimal index before padding, as
/// in the benchmarks' 512-byte keys) then index with a few bytes each.
///
/// Why point lookups stay right: a seek key `t` with `last < t <= s` lands
/// on the block ending at `last` and finds nothing in it. That is the
/// answer, because the table's next entry, `next`, has a user key greater
/// than `s`'s and so than `t`'s (when `s == last` no such `t` exists).
pub fn separator(last: &[u8], next: &[u8], out: &mut Vec<u8>) {
    out.clear();
    let (a, b) = (user_key(last), user_key(next));
    let p = a.iter().zip(b).take_while(|(x, y)| x == y).count();
    // A user key that is a prefix of the other (or equal) keeps `last`.
    if p < a.len() && p < b.len() {
        // Raising byte `p` keeps `s < b` only if it stays below `b[p]`; any
        // later byte below 0xff can be raised while `s` keeps `a`'s byte at
        // `p` (< `b[p]`).
        let cut = if a[p] < 0xff && a[p] + 1 < b[p] {
            Some(p)
        } else {
            (p + 1..a.len()).find(|&i| a[i] < 0xff)
        };
        if let Some(i) = cut.filter(|&i| i + 1 < a.len()) {
            out.extend_from_slice(&a[..=i]);
            out[i] += 1;
            out.extend_from_slice(&trailer(MAX_SEQ, KIND_FOR_SEEK).to_le_bytes());
            return;
        }
    }
    out.extend_from_slice(last);
}

/// Parsed view of an internal key.
#[derive(Clone, Copy, Debug)]
pub struct ParsedKey<'a> {
    /// The user key.
    pub user_key: &'a [u8],
    /// The sequence number.
    pub seq: SeqNo,
    /// The kind byte.
    pub kind: u8,
}

/// Splits an internal key; `None` if it is shorter than a trailer or its
/// kind byte is not a [`Kind`].
#[inline]
pub fn parse(ikey: &[u8]) -> Option<ParsedKey<'_>> {
    if ikey.len() < 8 {
        return None;
    }
    let t = trailer_of(ikey);
    Kind::from_u8(t as u8)?;
    Some(ParsedKey {
        user_key: user_key(ikey),
        seq: t >> 8,
        kind: t as u8,
    })
}

/// What is wrong with an internal key [`parse`] rejects (for error messages).
pub fn malformed_detail(ikey: &[u8]) -> String {
    if ikey.len() < 8 {
        format!(
            "internal key of {} bytes is shorter than its trailer",
            ikey.len()
        )
    } else {
        format!("internal key has unknown kind byte {}", kind_of(ikey))
    }
}

/// The error for an internal key [`parse`] rejects, met where the file it came
/// from is unknown (a merge of several sources). SST readers check every key
/// they hand out and report a bad one with its file first, so this is a last
/// line of defence: a malformed key is never skipped silently.
pub fn malformed(ikey: &[u8]) -> crate::Error {
    crate::Error::corruption("(merged iterator)", malformed_detail(ikey))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order() {
        let a1 = internal_key(b"a", 1, Kind::Put);
        let a2 = internal_key(b"a", 2, Kind::Put);
        let ab = internal_key(b"ab", 9, Kind::Put);
        assert_eq!(compare(&a2, &a1), Ordering::Less);
        assert_eq!(compare(&a1, &ab), Ordering::Less);
        assert_eq!(compare(&a2, &ab), Ordering::Less);
        assert_eq!(seq_of(&a2), 2);
        assert_eq!(kind_of(&a2), Kind::Put as u8);
    }

    fn sep(last: &[u8], next: &[u8]) -> Vec<u8> {
        let mut out = vec![7];
        separator(last, next, &mut out);
        out
    }

    #[test]
    fn separators_shorten_keys_that_differ_early() {
        let k = |u: &[u8], seq| internal_key(u, seq, Kind::Put);
        let short = |u: &[u8]| internal_key(u, MAX_SEQ, Kind::Merge);
        // Room at the first differing byte.
        assert_eq!(
            sep(&k(b"00012340....", 5), &k(b"00012380....", 9)),
            short(b"0001235")
        );
        // Adjacent bytes there: the next byte of `last` is raised.
        assert_eq!(
            sep(&k(b"00012340....", 5), &k(b"00012350....", 9)),
            short(b"00012341")
        );
        // Nothing to gain: the same user key, a prefix, or a cut as long as `last`.
        for (a, b) in [
            (&b"abc"[..], &b"abc"[..]),
            (b"ab", b"abc"),
            (b"ab", b"ac"),
            (b"a\xff", b"b"),
        ] {
            let (l, n) = (k(a, 9), k(b, if a == b { 3 } else { 9 }));
            assert_eq!(sep(&l, &n), l, "{a:?} {b:?}");
        }
    }

    /// For random pairs of ordered keys (short alphabets, shared prefixes,
    /// 0xff bytes, equal user keys), the separator lies in `[last, next)`,
    /// is no longer than `last`, and leaves no user key of either in
    /// `(last, s]` when it differs from `last`.
    #[test]
    fn separators_lie_between_their_keys() {
        use rand::{rngs::SmallRng, Rng, SeedableRng};
        let mut rng = SmallRng::seed_from_u64(11);
        let alphabet = [0u8, 1, b'0', b'1', b'2', 0xfe, 0xff];
        for _ in 0..20_000 {
            let key = |rng: &mut SmallRng| -> Vec<u8> {
                let n = rng.gen_range(0..7);
                (0..n)
                    .map(|_| alphabet[rng.gen_range(0..alphabet.len())])
                    .collect()
            };
            let (u1, u2) = (key(&mut rng), key(&mut rng));
            let (s1, s2) = (rng.gen_range(0..4), rng.gen_range(0..4));
            let mut pair = [
                internal_key(&u1, s1, Kind::Put),
                internal_key(&u2, s2, Kind::Delete),
            ];
            pair.sort_by(|a, b| compare(a, b));
            let [last, next] = pair;
            if compare(&last, &next) != Ordering::Less {
                continue;
            }
            let s = sep(&last, &next);
            assert!(
                compare(&last, &s) != Ordering::Greater,
                "{last:?} {next:?} {s:?}"
            );
            assert_eq!(
                compare(&s, &next),
                Ordering::Less,
                "{last:?} {next:?} {s:?}"
            );
            assert!(s.len() <= last.len());
            if s != last {
                assert!(user_key(&s) > user_key(&last));
                assert!(user_key(&s) < user_key(&next));
            }
        }
    }
}
