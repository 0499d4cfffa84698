//! Iterators: the internal iterator trait ([`InternalIterator`]), the merge of
//! several sorted sources ([`MergingIterator`], in `merging.rs`), the cursor
//! turning merged internal entries into user entries (`UserCursor`, in
//! `user_cursor.rs`) and the user-facing [`DbIterator`] (in `db_iter.rs`).

use std::cmp::Ordering;

use crate::error::Result;
use crate::key;

mod db_iter;
mod merging;
mod user_cursor;
mod vec;

pub use db_iter::DbIterator;
pub(crate) use db_iter::{prefix_successor, CursorFactory};
pub use merging::MergingIterator;
pub(crate) use vec::VecIter;

/// A bidirectional cursor over internal keys in [`key::compare`] order.
///
/// Every method that moves the cursor may leave it invalid (past either end);
/// `key` and `value` may only be called while it is valid.
pub trait InternalIterator: Send {
    /// Whether the cursor is on an entry.
    fn valid(&self) -> bool;
    /// Moves to the first entry.
    fn seek_to_first(&mut self) -> Result<()>;
    /// Moves to the last entry.
    fn seek_to_last(&mut self) -> Result<()>;
    /// Moves to the first entry `>= target` (an internal key).
    fn seek(&mut self, target: &[u8]) -> Result<()>;
    /// Moves to the last entry `<= target` (an internal key).
    ///
    /// The provided version seeks forward and steps back once, which is what
    /// a single sorted source needs; a merge of sources overrides it to keep
    /// its children in the reverse direction.
    fn seek_for_prev(&mut self, target: &[u8]) -> Result<()> {
        self.seek(target)?;
        if !self.valid() {
            return self.seek_to_last();
        }
        if key::compare(self.key(), target) != Ordering::Equal {
            self.prev()?;
        }
        Ok(())
    }
    /// Moves to the next entry (only when valid).
    fn next(&mut self) -> Result<()>;
    /// Moves to the previous entry (only when valid).
    fn prev(&mut self) -> Result<()>;
    /// The current internal key (only when valid).
    fn key(&self) -> &[u8];
    /// The current value (only when valid).
    fn value(&self) -> &[u8];
}

/// Anything whose lifetime an iterator must extend (a pinned version, a snapshot).
pub(crate) type Pin = Box<dyn Send + Sync>;

#[cfg(test)]
pub(crate) mod testing;
