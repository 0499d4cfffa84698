//! Merge operators: read-modify-write without a read.
//!
//! [`Db::merge`](crate::Db::merge) (or [`WriteBatch::merge`](crate::WriteBatch::merge))
//! stores an *operand* for a key instead of a value. A read combines the
//! key's operands with its base value (the newest put below them, or none
//! after a delete, a range delete or the end of the tree) through the
//! database's [`MergeOperator`]; compactions combine them ahead of time
//! wherever every reader would see the same result (see `docs/format.md`,
//! "Merge operands").
//!
//! Operands are always handed to the operator oldest first. An operator that
//! answers `None` fails the read with [`Error::MergeFailed`]
//! naming the key; compaction then keeps the operands as they are, so no
//! operand is ever dropped. A merge into a keyspace without an operator is
//! refused when it is written ([`Error::InvalidArgument`]); a database
//! reopened without the operator its operands were written with fails
//! their reads with [`Error::MergeFailed`].

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use crate::error::{Error, Result};

mod builtin;

pub use builtin::{Append, U64Add};

/// A user-supplied associative operator (RocksDB's `MergeOperator` shape).
///
/// `full_merge` must be deterministic: the same inputs give the same value
/// whether a read or a compaction applies them.
///
/// ```
/// use std::sync::Arc;
/// use sievedb::{Db, MergeOperator, Options};
///
/// /// Keeps the largest operand (big-endian numbers compare as their bytes do).
/// struct Max;
/// impl MergeOperator for Max {
///     fn name(&self) -> &str { "max" }
///     fn full_merge(&self, _: &[u8], base: Option<&[u8]>, ops: &[&[u8]]) -> Option<Vec<u8>> {
///         base.into_iter().chain(ops.iter().copied()).max().map(<[u8]>::to_vec)
///     }
/// }
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let db = Db::open(dir.path(), Options::builder().merge_operator(Arc::new(Max)).build())?;
/// db.put("best", 10u64.to_be_bytes())?;
/// db.merge("best", 42u64.to_be_bytes())?; // no read of the old value
/// db.merge("best", 7u64.to_be_bytes())?;
/// assert_eq!(db.get("best")?, Some(42u64.to_be_bytes().to_vec()));
/// # Ok(()) }
/// ```
pub trait MergeOperator: Send + Sync {
    /// A name for logs and errors.
    fn name(&self) -> &str;

    /// The value of `key` given its base value (`None`: the key did not
    /// exist or was deleted) and its operands, oldest first; `None` if the
    /// operands cannot be applied (the read fails with
    /// [`Error::MergeFailed`]).
    fn full_merge(
        &self,
        key: &[u8],
        existing: Option<&[u8]>,
        operands: &[&[u8]],
    ) -> Option<Vec<u8>>;

    /// One operand equivalent to `operands` (oldest first) applied in order,
    /// if the operator can combine operands without the base value; `None`
    /// (the default) keeps them apart.
    fn partial_merge(&self, _key: &[u8], _operands: &[&[u8]]) -> Option<Vec<u8>> {
        None
    }
}

impl fmt::Debug for dyn MergeOperator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "MergeOperator({})", self.name())
    }
}

/// The operands of one key gathered newest first (as a read meets them),
/// and what lies below them.
#[derive(Default)]
pub(crate) struct Operands {
    /// Newest first.
    newest_first: VecDeque<Vec<u8>>,
}

impl Operands {
    /// Forgets every operand (the buffers are reused).
    pub fn clear(&mut self) {
        self.newest_first.clear();
    }

    /// Adds an operand older than those gathered so far.
    pub fn push_older(&mut self, operand: &[u8]) {
        self.newest_first.push_back(operand.to_vec());
    }

    /// Adds an operand newer than those gathered so far.
    pub fn push_newer(&mut self, operand: &[u8]) {
        self.newest_first.push_front(operand.to_vec());
    }

    /// Whether no operand was gathered.
    pub fn is_empty(&self) -> bool {
        self.newest_first.is_empty()
    }

    /// Number of operands gathered.
    pub fn len(&self) -> usize {
        self.newest_first.len()
    }

    /// The operands, oldest first, as the operator takes them.
    pub fn oldest_first(&self) -> Vec<&[u8]> {
        self.newest_first.iter().rev().map(Vec::as_slice).collect()
    }

    /// Applies `op` to the operands over `base`. No operator, or an
    /// operator that fails, is [`Error::MergeFailed`] naming `key`.
    pub fn full_merge(
        &self,
        op: Option<&Arc<dyn MergeOperator>>,
        key: &[u8],
        base: Option<&[u8]>,
    ) -> Result<Vec<u8>> {
        let Some(op) = op else {
            return Err(Error::MergeFailed {
                key: key.to_vec(),
                reason: "the key has merge operands and no merge operator is set \
                         (Options::merge_operator)"
                    .into(),
            });
        };
        op.full_merge(key, base, &self.oldest_first())
            .ok_or_else(|| Error::MergeFailed {
                key: key.to_vec(),
                reason: format!(
                    "merge operator {} refused {} operand(s)",
                    op.name(),
                    self.len()
                ),
            })
    }

    /// One operand for all gathered, if `op` combines them without a base.
    pub fn partial_merge(&self, op: &dyn MergeOperator, key: &[u8]) -> Option<Vec<u8>> {
        if self.len() < 2 {
            return None;
        }
        op.partial_merge(key, &self.oldest_first())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operands_reach_the_operator_oldest_first() {
        let op: Arc<dyn MergeOperator> = Arc::new(Append::new(b","));
        let mut ops = Operands::default();
        ops.push_older(b"3");
        ops.push_older(b"2");
        ops.push_newer(b"4");
        assert_eq!(
            ops.full_merge(Some(&op), b"k", Some(b"1")).unwrap(),
            b"1,2,3,4"
        );
        assert_eq!(ops.full_merge(Some(&op), b"k", None).unwrap(), b"2,3,4");
        assert_eq!(ops.partial_merge(&*op, b"k").unwrap(), b"2,3,4");
    }

    #[test]
    fn no_operator_and_a_refusing_operator_are_errors_naming_the_key() {
        let mut ops = Operands::default();
        ops.push_older(b"x");
        match ops.full_merge(None, b"key9", None) {
            Err(Error::MergeFailed { key, .. }) => assert_eq!(key, b"key9"),
            other => panic!("{other:?}"),
        }
        let op: Arc<dyn MergeOperator> = Arc::new(U64Add);
        match ops.full_merge(Some(&op), b"key7", None) {
            Err(e @ Error::MergeFailed { .. }) => assert!(e.to_string().contains("key7")),
            other => panic!("{other:?}"),
        }
        assert_eq!(format!("{op:?}"), "MergeOperator(u64add)");
    }
}
