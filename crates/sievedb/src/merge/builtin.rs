//! The built-in merge operators: counters and appends.

use super::MergeOperator;

/// Adds little-endian `u64` operands to a little-endian `u64` value, wrapping
/// on overflow; a missing value counts as 0. An operand or value that is not
/// exactly 8 bytes fails the merge.
///
/// ```
/// # fn main() -> sievedb::Result<()> {
/// # let dir = tempfile::tempdir().unwrap();
/// use std::sync::Arc;
/// let opts = sievedb::Options::builder()
///     .merge_operator(Arc::new(sievedb::merge::U64Add))
///     .build();
/// let db = sievedb::Db::open(dir.path(), opts)?;
/// db.merge(b"hits", 2u64.to_le_bytes())?;
/// db.merge(b"hits", 3u64.to_le_bytes())?;
/// assert_eq!(db.get(b"hits")?, Some(5u64.to_le_bytes().to_vec()));
/// # Ok(()) }
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct U64Add;

fn as_u64(b: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(b.try_into().ok()?))
}

impl U64Add {
    fn sum(operands: &[&[u8]], start: u64) -> Option<u64> {
        operands
            .iter()
            .try_fold(start, |acc, o| Some(acc.wrapping_add(as_u64(o)?)))
    }
}

impl MergeOperator for U64Add {
    fn name(&self) -> &str {
        "u64add"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Option<Vec<u8>> {
        let base = match existing {
            Some(v) => as_u64(v)?,
            None => 0,
        };
        Some(Self::sum(operands, base)?.to_le_bytes().to_vec())
    }

    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        Some(Self::sum(operands, 0)?.to_le_bytes().to_vec())
    }
}

/// Appends operands to the value, each after a separator (none before the
/// first piece of a missing value).
#[derive(Clone, Debug, Default)]
pub struct Append {
    separator: Vec<u8>,
}

impl Append {
    /// An append operator joining pieces with `separator` (may be empty).
    pub fn new(separator: impl AsRef<[u8]>) -> Self {
        Append {
            separator: separator.as_ref().to_vec(),
        }
    }

    fn join<'a>(&self, pieces: impl Iterator<Item = &'a [u8]>) -> Vec<u8> {
        let mut out = Vec::new();
        for (i, p) in pieces.enumerate() {
            if i > 0 {
                out.extend_from_slice(&self.separator);
            }
            out.extend_from_slice(p);
        }
        out
    }
}

impl MergeOperator for Append {
    fn name(&self) -> &str {
        "append"
    }

    fn full_merge(
        &self,
        _key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Option<Vec<u8>> {
        Some(self.join(existing.into_iter().chain(operands.iter().copied())))
    }

    fn partial_merge(&self, _key: &[u8], operands: &[&[u8]]) -> Option<Vec<u8>> {
        Some(self.join(operands.iter().copied()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn u64add_counts_and_refuses_bad_widths() {
        let le = |n: u64| n.to_le_bytes();
        let (a, b) = (le(5), le(u64::MAX));
        assert_eq!(U64Add.full_merge(b"k", None, &[&a]), Some(le(5).to_vec()));
        assert_eq!(
            U64Add.full_merge(b"k", Some(&a), &[&a, &b]),
            Some(le(9).to_vec())
        );
        assert_eq!(U64Add.partial_merge(b"k", &[&a, &a]), Some(le(10).to_vec()));
        assert_eq!(U64Add.full_merge(b"k", Some(b"abc"), &[&a]), None);
        assert_eq!(U64Add.full_merge(b"k", None, &[b"1"]), None);
    }

    #[test]
    fn append_joins_with_the_separator() {
        let op = Append::new(", ");
        assert_eq!(
            op.full_merge(b"k", None, &[b"a", b"b"]),
            Some(b"a, b".to_vec())
        );
        assert_eq!(
            op.full_merge(b"k", Some(b"x"), &[b"a"]),
            Some(b"x, a".to_vec())
        );
        assert_eq!(op.full_merge(b"k", Some(b""), &[]), Some(b"".to_vec()));
        assert_eq!(
            Append::new("").partial_merge(b"k", &[b"a", b"b"]),
            Some(b"ab".to_vec())
        );
    }
}
